/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics.h"

#ifndef ATTEST_VERSION
#error "ATTEST_VERSION: daemon/meson.build passes the project version"
#endif

/* upper bounds in microseconds; the last bucket is +Inf */
static const uint64_t bucket_us[METRICS_BUCKETS - 1] = {
        100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000,
};

/* request latency: upper bounds in microseconds; the last bucket is +Inf */
static const uint64_t http_bucket_us[METRICS_HTTP_BUCKETS - 1] = {
        500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000,
};

static const char *const result_name[METRICS_RESULT_COUNT] = {"pass", "fail", "error"};

void metrics_init(struct metrics *m)
{
        memset(m, 0, sizeof(*m));
}

void metrics_done(struct metrics *m)
{
        (void)m; /* nothing to release: counters only */
}

void metrics_attestation(struct metrics *m, enum metrics_result r, uint64_t latency_us)
{
        size_t b = 0;

        atomic_fetch_add(&m->attestations[r], 1);
        while (b < METRICS_BUCKETS - 1 && latency_us > bucket_us[b])
                b++;
        atomic_fetch_add(&m->latency_bucket[b], 1);
        atomic_fetch_add(&m->latency_count, 1);
        atomic_fetch_add(&m->latency_sum_us, latency_us);
}

void metrics_replayed(struct metrics *m, uint64_t entries)
{
        atomic_fetch_add(&m->ima_entries_replayed, entries);
}

void metrics_evidence_row(struct metrics *m, bool kept)
{
        atomic_fetch_add(&m->evidence_rows[kept], 1);
}

void metrics_request(struct metrics *m)
{
        atomic_fetch_add(&m->requests, 1);
}

static const char *const conn_close_names[METRICS_CONN__COUNT] = {
        [METRICS_CONN_OVERDUE] = "overdue", /* --header-timeout, --body-timeout */
        [METRICS_CONN_PRESSURE] = "pressure",
        [METRICS_CONN_EVICTED] = "evicted",
        [METRICS_CONN_REFUSED] = "refused",
        [METRICS_CONN_SLOW_BODY] = "slow_body", /* --min-body-rate */
};

void metrics_conn_open(struct metrics *m, int delta)
{
        if (delta > 0)
                atomic_fetch_add(&m->conns_open, 1);
        else
                atomic_fetch_sub(&m->conns_open, 1);
}

/* One more for label value i of a family of n (an index out of range counts nowhere). */
static void count_in(atomic_uint_fast64_t *c, unsigned i, unsigned n)
{
        if (i < n)
                atomic_fetch_add(&c[i], 1);
}

void metrics_conn_closed(struct metrics *m, enum metrics_conn_close why)
{
        count_in(m->conns_closed, (unsigned)why, METRICS_CONN__COUNT);
}

static const char *const linger_names[METRICS_LINGER__COUNT] = {
        [METRICS_LINGER_ENDED] = "ended",
        [METRICS_LINGER_TIMEOUT] = "timeout",
        [METRICS_LINGER_CAP] = "cap",
        [METRICS_LINGER_FULL] = "full",
};

void metrics_linger(struct metrics *m, enum metrics_linger how)
{
        count_in(m->lingered, (unsigned)how, METRICS_LINGER__COUNT);
}

void metrics_tls_session(struct metrics *m, bool resumed)
{
        atomic_fetch_add(&m->tls_sessions[resumed], 1);
}

void metrics_response(struct metrics *m, unsigned status)
{
        unsigned c = status >= 200 && status < 600 ? status / 100 - 2 : 3;

        atomic_fetch_add(&m->responses[c], 1);
}

static const char *const reset_names[METRICS_RESET__COUNT] = {
        [METRICS_RESET_REBOOT] = "reboot",
        [METRICS_RESET_RUNTIME_POLICY] = "runtime_policy",
        [METRICS_RESET_STATE_UNUSABLE] = "state_unusable",
};

