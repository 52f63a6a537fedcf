/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verify/claims.h"
#include "verify/verify.h"

static struct claim_src anchored_at(uint64_t entry)
{
        return (struct claim_src){.present = true, .anchored = true, .entry = (int64_t)entry};
}

static const struct claim_src reported = {.present = true, .anchored = false, .entry = -1};
static const struct claim_src absent = {.present = false, .anchored = false, .entry = -1};

static void word(char out[CDATA_WORD_MAX], const char *s)
{
        snprintf(out, CDATA_WORD_MAX, "%s", s);
}

void claims_build(const struct cdata_claims *m, const struct evidence_host *h,
                  const struct pcr_set *quoted, bool ba_seen, bool ba_ok, const char *ba_why,
                  struct claims *ret)
{
        static const struct evidence_host none;
        struct claims c;

        memset(&c, 0, sizeof(c));
        c.cfi_mode = CFI_MODE_ABSENT;
        if (!h)
                h = &none;
        c.selinux = m->selinux_seen ? anchored_at(m->selinux.entry) : absent;
        c.selinux_state = m->selinux;
        c.selinux_history = m->history;
        c.policy_hash = m->policy_hash_seen ? anchored_at(m->policy_hash_entry) : absent;
        memcpy(c.policy_hash_v, m->policy_hash, sizeof(c.policy_hash_v));
        c.policy_hash_len = m->policy_hash_seen ? m->policy_hash_len : 0;

        if (m->trusted_keys_seen) {
                c.trusted_keys = anchored_at(m->trusted_keys.entry);
                c.tk_source = m->trusted_keys.source;
                word(c.tk_source_name, m->trusted_keys.source_name);
                word(c.tk_rng, m->trusted_keys.rng_name);
                word(c.tk_requested, m->trusted_keys.requested_name);
        } else if (h->tk_present) {
                c.trusted_keys = reported;
                word(c.tk_source_name, h->tk_source);
                c.tk_source = tk_source_from_name(c.tk_source_name, strlen(c.tk_source_name));
                word(c.tk_origin, h->tk_origin);
        } else {
                c.trusted_keys = absent;
        }

        if (m->cfi_seen) {
                c.cfi = anchored_at(m->cfi.entry);
                c.cfi_enabled = m->cfi.enabled;
                c.cfi_permissive = m->cfi.permissive;
                c.cfi_mode = m->cfi.mode;
        } else if (h->cfi_present) {
                c.cfi = reported;
                c.cfi_enabled = h->cfi_enabled;
                c.cfi_permissive = h->cfi_permissive;
                word(c.cfi_origin, h->cfi_source);
        } else {
                c.cfi = absent;
        }

        if (m->kernel_version_seen) {
                c.kernel = anchored_at(m->kernel_version_entry);
                snprintf(c.kernel_version, sizeof(c.kernel_version), "%s", m->kernel_version);
        } else if (h->kernel[0]) {
                c.kernel = reported;
                snprintf(c.kernel_version, sizeof(c.kernel_version), "%s", h->kernel);
        } else {
                c.kernel = absent;
        }

        if (quoted)
                c.quoted = *quoted;
        c.boot_aggregate_seen = ba_seen;
        c.boot_aggregate_ok = ba_seen && ba_ok;
        if (ba_why)
                snprintf(c.boot_aggregate_why, sizeof(c.boot_aggregate_why), "%s", ba_why);
        *ret = c;
}

int claims_from_verified(const struct verify_result *vr, const struct evidence *ev,
                         struct claims *ret)
{
        struct pcr_set quoted = {0};

        if (!vr || !ev || !ret)
                return -EINVAL;
        /* a PCR is quoted when the verified selection covers it and the agent sent its value */
        for (int b = 0; b < BANK_COUNT; b++) {
                quoted.have[b] = vr->quote.sel.mask[b] & ev->pcrs.have[b];
                for (unsigned i = 0; i < PCR_COUNT; i++)
                        if (quoted.have[b] & (1u << i))
                                memcpy(quoted.v[b][i], ev->pcrs.v[b][i], BANK_DIGEST_MAX);
        }
        claims_build(&vr->next.claims, &ev->host, &quoted, vr->boot_aggregate_seen,
                     vr->boot_aggregate_ok, vr->boot_aggregate_err.msg, ret);
        ret->runtime = NULL; /* the observer's results: the caller's (claims.h) */
        ret->boot_present = vr->next.boot.valid;
        ret->boot_matched = vr->next.boot.valid ? vr->boot.matched : 0;
        ret->boot_banks = vr->next.boot.valid ? vr->boot.banks_compared : 0;
        ret->boot = vr->next.boot.claims;
        return 0;
}
