/* SPDX-License-Identifier: MIT */
/* Policy JSON parsing (attestd-policy(5)): strict, every error names its JSON path. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/hex.h"
#include "evidence/jpath.h"
#include "policy/policy-internal.h"

struct policy *policy_free(struct policy *p)
{
        if (p) {
                rt_policy_free(p->runtime);
                boot_policy_free(p->boot);
        }
        free(p);
        return NULL;
}

const char *policy_name(const struct policy *p)
{
        return p->name;
}

const struct rt_policy *policy_runtime(const struct policy *p)
{
        return p->runtime;
}

bool policy_glob_match(const char *g, const char *s)
{
        /* iterative with one backtrack point: linear in practice, no recursion */
        const char *star = NULL, *resume = NULL;

        while (*s) {
                if (*g == '*') {
                        star = g++;
                        resume = s;
                } else if (*g == '?' || *g == *s) {
                        g++;
                        s++;
                } else if (star) {
                        g = star + 1;
                        s = ++resume;
                } else {
                        return false;
                }
        }
        while (*g == '*')
                g++;
        return *g == '\0';
}

/* ---- parsing ---- */

int policy_tri_bool(const json_t *o, const char *path, const char *key, tri *ret,
                    struct attest_err *err)
{
        json_t *v = json_object_get(o, key);
        char p[JPATH_MAX];

        *ret = -1;
        if (!v)
                return 0;
        jpath_join(p, path, key);
        if (!json_is_boolean(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a boolean");
        *ret = json_is_true(v);
        return 0;
}

bool policy_word_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.' || c == '+' || c == '~';
}

static int pword(const json_t *v, const char *p, char *out, size_t cap, bool glob,
                 struct attest_err *err)
{
        const char *s;
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        if (n == 0 || n >= cap)
                return jpath_fail(err, -EBADMSG, glob ? AE_POLICY_BAD_GLOB : AE_POLICY_BAD_VALUE, p,
                                  "length %zu, want 1-%zu", n, cap - 1);
        for (size_t i = 0; i < n; i++)
                if (!policy_word_char(s[i]) && !(glob && (s[i] == '*' || s[i] == '?')))
                        return jpath_fail(err, -EBADMSG,
                                          glob ? AE_POLICY_BAD_GLOB : AE_POLICY_BAD_VALUE, p,
                                          "byte %zu is not %s", i,
                                          glob ? "[A-Za-z0-9_.+~-] or a '*' '?' wildcard"
                                               : "[A-Za-z0-9_.+~-]");
        if (glob && strstr(s, "**"))
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_GLOB, p,
                                  "'**' is not a pattern; use '*'");
        memcpy(out, s, n + 1);
        return 0;
}

/* An array of 1..max members at o.key; *ret the array. */
static int parray(const json_t *o, const char *path, const char *key, size_t max, json_t **ret,
                  char *p, struct attest_err *err)
{
        json_t *v = json_object_get(o, key);

        int x;

        jpath_join(p, path, key);
        if ((x = policy_list(v, p, max, err)) < 0)
                return x;
        *ret = v;
        return 0;
}

