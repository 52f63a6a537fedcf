/* SPDX-License-Identifier: MIT */
/* A parsed policy judging the typed claims of one verified submission (attestd-policy(5)). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy-internal.h"
#include "util/esc.h"
#include "util/hex.h"

/* The verdict being built; oom is sticky. */
struct eval {
        struct verdict *v;
        bool oom;
};

static struct verdict_value vbool(bool b)
{
        return (struct verdict_value){.kind = VV_BOOL, .b = b};
}

static struct verdict_value vnull(void)
{
        return (struct verdict_value){.kind = VV_NULL};
}

/* A string value: bytes from the log or the agent, escaped (util/esc.h) */
static struct verdict_value vstr(const char *s)
{
        struct verdict_value v = {.kind = VV_STRING};

        esc_text(v.s, sizeof(v.s), s, strlen(s));
        return v;
}

static struct verdict_value vhex(const uint8_t *p, size_t n)
{
        struct verdict_value v = {.kind = VV_HEX, .len = (uint32_t)n};

        memcpy(v.hex, p, n < sizeof(v.hex) ? n : sizeof(v.hex));
        return v;
}

/* Append one claim result; reason is a format (NULL: none). */
static _printf_(8, 9) void claim(struct eval *ev, enum claim_id id, const char *arg,
                                 struct verdict_value expected, struct verdict_value observed,
                                 enum claim_result r, const struct claim_src *src, const char *fmt,
                                 ...)
{
        struct verdict *v = ev->v;
        struct verdict_claim *c;

        if (v->n_claims == v->cap_claims) {
                size_t n = v->cap_claims ? v->cap_claims * 2 : 16;
                struct verdict_claim *m;

                if (n > VERDICT_CLAIMS_MAX || !(m = realloc(v->claims, n * sizeof(*m)))) {
                        ev->oom = true;
                        return;
                }
                v->claims = m;
                v->cap_claims = n;
        }
        c = &v->claims[v->n_claims++];
        c->id = id;
        snprintf(c->arg, sizeof(c->arg), "%s", arg ? arg : "");
        c->expected = expected;
        c->observed = observed;
        c->result = r;
        c->anchored = src->anchored;
        c->entry = src->entry;
        c->reason[0] = '\0';
        if (fmt) {
                char text[2 * VERDICT_REASON_MAX];
                va_list ap;
                int n;

                va_start(ap, fmt);
                n = vsnprintf(text, sizeof(text), fmt, ap);
                va_end(ap);
                /* the pieces from the log come escaped; this only cuts on a character and
                 * escapes what would still not be text, so a reason is always valid UTF-8 */
                if (n > 0)
                        esc_line(c->reason, sizeof(c->reason), text, strnlen(text, sizeof(text)));
        }
        if (r != CLAIM_PASS)
                v->status = VERDICT_FAIL;
}

static const struct claim_src nowhere = {.present = false, .anchored = false, .entry = -1};

/* A 0/1 value of the latest selinux-state (flag, or capability when flag < 0). */
static void selinux_bit(struct eval *ev, const struct claims *c, enum claim_id id, const char *arg,
                        const char *key, int flag, enum selinux_cap cap, bool want)
{
        int v;

        if (!c->selinux.present) {
                claim(ev, id, arg, vbool(want), vnull(), CLAIM_MISSING, &nowhere,
                      "no selinux-state entry in the verified log");
                return;
        }
        v = flag >= 0 ? cdata_selinux_flag(&c->selinux_state, (enum selinux_flag)flag)
                      : cdata_selinux_cap(&c->selinux_state, cap);
        if (v < 0) {
                claim(ev, id, arg, vbool(want), vnull(), CLAIM_MISSING, &c->selinux,
                      "entry %" PRId64 ": selinux-state has no key '%s'", c->selinux.entry, key);
                return;
        }
        claim(ev, id, arg, vbool(want), vbool(v), (bool)v == want ? CLAIM_PASS : CLAIM_FAIL,
              &c->selinux, "entry %" PRId64 ": %s=%d", c->selinux.entry, key, v);
}

