/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "util/hex.h"
#include "verify/verify.h"

/* ---- verification ---- */

void verify_result_done(struct verify_result *r)
{
        /* nothing owned; not zeroed either (KiBs a round for nothing read after) */
        (void)r;
}

/* next last in the result: the result is its head and next's value */
_Static_assert(offsetof(struct verify_result, next) + sizeof(struct replay_state) ==
                       sizeof(struct verify_result),
               "verify_result.next must be the last member");

/* Copy the PCR values of the banks in banks (the others are not replayed). */
static void pcrs_copy(uint8_t dst[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX],
                      const uint8_t src[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX], unsigned banks)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if (banks & BANK_MASK(b))
                        memcpy(dst[b], src[b], sizeof(dst[b]));
}

/* Do the replayed PCR 10 values equal the quoted ones in every bank that quotes PCR 10? */
static bool pcr10_matches(const struct ima_replay *rp, const struct quote_info *q,
                          const struct pcr_set *pcrs)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if ((q->sel.mask[b] & (1u << IMA_PCR)) &&
                    memcmp(rp->pcr[b][IMA_PCR], pcrs->v[b][IMA_PCR], bank_size(b)) != 0)
                        return false;
        return true;
}

static int reader_open(struct ima_reader *rd, const struct evidence *ev, uint64_t max_entries)
{
        struct ima_log_opts o = {.max_entries = max_entries};
        static const uint8_t empty[1];
        const uint8_t *buf = ev->ima ? ev->ima : empty;

        if (ev->ima_format == IMA_FORMAT_ASCII)
                return ima_reader_init_ascii(rd, (const char *)buf, ev->ima_len, &o);
        ima_reader_init_binary(rd, buf, ev->ima_len, &o);
        return 0;
}

DEFINE_CLEANUP_FUNC(struct ima_reader *, ima_reader_done)

/*
 * Pass 1: the shortest prefix of the new entries whose replay from the start state gives the
 * quoted PCR 10. On success *ret_n is its length and rp holds the replayed values.
 */
static int find_prefix(const struct evidence *ev, const struct replay_state *start,
                       const struct quote_info *q, uint64_t max_entries, struct hasher *h,
                       struct ima_replay *rp, uint64_t *ret_n, uint64_t *ret_total,
                       struct attest_err *err)
{
        struct ima_reader rd;
        _cleanup_(ima_reader_donep) struct ima_reader *rdp = NULL;
        struct ima_entry e;
        uint64_t n = 0;
        int x;

        ima_replay_init(rp, h, start->banks, true);
        /* the other banks stay as ima_replay_init left them: they are not replayed */
        pcrs_copy(rp->pcr, start->pcr, start->banks);
        rp->used = start->used;
        if ((x = reader_open(&rd, ev, max_entries)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "cannot open the IMA log reader");
        rdp = &rd;
        for (;;) {
                if (pcr10_matches(rp, q, &ev->pcrs)) {
                        uint64_t total = n;

                        /* count what follows, for the caller's information only */
                        while (ima_reader_next(&rd, &e, NULL) > 0)
                                total++;
                        *ret_n = n;
                        *ret_total = total;
                        return 0;
                }
                x = ima_reader_next(&rd, &e, err);
                if (x < 0) {
                        attest_err_prefix(err, "$.ima.entries: entry %" PRIu64, start->entries + n);
                        return x;
                }
                if (x == 0)
                        break;
                if ((x = ima_replay_extend(rp, &e, start->entries + n, err)) < 0) {
                        attest_err_prefix(err, "$.ima.entries");
                        return x;
                }
                n++;
        }
        /* no prefix matched: say what was compared */
        for (int b = 0; b < BANK_COUNT; b++) {
                char want[2 * BANK_DIGEST_MAX + 1], got[2 * BANK_DIGEST_MAX + 1];

                if (!(q->sel.mask[b] & (1u << IMA_PCR)))
                        continue;
                hex_encode(ev->pcrs.v[b][IMA_PCR], bank_size(b), want);
                hex_encode(rp->pcr[b][IMA_PCR], bank_size(b), got);
                return attest_fail(err, -ESTALE, AE_IMA_REPLAY_MISMATCH,
                                   "%" PRIu64 " stored entries + %" PRIu64
                                   " new: no prefix replays to the quoted PCR 10; quoted %s:%.16s"
                                   "..., full replay %.16s...",
                                   start->entries, n, bank_name(b), want, got);
        }
        return attest_fail(err, -ESTALE, AE_IMA_REPLAY_MISMATCH, "no quoted PCR 10");
}

/*
 * Entry 0's boot_aggregate against the PCRs the quote covers (6 KiB of PCR values gathered only
 * for the first entry of a boot, not every round).
 */
static bool boot_aggregate_ok(struct hasher *h, const struct ima_entry *e,
                              const struct evidence *ev, const struct quote_info *q,
                              struct attest_err *ba_err)
{
        struct pcr_set quoted = {0};

