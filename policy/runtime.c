/* SPDX-License-Identifier: MIT */
/* The ima.runtime policy section: parsing, release, size (the parts: runtime-internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/jpath.h"
#include "policy/policy-internal.h"
#include "policy/runtime-internal.h"

/* ---- the section ---- */

struct rt_policy *rt_policy_free(struct rt_policy *p)
{
        if (!p)
                return NULL;
        rt_allowlist_done(&p->files);
        rt_allowlist_done(&p->keyrings);
        rt_allowlist_done(&p->ima_buf);
        pcre2_code_free(p->excl);
        for (size_t i = 0; i < p->nexcl; i++) {
                pcre2_code_free(p->each[i]);
                free(p->src[i]);
        }
        free(p->each);
        free(p->src);
        for (size_t i = 0; i < p->nkeys; i++) {
                EVP_PKEY_free(p->keys[i].pkey);
                X509_free(p->keys[i].x509);
        }
        free(p->keys);
        free(p->ignored);
        free(p);
        return NULL;
}

unsigned rt_policy_failures_max(const struct rt_policy *p)
{
        return p->failures_max;
}

size_t rt_policy_digest_count(const struct rt_policy *p)
{
        return p->files.ndigests;
}

static int parse_excludes(const json_t *a, const char *p, struct rt_policy *pol,
                          struct attest_err *err)
{
        char q[JPATH_MAX];
        size_t total = 0, at = 0;
        _cleanup_free_ char *all = NULL;
        int ec;
        PCRE2_SIZE eo;

        if (!json_is_array(a))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
        if (json_array_size(a) > RT_EXCLUDES_MAX)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu entries > %d",
                                  json_array_size(a), RT_EXCLUDES_MAX);
        if (json_array_size(a) == 0)
                return 0;
        if (!(pol->each = calloc(json_array_size(a), sizeof(*pol->each))) ||
            !(pol->src = calloc(json_array_size(a), sizeof(*pol->src))))
                return -ENOMEM;
        /* each one alone first: an error names its index and offset; kept, anchored as in the
         * alternation, to name the one that stops at its limit and for the PUT probe */
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                pcre2_code *c;
                size_t n;

                jpath_index(q, p, i);
                if (!json_is_string(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                n = json_string_length(v);
                if (n == 0 || n > RT_REGEX_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "regex of %zu bytes, want 1-%d", n, RT_REGEX_MAX);
                c = pcre2_compile((PCRE2_SPTR)json_string_value(v), n,
                                  PCRE2_ANCHORED | PCRE2_ENDANCHORED, &ec, &eo, NULL);
                if (!c) {
                        PCRE2_UCHAR msg[120];

                        pcre2_get_error_message(ec, msg, sizeof(msg));
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "not a regex: %s at byte %zu", (const char *)msg,
                                          (size_t)eo);
                }
                pol->each[pol->nexcl] = c;
                if (!(pol->src[pol->nexcl++] = strndup(json_string_value(v), n)))
                        return -ENOMEM;
                total += n + 6;
        }
        if (!(all = malloc(total + 1)))
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                size_t n = json_string_length(v);

                /* (?:...) keeps each alternative whole; | between */
                memcpy(all + at, i ? "|(?:" : "(?:", i ? 4 : 3);
                at += i ? 4 : 3;
                memcpy(all + at, json_string_value(v), n);
                at += n;
                all[at++] = ')';
        }
        /* anchored at both ends: the whole path must match */
        pol->excl = pcre2_compile((PCRE2_SPTR)all, at, PCRE2_ANCHORED | PCRE2_ENDANCHORED, &ec, &eo,
                                  NULL);
        if (!pol->excl)
                /* e.g. an unbalanced ')' that closes our group: refuse rather than guess */
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "the excludes do not combine into one pattern (a regex "
                                  "closes a group it did not open?)");
        /* JIT where the platform has it (all or none: the probe and the naming of a pattern
         * must count as the round does), else the interpreter */
        pol->jit = pcre2_jit_compile(pol->excl, PCRE2_JIT_COMPLETE) == 0;
        for (size_t i = 0; pol->jit && i < pol->nexcl; i++)
                pol->jit = pcre2_jit_compile(pol->each[i], PCRE2_JIT_COMPLETE) == 0;
        return 0;
}

static size_t code_size(const pcre2_code *c)
{
        size_t n = 0, j = 0;

        if (!c)
                return 0;
        (void)pcre2_pattern_info(c, PCRE2_INFO_SIZE, &n);
        (void)pcre2_pattern_info(c, PCRE2_INFO_JITSIZE, &j);
        return n + j;
}

/* What the parsed section holds, approximately: its arrays, the compiled excludes, and a
 * round figure for each key (OpenSSL's objects: a few KiB). */
static size_t policy_bytes(const struct rt_policy *p)
{
        size_t n = sizeof(*p) + rt_allowlist_size(&p->files) + rt_allowlist_size(&p->keyrings) +
                   rt_allowlist_size(&p->ima_buf) + code_size(p->excl);

        for (size_t i = 0; i < p->nexcl; i++)
                n += code_size(p->each[i]) + strlen(p->src[i]) + 1 + 2 * sizeof(void *);
        n += p->nkeys * (sizeof(*p->keys) + 4096) + p->nignored * sizeof(*p->ignored);
        return n;
}

