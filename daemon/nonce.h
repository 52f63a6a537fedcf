/* SPDX-License-Identifier: MIT */
/*
 * Stateless nonces (docs/architecture.md §3.2). A nonce is 32 bytes:
 *
 *   rand[6] | expires_ms[6, big endian] | mac_issue[8] | mac_agent[6] | mac_round[6]
 *
 * each tag the first bytes of HMAC-SHA256(key, label NUL | rand | expires | ...):
 * mac_issue ("attestd-nonce-2") says this verifier (or one sharing its key) issued it; mac_agent
 * ("attestd-nonce-agent-2", | agent) binds it to one agent; mac_round ("attestd-nonce-round-2",
 * | agent | last_result | created, 8 bytes each, big endian) to the agent's state when it was
 * issued: the id of its last result and its enrolment time. Every verdict stores a result with a
 * new id, so once a round is judged every nonce issued before it is stale (nonce_check_round):
 * a nonce serves one verdict at most, and a replayed submission is refused before its quote is
 * checked, with nothing stored. Concurrent rounds over one nonce are settled by the store's
 * sequence check (one verdict is written). Issuing stores nothing, so an anonymous client cannot
 * exhaust anything. MACs compare in constant time.
 *
 * nonce_check() errors (err->code), all -ESTALE:
 *   nonce_unknown     not issued with this key (tampered, forged, wrong length)
 *   nonce_wrong_agent issued to another agent
 *   nonce_expired     past its TTL
 * nonce_check_round(): nonce_reused, a round of the agent was judged since.
 */
#ifndef ATTESTD_NONCE_H
#define ATTESTD_NONCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define NONCE_LEN 32
#define NONCE_AGENT_MAX 64
#define NONCE_KEY_MIN 32
#define NONCE_KEY_MAX 64

struct nonce_store;

/* key: NONCE_KEY_MIN..NONCE_KEY_MAX bytes (copied; cleansed on free). */
int nonce_store_new(uint64_t ttl_ms, const uint8_t *key, size_t key_len, struct nonce_store **ret)
        _wur_;
struct nonce_store *nonce_store_free(struct nonce_store *s);
DEFINE_CLEANUP_FUNC(struct nonce_store *, nonce_store_free)

/*
 * The daemon key: read from path (NONCE_KEY_MIN..NONCE_KEY_MAX bytes). When the file does not
 * exist and create is true, NONCE_KEY_MIN random bytes are written to it with mode 0600 first.
 * -ENOENT (not create), -EINVAL (wrong size), -EPERM (group or others may access it: the key
 * would let them forge nonces), -errno; err says which file, never the key.
 */
int nonce_key_load(const char *path, bool create, uint8_t key[NONCE_KEY_MAX], size_t *ret_len,
                   struct attest_err *err) _wur_;

/* The agent's state a nonce answers (from its stored row). */
struct nonce_round {
        int64_t last_result; /* the id of its last result, 0: none yet */
        int64_t created;     /* its enrolment time: a new agent under an old id is another */
};

/*
 * Issue a nonce for agent (at most NONCE_AGENT_MAX bytes) in state round at time now_ms;
 * *ret_expires_ms is when it stops being accepted. -EIO when RAND fails. Stores nothing.
 */
int nonce_issue(struct nonce_store *s, const char *agent, const struct nonce_round *round,
                uint64_t now_ms, uint8_t ret_nonce[NONCE_LEN], uint64_t *ret_expires_ms) _wur_;

/* Whether nonce is valid for agent at now_ms (see the codes above); *ret_expires_ms its expiry. */
int nonce_check(struct nonce_store *s, const char *agent, const uint8_t *nonce, size_t len,
                uint64_t now_ms, uint64_t *ret_expires_ms, struct attest_err *err) _wur_;

/* Whether a nonce nonce_check() accepted was issued in the agent's state round (nonce_reused
 * otherwise). */
int nonce_check_round(struct nonce_store *s, const char *agent, const struct nonce_round *round,
                      const uint8_t nonce[NONCE_LEN], struct attest_err *err) _wur_;

#endif