int policy_list(const json_t *v, const char *p, size_t max, struct attest_err *err)
{
        if (!json_is_array(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
        if (json_array_size(v) == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "empty list");
        if (json_array_size(v) > max)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu entries > %zu",
                                  json_array_size(v), max);
        return 0;
}

static int section(const json_t *root, const char *key, const char *const *keys, json_t **ret,
                   char *p, struct attest_err *err)
{
        json_t *v = json_object_get(root, key);
        int x;

        *ret = NULL;
        jpath_join(p, "$", key);
        if (!v)
                return 0;
        if ((x = policy_section_object(v, p, keys, err)) < 0)
                return x;
        *ret = v;
        return 0;
}

int policy_section_object(const json_t *o, const char *path, const char *const *keys,
                          struct attest_err *err)
{
        int x;

        if ((x = jpath_object(o, path, keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        if (json_object_size(o) == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_EMPTY_SECTION, path,
                                  "an empty section checks nothing; leave it out");
        return 0;
}

static int parse_selinux(const json_t *o, const char *path, struct policy *pol,
                         struct attest_err *err)
{
        char p[JPATH_MAX], q[JPATH_MAX];
        const char *key;
        json_t *v, *a;
        int x;

        if ((x = policy_tri_bool(o, path, "initialized", &pol->selinux.initialized, err)) < 0 ||
            (x = policy_tri_bool(o, path, "enforcing", &pol->selinux.enforcing, err)) < 0 ||
            (x = policy_tri_bool(o, path, "checkreqprot", &pol->selinux.checkreqprot, err)) < 0 ||
            (x = policy_tri_bool(o, path, "never_permissive", &pol->selinux.never_permissive,
                                 err)) < 0)
                return x;
        if ((a = json_object_get(o, "policycaps"))) {
                jpath_join(p, path, "policycaps");
                if (!json_is_object(a))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an object");
                if (json_object_size(a) == 0)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_EMPTY_SECTION, p,
                                          "no capability listed");
                if (json_object_size(a) > CDATA_KV_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "more than %d capabilities", CDATA_KV_MAX);
                json_object_foreach(a, key, v)
                {
                        unsigned i = pol->selinux.ncaps;
                        size_t n = strlen(key);

                        jpath_join(q, p, key);
                        bool ok = n >= 1 && n <= CDATA_KEY_MAX;
                        for (size_t k = 0; k < n; k++)
                                if (!((key[k] >= 'a' && key[k] <= 'z') ||
                                      (key[k] >= '0' && key[k] <= '9') || key[k] == '_'))
                                        ok = false;
                        if (!ok)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                  "not a capability name [a-z0-9_]{1,64}");
                        if (!json_is_boolean(v))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q,
                                                  "not a boolean");
                        memcpy(pol->selinux.cap[i], key, n + 1);
                        /* a name the table does not know stays: it is reported missing */
                        pol->selinux.cap_id[i] = selinux_cap_from_name(key, n);
                        pol->selinux.cap_val[i] = json_is_true(v);
                        pol->selinux.ncaps++;
                }
        }
        if (json_object_get(o, "policy_sha256")) {
                if ((x = parray(o, path, "policy_sha256", POLICY_HASHES_MAX, &a, p, err)) < 0)
                        return x;
                for (size_t i = 0; i < json_array_size(a); i++) {
                        json_t *h = json_array_get(a, i);
                        size_t got;

                        jpath_index(q, p, i);
                        if (!json_is_string(h))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                        /* the kernel hashes the policy with ima_hash: sha256 usually */
                        size_t n = json_string_length(h);
                        if ((n != 40 && n != 64 && n != 96 && n != 128) ||
                            hex_decode(json_string_value(h), n, pol->selinux.hash[i],
                                       BANK_DIGEST_MAX, &got) < 0)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, q,
                                                  "not a sha256 digest (64 hex digits; 40, 96 or "
                                                  "128 for another ima_hash)");
                        pol->selinux.hash_len[i] = (uint8_t)got;
                        for (size_t k = 0; k < i; k++)
                                if (pol->selinux.hash_len[k] == got &&
                                    memcmp(pol->selinux.hash[k], pol->selinux.hash[i], got) == 0)
                                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                          "same hash as [%zu]", k);
                }
                pol->selinux.nhashes = (unsigned)json_array_size(a);
                pol->selinux.has_hashes = true;
        }
        return 0;
}

static int parse_words(const json_t *o, const char *path, const char *key, size_t max,
                       char (*out)[WORD_MAX], unsigned *ret_n, struct attest_err *err)
{
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *a;
        int x;

        if ((x = parray(o, path, key, max, &a, p, err)) < 0)
                return x;
        for (size_t i = 0; i < json_array_size(a); i++) {
                jpath_index(q, p, i);
                if ((x = pword(json_array_get(a, i), q, out[i], WORD_MAX, false, err)) < 0)
                        return x;
        }
        *ret_n = (unsigned)json_array_size(a);
        return 0;
}

/*
 * The optional list o.key: 1..POLICY_SOURCES_MAX words, each one of known (NULL-terminated; a
 * typo must not turn into a claim that can never pass); *ret_n 0 when absent.
 */
static int known_words(const json_t *o, const char *path, const char *key, const char *const *known,
                       const char *what, char (*out)[WORD_MAX], unsigned *ret_n,
                       struct attest_err *err)
{
        char p[JPATH_MAX], ip[JPATH_MAX], list[128] = "";
        unsigned n = 0;
        int x;