static void eval_never_permissive(struct eval *ev, const struct claims *c)
{
        static const char *const lapse[] = {
                [SELINUX_LAPSE_NONE] = "",
                [SELINUX_LAPSE_PERMISSIVE] = "enforcing=0",
                [SELINUX_LAPSE_NO_ENFORCING] = "no enforcing key",
                [SELINUX_LAPSE_UNINITIALIZED] = "initialized=0",
        };
        const struct cdata_selinux_history *h = &c->selinux_history;
        enum claim_id id = CLAIM_SELINUX_NEVER_PERMISSIVE;
        struct claim_src at;

        if (!c->selinux.present) {
                claim(ev, id, NULL, vbool(true), vnull(), CLAIM_MISSING, &nowhere,
                      "no selinux-state entry in the verified log");
                return;
        }
        if (!h->enforced) {
                claim(ev, id, NULL, vbool(true), vbool(false), CLAIM_FAIL, &c->selinux,
                      "no selinux-state since boot had enforcing=1");
                return;
        }
        if (h->lapse != SELINUX_LAPSE_NONE && (unsigned)h->lapse < ARRAY_SIZE(lapse)) {
                at = (struct claim_src){true, true, (int64_t)h->lapse_entry};
                claim(ev, id, NULL, vbool(true), vbool(false), CLAIM_FAIL, &at,
                      "entry %" PRIu64 ": %s after enforcing=1 at entry %" PRIu64, h->lapse_entry,
                      lapse[h->lapse], h->first_enforcing);
                return;
        }
        claim(ev, id, NULL, vbool(true), vbool(true), CLAIM_PASS, &c->selinux, NULL);
}

static void eval_selinux(struct eval *ev, const struct policy *p, const struct claims *c)
{
        static const struct {
                enum claim_id id;
                enum selinux_flag flag;
        } flags[] = {
                {CLAIM_SELINUX_INITIALIZED, SELINUX_INITIALIZED},
                {CLAIM_SELINUX_ENFORCING, SELINUX_ENFORCING},
                {CLAIM_SELINUX_CHECKREQPROT, SELINUX_CHECKREQPROT},
        };
        const tri want[] = {p->selinux.initialized, p->selinux.enforcing, p->selinux.checkreqprot};

        for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
                if (want[i] >= 0)
                        selinux_bit(ev, c, flags[i].id, NULL, selinux_flag_name(flags[i].flag),
                                    (int)flags[i].flag, SELINUX_CAP_UNKNOWN, want[i]);
        for (unsigned i = 0; i < p->selinux.ncaps; i++)
                selinux_bit(ev, c, CLAIM_SELINUX_POLICYCAP, p->selinux.cap[i], p->selinux.cap[i],
                            -1, p->selinux.cap_id[i], p->selinux.cap_val[i]);
        if (p->selinux.never_permissive == 1)
                eval_never_permissive(ev, c);
        if (p->selinux.has_hashes) {
                struct verdict_value exp = {.kind = VV_HEXES,
                                            .hexes = &p->selinux.hash[0][0],
                                            .lens = p->selinux.hash_len,
                                            .stride = sizeof(p->selinux.hash[0]),
                                            .n = p->selinux.nhashes};
                bool ok = false, same_size = false;

                for (unsigned i = 0; i < p->selinux.nhashes; i++) {
                        size_t n = p->selinux.hash_len[i];

                        if (!c->policy_hash.present || c->policy_hash_len != n)
                                continue;
                        same_size = true;
                        if (memcmp(c->policy_hash_v, p->selinux.hash[i], n) == 0)
                                ok = true;
                }
                if (!c->policy_hash.present)
                        claim(ev, CLAIM_SELINUX_POLICY_SHA256, NULL, exp, vnull(), CLAIM_MISSING,
                              &nowhere, "no selinux-policy-hash entry in the verified log");
                else if (same_size)
                        claim(ev, CLAIM_SELINUX_POLICY_SHA256, NULL, exp,
                              vhex(c->policy_hash_v, c->policy_hash_len),
                              ok ? CLAIM_PASS : CLAIM_FAIL, &c->policy_hash,
                              "entry %" PRId64 ": the loaded policy's hash is not in the accepted "
                              "list",
                              c->policy_hash.entry);
                else
                        claim(ev, CLAIM_SELINUX_POLICY_SHA256, NULL, exp,
                              vhex(c->policy_hash_v, c->policy_hash_len), CLAIM_FAIL,
                              &c->policy_hash,
                              "entry %" PRId64 ": the loaded policy's hash has %u bytes (the "
                              "kernel's ima_hash); no accepted hash has",
                              c->policy_hash.entry, c->policy_hash_len);
        }
}

