/* SPDX-License-Identifier: MIT */
/*
 * Nonce store (DESIGN §4 "Freshness"): 32 bytes from RAND_bytes, bound to one agent, single use,
 * a TTL. A nonce is remembered for one more TTL (at least NONCE_KEEP_MIN_MS) after it expires, so
 * a late or second submission gets its own error instead of "unknown". Thread safe (one mutex).
 *
 * nonce_consume() errors (err->code), all -ESTALE:
 *   nonce_unknown     never issued here (or forgotten since, or issued before a restart)
 *   nonce_expired     issued, not used, past its TTL
 *   nonce_reused      already used once
 *   nonce_wrong_agent issued to another agent (the nonce stays usable by its agent)
 */
#ifndef ATTESTD_NONCE_H
#define ATTESTD_NONCE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define NONCE_LEN 32
#define NONCE_AGENT_MAX 64
#define NONCE_KEEP_MIN_MS 60000

struct nonce_store;

int nonce_store_new(uint64_t ttl_ms, size_t max, struct nonce_store **ret) _wur_;
struct nonce_store *nonce_store_free(struct nonce_store *s);
DEFINE_CLEANUP_FUNC(struct nonce_store *, nonce_store_free)

/*
 * Issue a nonce for agent (at most NONCE_AGENT_MAX bytes) at time now_ms; *ret_expires_ms is
 * when it stops being accepted. -EBUSY when max nonces are outstanding, -EIO when RAND fails.
 */
int nonce_issue(struct nonce_store *s, const char *agent, uint64_t now_ms,
                uint8_t ret_nonce[NONCE_LEN], uint64_t *ret_expires_ms) _wur_;

/* Accept the nonce once for agent; see the error codes above. */
int nonce_consume(struct nonce_store *s, const char *agent, const uint8_t *nonce, size_t len,
                  uint64_t now_ms, struct attest_err *err) _wur_;

/* Forget every nonce of an agent (it was deleted). */
void nonce_forget_agent(struct nonce_store *s, const char *agent);

size_t nonce_outstanding(struct nonce_store *s);

#endif
