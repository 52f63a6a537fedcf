/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"
#include "jpath.h"
#include "policy.h"

#define C_JSON "policy_json"
#define C_TYPE "policy_type"
#define C_UNKNOWN "policy_unknown_field"
#define C_MISSING "policy_missing_field"
#define C_VALUE "policy_bad_value"
#define C_HEX "policy_bad_hex"
#define C_GLOB "policy_bad_glob"
#define C_EMPTY "policy_empty_section"

#define WORD_MAX 32
#define GLOB_MAX 128

/* -1: not checked; 0/1: expected value */
typedef signed char tri;

struct policy {
        char name[POLICY_NAME_MAX + 1];
        bool has_selinux, has_tk, has_cfi, has_kernel, has_tpm, has_ima;
        struct {
                tri initialized, enforcing, checkreqprot, never_permissive;
                unsigned ncaps;
                char cap[CDATA_KV_MAX][CDATA_KEY_MAX + 1];
                bool cap_val[CDATA_KV_MAX];
                bool has_hashes;
                unsigned nhashes;
                uint8_t hash[POLICY_HASHES_MAX][32];
        } selinux;
        struct {
                unsigned nsources;
                char source[POLICY_SOURCES_MAX][WORD_MAX];
                tri anchored;
        } tk;
        struct {
                tri enabled, permissive, anchored;
        } cfi;
        struct {
                unsigned nversions;
                char version[POLICY_VERSIONS_MAX][GLOB_MAX];
                tri anchored;
        } kernel;
        struct pcr_set pcrs;
        tri require_boot_aggregate;
};

struct policy *policy_free(struct policy *p)
{
        free(p);
        return NULL;
}

