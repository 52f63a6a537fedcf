/* SPDX-License-Identifier: MIT */
/*
 * The per-agent replay state carried between rounds (DESIGN §3 "Incremental", §7), and its stored
 * form: a compact, versioned, length-checked binary encoding, little-endian throughout:
 *
 *   "ars" u8 version(2) | u8 flags (valid, boot_aggregate seen, ok)          -- end if !valid
 *   u32 resetCount | u32 restartCount | u64 clock | u64 entries
 *   u8 banks (BANK_MASK bits) | u32 used (PCR bits) | for each bank, each used PCR: digest
 *   u8 claim flags (selinux, enforced, policy hash, kernel version, trusted keys, cfi)
 *   u64 selinux states | [u64 first enforcing] | u8 lapse | [u64 lapse entry]
 *   [selinux: u64 entry | u8 flags present | u8 flags value | u32 caps present | u32 caps value |
 *             u32 unknown keys]
 *   [policy hash: u64 entry | u32 count | u8 len | len bytes]
 *   [kernel version: u64 entry | u8 len | len bytes]
 *   [trusted keys: u64 entry | u8 len | len bytes of the source word]
 *   [cfi: u64 entry | u8 bits (enabled, permissive) | u8 mode]
 *   then tagged sections, each at most once, in tag order: u8 tag | u32 length | length bytes
 *     'B' measured boot (verify/boot.h: boot_state_put)
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

/* Per agent and per boot. No pointers: copy it by assignment. */
struct replay_state {
        bool valid; /* false: nothing known, replay from entry 0 */
        uint32_t reset_count, restart_count;
        uint64_t clock;   /* TPM clock of the last accepted quote, ms */
        uint64_t entries; /* log entries consumed so far this boot */
        unsigned banks;   /* BANK_MASK() of the banks replayed: those quoted with PCR 10 */
        uint32_t used;    /* bit i: the log extended PCR i */
        uint8_t pcr[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX]; /* running replay values */
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
         (8 + 1 + CDATA_KERNEL_VERSION_MAX - 1) + (8 + 1 + CDATA_WORD_MAX - 1) + (8 + 1 + 1))
#define REPLAY_STATE_MAX                                                                           \
        (REPLAY_STATE_HEAD + REPLAY_STATE_COUNTERS + REPLAY_STATE_PCRS_MAX +                       \
         REPLAY_STATE_CLAIMS_MAX + BOOT_STATE_SECTION_MAX)

void replay_state_init(struct replay_state *s);
/*
 * Encode into a new buffer (*ret, *ret_len bytes, free()); -ENOMEM, or -EINVAL for a state the
 * decoder would refuse (never for one the verifier made).
 */
int replay_state_encode(const struct replay_state *s, uint8_t **ret, size_t *ret_len) _wur_;
/*
 * Decode with every field validated; codes replay_state_magic, _version, _truncated, _bad_value,
 * _trailing, _too_big (all -EBADMSG, -E2BIG for the last). *ret is written only on success.
 */
int replay_state_decode(const uint8_t *buf, size_t len, struct replay_state *ret,
                        struct attest_err *err) _wur_;

#endif
