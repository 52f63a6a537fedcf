/* SPDX-License-Identifier: MIT */
/*
 * The per-agent replay state carried between rounds (docs/architecture.md §5.5), and its stored
 * form: a compact, versioned, length-checked binary encoding, little-endian throughout:
 *
 *   "ars" u8 version(2) | u8 flags (valid, boot_aggregate seen, ok)          -- end if !valid
 *   u32 resetCount | u32 restartCount | u64 clock | u64 entries
 *   u8 banks (BANK_MASK bits) | u32 used (PCR bits) | for each bank, each used PCR: digest
 *   u8 claim flags (selinux, enforced, policy hash, kernel version, trusted keys, cfi,
 *                   trusted keys' rng, trusted keys' requested)
 *   u64 selinux states | [u64 first enforcing] | u8 lapse | [u64 lapse entry]
 *   [selinux: u64 entry | u8 flags present | u8 flags value | u32 caps present | u32 caps value |
 *             u32 unknown keys]
 *   [policy hash: u64 entry | u32 count | u8 len | len bytes]
 *   [kernel version: u64 entry | u8 len | len bytes]
 *   [trusted keys: u64 entry | u8 len | len bytes of the source word
 *                  | [u8 len | the rng word] | [u8 len | the requested word]]
 *   [cfi: u64 entry | u8 bits (enabled, permissive) | u8 mode]
 *   then tagged sections, each at most once, in tag order: u8 tag | u32 length | length bytes
 *     'B' measured boot (verify/boot.h: boot_state_put)
 *     'R' the observer's, opaque here (the runtime policy's results: policy/runtime-state.h)
 *
 * Decoding validates every field (ranges, unused bits zero, entries below the entry count, words
 * and versions by their character sets) and the exact length; errors name the byte offset and
 * the field. At most REPLAY_STATE_MAX bytes: the size of the largest state.
 */
#ifndef ATTEST_REPLAY_STATE_H
#define ATTEST_REPLAY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "evidence/cdata.h"
#include "util/err.h"
#include "verify/boot.h"

#define REPLAY_STATE_VERSION 2 /* 1 was the JSON form of attestd before the typed pipeline */

/*
 * The observer's section ('R'): bytes the round's per-entry observer (verify.h: verify_observer)
 * keeps beside the state, stored after verify's own sections and not read by verify: the runtime
 * policy's results (policy/runtime-state.h). Verify checks its framing and cap only.
 */
#define REPLAY_STATE_OBSERVER_TAG 'R'
#define REPLAY_STATE_OBSERVER_MAX 21385 /* body bytes at most */

struct replay_observer_section {
        const uint8_t *p; /* the body, borrowed from the buffer decoded; NULL: no section */
        size_t len;
        size_t off;       /* p's byte offset in that buffer (errors name it) */
        uint64_t entries; /* the state's entry count: the body's entries are below it */
};

/*
 * Per agent and per boot. No pointers. Its value: every field but pcr[b] of a bank b not in banks
 * (never replayed, never stored). replay_state_copy() copies just that; a whole-struct assignment
 * is correct too but copies 10 KiB.
 */
struct replay_state {
        bool valid; /* false: nothing known, replay from entry 0 */
        uint32_t reset_count, restart_count;
        uint64_t clock;   /* TPM clock of the last accepted quote, ms */
        uint64_t entries; /* log entries consumed so far this boot */
        unsigned banks;   /* BANK_MASK() of the banks replayed: those quoted with PCR 10 */
        uint32_t used;    /* bit i: the log extended PCR i */
        uint8_t pcr[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX]; /* running replay values, of the
                                                                banks in banks */
        bool boot_aggregate_seen;                            /* entry 0 was a boot_aggregate */
        bool boot_aggregate_ok; /* ... and matched the quoted PCRs 0-9 (0-7 for sha1) */
        /* claims of the accepted entries on PCR 10 since boot, typed */
        struct cdata_claims claims;
        /* bootv: the firmware event log's replay and claims this boot (section 'B') */
        struct boot_state boot;
};

/* Bytes of each part at its largest; REPLAY_STATE_MAX is their sum. */
#define REPLAY_STATE_HEAD (4 + 1)
#define REPLAY_STATE_COUNTERS (4 + 4 + 8 + 8)
#define REPLAY_STATE_PCRS_MAX (1 + 4 + PCR_COUNT * (20 + 32 + 48 + 64))
#define REPLAY_STATE_CLAIMS_MAX                                                                    \
        (1 + 8 + 8 + 1 + 8 + (8 + 1 + 1 + 4 + 4 + 4) + (8 + 4 + 1 + BANK_DIGEST_MAX) +             \
         (8 + 1 + CDATA_KERNEL_VERSION_MAX - 1) + (8 + 3 * (1 + CDATA_WORD_MAX - 1)) +             \
         (8 + 1 + 1))
/* the observer's section: u8 tag 'R' | u32 length | body */
#define REPLAY_STATE_OBSERVER_SECTION_MAX (1 + 4 + REPLAY_STATE_OBSERVER_MAX)
#define REPLAY_STATE_MAX                                                                           \
        (REPLAY_STATE_HEAD + REPLAY_STATE_COUNTERS + REPLAY_STATE_PCRS_MAX +                       \
         REPLAY_STATE_CLAIMS_MAX + REPLAY_STATE_OBSERVER_SECTION_MAX + BOOT_STATE_SECTION_MAX)

/* Empties s (nothing known), all of it: not for a hot path (10 KiB). */
void replay_state_init(struct replay_state *s);
/* *dst = *src, copying its value only (dst and src must not overlap). */
void replay_state_copy(struct replay_state *dst, const struct replay_state *src);
/*
 * Encode into a new buffer (*ret, *ret_len bytes, free()), with obs (obs_len bytes, at most
 * REPLAY_STATE_OBSERVER_MAX; 0: none) as the observer's section of a valid state; -ENOMEM, or
 * -EINVAL for a state the decoder would refuse (never for one the verifier made).
 */
int replay_state_encode(const struct replay_state *s, const uint8_t *obs, size_t obs_len,
                        uint8_t **ret, size_t *ret_len) _wur_;
/*
 * Decode with every field validated; codes replay_state_magic, _version, _truncated, _bad_value,
 * _trailing, _too_big (all -EBADMSG, -E2BIG for the last). *ret and *ret_obs (either may be NULL;
 * the observer's section, p NULL when there is none) are written only on success.
 */
int replay_state_decode(const uint8_t *buf, size_t len, struct replay_state *ret,
                        struct replay_observer_section *ret_obs, struct attest_err *err) _wur_;
/*
 * The firmware event log's byte offset the stored state holds (boot.offset; 0 without a valid
 * boot section), without building the state: the challenge needs only this. The bytes are checked
 * by the same walk as replay_state_decode(), every field: it fails exactly when the decoder does,
 * with the same error, and otherwise gives the decoder's boot.offset and observer's section
 * (fuzz-replay-state checks both on every input). Else as the decoder: *ret, *ret_obs written
 * only on success.
 */
int replay_state_boot_offset(const uint8_t *buf, size_t len, uint64_t *ret,
                             struct replay_observer_section *ret_obs, struct attest_err *err) _wur_;

#endif