/*
 * "<section>.anchored": the claim must come from a measured entry. measured: the event name;
 * who: which kernels measure it, for a reason a person can act on.
 */
static void anchored_claim(struct eval *ev, enum claim_id id, const struct claim_src *src,
                           const char *measured, const char *who, const char *origin)
{
        if (!src->present) {
                claim(ev, id, NULL, vbool(true), vnull(), CLAIM_MISSING, &nowhere,
                      "not measured: the verified log has no %s entry (%s), and the agent "
                      "reported nothing either",
                      measured, who);
                return;
        }
        claim(ev, id, NULL, vbool(true), vbool(src->anchored),
              src->anchored ? CLAIM_PASS : CLAIM_FAIL, src,
              "only reported by the agent (from %s), not measured: the verified log has no %s "
              "entry (%s), and an agent's report is not covered by the TPM quote",
              origin, measured, who);
}

#define SERIES                                                                                     \
        "only a kernel with the attestd patch series measures it, at boot, if the boot IMA "       \
        "policy has a CRITICAL_DATA rule"

static struct verdict_value vwords(const char (*w)[WORD_MAX], unsigned n)
{
        return (struct verdict_value){
                .kind = VV_STRINGS, .strs = w[0], .stride = sizeof(w[0]), .n = n};
}

/*
 * trusted_keys.rng / .requested: a word only the measured entry has (the agent reports the
 * source alone). have: the entry's word, "" when it had no such key.
 */
static void tk_word(struct eval *ev, const struct claims *c, enum claim_id id, const char *key,
                    const char *have, const char (*want)[WORD_MAX], unsigned n, const char *what)
{
        const struct claim_src *src = &c->trusted_keys;
        bool ok = false;

        if (!src->present) {
                claim(ev, id, NULL, vwords(want, n), vnull(), CLAIM_MISSING, &nowhere,
                      "not measured: the verified log has no trusted-keys-source entry (" SERIES
                      ")");
                return;
        }
        if (!src->anchored) {
                claim(ev, id, NULL, vwords(want, n), vnull(), CLAIM_MISSING, src,
                      "not measured: the verified log has no trusted-keys-source entry (" SERIES
                      "); the agent reports the source only (from %s), not %s",
                      c->tk_origin, key);
                return;
        }
        if (!have[0]) {
                claim(ev, id, NULL, vwords(want, n), vnull(), CLAIM_MISSING, src,
                      "entry %" PRId64 ": trusted-keys-source has no key '%s'", src->entry, key);
                return;
        }
        for (unsigned i = 0; i < n; i++)
                ok = ok || !strcmp(have, want[i]);
        claim(ev, id, NULL, vwords(want, n), vstr(have), ok ? CLAIM_PASS : CLAIM_FAIL, src,
              "entry %" PRId64 ": %s=%s: %s '%s', which the policy does not accept", src->entry,
              key, have, what, have);
}

