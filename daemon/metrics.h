/* SPDX-License-Identifier: MIT */
/*
 * Prometheus counters (text exposition format 0.0.4): attestations by result, verification latency
 * histogram, rejected requests by error code, IMA entries replayed; agents by state are counted by
 * the caller at scrape time and passed to metrics_render(). Lock-free except the code table.
 */
#ifndef ATTESTD_METRICS_H
#define ATTESTD_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#include "util/macro.h"

enum metrics_result {
        METRICS_PASS,
        METRICS_FAIL,
        METRICS_ERROR, /* could not judge: rejected evidence */
        METRICS_RESULT_COUNT,
};

#define METRICS_BUCKETS 14

struct metrics_agents {
        uint64_t active, stale, failing, never;
};

struct metrics {
        atomic_uint_fast64_t attestations[METRICS_RESULT_COUNT];
        atomic_uint_fast64_t latency_bucket[METRICS_BUCKETS]; /* cumulative at render */
        atomic_uint_fast64_t latency_count, latency_sum_us;
        atomic_uint_fast64_t ima_entries_replayed;
        atomic_uint_fast64_t requests;
        atomic_uint_fast64_t rejected[AE__COUNT]; /* by error code */
};

void metrics_init(struct metrics *m);
void metrics_done(struct metrics *m);
void metrics_attestation(struct metrics *m, enum metrics_result r, uint64_t latency_us);
void metrics_replayed(struct metrics *m, uint64_t entries);
void metrics_rejected(struct metrics *m, enum attest_code code);
void metrics_request(struct metrics *m);

/* The exposition text, malloc'ed, in *ret (length *ret_len). */
struct metrics_store {
        uint64_t commits, writes;
};

/* The policy cache (daemon/policy-cache.h): lookups that hit and missed, documents parsed. */
struct metrics_policies {
        uint64_t hits, misses, parses, evictions, entries;
};

int metrics_render(struct metrics *m, const struct metrics_agents *agents,
                   const struct metrics_store *store, const struct metrics_policies *policies,
                   uint64_t nonces_consumed, char **ret, size_t *ret_len) _wur_;

#endif
