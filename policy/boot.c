/* SPDX-License-Identifier: MIT */
/* The policy's "boot" section: strict parsing (policy/boot.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/jpath.h"
#include "policy/boot.h"
#include "policy/policy-internal.h"
#include "util/hex.h"

struct boot_policy *boot_policy_free(struct boot_policy *p)
{
        free(p);
        return NULL;
}

/* Exactly n bytes of hex (either case) into out. */
static bool hexn(const char *s, size_t len, size_t n, uint8_t *out)
{
        size_t got = 0;

        return len == 2 * n && hex_decode(s, len, out, n, &got) == 0 && got == n;
}

static int parse_vars(const json_t *o, const char *path, struct boot_policy *bp,
                      struct attest_err *err)
{
        static const char *const keys[] = {"PK", "KEK", "db", "dbx", NULL};
        char p[JPATH_MAX], q[JPATH_MAX];
        int x;

        if ((x = jpath_object(o, path, keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        if (json_object_size(o) == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_EMPTY_SECTION, path,
                                  "no variable named; leave \"variables\" out");
        for (int k = 0; k < BOOT_VAR__COUNT; k++) {
                json_t *a = json_object_get(o, boot_var_name((enum boot_var)k));

                if (!a)
                        continue;
                jpath_join(p, path, boot_var_name((enum boot_var)k));
                if ((x = policy_list(a, p, BOOT_POLICY_DIGESTS_MAX, err)) < 0)
                        return x;
                for (size_t i = 0; i < json_array_size(a); i++) {
                        json_t *h = json_array_get(a, i);

                        jpath_index(q, p, i);
                        if (!json_is_string(h))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                        if (!hexn(json_string_value(h), json_string_length(h), 32, bp->var[k][i]))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, q,
                                                  "not a sha256 digest (64 hex digits)");
                        for (size_t j = 0; j < i; j++)
                                if (memcmp(bp->var[k][j], bp->var[k][i], 32) == 0)
                                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                          "same digest as [%zu]", j);
                }
                bp->nvar[k] = (unsigned)json_array_size(a);
                bp->var_set[k] = true;
        }
        return 0;
}

/* "bank:hex" with the bank's digest length. */
static int parse_apps(const json_t *a, const char *p, struct boot_policy_apps *out,
                      struct attest_err *err)
{
        char q[JPATH_MAX];
        int x;

        if ((x = policy_list(a, p, BOOT_POLICY_DIGESTS_MAX, err)) < 0)
                return x;
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                const char *s, *colon;
                int b;

                jpath_index(q, p, i);
                if (!json_is_string(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                s = json_string_value(v);
                colon = memchr(s, ':', json_string_length(v));
                b = colon ? bank_from_name(s, (size_t)(colon - s)) : -1;
                if (b < 0)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "not \"sha1:\", \"sha256:\", \"sha384:\" or \"sha512:\" "
                                          "followed by the digest");
                if (!hexn(colon + 1, json_string_length(v) - (size_t)(colon + 1 - s),
                          bank_size((enum bank)b), out->digest[i]))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, q,
                                          "not a %s digest (%zu hex digits)",
                                          bank_name((enum bank)b), 2 * bank_size((enum bank)b));
                out->bank[i] = (uint8_t)b;
                snprintf(out->text[i], sizeof(out->text[i]), "%s:", bank_name((enum bank)b));
                hex_encode(out->digest[i], bank_size((enum bank)b),
                           out->text[i] + strlen(out->text[i]));
                for (size_t j = 0; j < i; j++)
                        if (strcmp(out->text[j], out->text[i]) == 0)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                  "same digest as [%zu]", j);
        }
        out->n = (unsigned)json_array_size(a);
        out->set = true;
        return 0;
}

static int parse_locality(const json_t *a, const char *p, struct boot_policy *bp,
                          struct attest_err *err)
{
        char q[JPATH_MAX];
        int x;

        if ((x = policy_list(a, p, BOOT_POLICY_LOCALITY_MAX + 1, err)) < 0)
                return x;
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                json_int_t n;

                jpath_index(q, p, i);
                if (!json_is_integer(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not an integer");
                n = json_integer_value(v);
                if (n < 0 || n > BOOT_POLICY_LOCALITY_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "not a locality 0-%d", BOOT_POLICY_LOCALITY_MAX);
                for (size_t j = 0; j < i; j++)
                        if (bp->locality_v[j] == n)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                  "same as [%zu]", j);
                bp->locality_v[i] = (uint8_t)n;
                snprintf(bp->locality[i], sizeof(bp->locality[i]), "%d", (int)n);
        }
        bp->nlocality = (unsigned)json_array_size(a);
        bp->locality_set = true;
        return 0;
}

int boot_policy_from_json(const json_t *o, const char *path, struct boot_policy **ret,
                          struct attest_err *err)
{
        static const char *const keys[] = {"secureboot",       "pcrs_replay", "variables",
                                           "bootloaders",      "kernels",     "separators",
                                           "startup_locality", NULL};
        _cleanup_(boot_policy_freep) struct boot_policy *bp = NULL;
        char p[JPATH_MAX];
        json_t *v;
        int x;

        if ((x = policy_section_object(o, path, keys, err)) < 0)
                return x;
        if (!(bp = calloc(1, sizeof(*bp))))
                return -ENOMEM;
        for (size_t i = 0; i < BOOT_POLICY_DIGESTS_MAX; i++)
                bp->var_len[i] = 32;
        if ((x = policy_tri_bool(o, path, "secureboot", &bp->secureboot, err)) < 0 ||
            (x = policy_tri_bool(o, path, "pcrs_replay", &bp->pcrs_replay, err)) < 0 ||
            (x = policy_tri_bool(o, path, "separators", &bp->separators, err)) < 0)
                return x;
        if ((v = json_object_get(o, "variables"))) {
                jpath_join(p, path, "variables");
                if ((x = parse_vars(v, p, bp, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "bootloaders"))) {
                jpath_join(p, path, "bootloaders");
                if ((x = parse_apps(v, p, &bp->loaders, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "kernels"))) {
                jpath_join(p, path, "kernels");
                if ((x = parse_apps(v, p, &bp->kernels, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "startup_locality"))) {
                jpath_join(p, path, "startup_locality");
                if ((x = parse_locality(v, p, bp, err)) < 0)
                        return x;
        }
        *ret = TAKE_PTR(bp);
        return 0;
}