void metrics_replay_reset(struct metrics *m, enum metrics_reset why)
{
        count_in(m->replay_resets, (unsigned)why, METRICS_RESET__COUNT);
}

void metrics_claim_failed(struct metrics *m, enum claim_id id)
{
        count_in(m->claim_failed, (unsigned)id, CLAIM__COUNT);
}

void metrics_http(struct metrics *m, size_t route, size_t method, uint64_t latency_us)
{
        size_t b = 0;

        if (route >= METRICS_ROUTES_MAX - 1 || method >= METRICS_ROUTE_METHODS) {
                route = METRICS_ROUTES_MAX - 1;
                method = 0;
        }
        while (b < METRICS_HTTP_BUCKETS - 1 && latency_us > http_bucket_us[b])
                b++;
        atomic_fetch_add(&m->http[route][method].bucket[b], 1);
        atomic_fetch_add(&m->http[route][method].count, 1);
        atomic_fetch_add(&m->http[route][method].sum_us, latency_us);
}

/* A counter with one label of two values, a and b, in that order. */
static void render_pair(FILE *f, const char *name, const char *help, const char *label,
                        const char *a_value, atomic_uint_fast64_t *a, const char *b_value,
                        atomic_uint_fast64_t *b)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s{%s=\"%s\"} %llu\n%s{%s=\"%s\"} %llu\n",
                name, help, name, name, label, a_value, (unsigned long long)atomic_load(a), name,
                label, b_value, (unsigned long long)atomic_load(b));
}

/* A counter family with one label, a series per name (names[i] counts c[i]). */
static void render_family(FILE *f, const char *name, const char *help, const char *label,
                          const char *const *names, atomic_uint_fast64_t *c, unsigned n)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
        for (unsigned i = 0; i < n; i++)
                fprintf(f, "%s{%s=\"%s\"} %llu\n", name, label, names[i],
                        (unsigned long long)atomic_load(&c[i]));
}

/* One route's histogram series. */
static void render_http(FILE *f, struct metrics *m, size_t r, size_t j, const char *route,
                        const char *method)
{
        uint64_t cum = 0;

        for (int b = 0; b < METRICS_HTTP_BUCKETS; b++) {
                char le[32];

                cum += atomic_load(&m->http[r][j].bucket[b]);
                if (b < METRICS_HTTP_BUCKETS - 1)
                        snprintf(le, sizeof(le), "%g", (double)http_bucket_us[b] / 1e6);
                else
                        snprintf(le, sizeof(le), "+Inf");
                fprintf(f,
                        "attestd_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\","
                        "le=\"%s\"} %llu\n",
                        route, method, le, (unsigned long long)cum);
        }
        fprintf(f,
                "attestd_http_request_duration_seconds_sum{route=\"%s\",method=\"%s\"} %.6f\n"
                "attestd_http_request_duration_seconds_count{route=\"%s\",method=\"%s\"} %llu\n",
                route, method, (double)atomic_load(&m->http[r][j].sum_us) / 1e6, route, method,
                (unsigned long long)atomic_load(&m->http[r][j].count));
}

void metrics_rejected(struct metrics *m, enum attest_code code)
{
        count_in(m->rejected, (unsigned)code, AE__COUNT);
}