static void eval_tk(struct eval *ev, const struct policy *p, const struct claims *c)
{
        bool ok = false;

        /* policies name known sources only, so an unknown word never matches */
        for (unsigned i = 0; i < p->tk.nsources; i++)
                if (c->trusted_keys.present && c->tk_source == p->tk.source_id[i])
                        ok = true;
        if (p->tk.nsources && !c->trusted_keys.present)
                claim(ev, CLAIM_TRUSTED_KEYS_SOURCE, NULL, vwords(p->tk.source, p->tk.nsources),
                      vnull(), CLAIM_MISSING, &nowhere,
                      "not measured: the verified log has no trusted-keys-source entry (" SERIES
                      "), and the agent reported no trusted.source= either");
        else if (p->tk.nsources)
                claim(ev, CLAIM_TRUSTED_KEYS_SOURCE, NULL, vwords(p->tk.source, p->tk.nsources),
                      vstr(c->tk_source_name), ok ? CLAIM_PASS : CLAIM_FAIL, &c->trusted_keys,
                      "trusted keys are backed by '%s'%s, which the policy does not accept",
                      c->tk_source_name,
                      c->trusted_keys.anchored ? "" : " (the agent's report of trusted.source=)");
        if (p->tk.nrng)
                tk_word(ev, c, CLAIM_TRUSTED_KEYS_RNG, "rng", c->tk_rng, p->tk.rng, p->tk.nrng,
                        "new key material comes from");
        if (p->tk.nrequested)
                tk_word(ev, c, CLAIM_TRUSTED_KEYS_REQUESTED, "requested", c->tk_requested,
                        p->tk.requested, p->tk.nrequested, "the command line asked for");
        if (p->tk.anchored == 1)
                anchored_claim(ev, CLAIM_TRUSTED_KEYS_ANCHORED, &c->trusted_keys,
                               "trusted-keys-source", SERIES,
                               c->trusted_keys.present && !c->trusted_keys.anchored ? c->tk_origin
                                                                                    : "-");
}

/* cfi.mode: measured only (the agent's report from the kernel configuration has no mode) */
static void eval_cfi_mode(struct eval *ev, const struct policy *p, const struct claims *c)
{
        enum claim_id id = CLAIM_CFI_MODE;
        struct verdict_value exp = vwords(p->cfi.mode, p->cfi.nmodes);
        bool ok = false;

        if (!c->cfi.present || !c->cfi.anchored) {
                claim(ev, id, NULL, exp, vnull(), CLAIM_MISSING,
                      c->cfi.present ? &c->cfi : &nowhere,
                      "not measured: the verified log has no cfi-state entry (" SERIES ")%s",
                      c->cfi.present ? "; the agent's report has no mode" : "");
                return;
        }
        if (c->cfi_mode == CFI_MODE_ABSENT) {
                claim(ev, id, NULL, exp, vnull(), CLAIM_MISSING, &c->cfi,
                      "entry %" PRId64 ": cfi-state has no key 'mode'", c->cfi.entry);
                return;
        }
        for (unsigned i = 0; i < p->cfi.nmodes; i++)
                ok = ok || c->cfi_mode == p->cfi.mode_id[i];
        claim(ev, id, NULL, exp, vstr(cfi_mode_name(c->cfi_mode)), ok ? CLAIM_PASS : CLAIM_FAIL,
              &c->cfi, "entry %" PRId64 ": mode=%s, which the policy does not accept", c->cfi.entry,
              cfi_mode_name(c->cfi_mode));
}

static void eval_cfi(struct eval *ev, const struct policy *p, const struct claims *c)
{
        static const struct {
                enum claim_id id;
                const char *key;
        } keys[] = {{CLAIM_CFI_ENABLED, "enabled"}, {CLAIM_CFI_PERMISSIVE, "permissive"}};
        const tri want[] = {p->cfi.enabled, p->cfi.permissive};
        const bool have[] = {c->cfi_enabled, c->cfi_permissive};

        for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                if (want[k] < 0)
                        continue;
                if (!c->cfi.present) {
                        claim(ev, keys[k].id, NULL, vbool(want[k]), vnull(), CLAIM_MISSING,
                              &nowhere,
                              "not measured: the verified log has no cfi-state entry (" SERIES
                              "), and the agent reported no CFI state either");
                        continue;
                }
                if (c->cfi.anchored)
                        claim(ev, keys[k].id, NULL, vbool(want[k]), vbool(have[k]),
                              have[k] == (bool)want[k] ? CLAIM_PASS : CLAIM_FAIL, &c->cfi,
                              "entry %" PRId64 ": %s=%d", c->cfi.entry, keys[k].key, have[k]);
                else
                        claim(ev, keys[k].id, NULL, vbool(want[k]), vbool(have[k]),
                              have[k] == (bool)want[k] ? CLAIM_PASS : CLAIM_FAIL, &c->cfi,
                              "agent reported %s=%d (from %s)", keys[k].key, have[k],
                              c->cfi_origin);
        }
        if (p->cfi.nmodes)
                eval_cfi_mode(ev, p, c);
        if (p->cfi.anchored == 1)
                anchored_claim(ev, CLAIM_CFI_ANCHORED, &c->cfi, "cfi-state", SERIES,
                               c->cfi.present && !c->cfi.anchored ? c->cfi_origin : "-");
}