        for (int b = 0; b < BANK_COUNT; b++) {
                quoted.have[b] = q->sel.mask[b] & ev->pcrs.have[b];
                memcpy(quoted.v[b], ev->pcrs.v[b], sizeof(quoted.v[b]));
        }
        return ima_boot_aggregate_check(h, e, &quoted, ba_err) == 0;
}

/* Pass 2: boot_aggregate and the claims of the n accepted entries. */
static int feed_prefix(const struct verify_input *in, const struct evidence *ev,
                       const struct quote_info *q, uint64_t n, struct hasher *h,
                       struct replay_state *next, struct attest_err *ba_err, struct attest_err *err)
{
        const struct verify_observer *obs = in->observer;
        struct ima_reader rd;
        _cleanup_(ima_reader_donep) struct ima_reader *rdp = NULL;
        struct ima_entry e;
        int x;

        if ((x = reader_open(&rd, ev, n)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "cannot open the IMA log reader");
        rdp = &rd;
        if (obs && obs->begin && (x = obs->begin(obs->arg, next->entries)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL,
                                   "entry %" PRIu64 ": the observer failed", next->entries);
        for (uint64_t i = 0; i < n; i++) {
                uint64_t idx = next->entries + i;

                if ((x = ima_reader_next(&rd, &e, err)) <= 0)
                        return x < 0 ? x
                                     : attest_fail(err, -EIO, AE_VERIFY_INTERNAL,
                                                   "log shorter on the second pass");
                if (idx == 0 && ima_entry_is_boot_aggregate(&e)) {
                        next->boot_aggregate_seen = true;
                        next->boot_aggregate_ok = boot_aggregate_ok(h, &e, ev, q, ba_err);
                }
                /* the observer sees every accepted entry */
                if (obs && obs->entry && (x = obs->entry(obs->arg, &e, idx)) < 0)
                        return attest_fail(err, x, AE_VERIFY_INTERNAL,
                                           "entry %" PRIu64 ": the observer failed", idx);
                if (e.pcr != IMA_PCR)
                        continue; /* only PCR 10 is checked against the quote: no claims */
                if ((x = cdata_claims_feed(&next->claims, &e, idx, err)) < 0) {
                        attest_err_prefix(err, "$.ima.entries");
                        return x;
                }
        }
        next->entries += n;
        return 0;
}

/*
 * The firmware event log (verify/boot.c): after a reboot it must come from byte 0; the stored
 * replay of PCR 0-7 goes on from prev (NULL after a reboot).
 */
static int verify_boot(const struct evidence *ev, const struct replay_state *prev, bool rebooted,
                       struct verify_result *r, struct attest_err *err)
{
        if (rebooted && ev->boot_log && ev->boot_offset != 0)
                return attest_fail(err, -ESTALE, AE_BOOT_OFFSET_REBOOT,
                                   "$.boot_log.offset: %" PRIu64
                                   ", but the quote shows a reboot: the firmware event log must "
                                   "be sent from byte 0",
                                   ev->boot_offset);
        /* r is verify_evidence's own (copied out on success only): written in place */
        return boot_verify(ev, &r->quote.sel, &ev->pcrs, prev && !rebooted ? &prev->boot : NULL,
                           &r->next.boot, &r->boot, err);
}

int verify_evidence(const struct verify_input *in, const struct evidence *ev,
                    struct verify_result *ret, struct attest_err *err)
{
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct verify_result r; /* r.next: emptied or copied from prev below; the rest here */
        const struct replay_state *prev = in && in->prev && in->prev->valid ? in->prev : NULL;
        struct ima_replay rp;
        uint64_t max_entries, total = 0;
        unsigned quoted10 = 0;
        int x;

        memset(&r, 0, offsetof(struct verify_result, next));
        if (!in || !ev || !ret || !in->ak || !in->nonce || !in->nonce_len)
                return attest_fail(err, -EINVAL, AE_VERIFY_INVALID_ARGUMENT,
                                   "missing AK, nonce or evidence");
        max_entries = in->max_entries ? in->max_entries : IMA_ENTRIES_DEFAULT;
        if (ev->nonce_len != in->nonce_len ||
            CRYPTO_memcmp(ev->nonce, in->nonce, in->nonce_len) != 0)
                return attest_fail(err, -ESTALE, AE_EVIDENCE_NONCE_MISMATCH,
                                   "$.nonce: not the nonce of this challenge");
        if ((x = quote_verify(in->ak, ev->attest, ev->attest_len, ev->sig, ev->sig_len, in->nonce,
                              in->nonce_len, in->sel, &ev->pcrs, &r.quote, err)) < 0)
                return x;
        for (int b = 0; b < BANK_COUNT; b++)
                if (r.quote.sel.mask[b] & (1u << IMA_PCR))
                        quoted10 |= BANK_MASK(b);
        if (!quoted10)
                return attest_fail(err, -EBADMSG, AE_VERIFY_PCR10_NOT_QUOTED,
                                   "the quote covers PCR 10 in no bank: the IMA log is unanchored");

        r.rebooted = prev && (prev->reset_count != r.quote.reset_count ||
                              prev->restart_count != r.quote.restart_count);
        if (prev && !r.rebooted && r.quote.clock < prev->clock)
                return attest_fail(err, -ESTALE, AE_QUOTE_CLOCK_REWIND,
                                   "TPM clock %" PRIu64 " ms is before the last quote's %" PRIu64
                                   " ms in the same boot",
                                   r.quote.clock, prev->clock);
        if (r.rebooted && ev->ima_offset != 0)
                return attest_fail(err, -ESTALE, AE_IMA_OFFSET_REBOOT,
                                   "$.ima.offset: %" PRIu64
                                   ", but the quote shows a reboot (resetCount %u -> %u, "
                                   "restartCount %u -> %u): the log must be sent from entry 0",
                                   ev->ima_offset, prev->reset_count, r.quote.reset_count,
                                   prev->restart_count, r.quote.restart_count);
        if (r.rebooted || !prev) {
                replay_state_init(&r.next);
                /* replay the banks that anchor the log; a later quote must stay within them */
                r.next.banks = quoted10;
        } else {
                if (quoted10 & ~prev->banks) {
                        char want[PCR_SEL_TEXT_MAX];
                        struct pcr_sel have = {{0}};

                        for (int b = 0; b < BANK_COUNT; b++)
                                if (prev->banks & BANK_MASK(b))
                                        have.mask[b] = 1u << IMA_PCR;
                        if (pcr_sel_format(&have, want, sizeof(want)) < 0)
                                want[0] = '\0';
                        return attest_fail(err, -ESTALE, AE_IMA_BANK_UNTRACKED,
                                           "the quote covers PCR 10 in a bank the stored replay "
                                           "does not track (it has %s): reset the state and "
                                           "send the log from entry 0",
                                           want);
                }
                if (ev->ima_offset != prev->entries)
                        return attest_fail(err, -ESTALE, AE_IMA_OFFSET_MISMATCH,
                                           "$.ima.offset: %" PRIu64 ", expected %" PRIu64
                                           " (entries already verified)",
                                           ev->ima_offset, prev->entries);
                replay_state_copy(&r.next, prev);
        }
        if (!prev && ev->ima_offset != 0)
                return attest_fail(err, -ESTALE, AE_IMA_OFFSET_MISMATCH,
                                   "$.ima.offset: %" PRIu64 ", expected 0 (no stored state)",
                                   ev->ima_offset);

        if ((x = hasher_new(&h)) < 0 ||
            (x = find_prefix(ev, &r.next, &r.quote, max_entries, h, &rp, &r.new_entries, &total,
                             err)) < 0 ||
            (x = feed_prefix(in, ev, &r.quote, r.new_entries, h, &r.next, &r.boot_aggregate_err,
                             err)) < 0)
                return x;
        r.extra_entries = total - r.new_entries;
        pcrs_copy(r.next.pcr, rp.pcr, r.next.banks);
        r.next.used = rp.used;
        r.next.valid = true;
        r.next.reset_count = r.quote.reset_count;
        r.next.restart_count = r.quote.restart_count;
        r.next.clock = r.quote.clock;
        r.boot_aggregate_seen = r.next.boot_aggregate_seen;
        r.boot_aggregate_ok = r.next.boot_aggregate_ok;
        if ((x = verify_boot(ev, prev, r.rebooted, &r, err)) < 0)
                return x;
        /* the value only (verify.h): not the unused PCR banks */
        memcpy(ret, &r, offsetof(struct verify_result, next));
        replay_state_copy(&ret->next, &r.next);
        return 0;
}