        *ret_n = 0;
        if (!json_object_get(o, key))
                return 0;
        if ((x = parse_words(o, path, key, POLICY_SOURCES_MAX, out, &n, err)) < 0)
                return x;
        for (unsigned i = 0; i < n; i++) {
                bool ok = false;

                for (size_t k = 0; known[k]; k++)
                        ok = ok || !strcmp(out[i], known[k]);
                if (ok)
                        continue;
                for (size_t k = 0; known[k]; k++)
                        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                                 k ? ", " : "", known[k]);
                jpath_join(p, path, key);
                jpath_index(ip, p, i);
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, ip, "not %s (%s)", what,
                                  list);
        }
        *ret_n = n;
        return 0;
}

/* trusted_keys: at least one of sources, rng, requested (anchored alone judges nothing) */
static int parse_tk(const json_t *s, const char *p, struct policy *pol, struct attest_err *err)
{
        static const char *const sources[] = {"tpm", "tee", "caam", "dcp", "none", NULL};
        static const char *const rng[] = {"tpm", "tee", "caam", "dcp", "kernel", "none", NULL};
        static const char *const requested[] = {"any", "tpm", "tee", "caam", "dcp", "other", NULL};
        int x;

        if ((x = known_words(s, p, "sources", sources, "a trusted-keys source", pol->tk.source,
                             &pol->tk.nsources, err)) < 0 ||
            (x = known_words(s, p, "rng", rng, "a source of key material", pol->tk.rng,
                             &pol->tk.nrng, err)) < 0 ||
            (x = known_words(s, p, "requested", requested, "a trusted.source= value",
                             pol->tk.requested, &pol->tk.nrequested, err)) < 0 ||
            (x = policy_tri_bool(s, p, "anchored", &pol->tk.anchored, err)) < 0)
                return x;
        if (!pol->tk.nsources && !pol->tk.nrng && !pol->tk.nrequested)
                return attest_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD,
                                   "%s.sources: missing (a trusted_keys section demands sources, "
                                   "rng or requested)",
                                   p);
        for (unsigned i = 0; i < pol->tk.nsources; i++)
                pol->tk.source_id[i] =
                        tk_source_from_name(pol->tk.source[i], strlen(pol->tk.source[i]));
        return 0;
}

static int parse_cfi(const json_t *s, const char *p, struct policy *pol, struct attest_err *err)
{
        static const char *const modes[] = {"kcfi", "fineibt", "none", NULL};
        int x;

        if ((x = policy_tri_bool(s, p, "enabled", &pol->cfi.enabled, err)) < 0 ||
            (x = known_words(s, p, "mode", modes, "a CFI mode", pol->cfi.mode, &pol->cfi.nmodes,
                             err)) < 0 ||
            (x = policy_tri_bool(s, p, "permissive", &pol->cfi.permissive, err)) < 0 ||
            (x = policy_tri_bool(s, p, "anchored", &pol->cfi.anchored, err)) < 0)
                return x;
        for (unsigned i = 0; i < pol->cfi.nmodes; i++)
                pol->cfi.mode_id[i] =
                        cfi_mode_from_name(pol->cfi.mode[i], strlen(pol->cfi.mode[i]));
        return 0;
}

static const struct pcrs_json_codes pcr_codes = {.type = AE_POLICY_TYPE,
                                                 .bank = AE_POLICY_UNKNOWN_FIELD,
                                                 .index = AE_POLICY_BAD_VALUE,
                                                 .hex = AE_POLICY_BAD_HEX,
                                                 .empty = AE_POLICY_EMPTY_SECTION};

int policy_parse(const char *json, size_t len, struct policy **ret, struct attest_err *err)
{
        json_auto_t *j = NULL;
        int x;

        if (len > POLICY_JSON_MAX)
                return attest_fail(err, -E2BIG, AE_POLICY_TOO_BIG, "$: document of %zu bytes > %u",
                                   len, POLICY_JSON_MAX);
        if ((x = jpath_load(json, len, POLICY_JSON_MAX, AE_POLICY_JSON, &j, err)) < 0)
                return x;
        return policy_from_json(j, ret, err);
}

