/* SPDX-License-Identifier: MIT */
/*
 * Verifying one evidence submission against the agent's stored state (docs/architecture.md §5): the
 * quote, reboot and clock checks, incremental IMA replay against the quoted PCR 10, boot_aggregate
 * and the typed claims (critical data) of the accepted entries. Pure: no I/O, no TPM.
 *
 * Only PCR 10 is compared with the log, so only entries on PCR 10 feed the claims; entries on
 * other PCRs are replayed into the state but anchor nothing, and trailing ones after the last
 * PCR 10 entry of the matching prefix wait for the next round.
 *
 * Error codes of verify_evidence(), one per stage (besides those of quote_verify(), the IMA
 * readers and cdata_claims_feed(), passed through):
 *   -EINVAL  verify_invalid_argument
 *   -ESTALE  evidence_nonce_mismatch   the evidence's nonce is not the one asked for
 *   -ESTALE  quote_clock_rewind        TPM clock went back within one boot
 *   -ESTALE  ima_offset_mismatch       ima.offset is not the stored entry count
 *   -ESTALE  ima_offset_reboot         the quote shows a reboot but ima.offset is not 0; the
 *                                      caller should forget the state and ask again from 0
 *   -EBADMSG verify_pcr10_not_quoted   no quoted bank covers PCR 10
 *   -ESTALE  ima_bank_untracked        the quote covers PCR 10 in a bank the stored state does
 *                                      not replay (the selection grew); reset, send from 0
 *   -ESTALE  ima_replay_mismatch       no prefix of the new entries replays to the quoted PCR 10
 *   -ESTALE  boot_offset_reboot        the quote shows a reboot but boot_log.offset is not 0: as
 *                                      ima_offset_reboot
 *   and those of boot_verify() (verify/boot.h) for the firmware event log
 */
#ifndef ATTEST_VERIFY_H
#define ATTEST_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "evidence/cdata.h"
#include "util/err.h"
#include "evidence/evidence.h"
#include "evidence/quote.h"
#include "verify/boot.h"
#include "verify/replay-state.h"

/*
 * A per-entry observer of the round (the runtime policy: policy/runtime-state.h), opaque to
 * verify: it sees every entry this round accepts, in the pass that feeds the claims (no second
 * parse), and keeps what it makes of them itself. A negative return of either function stops
 * verification with that errno (verify_internal).
 */
struct verify_observer {
        /*
         * optional: once a round, before its first entry, with that entry's index since boot: 0
         * when the replay starts the boot's log again (no stored state, or a reboot), even when
         * the round accepts no entry
         */
        int (*begin)(void *arg, uint64_t first);
        /* each accepted entry (the new entries of the matching prefix) in log order, idx counted
         * from the boot's entry 0 */
        int (*entry)(void *arg, const struct ima_entry *e, uint64_t idx);
        void *arg;
};

struct verify_input {
        const struct quote_ak *ak;
        const uint8_t *nonce; /* the nonce the verifier issued */
        size_t nonce_len;
        const struct pcr_sel *sel;              /* selection asked for; NULL: any */
        const struct replay_state *prev;        /* NULL or !valid: replay from entry 0 */
        uint64_t max_entries;                   /* entries per submission; 0: IMA_ENTRIES_DEFAULT */
        const struct verify_observer *observer; /* NULL: none */
};

struct verify_result {
        struct quote_info quote;
        uint64_t new_entries;   /* entries accepted this round (the matching prefix) */
        uint64_t extra_entries; /* submitted entries after that prefix (logged after the quote) */
        bool rebooted;          /* resetCount/restartCount differ from prev */
        bool boot_aggregate_seen, boot_aggregate_ok; /* this boot's entry 0, as in next */
        struct attest_err boot_aggregate_err;        /* why not ok, when seen */
        struct boot_result boot; /* the firmware event log's round (state in next.boot) */
        /* state to persist (replay_state_encode); last: what is not its value (replay-state.h)
         * is neither zeroed nor copied */
        struct replay_state next;
};

/*
 * Verify ev; fills *ret only on success (next's value: the PCR values of banks it does not replay
 * are left as they were). verify_result_done releases what a result may own: nothing today (the
 * state and its claims are plain values), so it does nothing; call it all the same.
 */
int verify_evidence(const struct verify_input *in, const struct evidence *ev,
                    struct verify_result *ret, struct attest_err *err) _wur_;
void verify_result_done(struct verify_result *r);

#endif
