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

#include "policy/verdict.h"
#include "util/err.h"
#include "util/macro.h"

enum metrics_result {
        METRICS_PASS,
        METRICS_FAIL,
        METRICS_ERROR, /* could not judge: rejected evidence */
        METRICS_RESULT_COUNT,
};

#define METRICS_BUCKETS 14

/* Why attestd closed a connection itself (attestd_http_connections_closed_total{reason}). */
enum metrics_conn_close {
        METRICS_CONN_OVERDUE,   /* head or request past its deadline (--header/--body-timeout) */
        METRICS_CONN_PRESSURE,  /* waited long for a head with the table over 90 % full */
        METRICS_CONN_EVICTED,   /* waited longest for a head when a newcomer came at the cap */
        METRICS_CONN_REFUSED,   /* a newcomer at the cap with every other one in a request */
        METRICS_CONN_SLOW_BODY, /* a body slower than --min-body-rate after its grace */
        METRICS_CONN__COUNT,
};

/* How a lingering close ended (attestd_http_lingering_closes_total{end}; http-linger.c). */
enum metrics_linger {
        METRICS_LINGER_ENDED,   /* the client closed its side (or reset it) */
        METRICS_LINGER_TIMEOUT, /* HTTP_LINGER_MS passed */
        METRICS_LINGER_CAP,     /* HTTP_LINGER_BYTES read and dropped */
        METRICS_LINGER_FULL,    /* not kept: HTTP_LINGER_MAX sockets already were */
        METRICS_LINGER__COUNT,
};

/* Why an agent's replay starts again from entry 0 (attestd_replay_resets_total{reason}). */
enum metrics_reset {
        METRICS_RESET_REBOOT,         /* the agent's TPM counters say it rebooted */
        METRICS_RESET_RUNTIME_POLICY, /* another runtime policy judged the earlier entries */
        METRICS_RESET_STATE_UNUSABLE, /* the stored replay state did not decode */
        METRICS_RESET__COUNT,
};

/*
 * attestd_agents{state=...}: a partition of the agents (store.h struct store_counts): failing
 * (last verdict fail, stale or not: a failing host that stops reporting stays failing, so an
 * alert on it does not clear itself), stale (past due, last verdict not fail), active (passing,
 * not stale), never_attested, decommissioned.
 */
struct metrics_agents {
        uint64_t active, stale, failing, never, decommissioned;
};

/*
 * Request latency by route: the router's route table index (api-router.c) and the method's slot
 * in it, never the raw path, so a client cannot add label values. Route METRICS_ROUTES_MAX - 1 is
 * "none" (no route matched, or a method the route has not).
 */
#define METRICS_ROUTES_MAX 24
#define METRICS_ROUTE_METHODS 3
#define METRICS_HTTP_BUCKETS 12

struct metrics {
        atomic_uint_fast64_t attestations[METRICS_RESULT_COUNT];
        atomic_uint_fast64_t latency_bucket[METRICS_BUCKETS]; /* cumulative at render */
        atomic_uint_fast64_t latency_count, latency_sum_us;
        atomic_uint_fast64_t ima_entries_replayed;
        atomic_uint_fast64_t evidence_rows[2]; /* the agent row of an evidence round: read, kept */
        atomic_uint_fast64_t requests;
        atomic_uint_fast64_t rejected[AE__COUNT];        /* by error code */
        atomic_uint_fast64_t claim_failed[CLAIM__COUNT]; /* claims that did not pass, by id */
        atomic_uint_fast64_t conns_open;                 /* accepted and not yet closed */
        atomic_uint_fast64_t conns_closed[METRICS_CONN__COUNT];
        atomic_uint_fast64_t lingered[METRICS_LINGER__COUNT];
        atomic_uint_fast64_t tls_sessions[2]; /* connections' TLS sessions: made in full, resumed */
        atomic_uint_fast64_t responses[4];    /* API answers by status class 2xx..5xx */
        atomic_uint_fast64_t replay_resets[METRICS_RESET__COUNT];
        struct {
                atomic_uint_fast64_t bucket[METRICS_HTTP_BUCKETS]; /* cumulative at render */
                atomic_uint_fast64_t count, sum_us;
        } http[METRICS_ROUTES_MAX][METRICS_ROUTE_METHODS];
};

/* The label values of route i, method slot j (NULL: not a route/method, not rendered). */
struct metrics_routes {
        size_t n; /* routes (without "none"), at most METRICS_ROUTES_MAX - 1 */
        const char *pattern[METRICS_ROUTES_MAX];
        const char *method[METRICS_ROUTES_MAX][METRICS_ROUTE_METHODS];
};

void metrics_init(struct metrics *m);
void metrics_done(struct metrics *m);
void metrics_attestation(struct metrics *m, enum metrics_result r, uint64_t latency_us);
void metrics_replayed(struct metrics *m, uint64_t entries);
/* An evidence round's agent row: kept by its challenge (rowstash.h), else read. */
void metrics_evidence_row(struct metrics *m, bool kept);
/* A round refused because a new runtime policy judges the log from entry 0 (not an error). */
void metrics_rejected(struct metrics *m, enum attest_code code);
void metrics_request(struct metrics *m);
/* A connection accepted (+1) or closed (-1); one attestd closed itself, and why. */
void metrics_conn_open(struct metrics *m, int delta);
void metrics_conn_closed(struct metrics *m, enum metrics_conn_close why);
void metrics_linger(struct metrics *m, enum metrics_linger how);
/* A connection's first request: its TLS session was resumed (a session ticket) or made in full. */
void metrics_tls_session(struct metrics *m, bool resumed);
void metrics_claim_failed(struct metrics *m, enum claim_id id);
/* An API answer's status (below 200 or above 599 counts as 5xx: nobody set one). */
void metrics_response(struct metrics *m, unsigned status);
void metrics_replay_reset(struct metrics *m, enum metrics_reset why);
/* One request answered: route index (>= METRICS_ROUTES_MAX - 1: none), method slot. */
void metrics_http(struct metrics *m, size_t route, size_t method, uint64_t latency_us);

/* The exposition text, malloc'ed, in *ret (length *ret_len). */
struct metrics_store {
        uint64_t commits, writes;
        uint64_t wal_pages; /* pages the commits wrote to the WAL */
        /* the read cache of agent rows (store-cache.c) */
        uint64_t cache_hits, cache_misses, cache_evictions, cache_entries;
        /* statements executed (DB round trips with PostgreSQL), the connection pool */
        uint64_t db_statements, pool_waits, pool_exhausted, pool_size, pool_in_use;
        uint64_t writable; /* 1: the readiness probe's write succeeded (store_probe), else 0 */
};

/* The policy cache (daemon/policy-cache.h): lookups that hit and missed, documents parsed. */
struct metrics_policies {
        uint64_t hits, misses, parses, evictions, entries, bytes;
};

/* agents NULL: the agent counts could not be read (the attestd_agents series left out). */
int metrics_render(struct metrics *m, const struct metrics_agents *agents,
                   const struct metrics_store *store, const struct metrics_policies *policies,
                   const struct metrics_routes *routes, char **ret, size_t *ret_len) _wur_;

#endif