const char *policy_name(const struct policy *p)
{
        return p->name;
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

static int pbool(const json_t *o, const char *path, const char *key, tri *ret,
                 struct attest_err *err)
{
        json_t *v = json_object_get(o, key);
        char p[JPATH_MAX];

        *ret = -1;
        if (!v)
                return 0;
        jpath_join(p, path, key);
        if (!json_is_boolean(v))
                return jpath_fail(err, -EBADMSG, C_TYPE, p, "not a boolean");
        *ret = json_is_true(v);
        return 0;
}

static bool word_char(char c)
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
                return jpath_fail(err, -EBADMSG, C_TYPE, p, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        if (n == 0 || n >= cap)
                return jpath_fail(err, -EBADMSG, glob ? C_GLOB : C_VALUE, p,
                                  "length %zu, want 1-%zu", n, cap - 1);
        for (size_t i = 0; i < n; i++)
                if (!word_char(s[i]) && !(glob && (s[i] == '*' || s[i] == '?')))
                        return jpath_fail(err, -EBADMSG, glob ? C_GLOB : C_VALUE, p,
                                          "byte %zu is not %s", i,
                                          glob ? "[A-Za-z0-9_.+~-] or a '*' '?' wildcard"
                                               : "[A-Za-z0-9_.+~-]");
        if (glob && strstr(s, "**"))
                return jpath_fail(err, -EBADMSG, C_GLOB, p, "'**' is not a pattern; use '*'");
        memcpy(out, s, n + 1);
        return 0;
}

/* An array of 1..max members at o.key; *ret the array. */
static int parray(const json_t *o, const char *path, const char *key, size_t max, json_t **ret,
                  char *p, struct attest_err *err)
{
        json_t *v = json_object_get(o, key);

        jpath_join(p, path, key);
        if (!json_is_array(v))
                return jpath_fail(err, -EBADMSG, C_TYPE, p, "not an array");
        if (json_array_size(v) == 0)
                return jpath_fail(err, -EBADMSG, C_VALUE, p, "empty list");
        if (json_array_size(v) > max)
                return jpath_fail(err, -EBADMSG, C_VALUE, p, "%zu entries > %zu",
                                  json_array_size(v), max);
        *ret = v;
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
        if ((x = jpath_object(v, p, keys, C_TYPE, C_UNKNOWN, err)) < 0)
                return x;
        if (json_object_size(v) == 0)
                return jpath_fail(err, -EBADMSG, C_EMPTY, p,
                                  "an empty section checks nothing; leave it out");
        *ret = v;
        return 0;
}

static int parse_selinux(const json_t *o, const char *path, struct policy *pol,
                         struct attest_err *err)
{
        char p[JPATH_MAX], q[JPATH_MAX];
        const char *key;
        json_t *v, *a;
        int x;

        if ((x = pbool(o, path, "initialized", &pol->selinux.initialized, err)) < 0 ||
            (x = pbool(o, path, "enforcing", &pol->selinux.enforcing, err)) < 0 ||
            (x = pbool(o, path, "checkreqprot", &pol->selinux.checkreqprot, err)) < 0 ||
            (x = pbool(o, path, "never_permissive", &pol->selinux.never_permissive, err)) < 0)
                return x;
        if ((a = json_object_get(o, "policycaps"))) {
                jpath_join(p, path, "policycaps");
                if (!json_is_object(a))
                        return jpath_fail(err, -EBADMSG, C_TYPE, p, "not an object");
                if (json_object_size(a) == 0)
                        return jpath_fail(err, -EBADMSG, C_EMPTY, p, "no capability listed");
                if (json_object_size(a) > CDATA_KV_MAX)
                        return jpath_fail(err, -EBADMSG, C_VALUE, p, "more than %d capabilities",
                                          CDATA_KV_MAX);
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
                                return jpath_fail(err, -EBADMSG, C_VALUE, q,
                                                  "not a capability name [a-z0-9_]{1,64}");
                        if (!json_is_boolean(v))
                                return jpath_fail(err, -EBADMSG, C_TYPE, q, "not a boolean");
                        memcpy(pol->selinux.cap[i], key, n + 1);
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
                                return jpath_fail(err, -EBADMSG, C_TYPE, q, "not a string");
                        if (json_string_length(h) != 64 ||
                            hex_decode(json_string_value(h), 64, pol->selinux.hash[i], 32, &got) <
                                    0)
                                return jpath_fail(err, -EBADMSG, C_HEX, q,
                                                  "not a sha256 digest (64 hex digits)");
                        for (size_t k = 0; k < i; k++)
                                if (memcmp(pol->selinux.hash[k], pol->selinux.hash[i], 32) == 0)
                                        return jpath_fail(err, -EBADMSG, C_VALUE, q,
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

static int parse_pcrs(const json_t *o, const char *path, struct pcr_set *ret,
                      struct attest_err *err)
{
        const char *bname, *idx;
        json_t *bv, *v;
        unsigned count = 0;

        if (!json_is_object(o))
                return jpath_fail(err, -EBADMSG, C_TYPE, path, "not an object");
        json_object_foreach((json_t *)o, bname, bv)
        {
                char bp[JPATH_MAX];
                int b = bank_from_name(bname, strlen(bname));

                jpath_join(bp, path, bname);
                if (b < 0)
                        return jpath_fail(err, -EBADMSG, C_UNKNOWN, bp, "unknown PCR bank");
                if (!json_is_object(bv))
                        return jpath_fail(err, -EBADMSG, C_TYPE, bp, "not an object");
                json_object_foreach(bv, idx, v)
                {
                        char ip[JPATH_MAX];
                        size_t n = strlen(idx), got;
                        unsigned i = 0;

                        jpath_join(ip, bp, idx);
                        bool ok = n >= 1 && n <= 2 && !(n == 2 && idx[0] == '0');
                        for (size_t k = 0; ok && k < n; k++) {
                                if (idx[k] < '0' || idx[k] > '9')
                                        ok = false;
                                else
                                        i = i * 10 + (unsigned)(idx[k] - '0');
                        }
                        if (!ok || i >= PCR_COUNT)
                                return jpath_fail(err, -EBADMSG, C_VALUE, ip,
                                                  "not a PCR index 0-23");
                        if (!json_is_string(v))
                                return jpath_fail(err, -EBADMSG, C_TYPE, ip, "not a string");
                        if (json_string_length(v) != 2 * bank_size(b) ||
                            hex_decode(json_string_value(v), json_string_length(v), ret->v[b][i],
                                       bank_size(b), &got) < 0)
                                return jpath_fail(err, -EBADMSG, C_HEX, ip,
                                                  "not a %s digest (%zu hex digits)", bank_name(b),
                                                  2 * bank_size(b));
                        ret->have[b] |= 1u << i;
                        count++;
                }
        }
        if (!count)
                return jpath_fail(err, -EBADMSG, C_EMPTY, path, "no PCR listed");
        return 0;
}

int policy_parse(const char *json, size_t len, struct policy **ret, struct attest_err *err)
{
        static const char *const top[] = {"name",   "selinux", "trusted_keys", "cfi",
                                          "kernel", "tpm",     "ima",          NULL};
        static const char *const k_selinux[] = {"initialized", "enforcing",     "checkreqprot",
                                                "policycaps",  "policy_sha256", "never_permissive",
                                                NULL};
        static const char *const k_tk[] = {"sources", "anchored", NULL};
        static const char *const k_cfi[] = {"enabled", "permissive", "anchored", NULL};
        static const char *const k_kernel[] = {"versions", "anchored", NULL};
        static const char *const k_tpm[] = {"pcrs", NULL};
        static const char *const k_ima[] = {"require_boot_aggregate", NULL};
        _cleanup_(policy_freep) struct policy *pol = NULL;
        json_auto_t *j = NULL;
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *s, *v;
        int x;

        if ((x = jpath_load(json, len, POLICY_JSON_MAX, C_JSON, &j, err)) < 0)
                return x == -E2BIG ? attest_fail(err, x, "policy_too_big", "%s", err->msg) : x;
        if ((x = jpath_object(j, "$", top, C_TYPE, C_UNKNOWN, err)) < 0)
                return x;
        if (!(pol = calloc(1, sizeof(*pol))))
                return -ENOMEM;
        pol->selinux.initialized = pol->selinux.enforcing = pol->selinux.checkreqprot = -1;
        pol->selinux.never_permissive = -1;
        pol->tk.anchored = pol->cfi.enabled = pol->cfi.permissive = pol->cfi.anchored = -1;
        pol->kernel.anchored = pol->require_boot_aggregate = -1;

        if (!(v = json_object_get(j, "name")))
                return attest_fail(err, -EBADMSG, C_MISSING, "$.name: missing");
        if ((x = pword(v, "$.name", pol->name, sizeof(pol->name), false, err)) < 0)
                return x;

        if ((x = section(j, "selinux", k_selinux, &s, p, err)) < 0 ||
            (s && (x = parse_selinux(s, p, pol, err)) < 0))
                return x;
        pol->has_selinux = s;

        if ((x = section(j, "trusted_keys", k_tk, &s, p, err)) < 0)
                return x;
        if (s) {
                if (!json_object_get(s, "sources"))
                        return attest_fail(err, -EBADMSG, C_MISSING, "%s.sources: missing", p);
                if ((x = parse_words(s, p, "sources", POLICY_SOURCES_MAX, pol->tk.source,
                                     &pol->tk.nsources, err)) < 0 ||
                    (x = pbool(s, p, "anchored", &pol->tk.anchored, err)) < 0)
                        return x;
                pol->has_tk = true;
        }

        if ((x = section(j, "cfi", k_cfi, &s, p, err)) < 0)
                return x;
        if (s) {
                if ((x = pbool(s, p, "enabled", &pol->cfi.enabled, err)) < 0 ||
                    (x = pbool(s, p, "permissive", &pol->cfi.permissive, err)) < 0 ||
                    (x = pbool(s, p, "anchored", &pol->cfi.anchored, err)) < 0)
                        return x;
                pol->has_cfi = true;
        }

        if ((x = section(j, "kernel", k_kernel, &s, p, err)) < 0)
                return x;
        if (s) {
                json_t *a;

                if (!json_object_get(s, "versions"))
                        return attest_fail(err, -EBADMSG, C_MISSING, "%s.versions: missing", p);
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
                if ((x = pbool(s, p, "anchored", &pol->kernel.anchored, err)) < 0)
                        return x;
                pol->has_kernel = true;
        }

        if ((x = section(j, "tpm", k_tpm, &s, p, err)) < 0)
                return x;
        if (s) {
                jpath_join(q, p, "pcrs");
                if ((x = parse_pcrs(json_object_get(s, "pcrs"), q, &pol->pcrs, err)) < 0)
                        return x;
                pol->has_tpm = true;
        }

        if ((x = section(j, "ima", k_ima, &s, p, err)) < 0)
                return x;
        if (s) {
                if ((x = pbool(s, p, "require_boot_aggregate", &pol->require_boot_aggregate, err)) <
                    0)
                        return x;
                pol->has_ima = true;
        }
        *ret = TAKE_PTR(pol);
        return 0;
}

/* ---- evaluation ---- */

enum result {
        R_PASS,
        R_FAIL,
        R_MISSING,
};

static const char *const result_names[] = {"pass", "fail", "missing"};

struct verdict {
        json_t *claims;
        bool failed;
        bool oom;
};

/* Append a claim; takes expected and observed (either may be NULL: JSON null). */
static void claim(struct verdict *vd, const char *name, json_t *expected, json_t *observed,
                  enum result r, bool anchored, int64_t entry, const char *reason)
{
        json_t *c = json_object();

        if (!c || json_object_set_new(c, "name", json_string(name)) < 0 ||
            json_object_set_new(c, "expected", expected ? expected : json_null()) < 0 ||
            json_object_set_new(c, "observed", observed ? observed : json_null()) < 0 ||
            json_object_set_new(c, "result", json_string(result_names[r])) < 0 ||
            json_object_set_new(c, "anchored", json_boolean(anchored)) < 0 ||
            (entry >= 0 && json_object_set_new(c, "entry", json_integer(entry)) < 0) ||
            (reason && r != R_PASS && json_object_set_new(c, "reason", json_string(reason)) < 0) ||
            json_array_append_new(vd->claims, c) < 0) {
                vd->oom = true;
                return;
        }
        if (r != R_PASS)
                vd->failed = true;
}

static json_t *hexj(const uint8_t *p, size_t n)
{
        char s[2 * BANK_DIGEST_MAX + 1];

        hex_encode(p, n < BANK_DIGEST_MAX ? n : BANK_DIGEST_MAX, s);
        return json_string(s);
}

static const struct cdata_state *latest_selinux(const struct cdata_claims *c)
{
        return c->n_selinux ? &c->selinux[c->n_selinux - 1] : NULL;
}

/* A 0/1 key of the latest selinux-state as a claim. */
static void selinux_flag(struct verdict *vd, const struct cdata_claims *c, const char *name,
                         const char *key, bool want)
{
        const struct cdata_state *s = latest_selinux(c);
        char reason[128];
        int v;

        if (!s) {
                claim(vd, name, json_boolean(want), NULL, R_MISSING, false, -1,
                      "no selinux-state entry in the verified log");
                return;
        }
        v = cdata_kv_bool(&s->kvs, key);
        if (v < 0) {
                snprintf(reason, sizeof(reason), "entry %" PRIu64 ": selinux-state has %s '%s'",
                         s->entry, v == -ENOENT ? "no key" : "a non 0/1 value for", key);
                claim(vd, name, json_boolean(want), NULL, v == -ENOENT ? R_MISSING : R_FAIL, true,
                      (int64_t)s->entry, reason);
                return;
        }
        snprintf(reason, sizeof(reason), "entry %" PRIu64 ": %s=%d", s->entry, key, v);
        claim(vd, name, json_boolean(want), json_boolean(v), (bool)v == want ? R_PASS : R_FAIL,
              true, (int64_t)s->entry, reason);
}

static void eval_never_permissive(struct verdict *vd, const struct cdata_claims *c)
{
        const char *name = "selinux.never_permissive";
        char reason[160];
        uint32_t first = UINT32_MAX;

        if (!c->n_selinux) {
                claim(vd, name, json_true(), NULL, R_MISSING, false, -1,
                      "no selinux-state entry in the verified log");
                return;
        }
        if (c->selinux_dropped) {
                snprintf(reason, sizeof(reason),
                         "%" PRIu64 " selinux-state entries past the history cap were not kept",
                         c->selinux_dropped);
                claim(vd, name, json_true(), NULL, R_FAIL, true, -1, reason);
                return;
        }
        for (uint32_t i = 0; i < c->n_selinux && first == UINT32_MAX; i++)
                if (cdata_kv_bool(&c->selinux[i].kvs, "enforcing") == 1)
                        first = i;
        if (first == UINT32_MAX) {
                claim(vd, name, json_true(), json_false(), R_FAIL, true,
                      (int64_t)c->selinux[c->n_selinux - 1].entry,
                      "no selinux-state since boot had enforcing=1");
                return;
        }
        for (uint32_t i = first + 1; i < c->n_selinux; i++) {
                const struct cdata_state *s = &c->selinux[i];
                int enf = cdata_kv_bool(&s->kvs, "enforcing");
                int init = cdata_kv_bool(&s->kvs, "initialized");

                if (enf == 1 && init != 0)
                        continue;
                snprintf(reason, sizeof(reason),
                         "entry %" PRIu64 ": %s after enforcing=1 at entry %" PRIu64, s->entry,
                         enf != 1 ? (enf == 0 ? "enforcing=0" : "enforcing not 0/1")
                                  : "initialized=0",
                         c->selinux[first].entry);
                claim(vd, name, json_true(), json_false(), R_FAIL, true, (int64_t)s->entry, reason);
                return;
        }
        claim(vd, name, json_true(), json_true(), R_PASS, true,
              (int64_t)c->selinux[c->n_selinux - 1].entry, NULL);
}

static void eval_selinux(struct verdict *vd, const struct policy *p, const struct cdata_claims *c)
{
        char name[CDATA_KEY_MAX + 32], reason[160];

        if (p->selinux.initialized >= 0)
                selinux_flag(vd, c, "selinux.initialized", "initialized", p->selinux.initialized);
        if (p->selinux.enforcing >= 0)
                selinux_flag(vd, c, "selinux.enforcing", "enforcing", p->selinux.enforcing);
        if (p->selinux.checkreqprot >= 0)
                selinux_flag(vd, c, "selinux.checkreqprot", "checkreqprot",
                             p->selinux.checkreqprot);
        for (unsigned i = 0; i < p->selinux.ncaps; i++) {
                snprintf(name, sizeof(name), "selinux.policycaps.%s", p->selinux.cap[i]);
                selinux_flag(vd, c, name, p->selinux.cap[i], p->selinux.cap_val[i]);
        }
        if (p->selinux.never_permissive == 1)
                eval_never_permissive(vd, c);
        if (p->selinux.has_hashes) {
                json_t *exp = json_array();
                bool ok = false;

                for (unsigned i = 0; i < p->selinux.nhashes; i++) {
                        json_array_append_new(exp, hexj(p->selinux.hash[i], 32));
                        if (c->policy_hash_seen && c->policy_hash_len == 32 &&
                            memcmp(c->policy_hash, p->selinux.hash[i], 32) == 0)
                                ok = true;
                }
                if (!c->policy_hash_seen) {
                        claim(vd, "selinux.policy_sha256", exp, NULL, R_MISSING, false, -1,
                              "no selinux-policy-hash entry in the verified log");
                } else {
                        snprintf(reason, sizeof(reason),
                                 "entry %" PRIu64 ": the loaded policy's hash is not in the "
                                 "accepted list",
                                 c->policy_hash_entry);
                        claim(vd, "selinux.policy_sha256", exp,
                              hexj(c->policy_hash, c->policy_hash_len), ok ? R_PASS : R_FAIL, true,
                              (int64_t)c->policy_hash_entry, reason);
                }
        }
}

/* "<section>.anchored": the claim must come from a measured entry. */
static void anchored_claim(struct verdict *vd, const char *section, bool have, bool anchored,
                           int64_t entry, const char *measured, const char *origin)
{
        char name[64], reason[200];

        snprintf(name, sizeof(name), "%s.anchored", section);
        if (!have) {
                snprintf(reason, sizeof(reason),
                         "no %s entry in the verified log, and no host fact", measured);
                claim(vd, name, json_true(), NULL, R_MISSING, false, -1, reason);
                return;
        }
        snprintf(reason, sizeof(reason),
                 "only reported by the agent (%s), not measured: no %s entry in the verified "
                 "log, and the policy requires an anchored claim",
                 origin, measured);
        claim(vd, name, json_true(), json_boolean(anchored), anchored ? R_PASS : R_FAIL, anchored,
              entry, reason);
}

static void eval_tk(struct verdict *vd, const struct policy *p, const struct cdata_claims *c,
                    const struct evidence_host *h)
{
        const struct cdata_kv *kv =
                c->trusted_keys.raw ? cdata_kv_get(&c->trusted_keys.kvs, "source") : NULL;
        bool anchored = kv != NULL, have = anchored || h->tk_present;
        int64_t entry = anchored ? (int64_t)c->trusted_keys.entry : -1;
        char src[WORD_MAX + 1] = "", origin[64], reason[160];
        json_t *exp = json_array();
        bool ok = false;

        if (anchored)
                snprintf(src, sizeof(src), "%.*s", (int)kv->val_len, kv->val);
        else if (h->tk_present)
                snprintf(src, sizeof(src), "%s", h->tk_source);
        for (unsigned i = 0; i < p->tk.nsources; i++) {
                json_array_append_new(exp, json_string(p->tk.source[i]));
                if (have && strcmp(src, p->tk.source[i]) == 0)
                        ok = true;
        }
        if (!have) {
                claim(vd, "trusted_keys.source", exp, NULL, R_MISSING, false, -1,
                      c->trusted_keys.raw ? "trusted-keys-source entry has no source key"
                                          : "no trusted-keys-source entry in the verified log, "
                                            "and the agent reported none");
        } else {
                snprintf(reason, sizeof(reason), "source '%s' is not accepted", src);
                claim(vd, "trusted_keys.source", exp, json_string(src), ok ? R_PASS : R_FAIL,
                      anchored, entry, reason);
        }
        if (p->tk.anchored == 1) {
                snprintf(origin, sizeof(origin), "%s", h->tk_present ? h->tk_origin : "-");
                anchored_claim(vd, "trusted_keys", have, anchored, entry, "trusted-keys-source",
                               origin);
        }
}

static void eval_cfi(struct verdict *vd, const struct policy *p, const struct cdata_claims *c,
                     const struct evidence_host *h)
{
        bool anchored = c->cfi.raw != NULL, have = anchored || h->cfi_present;
        int64_t entry = anchored ? (int64_t)c->cfi.entry : -1;
        static const char *const keys[] = {"enabled", "permissive"};
        const tri want[] = {p->cfi.enabled, p->cfi.permissive};
        const bool host_val[] = {h->cfi_enabled, h->cfi_permissive};
        char name[32], reason[160];

        for (int k = 0; k < 2; k++) {
                int v;

                if (want[k] < 0)
                        continue;
                snprintf(name, sizeof(name), "cfi.%s", keys[k]);
                if (!have) {
                        claim(vd, name, json_boolean(want[k]), NULL, R_MISSING, false, -1,
                              "no cfi-state entry in the verified log, and the agent reported "
                              "no CFI state");
                        continue;
                }
                v = anchored ? cdata_kv_bool(&c->cfi.kvs, keys[k]) : host_val[k];
                if (v < 0) {
                        snprintf(reason, sizeof(reason), "entry %" PRIu64 ": cfi-state has %s '%s'",
                                 c->cfi.entry, v == -ENOENT ? "no key" : "a non 0/1 value for",
                                 keys[k]);
                        claim(vd, name, json_boolean(want[k]), NULL,
                              v == -ENOENT ? R_MISSING : R_FAIL, true, entry, reason);
                        continue;
                }
                if (anchored)
                        snprintf(reason, sizeof(reason), "entry %" PRIu64 ": %s=%d", c->cfi.entry,
                                 keys[k], v);
                else
                        snprintf(reason, sizeof(reason), "agent reported %s=%d (from %s)", keys[k],
                                 v, h->cfi_source);
                claim(vd, name, json_boolean(want[k]), json_boolean(v),
                      (bool)v == (bool)want[k] ? R_PASS : R_FAIL, anchored, entry, reason);
        }
        if (p->cfi.anchored == 1)
                anchored_claim(vd, "cfi", have, anchored, entry, "cfi-state",
                               h->cfi_present ? h->cfi_source : "-");
}

static void eval_kernel(struct verdict *vd, const struct policy *p, const struct cdata_claims *c,
                        const struct evidence_host *h)
{
        bool anchored = c->kernel_version_seen, have = anchored || h->kernel[0];
        const char *ver = anchored ? c->kernel_version : h->kernel;
        int64_t entry = anchored ? (int64_t)c->kernel_version_entry : -1;
        json_t *exp = json_array();
        char reason[200];
        bool ok = false;

        for (unsigned i = 0; i < p->kernel.nversions; i++) {
                json_array_append_new(exp, json_string(p->kernel.version[i]));
                if (have && policy_glob_match(p->kernel.version[i], ver))
                        ok = true;
        }
        if (!have) {
                claim(vd, "kernel.version", exp, NULL, R_MISSING, false, -1,
                      "no kernel_version entry in the verified log, and the agent reported none");
        } else {
                snprintf(reason, sizeof(reason), "%s '%.100s' matches no accepted version",
                         anchored ? "measured" : "reported", ver);
                claim(vd, "kernel.version", exp, json_string(ver), ok ? R_PASS : R_FAIL, anchored,
                      entry, reason);
        }
        if (p->kernel.anchored == 1)
                anchored_claim(vd, "kernel", have, anchored, entry, "kernel_version", "uname");
}

static void eval_tpm(struct verdict *vd, const struct policy *p, const struct verify_result *vr,
                     const struct evidence *ev)
{
        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char name[48], reason[96];
                        bool quoted;

                        if (!(p->pcrs.have[b] & (1u << i)))
                                continue;
                        snprintf(name, sizeof(name), "tpm.pcrs.%s.%u", bank_name(b), i);
                        quoted = (vr->quote.sel.mask[b] & (1u << i)) &&
                                 (ev->pcrs.have[b] & (1u << i));
                        if (!quoted) {
                                claim(vd, name, hexj(p->pcrs.v[b][i], bank_size(b)), NULL,
                                      R_MISSING, false, -1, "PCR not in the quote's selection");
                                continue;
                        }
                        snprintf(reason, sizeof(reason), "quoted %s PCR %u differs", bank_name(b),
                                 i);
                        claim(vd, name, hexj(p->pcrs.v[b][i], bank_size(b)),
                              hexj(ev->pcrs.v[b][i], bank_size(b)),
                              memcmp(p->pcrs.v[b][i], ev->pcrs.v[b][i], bank_size(b)) == 0 ? R_PASS
                                                                                           : R_FAIL,
                              true, -1, reason);
                }
}

static void eval_ima(struct verdict *vd, const struct policy *p, const struct verify_result *vr)
{
        char reason[300];

        if (p->require_boot_aggregate != 1)
                return;
        if (!vr->boot_aggregate_seen) {
                claim(vd, "ima.boot_aggregate", json_true(), json_false(), R_FAIL, true, -1,
                      "entry 0 of this boot's log is not a boot_aggregate");
                return;
        }
        snprintf(reason, sizeof(reason),
                 "boot_aggregate (entry 0) did not match the quoted PCRs%s%.200s",
                 vr->boot_aggregate_err.msg[0] ? ": " : "", vr->boot_aggregate_err.msg);
        claim(vd, "ima.boot_aggregate", json_true(), json_boolean(vr->boot_aggregate_ok),
              vr->boot_aggregate_ok ? R_PASS : R_FAIL, true, 0, reason);
}

int policy_eval(const struct policy *p, const struct verify_result *vr, const struct evidence *ev,
                json_t **ret_verdict)
{
        static const char *const names[] = {"selinux", "trusted_keys", "cfi",
                                            "kernel",  "tpm",          "ima"};
        json_auto_t *v = json_object(), *unchecked = json_array();
        struct verdict vd = {.claims = json_array()};
        const struct cdata_claims *c;
        bool has[6];

        if (!p || !vr || !ev || !ret_verdict) {
                json_decref(vd.claims);
                return -EINVAL;
        }
        if (!v || !unchecked || !vd.claims) {
                json_decref(vd.claims);
                return -ENOMEM;
        }
        c = &vr->next.claims;
        has[0] = p->has_selinux;
        has[1] = p->has_tk;
        has[2] = p->has_cfi;
        has[3] = p->has_kernel;
        has[4] = p->has_tpm;
        has[5] = p->has_ima;
        if (p->has_selinux)
                eval_selinux(&vd, p, c);
        if (p->has_tk)
                eval_tk(&vd, p, c, &ev->host);
        if (p->has_cfi)
                eval_cfi(&vd, p, c, &ev->host);
        if (p->has_kernel)
                eval_kernel(&vd, p, c, &ev->host);
        if (p->has_tpm)
                eval_tpm(&vd, p, vr, ev);
        if (p->has_ima)
                eval_ima(&vd, p, vr);
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (!has[i] && json_array_append_new(unchecked, json_string(names[i])) < 0)
                        vd.oom = true;
        if (vd.oom ||
            json_object_set_new(v, "status", json_string(vd.failed ? "fail" : "pass")) < 0 ||
            json_object_set_new(v, "policy", json_string(p->name)) < 0 ||
            json_object_set_new(v, "claims", vd.claims) < 0 ||
            json_object_set(v, "sections_unchecked", unchecked) < 0)
                return -ENOMEM;
        *ret_verdict = TAKE_PTR(v);
        return 0;
}

/* ---- a policy from a known-good host ---- */

static bool never_permissive_holds(const struct cdata_claims *c)
{
        uint32_t i = 0;

        if (!c->n_selinux || c->selinux_dropped)
                return false;
        while (i < c->n_selinux && cdata_kv_bool(&c->selinux[i].kvs, "enforcing") != 1)
                i++;
        if (i == c->n_selinux)
                return false;
        for (i++; i < c->n_selinux; i++)
                if (cdata_kv_bool(&c->selinux[i].kvs, "enforcing") != 1 ||
                    cdata_kv_bool(&c->selinux[i].kvs, "initialized") == 0)
                        return false;
        return true;
}

static bool valid_word(const char *s, size_t n)
{
        if (n == 0 || n >= WORD_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!word_char(s[i]))
                        return false;
        return true;
}

int policy_from_host(const struct verify_result *vr, const struct evidence *ev, const char *name,
                     json_t **ret_policy)
{
        json_auto_t *pol = json_object();
        const struct cdata_claims *c;
        const struct evidence_host *h;
        json_t *sec;
        bool ok = true;

        if (!vr || !ev || !name || !ret_policy || !valid_word(name, strlen(name)) ||
            strlen(name) > POLICY_NAME_MAX)
                return -EINVAL;
        if (!pol)
                return -ENOMEM;
        c = &vr->next.claims;
        h = &ev->host;
        ok = json_object_set_new(pol, "name", json_string(name)) == 0;

        /* selinux: the latest state, its policy capabilities, the policy hash */
        if (c->n_selinux) {
                const struct cdata_state *s = &c->selinux[c->n_selinux - 1];
                json_t *caps = json_object();

                sec = json_object();
                for (uint32_t i = 0; i < s->kvs.n; i++) {
                        const struct cdata_kv *kv = &s->kvs.kv[i];
                        char key[CDATA_KEY_MAX + 1];

                        if (kv->val_len != 1 || (kv->val[0] != '0' && kv->val[0] != '1'))
                                continue;
                        snprintf(key, sizeof(key), "%.*s", (int)kv->key_len, kv->key);
                        json_t *b = json_boolean(kv->val[0] == '1');
                        if (!strcmp(key, "initialized") || !strcmp(key, "enforcing") ||
                            !strcmp(key, "checkreqprot"))
                                ok = ok && json_object_set_new(sec, key, b) == 0;
                        else
                                ok = ok && json_object_set_new(caps, key, b) == 0;
                }
                if (json_object_size(caps))
                        ok = ok && json_object_set_new(sec, "policycaps", caps) == 0;
                else
                        json_decref(caps);
                if (c->policy_hash_seen && c->policy_hash_len == 32)
                        ok = ok &&
                             json_object_set_new(sec, "policy_sha256",
                                                 json_pack("[o]", hexj(c->policy_hash, 32))) == 0;
                if (never_permissive_holds(c))
                        ok = ok && json_object_set_new(sec, "never_permissive", json_true()) == 0;
                if (json_object_size(sec))
                        ok = ok && json_object_set_new(pol, "selinux", sec) == 0;
                else
                        json_decref(sec);
        }

        /* trusted keys: the measured source, else the reported one */
        const struct cdata_kv *tk =
                c->trusted_keys.raw ? cdata_kv_get(&c->trusted_keys.kvs, "source") : NULL;
        if (tk && valid_word(tk->val, tk->val_len))
                ok = ok && json_object_set_new(pol, "trusted_keys",
                                               json_pack("{s:[s%], s:b}", "sources", tk->val,
                                                         (size_t)tk->val_len, "anchored", 1)) == 0;
        else if (h->tk_present)
                ok = ok && json_object_set_new(pol, "trusted_keys",
                                               json_pack("{s:[s], s:b}", "sources", h->tk_source,
                                                         "anchored", 0)) == 0;

        /* cfi */
        int en = c->cfi.raw ? cdata_kv_bool(&c->cfi.kvs, "enabled") : -1;
        int pe = c->cfi.raw ? cdata_kv_bool(&c->cfi.kvs, "permissive") : -1;
        if (c->cfi.raw && (en >= 0 || pe >= 0)) {
                sec = json_pack("{s:b}", "anchored", 1);
                if (en >= 0)
                        ok = ok && json_object_set_new(sec, "enabled", json_boolean(en)) == 0;
                if (pe >= 0)
                        ok = ok && json_object_set_new(sec, "permissive", json_boolean(pe)) == 0;
                ok = ok && json_object_set_new(pol, "cfi", sec) == 0;
        } else if (h->cfi_present) {
                ok = ok && json_object_set_new(pol, "cfi",
                                               json_pack("{s:b, s:b, s:b}", "enabled",
                                                         h->cfi_enabled, "permissive",
                                                         h->cfi_permissive, "anchored", 0)) == 0;
        }

        /* kernel: the exact version, when it is a valid pattern */
        const char *ver = c->kernel_version_seen ? c->kernel_version : h->kernel;
        bool ver_ok = ver[0] && strlen(ver) < GLOB_MAX;
        for (const char *q = ver; *q; q++)
                if (!word_char(*q))
                        ver_ok = false;
        if (ver_ok)
                ok = ok && json_object_set_new(pol, "kernel",
                                               json_pack("{s:[s], s:b}", "versions", ver,
                                                         "anchored", c->kernel_version_seen)) == 0;

        /* tpm: every quoted PCR but the IMA one, which changes with each measurement */
        json_t *pcrs = json_object();
        for (int b = 0; b < BANK_COUNT && pcrs; b++) {
                json_t *bank = NULL;

                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char idx[4];

                        if (i == IMA_PCR || !(vr->quote.sel.mask[b] & ev->pcrs.have[b] & (1u << i)))
                                continue;
                        if (!bank && !(bank = json_object()))
                                break;
                        snprintf(idx, sizeof(idx), "%u", i);
                        ok = ok && json_object_set_new(bank, idx,
                                                       hexj(ev->pcrs.v[b][i], bank_size(b))) == 0;
                }
                if (bank)
                        ok = ok && json_object_set_new(pcrs, bank_name(b), bank) == 0;
        }
        if (pcrs && json_object_size(pcrs))
                ok = ok && json_object_set_new(pol, "tpm", json_pack("{s:o}", "pcrs", pcrs)) == 0;
        else
                json_decref(pcrs);

        if (vr->boot_aggregate_ok)
                ok = ok &&
                     json_object_set_new(pol, "ima",
                                         json_pack("{s:b}", "require_boot_aggregate", 1)) == 0;
        if (!ok)
                return -ENOMEM;
        *ret_policy = TAKE_PTR(pol);
        return 0;
}