static void eval_kernel(struct eval *ev, const struct policy *p, const struct claims *c)
{
        struct verdict_value exp = {.kind = VV_STRINGS,
                                    .strs = p->kernel.version[0],
                                    .stride = sizeof(p->kernel.version[0]),
                                    .n = p->kernel.nversions};
        bool ok = false;

        for (unsigned i = 0; i < p->kernel.nversions; i++)
                if (c->kernel.present && policy_glob_match(p->kernel.version[i], c->kernel_version))
                        ok = true;
        if (!c->kernel.present)
                claim(ev, CLAIM_KERNEL_VERSION, NULL, exp, vnull(), CLAIM_MISSING, &nowhere,
                      "no kernel_version entry in the verified log, and the agent reported none");
        else {
                char kv[101];

                esc_text(kv, sizeof(kv), c->kernel_version, strlen(c->kernel_version));
                claim(ev, CLAIM_KERNEL_VERSION, NULL, exp, vstr(c->kernel_version),
                      ok ? CLAIM_PASS : CLAIM_FAIL, &c->kernel,
                      "%s '%s' matches no accepted version",
                      c->kernel.anchored ? "measured" : "reported", kv);
        }
        if (p->kernel.anchored == 1)
                anchored_claim(ev, CLAIM_KERNEL_ANCHORED, &c->kernel, "kernel_version",
                               "Linux 5.15 and later measure it under a CRITICAL_DATA rule",
                               "uname");
}

static void eval_tpm(struct eval *ev, const struct policy *p, const struct claims *c)
{
        /* the quote anchors the PCRs, though no log entry does */
        static const struct claim_src quote = {.present = true, .anchored = true, .entry = -1};

        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char arg[16];
                        size_t n = bank_size(b);

                        if (!(p->pcrs.have[b] & (1u << i)))
                                continue;
                        snprintf(arg, sizeof(arg), "%s.%u", bank_name(b), i);
                        if (!(c->quoted.have[b] & (1u << i))) {
                                claim(ev, CLAIM_TPM_PCR, arg, vhex(p->pcrs.v[b][i], n), vnull(),
                                      CLAIM_MISSING, &nowhere, "PCR not in the quote's selection");
                                continue;
                        }
                        claim(ev, CLAIM_TPM_PCR, arg, vhex(p->pcrs.v[b][i], n),
                              vhex(c->quoted.v[b][i], n),
                              memcmp(p->pcrs.v[b][i], c->quoted.v[b][i], n) == 0 ? CLAIM_PASS
                                                                                 : CLAIM_FAIL,
                              &quote, "quoted %s PCR %u differs", bank_name(b), i);
                }
}

static void eval_ima(struct eval *ev, const struct policy *p, const struct claims *c)
{
        static const struct claim_src quote = {.present = true, .anchored = true, .entry = -1};
        static const struct claim_src entry0 = {.present = true, .anchored = true, .entry = 0};

        if (p->require_boot_aggregate != 1)
                return;
        if (!c->boot_aggregate_seen) {
                claim(ev, CLAIM_IMA_BOOT_AGGREGATE, NULL, vbool(true), vbool(false), CLAIM_FAIL,
                      &quote, "entry 0 of this boot's log is not a boot_aggregate");
                return;
        }
        claim(ev, CLAIM_IMA_BOOT_AGGREGATE, NULL, vbool(true), vbool(c->boot_aggregate_ok),
              c->boot_aggregate_ok ? CLAIM_PASS : CLAIM_FAIL, &entry0,
              "boot_aggregate (entry 0) did not match the quoted PCRs%s%.200s",
              c->boot_aggregate_why[0] ? ": " : "", c->boot_aggregate_why);
}