size_t rt_policy_size(const struct rt_policy *p)
{
        return p ? p->bytes : 0;
}

static int parse_violations(const json_t *v, const char *p, struct rt_policy *pol,
                            struct attest_err *err)
{
        static const char *const k[] = {"allow", NULL};
        char q[JPATH_MAX];
        json_t *n;
        int x;

        if (json_is_string(v)) {
                if (strcmp(json_string_value(v), "fail") != 0)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "not \"fail\" or {\"allow\":N}");
                pol->violations_fail = true;
                return 0;
        }
        if ((x = jpath_object(v, p, k, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        jpath_join(q, p, "allow");
        n = json_object_get(v, "allow");
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            json_integer_value(n) > RT_VIOLATIONS_ALLOW_MAX)
                return jpath_fail(err, -EBADMSG, n ? AE_POLICY_BAD_VALUE : AE_POLICY_MISSING_FIELD,
                                  q, "not an integer 0-%d", RT_VIOLATIONS_ALLOW_MAX);
        pol->violations_fail = false;
        pol->violations_allow = (uint64_t)json_integer_value(n);
        return 0;
}

int rt_policy_from_json(const json_t *o, const char *path, struct rt_policy **ret,
                        struct attest_err *err)
{
        static const char *const keys[] = {"digests",    "excludes",     "keys",
                                           "keyrings",   "ima_buf",      "ignored_keyrings",
                                           "violations", "failures_max", NULL};
        _cleanup_(rt_policy_freep) struct rt_policy *pol = NULL;
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *v;
        int x;

        if ((x = policy_section_object(o, path, keys, err)) < 0)
                return x;
        if (!(pol = calloc(1, sizeof(*pol))))
                return -ENOMEM;
        pol->violations_fail = true;
        pol->failures_max = RT_FAILURES_MAX_DEFAULT;

        if ((v = json_object_get(o, "digests"))) {
                jpath_join(p, path, "digests");
                if ((x = rt_allowlist_parse(v, p, true, &pol->files, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "keyrings"))) {
                jpath_join(p, path, "keyrings");
                if ((x = rt_allowlist_parse(v, p, false, &pol->keyrings, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "ima_buf"))) {
                jpath_join(p, path, "ima_buf");
                if ((x = rt_allowlist_parse(v, p, false, &pol->ima_buf, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "excludes"))) {
                jpath_join(p, path, "excludes");
                if ((x = parse_excludes(v, p, pol, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "keys"))) {
                jpath_join(p, path, "keys");
                if (!json_is_array(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
                if (json_array_size(v) > RT_KEYS_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu keys > %d",
                                          json_array_size(v), RT_KEYS_MAX);
                if (json_array_size(v) &&
                    !(pol->keys = calloc(json_array_size(v), sizeof(*pol->keys))))
                        return -ENOMEM;
                for (size_t i = 0; i < json_array_size(v); i++) {
                        jpath_index(q, p, i);
                        /* counted first: a half-parsed key is released with the policy */
                        pol->nkeys++;
                        if ((x = rt_key_parse(json_array_get(v, i), q, &pol->keys[i], err)) < 0)
                                return x;
                }
        }
        if ((v = json_object_get(o, "ignored_keyrings"))) {
                jpath_join(p, path, "ignored_keyrings");
                if (!json_is_array(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
                if (json_array_size(v) > RT_IGNORED_KEYRINGS_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "%zu keyrings > %d", json_array_size(v),
                                          RT_IGNORED_KEYRINGS_MAX);
                if (json_array_size(v) &&
                    !(pol->ignored = calloc(json_array_size(v), sizeof(*pol->ignored))))
                        return -ENOMEM;
                for (size_t i = 0; i < json_array_size(v); i++) {
                        json_t *s = json_array_get(v, i);
                        size_t n;

                        jpath_index(q, p, i);
                        if (!json_is_string(s))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                        n = json_string_length(s);
                        if (!rt_name_ok(json_string_value(s), n, false) || n > RT_KEYRING_NAME_MAX)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                  "not a keyring name of 1-%d bytes",
                                                  RT_KEYRING_NAME_MAX);
                        memcpy(pol->ignored[i], json_string_value(s), n + 1);
                        if (n == 1 && json_string_value(s)[0] == '*')
                                pol->ignore_all = true;
                        pol->nignored++;
                }
        }
        if ((v = json_object_get(o, "violations"))) {
                jpath_join(p, path, "violations");
                if ((x = parse_violations(v, p, pol, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "failures_max"))) {
                jpath_join(p, path, "failures_max");
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    json_integer_value(v) > RT_FAILURES_CAP)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "not an integer 0-%d", RT_FAILURES_CAP);
                pol->failures_max = (unsigned)json_integer_value(v);
        }
        pol->bytes = policy_bytes(pol);
        *ret = TAKE_PTR(pol);
        return 0;
}
