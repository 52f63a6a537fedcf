/* SPDX-License-Identifier: MIT */
/*
 * Host identity from a jansson object (the enrolment body's "host"; the evidence body's "host" is
 * read by the pull reader in evjson-read.c, which applies the same rules and messages, and the
 * differential fuzzer holds the two equal through tests/fuzz/evjson-jansson.c, which calls
 * evidence_host_identity_members()). The syntax is evidence/evidence.h's.
 */
#include <errno.h>
#include <string.h>

#include "evidence/evjson.h"
#include "evidence/jpath.h"

/* A string of the identity syntax into out (cap bytes with the NUL). */
static int ident(const json_t *v, const char *path, bool (*valid)(const char *, size_t),
                 const char *what, char *out, size_t cap, struct attest_err *err)
{
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        n = json_string_length(v);
        if (n > cap - 1)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%zu bytes > %zu", n,
                                  cap - 1);
        if (!valid(json_string_value(v), n))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "not %s", what);
        memcpy(out, json_string_value(v), n + 1);
        return 0;
}

static int labels(const json_t *o, const char *path, struct evidence_host *h,
                  struct attest_err *err)
{
        char p[JPATH_MAX];
        const char *key;
        json_t *v;
        unsigned n = 0;
        int x;

        if (!json_is_object(o))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an object");
        if (json_object_size(o) > EVIDENCE_LABELS_MAX)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%zu labels > %d",
                                  json_object_size(o), EVIDENCE_LABELS_MAX);
        json_object_foreach((json_t *)o, key, v)
        {
                size_t kn = strlen(key);

                if (!evidence_label_key_valid(key, kn))
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path,
                                          EVIDENCE_LABEL_KEY_WHY, n, EVIDENCE_LABEL_KEY_MAX);
                jpath_join(p, path, key);
                if ((x = ident(v, p, evidence_label_value_valid, EVIDENCE_LABEL_VALUE_WHAT,
                               h->labels[n].value, sizeof(h->labels[n].value), err)) < 0)
                        return x;
                memcpy(h->labels[n].key, key, kn + 1);
                n++;
        }
        h->n_labels = n;
        h->labels_present = true;
        return 0;
}

int evidence_host_identity_members(const json_t *o, const char *path, struct evidence_host *h,
                                   struct attest_err *err)
{
        char p[JPATH_MAX];
        json_t *v;
        int x;

        jpath_join(p, path, "hostname");
        if ((v = json_object_get(o, "hostname")) &&
            (x = ident(v, p, evidence_hostname_valid, EVIDENCE_HOSTNAME_WHAT, h->hostname,
                       sizeof(h->hostname), err)) < 0)
                return x;
        jpath_join(p, path, "machine_id");
        if ((v = json_object_get(o, "machine_id")) &&
            (x = ident(v, p, evidence_machine_id_valid, EVIDENCE_MACHINE_ID_WHAT, h->machine_id,
                       sizeof(h->machine_id), err)) < 0)
                return x;
        jpath_join(p, path, "labels");
        if ((v = json_object_get(o, "labels")) && (x = labels(v, p, h, err)) < 0)
                return x;
        return 0;
}

int evidence_host_identity_from_json(const json_t *o, const char *path, struct evidence_host *h,
                                     struct attest_err *err)
{
        static const char *const keys[] = {"hostname", "machine_id", "labels", NULL};
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        return evidence_host_identity_members(o, path, h, err);
}