/* runtime: ima.runtime passes when no judged entry failed since boot */
static void eval_runtime(struct eval *ev, const struct policy *p, const struct claims *c)
{
        const struct rt_state *st = c->runtime;
        struct claim_src src = {.present = true, .anchored = true, .entry = -1};
        char obs[VERDICT_STRING_MAX];

        if (!p->runtime)
                return;
        if (!st) {
                claim(ev, CLAIM_IMA_RUNTIME, NULL, vstr("0 failed"), vnull(), CLAIM_MISSING,
                      &nowhere, "the log's entries were not judged by this runtime policy");
                return;
        }
        ev->v->runtime = st;
        snprintf(obs, sizeof(obs), "%" PRIu64 " failed", st->failed);
        if (!st->failed) {
                claim(ev, CLAIM_IMA_RUNTIME, NULL, vstr("0 failed"), vstr(obs), CLAIM_PASS, &src,
                      NULL);
                return;
        }
        if (st->nfail) {
                const struct rt_failure *f = &st->fail[0];
                char path[201];
                size_t used;

                /* the path's bytes escaped, cut on a character or an escape */
                esc_bytes(path, sizeof(path) - 3, f->path, f->path_len, &used);
                src.entry = (int64_t)f->entry;
                claim(ev, CLAIM_IMA_RUNTIME, NULL, vstr("0 failed"), vstr(obs), CLAIM_FAIL, &src,
                      "%" PRIu64 " entries failed since boot; first: entry %" PRIu64 " %s%s (%s)",
                      st->failed, f->entry, path, used < f->path_len || f->path_cut ? "..." : "",
                      rt_reason_name((enum rt_reason)f->reason));
                return;
        }
        claim(ev, CLAIM_IMA_RUNTIME, NULL, vstr("0 failed"), vstr(obs), CLAIM_FAIL, &src,
              "%" PRIu64 " entries failed since boot (failures_max 0: none named)", st->failed);
}

/* ---- bootv: measured boot ---- */

/* Where a claim of the firmware event log comes from: anchored when its PCR matched the quote. */
static struct claim_src boot_src(const struct claims *c, unsigned pcr, uint64_t entry)
{
        return (struct claim_src){
                .present = true, .anchored = (c->boot_matched >> pcr) & 1, .entry = (int64_t)entry};
}

static void app_text(const struct boot_app *a, char *out, size_t n)
{
        size_t k;

        snprintf(out, n, "%s:", bank_name((enum bank)a->bank));
        k = strlen(out);
        if (n > k + 2 * bank_size((enum bank)a->bank))
                hex_encode(a->digest, bank_size((enum bank)a->bank), out + k);
}

/* What a bootloaders or kernels claim expects: the policy's list, as written. */
static struct verdict_value apps_expected(const struct boot_policy_apps *list)
{
        return (struct verdict_value){.kind = VV_STRINGS,
                                      .strs = list->text[0],
                                      .stride = sizeof(list->text[0]),
                                      .n = list->n};
}

static void boot_app_claim(struct eval *ev, const struct claims *c, enum claim_id id,
                           const char *arg, const struct boot_policy_apps *list, unsigned i)
{
        const struct boot_app *a = &c->boot.apps[i];
        struct verdict_value exp = apps_expected(list);
        struct claim_src src = boot_src(c, BOOT_APP_PCR, a->entry);
        char text[BOOT_POLICY_APP_TEXT];

        /* the digest is anchored only when its own bank was compared with the quote */
        src.anchored = src.anchored && (c->boot_banks & BANK_MASK(a->bank));
        bool ok = false;

        app_text(a, text, sizeof(text));
        for (unsigned k = 0; k < list->n; k++)
                if (list->bank[k] == a->bank &&
                    memcmp(list->digest[k], a->digest, bank_size((enum bank)a->bank)) == 0)
                        ok = true;
        claim(ev, id, arg, exp, vstr(text), ok ? CLAIM_PASS : CLAIM_FAIL, &src,
              "entry %" PRIu64 ": boot application %u (PCR 4) is not in the accepted list",
              a->entry, i);
}

