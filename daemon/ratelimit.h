/* SPDX-License-Identifier: MIT */
/*
 * Failure rate limit per key (an agent id): at most max failures per window; past that the key is
 * refused until the window ends. Logging follows the same windows: one line per key per window,
 * carrying how many failures of the previous window went unlogged. A fixed table of slots
 * (direct mapped by a hash of the key), so memory is bounded whatever the keys. Thread safe.
 */
#ifndef ATTESTD_RATELIMIT_H
#define ATTESTD_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

#define RATELIMIT_KEY_MAX 64
#define RATELIMIT_SLOTS 4096

struct ratelimit;

int ratelimit_new(unsigned max, uint64_t window_ms, struct ratelimit **ret) _wur_;
struct ratelimit *ratelimit_free(struct ratelimit *r);

/* Whether key is refused at now_ms; *ret_retry_s: seconds until it is not (at least 1). */
bool ratelimit_blocked(struct ratelimit *r, const char *key, uint64_t now_ms,
                       unsigned *ret_retry_s);

/*
 * Count one failure of key. Returns true when this failure should be logged (the first of its
 * window); *ret_suppressed then holds the failures not logged since the last logged one.
 */
bool ratelimit_fail(struct ratelimit *r, const char *key, uint64_t now_ms,
                    uint64_t *ret_suppressed);

#endif
