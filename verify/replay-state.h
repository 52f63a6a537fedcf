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

/* ---- ima.runtime results (policy/runtime.h evaluates, this file stores): runtime's block ---- */
#define RT_FAILURES_CAP 64   /* failures named at most (the policy's failures_max is below) */
#define RT_FAIL_PATH_MAX 255 /* bytes of a failure's path kept; longer ones are cut */
#define RT_REF_MAX 95        /* the policy name@version the results were judged by */
#define RT_DIGEST_MAX 64

/* Why a file or buffer measurement failed; names in policy/runtime.c. */
enum rt_reason {
        RT_REASON_NOT_ALLOWED,         /* path not in the allowlist */
        RT_REASON_DIGEST_MISMATCH,     /* path listed, digest not among its digests */
        RT_REASON_BAD_SIGNATURE,       /* signature by a trusted key does not verify */
        RT_REASON_UNKNOWN_KEY,         /* signature by a key the policy does not trust */
        RT_REASON_VIOLATION,           /* an IMA violation beyond those allowed */
        RT_REASON_KEYRING_NOT_ALLOWED, /* ima-buf key measurement not allowed for its keyring */
        RT_REASON_BUF_NOT_ALLOWED,     /* other ima-buf event not allowed */
        RT_REASON_UNSUPPORTED,         /* no digest or name to judge (opaque template, algo) */
        RT_REASON_EXCLUDE_LIMIT,       /* an exclude hit its match limit on the path, not allowed */
        RT_REASON_EXCLUDE_BUDGET,      /* the round's exclude budget was spent, not allowed */
        RT_REASON__COUNT,
};

struct rt_failure {
        uint64_t entry; /* log entry index since boot */
        uint8_t reason; /* enum rt_reason */
        uint8_t algo;   /* the kernel's enum hash_algo of the digest */
        uint8_t digest_len;
        bool path_cut;     /* the path was longer than RT_FAIL_PATH_MAX */
        uint16_t path_len; /* bytes in path, NUL not counted */
        uint8_t digest[RT_DIGEST_MAX];
        char path[RT_FAIL_PATH_MAX + 1];
};

/*
 * Counts are complete; failures hold the first nfail (at most the policy's failures_max). Only
 * fail[0 .. nfail-1] is ever read: the decoder and replay_state_copy() leave the rest as it was
 * (21 KiB that would otherwise be zeroed and copied every round), so fail stays the last member.
 */
struct rt_state {
        char ref[RT_REF_MAX + 1]; /* "": no runtime policy judged this boot's entries */
        uint64_t passed, failed, excluded, signed_ok, violations;
        uint16_t nfail;
        struct rt_failure fail[RT_FAILURES_CAP]; /* last: see above */
};

void rt_state_init(struct rt_state *s);

/*
 * Per agent and per boot. No pointers. Its value: every field but pcr[b] of a bank b not in banks
 * (never replayed, never stored) and runtime.fail past runtime.nfail. replay_state_copy() copies
 * just that; a whole-struct assignment is correct too but copies 31 KiB.
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
        /* runtime: the ima.runtime results since boot (section 'R'); last, so that the used
         * prefix (replay_state_used()) ends inside it */
        struct rt_state runtime;
};

/* Bytes of each part at its largest; REPLAY_STATE_MAX is their sum. */
#define REPLAY_STATE_HEAD (4 + 1)
#define REPLAY_STATE_COUNTERS (4 + 4 + 8 + 8)
#define REPLAY_STATE_PCRS_MAX (1 + 4 + PCR_COUNT * (20 + 32 + 48 + 64))
#define REPLAY_STATE_CLAIMS_MAX                                                                    \
        (1 + 8 + 8 + 1 + 8 + (8 + 1 + 1 + 4 + 4 + 4) + (8 + 4 + 1 + BANK_DIGEST_MAX) +             \
         (8 + 1 + CDATA_KERNEL_VERSION_MAX - 1) + (8 + 1 + CDATA_WORD_MAX - 1) + (8 + 1 + 1))
/* runtime: u8 tag 'R' | u32 length | u8 ref length | ref | 5 x u64 counts | u8 nfail | failures:
 * u64 entry | u8 reason | u8 algo | u8 digest length | digest | u8 flags (path cut) | u8 path
 * length | path */
#define REPLAY_STATE_RUNTIME_MAX                                                                   \
        (1 + 4 + 1 + RT_REF_MAX + 5 * 8 + 1 +                                                      \
         RT_FAILURES_CAP * (8 + 1 + 1 + 1 + RT_DIGEST_MAX + 1 + 1 + RT_FAIL_PATH_MAX))
#define REPLAY_STATE_MAX                                                                           \
        (REPLAY_STATE_HEAD + REPLAY_STATE_COUNTERS + REPLAY_STATE_PCRS_MAX +                       \
         REPLAY_STATE_CLAIMS_MAX + REPLAY_STATE_RUNTIME_MAX + BOOT_STATE_SECTION_MAX)

/* Empties s (nothing known), all of it: not for a hot path (31 KiB). */
void replay_state_init(struct replay_state *s);
/* Bytes of s up to the end of its value: all but runtime.fail[] past runtime.nfail. */
size_t replay_state_used(const struct replay_state *s);
/* *dst = *src, copying its value only (dst and src must not overlap). */
void replay_state_copy(struct replay_state *dst, const struct replay_state *src);
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
/*
 * The firmware event log's byte offset the stored state holds (boot.offset; 0 without a valid
 * boot section), without building the state: the challenge needs only this. The bytes are checked
 * by the same walk as replay_state_decode(), every field: it fails exactly when the decoder does,
 * with the same error, and otherwise gives the decoder's boot.offset (fuzz-replay-state checks
 * both on every input). Else as the decoder: *ret written only on success.
 */
int replay_state_boot_offset(const uint8_t *buf, size_t len, uint64_t *ret, struct attest_err *err)
        _wur_;

#endif