static void eval_boot_apps(struct eval *ev, const struct boot_policy *bp, const struct claims *c)
{
        const struct boot_claims *b = &c->boot;
        char arg[16];

        if (!bp->loaders.set && !bp->kernels.set)
                return;
        if (b->apps_total > b->n_apps) {
                /* more than kept: what ran after the last kept one is unknown */
                struct claim_src src = boot_src(c, BOOT_APP_PCR, b->apps[b->n_apps - 1].entry);

                claim(ev, bp->kernels.set ? CLAIM_BOOT_KERNEL : CLAIM_BOOT_BOOTLOADER, NULL,
                      apps_expected(bp->kernels.set ? &bp->kernels : &bp->loaders), vnull(),
                      CLAIM_FAIL, &src,
                      "%" PRIu32 " boot applications on PCR 4, more than the %d judged",
                      b->apps_total, BOOT_APPS_MAX);
                return;
        }
        if (!b->n_apps) {
                if (bp->loaders.set)
                        claim(ev, CLAIM_BOOT_BOOTLOADER, NULL, apps_expected(&bp->loaders), vnull(),
                              CLAIM_MISSING, &nowhere,
                              "no EV_EFI_BOOT_SERVICES_APPLICATION on PCR 4 in the firmware "
                              "event log");
                if (bp->kernels.set)
                        claim(ev, CLAIM_BOOT_KERNEL, NULL, apps_expected(&bp->kernels), vnull(),
                              CLAIM_MISSING, &nowhere,
                              "no EV_EFI_BOOT_SERVICES_APPLICATION on PCR 4 in the firmware "
                              "event log");
                return;
        }
        /* the applications in order: every one but the last is a boot loader, the last the
         * kernel (an EFI-stub kernel or UKI started by the firmware is alone) */
        for (unsigned i = 0; bp->loaders.set && i + 1 < b->n_apps; i++) {
                snprintf(arg, sizeof(arg), "%u", i);
                boot_app_claim(ev, c, CLAIM_BOOT_BOOTLOADER, arg, &bp->loaders, i);
        }
        if (bp->kernels.set)
                boot_app_claim(ev, c, CLAIM_BOOT_KERNEL, NULL, &bp->kernels, b->n_apps - 1u);
}