int policy_from_json(const json_t *j, struct policy **ret, struct attest_err *err)
{
        static const char *const top[] = {"name", "selinux", "trusted_keys", "cfi", "kernel",
                                          "tpm",  "ima",     "boot",         NULL};
        static const char *const k_selinux[] = {"initialized", "enforcing",     "checkreqprot",
                                                "policycaps",  "policy_sha256", "never_permissive",
                                                NULL};
        static const char *const k_tk[] = {"sources", "rng", "requested", "anchored", NULL};
        static const char *const k_cfi[] = {"enabled", "mode", "permissive", "anchored", NULL};
        static const char *const k_kernel[] = {"versions", "anchored", NULL};
        static const char *const k_tpm[] = {"pcrs", NULL};
        static const char *const k_ima[] = {"require_boot_aggregate", "runtime", NULL};
        _cleanup_(policy_freep) struct policy *pol = NULL;
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *s, *v;
        int x;

        if ((x = jpath_object(j, "$", top, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        if (!(pol = calloc(1, sizeof(*pol))))
                return -ENOMEM;
        pol->selinux.initialized = pol->selinux.enforcing = pol->selinux.checkreqprot = -1;
        pol->selinux.never_permissive = -1;
        pol->tk.anchored = pol->cfi.enabled = pol->cfi.permissive = pol->cfi.anchored = -1;
        pol->kernel.anchored = pol->require_boot_aggregate = -1;

        if (!(v = json_object_get(j, "name")))
                return attest_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, "$.name: missing");
        if ((x = pword(v, "$.name", pol->name, sizeof(pol->name), false, err)) < 0)
                return x;

        if ((x = section(j, "selinux", k_selinux, &s, p, err)) < 0 ||
            (s && (x = parse_selinux(s, p, pol, err)) < 0))
                return x;
        pol->has_selinux = s;

        if ((x = section(j, "trusted_keys", k_tk, &s, p, err)) < 0 ||
            (s && (x = parse_tk(s, p, pol, err)) < 0))
                return x;
        pol->has_tk = s;

        if ((x = section(j, "cfi", k_cfi, &s, p, err)) < 0 ||
            (s && (x = parse_cfi(s, p, pol, err)) < 0))
                return x;
        pol->has_cfi = s;

        if ((x = section(j, "kernel", k_kernel, &s, p, err)) < 0)
                return x;
        if (s) {
                json_t *a;

                if (!json_object_get(s, "versions"))
                        return attest_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD,
                                           "%s.versions: missing", p);
                if ((x = parray(s, p, "versions", POLICY_VERSIONS_MAX, &a, q, err)) < 0)
                        return x;
                for (size_t i = 0; i < json_array_size(a); i++) {
                        char r[JPATH_MAX];

                        jpath_index(r, q, i);
                        if ((x = pword(json_array_get(a, i), r, pol->kernel.version[i], GLOB_MAX,
                                       true, err)) < 0)
                                return x;
                }
                pol->kernel.nversions = (unsigned)json_array_size(a);
                if ((x = policy_tri_bool(s, p, "anchored", &pol->kernel.anchored, err)) < 0)
                        return x;
                pol->has_kernel = true;
        }

        if ((x = section(j, "tpm", k_tpm, &s, p, err)) < 0)
                return x;
        if (s) {
                jpath_join(q, p, "pcrs");
                if ((x = pcrs_from_json(json_object_get(s, "pcrs"), q, &pcr_codes, &pol->pcrs,
                                        err)) < 0)
                        return x;
                pol->has_tpm = true;
        }

        if ((x = section(j, "ima", k_ima, &s, p, err)) < 0)
                return x;
        if (s) {
                if ((x = policy_tri_bool(s, p, "require_boot_aggregate",
                                         &pol->require_boot_aggregate, err)) < 0)
                        return x;
                /* runtime: the file allowlist, parsed once into its hash sets */
                if ((v = json_object_get(s, "runtime"))) {
                        jpath_join(q, p, "runtime");
                        if ((x = rt_policy_from_json(v, q, &pol->runtime, err)) < 0)
                                return x;
                }
                pol->has_ima = true;
        }
        /* bootv: measured boot, parsed in policy/boot.c */
        if ((s = json_object_get(j, "boot")) &&
            (x = boot_policy_from_json(s, "$.boot", &pol->boot, err)) < 0)
                return x;
        *ret = TAKE_PTR(pol);
        return 0;
}

json_t *policy_hex_json(const uint8_t *p, size_t n)
{
        char s[2 * BANK_DIGEST_MAX + 1];

        hex_encode(p, n < BANK_DIGEST_MAX ? n : BANK_DIGEST_MAX, s);
        return json_string(s);
}