int metrics_render(struct metrics *m, const struct metrics_agents *agents,
                   const struct metrics_store *store, const struct metrics_policies *policies,
                   const struct metrics_routes *routes, char **ret, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        uint64_t cum = 0;

        if (!f)
                return -ENOMEM;
        fprintf(f,
                "# HELP attestd_build_info The attestd build answering (always 1).\n"
                "# TYPE attestd_build_info gauge\n"
                "attestd_build_info{version=\"%s\"} 1\n",
                ATTEST_VERSION);
        fputs("# HELP attestd_attestations_total Evidence submissions judged, by result.\n"
              "# TYPE attestd_attestations_total counter\n",
              f);
        for (int r = 0; r < METRICS_RESULT_COUNT; r++)
                fprintf(f, "attestd_attestations_total{result=\"%s\"} %llu\n", result_name[r],
                        (unsigned long long)atomic_load(&m->attestations[r]));
        fputs("# HELP attestd_verification_seconds Time to verify and store one submission.\n"
              "# TYPE attestd_verification_seconds histogram\n",
              f);
        for (int b = 0; b < METRICS_BUCKETS; b++) {
                cum += atomic_load(&m->latency_bucket[b]);
                if (b < METRICS_BUCKETS - 1)
                        fprintf(f, "attestd_verification_seconds_bucket{le=\"%g\"} %llu\n",
                                (double)bucket_us[b] / 1e6, (unsigned long long)cum);
                else
                        fprintf(f, "attestd_verification_seconds_bucket{le=\"+Inf\"} %llu\n",
                                (unsigned long long)cum);
        }
        fprintf(f, "attestd_verification_seconds_sum %.6f\n",
                (double)atomic_load(&m->latency_sum_us) / 1e6);
        fprintf(f, "attestd_verification_seconds_count %llu\n",
                (unsigned long long)atomic_load(&m->latency_count));
        if (agents)
                fprintf(f,
                        "# HELP attestd_agents Enrolled agents by state, each counted once: "
                        "failing (last verdict fail, stale or not), stale (past due, not "
                        "failing), active (passing), never_attested, decommissioned.\n"
                        "# TYPE attestd_agents gauge\n"
                        "attestd_agents{state=\"active\"} %llu\n"
                        "attestd_agents{state=\"stale\"} %llu\n"
                        "attestd_agents{state=\"failing\"} %llu\n"
                        "attestd_agents{state=\"never_attested\"} %llu\n"
                        "attestd_agents{state=\"decommissioned\"} %llu\n",
                        (unsigned long long)agents->active, (unsigned long long)agents->stale,
                        (unsigned long long)agents->failing, (unsigned long long)agents->never,
                        (unsigned long long)agents->decommissioned);
        fputs("# HELP attestd_claim_failures_total Claims that did not pass (fail or missing) in "
              "judged verdicts, by claim.\n"
              "# TYPE attestd_claim_failures_total counter\n",
              f);
        for (unsigned c = 0; c < CLAIM__COUNT; c++)
                fprintf(f, "attestd_claim_failures_total{claim=\"%s\"} %llu\n",
                        claim_id_name((enum claim_id)c),
                        (unsigned long long)atomic_load(&m->claim_failed[c]));
        fputs("# HELP attestd_http_request_duration_seconds Time to answer a request, by route "
              "pattern and method (route \"none\": no route or method matched).\n"
              "# TYPE attestd_http_request_duration_seconds histogram\n",
              f);
        for (size_t r = 0; routes && r < routes->n && r < METRICS_ROUTES_MAX - 1; r++)
                for (size_t j = 0; j < METRICS_ROUTE_METHODS; j++)
                        if (routes->method[r][j])
                                render_http(f, m, r, j, routes->pattern[r], routes->method[r][j]);
        render_http(f, m, METRICS_ROUTES_MAX - 1, 0, "none", "");
        fprintf(f,
                "# HELP attestd_http_connections Client connections open (TLS handshake, waiting "
                "for a head, or in a request).\n"
                "# TYPE attestd_http_connections gauge\n"
                "attestd_http_connections %llu\n",
                (unsigned long long)atomic_load(&m->conns_open));
        render_family(f, "attestd_http_connections_closed_total",
                      "Connections attestd closed itself: overdue (past --header-timeout or "
                      "--body-timeout), pressure (waited long for a head with the table over 90 % "
                      "of --max-connections), evicted (waited longest for a head when a newcomer "
                      "came at the cap), refused (a newcomer at the cap, every other connection in "
                      "a request).",
                      "reason", conn_close_names, m->conns_closed, METRICS_CONN__COUNT);
        render_family(f, "attestd_http_lingering_closes_total",
                      "Connections answered before their request body was read, kept open to read "
                      "and drop what still arrives so the answer is not lost to a reset, by how "
                      "that ended: ended (the client closed), timeout (2 s), cap (1 MiB dropped), "
                      "full (256 kept already: closed at once).",
                      "end", linger_names, m->lingered, METRICS_LINGER__COUNT);
        render_pair(f, "attestd_tls_sessions_total",
                    "TLS sessions of connections that sent a request: resumed from a session "
                    "ticket this process issued, or made with a full handshake.",
                    "resumed", "no", &m->tls_sessions[0], "yes", &m->tls_sessions[1]);
        fputs("# HELP attestd_rejected_requests_total Requests answered with an error, by code.\n"
              "# TYPE attestd_rejected_requests_total counter\n",
              f);
        for (unsigned i = 0; i < AE__COUNT; i++) {
                uint64_t n = atomic_load(&m->rejected[i]);

                if (n)
                        fprintf(f, "attestd_rejected_requests_total{code=\"%s\"} %llu\n",
                                attest_code_name((enum attest_code)i), (unsigned long long)n);
        }
        fputs("# HELP attestd_http_responses_total API answers by status class.\n"
              "# TYPE attestd_http_responses_total counter\n",
              f);
        for (unsigned i = 0; i < 4; i++)
                fprintf(f, "attestd_http_responses_total{class=\"%uxx\"} %llu\n", i + 2,
                        (unsigned long long)atomic_load(&m->responses[i]));
        render_family(f, "attestd_replay_resets_total",
                      "Agents' log replays started again from entry 0: reboot (the TPM's counters "
                      "moved), runtime_policy (another runtime policy judged the earlier entries), "
                      "state_unusable (the stored replay state did not decode).",
                      "reason", reset_names, m->replay_resets, METRICS_RESET__COUNT);
        render_pair(f, "attestd_evidence_rows_total",
                    "Evidence rounds by where their agent row came from: kept by the challenge, or "
                    "read from the store.",
                    "from", "challenge", &m->evidence_rows[1], "store", &m->evidence_rows[0]);
        fprintf(f,
                "# HELP attestd_ima_entries_replayed_total IMA log entries replayed.\n"
                "# TYPE attestd_ima_entries_replayed_total counter\n"
                "attestd_ima_entries_replayed_total %llu\n"
                "# HELP attestd_requests_total HTTP requests received.\n"
                "# TYPE attestd_requests_total counter\n"
                "attestd_requests_total %llu\n"
                "# HELP attestd_store_writable 1 while a write beside and into the store "
                "succeeds (the probe of /healthz, at most one a second), else 0.\n"
                "# TYPE attestd_store_writable gauge\n"
                "attestd_store_writable %llu\n"
                "# HELP attestd_store_commits_total SQLite write transactions committed.\n"
                "# TYPE attestd_store_commits_total counter\n"
                "attestd_store_commits_total %llu\n"
                "# HELP attestd_store_writes_total Writes committed (several per commit in writer "
                "mode).\n"
                "# TYPE attestd_store_writes_total counter\n"
                "attestd_store_writes_total %llu\n"
                "# HELP attestd_store_wal_pages_total Pages the write transactions wrote to the "
                "WAL.\n"
                "# TYPE attestd_store_wal_pages_total counter\n"
                "attestd_store_wal_pages_total %llu\n"
                "# HELP attestd_agent_cache_hits_total Agent lookups answered by the read cache.\n"
                "# TYPE attestd_agent_cache_hits_total counter\n"
                "attestd_agent_cache_hits_total %llu\n"
                "# HELP attestd_agent_cache_misses_total Agent lookups that read the database.\n"
                "# TYPE attestd_agent_cache_misses_total counter\n"
                "attestd_agent_cache_misses_total %llu\n"
                "# HELP attestd_agent_cache_evictions_total Agent rows pushed out of the read "
                "cache by its cap.\n"
                "# TYPE attestd_agent_cache_evictions_total counter\n"
                "attestd_agent_cache_evictions_total %llu\n"
                "# HELP attestd_agent_cache_entries Agent rows held by the read cache.\n"
                "# TYPE attestd_agent_cache_entries gauge\n"
                "attestd_agent_cache_entries %llu\n",
                (unsigned long long)atomic_load(&m->ima_entries_replayed),
                (unsigned long long)atomic_load(&m->requests), (unsigned long long)store->writable,
                (unsigned long long)store->commits, (unsigned long long)store->writes,
                (unsigned long long)store->wal_pages, (unsigned long long)store->cache_hits,
                (unsigned long long)store->cache_misses, (unsigned long long)store->cache_evictions,
                (unsigned long long)store->cache_entries);
        fprintf(f,
                "# HELP attestd_db_statements_total Database statements executed (sqlite3_step "
                "runs; PostgreSQL: round trips, PQexecPrepared and the like).\n"
                "# TYPE attestd_db_statements_total counter\n"
                "attestd_db_statements_total %llu\n"
                "# HELP attestd_db_pool_waits_total Requests that found no free database "
                "connection and waited.\n"
                "# TYPE attestd_db_pool_waits_total counter\n"
                "attestd_db_pool_waits_total %llu\n"
                "# HELP attestd_db_pool_exhausted_total Requests answered 503 store_busy: no "
                "connection came back within --db-wait-ms.\n"
                "# TYPE attestd_db_pool_exhausted_total counter\n"
                "attestd_db_pool_exhausted_total %llu\n"
                "# HELP attestd_db_pool_connections Database connections in this instance's "
                "pool.\n"
                "# TYPE attestd_db_pool_connections gauge\n"
                "attestd_db_pool_connections %llu\n"
                "# HELP attestd_db_pool_in_use Pooled database connections taken now.\n"
                "# TYPE attestd_db_pool_in_use gauge\n"
                "attestd_db_pool_in_use %llu\n",
                (unsigned long long)store->db_statements, (unsigned long long)store->pool_waits,
                (unsigned long long)store->pool_exhausted, (unsigned long long)store->pool_size,
                (unsigned long long)store->pool_in_use);
        fprintf(f,
                "# HELP attestd_policy_cache_hits_total Policy lookups answered by the cache of "
                "parsed policies.\n"
                "# TYPE attestd_policy_cache_hits_total counter\n"
                "attestd_policy_cache_hits_total %llu\n"
                "# HELP attestd_policy_cache_misses_total Policy lookups that parsed the stored "
                "text.\n"
                "# TYPE attestd_policy_cache_misses_total counter\n"
                "attestd_policy_cache_misses_total %llu\n"
                "# HELP attestd_policy_parses_total Policy documents parsed (PUT and cache "
                "misses).\n"
                "# TYPE attestd_policy_parses_total counter\n"
                "attestd_policy_parses_total %llu\n"
                "# HELP attestd_policy_cache_evictions_total Parsed policies evicted by the cap.\n"
                "# TYPE attestd_policy_cache_evictions_total counter\n"
                "attestd_policy_cache_evictions_total %llu\n"
                "# HELP attestd_policy_cache_entries Parsed policy versions held.\n"
                "# TYPE attestd_policy_cache_entries gauge\n"
                "attestd_policy_cache_entries %llu\n"
                "# HELP attestd_policy_cache_bytes Bytes the parsed policies held take, about.\n"
                "# TYPE attestd_policy_cache_bytes gauge\n"
                "attestd_policy_cache_bytes %llu\n",
                (unsigned long long)policies->hits, (unsigned long long)policies->misses,
                (unsigned long long)policies->parses, (unsigned long long)policies->evictions,
                (unsigned long long)policies->entries, (unsigned long long)policies->bytes);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}