static void eval_boot(struct eval *ev, const struct boot_policy *bp, const struct claims *c)
{
        const struct boot_claims *b = &c->boot;
        static const char no_log[] = "no firmware event log (boot_log) this boot";
        struct claim_src src;
        char loc[4];

        if (!c->boot_present) {
                /* one claim says it: nothing else can be judged */
                claim(ev, CLAIM_BOOT_PCRS_REPLAY, NULL, vbool(true), vnull(), CLAIM_MISSING,
                      &nowhere, "%s", no_log);
                return;
        }
        if (bp->pcrs_replay == 1) {
                src = (struct claim_src){.present = true, .anchored = true, .entry = -1};
                claim(ev, CLAIM_BOOT_PCRS_REPLAY, NULL, vbool(true), vbool(c->boot_matched == 0xff),
                      c->boot_matched == 0xff ? CLAIM_PASS : CLAIM_FAIL, &src,
                      "the quote did not cover PCR 0-7 in a bank the log carries (matched: "
                      "0x%02x)",
                      c->boot_matched);
        }
        if (bp->secureboot >= 0) {
                if (!b->secureboot_seen)
                        claim(ev, CLAIM_BOOT_SECUREBOOT, NULL, vbool(bp->secureboot), vnull(),
                              CLAIM_MISSING, &nowhere,
                              "no SecureBoot variable (EV_EFI_VARIABLE_DRIVER_CONFIG, PCR 7) in "
                              "the firmware event log");
                else {
                        src = boot_src(c, BOOT_SB_PCR, b->secureboot_entry);
                        claim(ev, CLAIM_BOOT_SECUREBOOT, NULL, vbool(bp->secureboot),
                              vbool(b->secureboot),
                              b->secureboot == (bool)bp->secureboot ? CLAIM_PASS : CLAIM_FAIL, &src,
                              "entry %" PRIu64 ": SecureBoot=%d", b->secureboot_entry,
                              b->secureboot);
                }
        }
        for (int k = 0; k < BOOT_VAR__COUNT; k++) {
                struct verdict_value exp = {.kind = VV_HEXES,
                                            .hexes = &bp->var[k][0][0],
                                            .lens = bp->var_len,
                                            .stride = sizeof(bp->var[k][0]),
                                            .n = bp->nvar[k]};
                const char *name = boot_var_name((enum boot_var)k);
                bool ok = false;

                if (!bp->var_set[k])
                        continue;
                if (!(b->vars_seen & (1u << k))) {
                        claim(ev, CLAIM_BOOT_VARIABLE, name, exp, vnull(), CLAIM_MISSING, &nowhere,
                              "no %s variable measured on PCR 7", name);
                        continue;
                }
                for (unsigned i = 0; i < bp->nvar[k]; i++)
                        if (memcmp(bp->var[k][i], b->var_sha256[k], 32) == 0)
                                ok = true;
                src = boot_src(c, BOOT_SB_PCR, b->var_entry[k]);
                claim(ev, CLAIM_BOOT_VARIABLE, name, exp, vhex(b->var_sha256[k], 32),
                      ok ? CLAIM_PASS : CLAIM_FAIL, &src,
                      "entry %" PRIu64 ": the sha256 of %s is not in the accepted list",
                      b->var_entry[k], name);
        }
        eval_boot_apps(ev, bp, c);
        if (bp->separators >= 0) {
                src = (struct claim_src){
                        .present = true, .anchored = c->boot_matched == 0xff, .entry = -1};
                claim(ev, CLAIM_BOOT_SEPARATORS, NULL, vbool(bp->separators),
                      vbool(b->separators == 0xff),
                      (b->separators == 0xff) == (bool)bp->separators ? CLAIM_PASS : CLAIM_FAIL,
                      &src, "EV_SEPARATOR on PCRs 0x%02x of 0-7", b->separators);
        }
        if (bp->locality_set) {
                struct verdict_value exp = {.kind = VV_STRINGS,
                                            .strs = bp->locality[0],
                                            .stride = sizeof(bp->locality[0]),
                                            .n = bp->nlocality};
                /* PFP: without a StartupLocality event the platform started at locality 0 */
                uint8_t l = b->locality_seen ? b->locality : 0;
                bool ok = false;

                for (unsigned i = 0; i < bp->nlocality; i++)
                        ok |= bp->locality_v[i] == l;
                src = b->locality_seen ? boot_src(c, 0, b->locality_entry)
                                       : (struct claim_src){.present = true,
                                                            .anchored = c->boot_matched & 1,
                                                            .entry = -1};
                snprintf(loc, sizeof(loc), "%u", l);
                claim(ev, CLAIM_BOOT_STARTUP_LOCALITY, NULL, exp, vstr(loc),
                      ok ? CLAIM_PASS : CLAIM_FAIL, &src, "startup locality %u%s", l,
                      b->locality_seen ? "" : " (no StartupLocality event)");
        }
}

int policy_eval(const struct policy *p, const struct claims *c, struct verdict *ret_verdict)
{
        struct verdict v;
        struct eval ev = {.v = &v};
        const bool has[SECTION__COUNT] = {
                [SECTION_SELINUX] = p && p->has_selinux, [SECTION_TRUSTED_KEYS] = p && p->has_tk,
                [SECTION_CFI] = p && p->has_cfi,         [SECTION_KERNEL] = p && p->has_kernel,
                [SECTION_TPM] = p && p->has_tpm,         [SECTION_IMA] = p && p->has_ima,
                [SECTION_BOOT] = p && p->boot,
        };

        if (!p || !c || !ret_verdict)
                return -EINVAL;
        verdict_init(&v);
        snprintf(v.policy, sizeof(v.policy), "%s", p->name);
        if (p->has_selinux)
                eval_selinux(&ev, p, c);
        if (p->has_tk)
                eval_tk(&ev, p, c);
        if (p->has_cfi)
                eval_cfi(&ev, p, c);
        if (p->has_kernel)
                eval_kernel(&ev, p, c);
        if (p->has_tpm)
                eval_tpm(&ev, p, c);
        if (p->has_ima) {
                eval_ima(&ev, p, c);
                eval_runtime(&ev, p, c);
        }
        if (p->boot)
                eval_boot(&ev, p->boot, c);
        for (unsigned s = 0; s < SECTION__COUNT; s++)
                if (!has[s])
                        v.unchecked |= 1u << s;
        if (ev.oom) {
                verdict_done(&v);
                return -ENOMEM;
        }
        *ret_verdict = v;
        return 0;
}
