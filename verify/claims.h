/* SPDX-License-Identifier: MIT */
/*
 * Claims: what a verified submission says about its host (docs/architecture.md §5.2; verify ->
 * claims -> policy), typed. Each claim says where it came from: anchored (a measured log entry
 * under a verified quote, with that entry's number) or reported (a host fact the agent sent, entry
 * -1). The policy evaluator reads only this struct: no JSON, no key=value text.
 */
#ifndef ATTEST_CLAIMS_H
#define ATTEST_CLAIMS_H

#include <stdbool.h>
#include <stdint.h>

#include "evidence/cdata.h"
#include "evidence/evidence.h"
#include "evidence/pcrs.h"
#include "util/err.h"
#include "verify/replay-state.h"
#include "verify/boot.h"

struct verify_result;
struct rt_state; /* opaque here: policy/runtime-state.h */

/* Where a claim came from. */
struct claim_src {
        bool present;  /* false: neither measured nor reported */
        bool anchored; /* measured into IMA and replayed against the quote */
        int64_t entry; /* the log entry when anchored, -1 otherwise */
};

struct claims {
        /* SELinux: measured only (mainline selinux-state, selinux-policy-hash) */
        struct claim_src selinux; /* the latest selinux-state */
        struct cdata_selinux_state selinux_state;
        struct cdata_selinux_history selinux_history;
        struct claim_src policy_hash;
        uint8_t policy_hash_v[BANK_DIGEST_MAX];
        uint32_t policy_hash_len;

        /* trusted keys: the patched kernel's trusted-keys-source, else the agent's report */
        struct claim_src trusted_keys;
        enum tk_source tk_source;
        char tk_source_name[CDATA_WORD_MAX]; /* the word as measured or reported */
        char tk_origin[CDATA_WORD_MAX];      /* reported: where the agent read it ("cmdline") */
        /* measured only (the agent reports neither): the entry's rng= and requested= words, ""
         * when the entry had no such key or the claim is not anchored */
        char tk_rng[CDATA_WORD_MAX];
        char tk_requested[CDATA_WORD_MAX];

        /* CFI: the patched kernel's cfi-state, else the agent's report */
        struct claim_src cfi;
        bool cfi_enabled, cfi_permissive;
        enum cfi_mode cfi_mode;          /* measured only: CFI_MODE_ABSENT when not anchored */
        char cfi_origin[CDATA_WORD_MAX]; /* reported: "config", "proc-config" */

        /* kernel: mainline kernel_version, else the agent's uname */
        struct claim_src kernel;
        char kernel_version[CDATA_KERNEL_VERSION_MAX];

        /* the quote: PCRs in the verified selection, with the values the agent read */
        struct pcr_set quoted;

        /* this boot's entry 0 */
        bool boot_aggregate_seen, boot_aggregate_ok;
        char boot_aggregate_why[256]; /* why not ok, when seen */

        /* runtime: the ima.runtime results of this boot's entries (counts, first failures;
         * policy/runtime-state.h), borrowed from the round's observer and set by the caller:
         * claims_from_verified leaves it NULL (no runtime policy judged them) */
        const struct rt_state *runtime;
        /* bootv: measured boot, from the firmware event log (verify/boot.h). A claim from PCR p
         * is anchored when boot_matched has bit p: the log's replay of PCR p equalled the
         * quoted value this round; entries are the log's entry numbers. */
        bool boot_present;    /* a firmware event log was read this boot */
        uint8_t boot_matched; /* PCRs 0-7 compared with the quote and equal */
        unsigned boot_banks;  /* BANK_MASK of the banks compared: an application's digest is
                               * anchored only in one of them */
        struct boot_claims boot;
};

/*
 * The claims of a verified submission: measured ones from vr (the accepted entries since boot,
 * the quote) and, where nothing was measured, the host facts of ev (unanchored). *ret is written
 * only on success.
 */
int claims_from_verified(const struct verify_result *vr, const struct evidence *ev,
                         struct claims *ret) _wur_;
/*
 * The same from the parts (tests, attestctl): measured claims, host facts (NULL: none), the
 * quoted PCRs (NULL: none) and the boot_aggregate outcome.
 */
void claims_build(const struct cdata_claims *measured, const struct evidence_host *host,
                  const struct pcr_set *quoted, bool ba_seen, bool ba_ok, const char *ba_why,
                  struct claims *ret);

#endif
