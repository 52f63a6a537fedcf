/* SPDX-License-Identifier: MIT */
/*
 * The agent rows challenges read, kept for the evidence that answers each (docs/architecture.md
 * §7, PostgreSQL). A challenge reads the agent's row fresh from the store (its
 * offsets must be the database's, whichever instance judged the last round) and, having issued
 * its nonce, hands the row here; the evidence round over that nonce takes it back instead of
 * reading the row again. The row may have moved on meanwhile (another instance, an operator):
 * the verdict's write is refused then (the store's seq check, -ESTALE) and nothing stale is
 * written; this only saves the read.
 *
 * One row per agent (a newer challenge's replaces it), kept until its nonce expires; bounded in
 * rows and bytes, the oldest pushed out first, so a client that asks challenges for many agents
 * costs only later reads. Thread-safe.
 */
#ifndef ATTESTD_ROWSTASH_H
#define ATTESTD_ROWSTASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/nonce.h"
#include "daemon/store/store.h"
#include "util/macro.h"

#define ROWSTASH_ROWS_MAX 16384
#define ROWSTASH_BYTES_MAX (32u << 20)

struct rowstash;

struct rowstash_stats {
        uint64_t kept, taken, missed, pushed_out, rows, bytes;
};

/* A stash of at most max_rows rows and max_bytes bytes (0 keeps nothing). */
int rowstash_new(size_t max_rows, size_t max_bytes, struct rowstash **ret) _wur_;
struct rowstash *rowstash_free(struct rowstash *s);
DEFINE_CLEANUP_FUNC(struct rowstash *, rowstash_free)

/*
 * Keep a (ownership taken, freed here whatever happens) for the evidence over nonce until
 * expires_ms. A row larger than the stash is not kept.
 */
void rowstash_put(struct rowstash *s, struct store_agent *a, const uint8_t nonce[NONCE_LEN],
                  uint64_t expires_ms);

/*
 * The row kept for agent id under this nonce (len bytes), taken out: the caller owns it. NULL
 * when none is (another nonce's row stays), or it expired by now_ms (then it is dropped).
 */
struct store_agent *rowstash_take(struct rowstash *s, const char *id, const uint8_t *nonce,
                                  size_t len, uint64_t now_ms) _wur_;

/* Whether a row is kept for id at now_ms (under any nonce), and that row's state. */
bool rowstash_state(struct rowstash *s, const char *id, uint64_t now_ms,
                    enum agent_state *ret_state);

void rowstash_stats(struct rowstash *s, struct rowstash_stats *ret);

#endif
