/* SPDX-License-Identifier: MIT */
/*
 * The ima.runtime results of one agent's boot (policy/runtime.h judges, this module keeps them):
 * the per-agent state the runtime policy carries between rounds, what a round starts from, the
 * observer verify feeds every accepted entry to (verify/verify.h: verify_observer), and their
 * stored form.
 *
 * Stored as the replay state's observer section (verify/replay-state.h: 'R', opaque to verify),
 * little-endian, the body:
 *
 *   u8 ref length | ref | u64 passed | u64 failed | u64 excluded | u64 signed | u64 violations |
 *   u8 nfail | nfail x (u64 entry | u8 reason | u8 algo | u8 digest length | digest |
 *                       u8 flags (bit 0: path cut) | u8 path length | path)
 *
 * Decoding validates every field against the replay state's entry count (counts within it,
 * failures at entries below it and in increasing order, the ref printable) and the exact length;
 * errors name the byte offset in the whole stored state and the field. No section: no runtime
 * policy judged this boot's entries.
 */
#ifndef ATTEST_RUNTIME_STATE_H
#define ATTEST_RUNTIME_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/ima.h"
#include "util/buf.h"
#include "util/err.h"
#include "verify/replay-state.h"

#define RT_FAILURES_CAP 64   /* failures named at most (the policy's failures_max is below) */
#define RT_FAIL_PATH_MAX 255 /* bytes of a failure's path kept; longer ones are cut */
#define RT_REF_MAX 95        /* the policy name@version the results were judged by */
#define RT_DIGEST_MAX 64

/* Why a file or buffer measurement failed; names in rt_reason_name(). */
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

const char *rt_reason_name(enum rt_reason r);

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
 * fail[0 .. nfail-1] is ever read: the decoder, rt_state_empty() and rt_state_copy() leave the
 * rest as it was (21 KiB that would otherwise be zeroed and copied every round).
 */
struct rt_state {
        char ref[RT_REF_MAX + 1]; /* "": no runtime policy judged this boot's entries */
        uint64_t passed, failed, excluded, signed_ok, violations;
        uint16_t nfail;
        struct rt_failure fail[RT_FAILURES_CAP]; /* last: see above */
};

/* Empties s, all of it (21 KiB: tests, tools). */
void rt_state_init(struct rt_state *s);
/* Empties s's value (ref, counts, nfail), leaving fail[] as it was: for every round. */
void rt_state_empty(struct rt_state *s);
/* *dst = *src, copying its value only (fail[] up to nfail). */
void rt_state_copy(struct rt_state *dst, const struct rt_state *src);

/* The body at its largest: REPLAY_STATE_OBSERVER_MAX leaves room for it (asserted). */
#define RT_STATE_BODY_MAX                                                                          \
        (1 + RT_REF_MAX + 5 * 8 + 1 +                                                              \
         RT_FAILURES_CAP * (8 + 1 + 1 + 1 + RT_DIGEST_MAX + 1 + 1 + RT_FAIL_PATH_MAX))

/*
 * The body of s onto w (nothing when s->ref is empty); -EINVAL for a state the decoder would
 * refuse for its own fields (nfail or a length over its cap), else wb's errors.
 */
int rt_state_put(struct wb *w, const struct rt_state *s) _wur_;
/*
 * The body sec holds (verify/replay-state.h: replay_state_decode's observer section) into *ret:
 * every field checked against sec->entries, errors naming the byte of the whole stored state
 * (codes replay_state_truncated, _bad_value, -EBADMSG). No section (sec->p NULL): *ret emptied.
 * *ret is written only on success (fail[] past nfail left as it was).
 */
int rt_state_get(const struct replay_observer_section *sec, struct rt_state *ret,
                 struct attest_err *err) _wur_;

/*
 * The stored state of an agent: verify's replay state with the runtime results as its observer
 * section; the bytes attestd writes to agents.replay_state. Encoding refuses (-EINVAL) what
 * decoding would refuse; decoding fails when either part does (outputs written only on success);
 * the boot offset is the challenge's reader, refusing exactly what the decoder refuses.
 */
int rt_state_stored_encode(const struct replay_state *s, const struct rt_state *rt, uint8_t **ret,
                           size_t *ret_len) _wur_;
int rt_state_stored_decode(const uint8_t *buf, size_t len, struct replay_state *ret,
                           struct rt_state *ret_rt, struct attest_err *err) _wur_;
int rt_state_stored_boot_offset(const uint8_t *buf, size_t len, uint64_t *ret,
                                struct attest_err *err) _wur_;

/* What a round does with the runtime policy, decided before verification. */
enum rt_round {
        RT_ROUND_OFF,     /* no runtime policy: nothing judged, no results kept */
        RT_ROUND_JUDGE,   /* judge the new entries, on top of the stored results of this version */
        RT_ROUND_AFRESH,  /* another version's results, the log sent from entry 0: judge it all,
                           * with no stored replay (this boot's was made under that version) */
        RT_ROUND_RESTART, /* another version's results, the log not from entry 0: judge nothing;
                           * once the quote verifies, the replay restarts from entry 0 */
};

/*
 * The decision for one round, and the results it starts from. st: the stored results (empty when
 * none were stored), replay_valid: a valid replay state is stored, ima_offset: where this round's
 * log starts, ref: name@version of the runtime policy judging it (NULL: none). st is emptied for
 * OFF and AFRESH, kept for JUDGE (its ref set: a version judges nothing of another) and left
 * alone for RESTART (its ref names the version that judged it).
 */
enum rt_round rt_state_for_round(struct rt_state *st, bool replay_valid, uint64_t ima_offset,
                                 const char *ref);

struct rt_ctx;
/*
 * verify's observer (verify/verify.h: struct verify_observer) judging each accepted entry into
 * st with ctx: begin empties st's results (its ref kept) when the round starts the boot's log
 * from entry 0 (a reboot, or no stored replay state); entry calls rt_eval_entry().
 */
struct rt_observer {
        struct rt_ctx *ctx;
        struct rt_state *st;
};
int rt_observer_begin(void *arg, uint64_t first);
int rt_observer_entry(void *arg, const struct ima_entry *e, uint64_t idx);

#endif
