/* SPDX-License-Identifier: MIT */
/* Evaluation of a parsed policy against one verified submission: the verdict of DESIGN §5. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy-internal.h"

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
        bool ok;

        if (!c) {
                json_decref(expected);
                json_decref(observed);
                vd->oom = true;
                return;
        }
        /* the first three calls all run, so expected and observed are always consumed */
        ok = json_object_set_new(c, "name", json_string(name)) == 0;
        ok = json_object_set_new(c, "expected", expected ? expected : json_null()) == 0 && ok;
        ok = json_object_set_new(c, "observed", observed ? observed : json_null()) == 0 && ok;
        ok = ok && json_object_set_new(c, "result", json_string(result_names[r])) == 0 &&
             json_object_set_new(c, "anchored", json_boolean(anchored)) == 0 &&
             (entry < 0 || json_object_set_new(c, "entry", json_integer(entry)) == 0) &&
             (!reason || r == R_PASS || json_object_set_new(c, "reason", json_string(reason)) == 0);
        if (!ok) {
                json_decref(c);
                vd->oom = true;
                return;
        }
        if (json_array_append_new(vd->claims, c) < 0) {
                vd->oom = true;
                return;
        }
        if (r != R_PASS)
                vd->failed = true;
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

                /* initialized may be absent (older kernels); a bad value fails like 0 */
                if (enf == 1 && init != 0 && init != -EBADMSG)
                        continue;
                snprintf(reason, sizeof(reason),
                         "entry %" PRIu64 ": %s after enforcing=1 at entry %" PRIu64, s->entry,
                         enf != 1 ? (enf == 0 ? "enforcing=0" : "enforcing not 0/1")
                                  : (init == 0 ? "initialized=0" : "initialized not 0/1"),
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

                bool same_size = false;

                for (unsigned i = 0; i < p->selinux.nhashes; i++) {
                        size_t n = p->selinux.hash_len[i];

                        json_array_append_new(exp, policy_hex_json(p->selinux.hash[i], n));
                        if (!c->policy_hash_seen || c->policy_hash_len != n)
                                continue;
                        same_size = true;
                        if (memcmp(c->policy_hash, p->selinux.hash[i], n) == 0)
                                ok = true;
                }
                if (!c->policy_hash_seen) {
                        claim(vd, "selinux.policy_sha256", exp, NULL, R_MISSING, false, -1,
                              "no selinux-policy-hash entry in the verified log");
                } else {
                        if (same_size)
                                snprintf(reason, sizeof(reason),
                                         "entry %" PRIu64 ": the loaded policy's hash is not in "
                                         "the accepted list",
                                         c->policy_hash_entry);
                        else
                                snprintf(reason, sizeof(reason),
                                         "entry %" PRIu64 ": the loaded policy's hash has %u "
                                         "bytes (the kernel's ima_hash); no accepted hash has",
                                         c->policy_hash_entry, c->policy_hash_len);
                        claim(vd, "selinux.policy_sha256", exp,
                              policy_hex_json(c->policy_hash, c->policy_hash_len),
                              ok ? R_PASS : R_FAIL, true, (int64_t)c->policy_hash_entry, reason);
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
                                claim(vd, name, policy_hex_json(p->pcrs.v[b][i], bank_size(b)),
                                      NULL, R_MISSING, false, -1,
                                      "PCR not in the quote's selection");
                                continue;
                        }
                        snprintf(reason, sizeof(reason), "quoted %s PCR %u differs", bank_name(b),
                                 i);
                        claim(vd, name, policy_hex_json(p->pcrs.v[b][i], bank_size(b)),
                              policy_hex_json(ev->pcrs.v[b][i], bank_size(b)),
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
        /* v takes the claims first, so they are released with it on any failure below */
        if (json_object_set_new(v, "claims", vd.claims) < 0 || vd.oom ||
            json_object_set_new(v, "status", json_string(vd.failed ? "fail" : "pass")) < 0 ||
            json_object_set_new(v, "policy", json_string(p->name)) < 0 ||
            json_object_set(v, "sections_unchecked", unchecked) < 0)
                return -ENOMEM;
        *ret_verdict = TAKE_PTR(v);
        return 0;
}
