/* SPDX-License-Identifier: MIT */
/*
 * Storage (docs/architecture.md §7): SQLite in WAL mode, synchronous=FULL, schema versioned with
 * PRAGMA user_version and forward migrations, prepared statements only, every write in a
 * transaction. Two write paths, chosen at open:
 *   STORE_WRITER  one writer thread owns the write connection and commits queued writes in
 *                 groups (one fsync for many verdicts); a caller returns once its write is durable.
 *   STORE_POOL    each caller takes a connection from the pool and commits its own transaction.
 * Reads always take a pooled connection (WAL readers do not block the writer).
 *
 * Errors: -ENOENT no such agent/policy, -EEXIST duplicate, -EBUSY policy bound to an agent,
 * -ESTALE the agent changed under a concurrent submission, -EIO database failure (err says),
 * -ENOTCONN the database connection broke (PostgreSQL gone or failing over; the next call
 * connects again), -EBADMSG a row holds an agent state daemon/agent-state.h does not name (never
 * defaulted).
 */
#ifndef ATTESTD_STORE_H
#define ATTESTD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agent-state.h"
#include "evidence/evidence.h"
#include "util/err.h"

#define STORE_SCHEMA_VERSION 11
#define STORE_ID_MAX 64
#define STORE_EK_ID_LEN 32  /* SHA-256 of the EK's SubjectPublicKeyInfo (DER) */
#define STORE_PENDING_MAX 8 /* live enrolment credentials per pending agent */

enum store_mode {
        STORE_WRITER,
        STORE_POOL,
};

struct store;

int store_open(const char *path, enum store_mode mode, unsigned connections, struct store **ret,
               struct attest_err *err) _wur_;
/*
 * target: a SQLite file path, or a PostgreSQL URL (postgresql://user@host:port/db, db_is_pg);
 * password: PostgreSQL's (NULL: none; copied, wiped at close); wait_ms: how long a caller waits
 * for a pooled connection before -EAGAIN (store_busy; <= 0: for ever).
 */
struct store_options {
        const char *target;
        const char *password;
        enum store_mode mode;
        unsigned connections;
        int64_t wait_ms;
};
/* Whether target names PostgreSQL (a postgresql:// or postgres:// URL), not a SQLite file. */
bool store_is_url(const char *target);
int store_open_opts(const struct store_options *o, struct store **ret, struct attest_err *err)
        _wur_;
struct store *store_close(struct store *s);
DEFINE_CLEANUP_FUNC(struct store *, store_close)
int store_schema_version(struct store *s, int *ret) _wur_;
/* Write transactions committed and writes in them (writer mode: writes / commits = group size). */
void store_stats(struct store *s, uint64_t *ret_commits, uint64_t *ret_writes);
/*
 * A duty only one instance on the database performs (a webhook receiver's delivery): 1 when this
 * store holds key (taken now or before; SQLite: always), 0 when another instance does. With
 * PostgreSQL a session advisory lock, held until this store closes or its instance dies.
 */
#define STORE_CLAIMS_MAX 16
int store_claim(struct store *s, const char *key) _wur_;
/*
 * Whether every transaction visible now is as durable as a verdict: 0 when it is (SQLite: at
 * once). On PostgreSQL a commit waits for the synchronous standby before other sessions see it,
 * unless that wait ends early (its backend cancelled or terminated, the postmaster gone: the
 * primary's death, exactly): then it is visible on the primary and perhaps not on the standby.
 * This commits a transaction of its own (one xid, no row), which returns only once the standby
 * holds the WAL up to it, and so everything visible before it; on a dying primary it fails. For
 * what leaves the database on the strength of a read (a webhook event delivered): a failover
 * must not lose what was already told. -errno when it could not.
 */
int store_durable_barrier(struct store *s) _wur_;

/* Statements executed (DB round trips on PostgreSQL) and the connection pool. */
struct store_db_stats {
        uint64_t statements;
        uint64_t pool_waits;     /* a caller found no free connection and waited */
        uint64_t pool_exhausted; /* ... and gave up after wait_ms (-EAGAIN, store_busy) */
        uint64_t pool_size, pool_in_use;
        bool postgresql;
};
void store_db_stats(struct store *s, struct store_db_stats *ret);
/* Pages the write transactions wrote to the WAL (SQLITE_DBSTATUS_CACHE_WRITE after each commit). */
uint64_t store_wal_pages(struct store *s);
/*
 * Readiness: a page-sized file written and synced beside the database and a write transaction,
 * at most once per min_interval_ms (the last answer is returned in between). 0 ready, else a
 * negative errno and ret_msg says what failed.
 */
/*
 * The read cache (store-cache.c): agent rows by id, at most STORE_AGENT_CACHE_MAX of them (least
 * recently used dropped first), and the live version of each policy name; every write path of
 * the store keeps it coherent, so reads on the attestation path take no SQLite read.
 * With PostgreSQL the agent rows are not cached (STORE_PG_AGENT_CACHE_MAX): another instance may
 * change a row at any moment (a round it accepted moves the log offset and the replay state), and
 * a challenge answered from a stale row sends the agent the wrong offset. store_cache_limit()
 * turns it on for a deployment known to run one instance (and for the cache's own tests).
 */
#define STORE_AGENT_CACHE_MAX 16384
#define STORE_PG_AGENT_CACHE_MAX 0
/*
 * With PostgreSQL (several instances may write), a cached live policy version is served at most
 * this long after it was read: another instance's PUT of a new version or DELETE is in effect
 * here within it (docs/design-notes.md). With SQLite this process is the only writer: until a
 * write.
 */
#define STORE_PG_POLICY_MAX_AGE_MS 1000
struct store_cache_stats {
        uint64_t hits, misses;     /* agent lookups */
        uint64_t refused;          /* adds after a miss refused (a write came in between) */
        uint64_t updates, forgets; /* entries changed in place by a verdict / dropped by a write */
        uint64_t evictions, entries;         /* pushed out by the cap / held now */
        uint64_t policy_hits, policy_misses; /* live-version lookups */
};
void store_cache_stats(struct store *s, struct store_cache_stats *ret);
/* Cap the cached agent rows (0: cache none); drops the least recently used beyond it. */
void store_cache_limit(struct store *s, size_t max);

int store_probe(struct store *s, int64_t now, int64_t min_interval_ms, char *ret_msg, size_t n)
        _wur_;

/* An agent row. Strings and blobs are owned (store_agent_free). Times are ms since the epoch. */
struct store_agent {
        char id[STORE_ID_MAX + 1];
        uint8_t *ak_public;
        size_t ak_public_len;
        uint8_t *ak_name;
        size_t ak_name_len;
        uint8_t *ek_cert; /* NULL when none was given */
        size_t ek_cert_len;
        enum agent_state state;
        uint8_t ek_id[STORE_EK_ID_LEN]; /* the EK's identity (valid when has_ek_id) */
        bool has_ek_id;
        char *policy;                         /* bound policy name, NULL: the default */
        int64_t created, last_seen, next_due; /* 0: never */
        char *last_status;                    /* "pass", "fail" or NULL */
        char *last_policy;                    /* name@version that judged the last result */
        int64_t last_result;                  /* result id, 0: none */
        uint64_t ima_offset;
        uint8_t *replay_state; /* replay_state_encode() bytes, NULL before the first verdict */
        size_t replay_state_len;
        uint64_t seq;         /* bumped by every verdict */
        int64_t results_kept; /* its results stored (schema 11), -1: not known */
        /* host identity (evidence/evidence.h syntax), as last reported; "" / NULL: never */
        char hostname[EVIDENCE_HOSTNAME_MAX + 1];
        char machine_id[EVIDENCE_MACHINE_ID_LEN + 1];
        char *labels; /* a JSON object of strings, NULL before any report */
        /* one allocation (store_agent_dup()): the fields point into it, free() the struct only;
         * its pointer fields are not to be replaced */
        bool packed;
};

void store_agent_free(struct store_agent *a);
static inline void store_agent_freep(struct store_agent **a)
{
        store_agent_free(*a);
}

int store_agent_add(struct store *s, const struct store_agent *a) _wur_;
int store_agent_get(struct store *s, const char *id, struct store_agent **ret) _wur_;
/*
 * Enrolment by credential activation: add a (state "pending") agent, and beside it a credential
 * record: the EK public area, a->ek_id / a->ek_cert, the SHA-256 of the credential wrapped for
 * it and its expiry (ms). The agent row takes no EK until a credential is activated. A pending
 * agent enrolled again gets one more credential (the earlier ones stay valid, at most
 * STORE_PENDING_MAX live ones, -EBUSY beyond); an active one is -EEXIST; a decommissioned agent
 * or a refused EK is -EPERM.
 */
int store_agent_add_pending(struct store *s, const struct store_agent *a, const uint8_t *ek_public,
                            size_t ek_len, const uint8_t *cred_hash, int64_t expires) _wur_;
/*
 * Activate a pending agent when the proof hashes to one of its stored credentials (constant
 * time). The EK of that credential becomes the agent's; another non-pending agent holding the
 * same EK is deleted in the same transaction (its id in ret_replaced, "" for none): one live
 * identity per EK, and only the TPM of the EK can take it over. -ENOENT no agent, -EALREADY not
 * pending (e.g. a replayed proof), -ETIME credential expired, -EKEYREJECTED wrong proof, -EPERM
 * decommissioned agent, -EACCES decommissioned EK.
 */
int store_agent_activate(struct store *s, const char *id, const uint8_t *proof_hash, int64_t now,
                         char ret_replaced[STORE_ID_MAX + 1]) _wur_;
/*
 * Decommission: the agent is refused (state "decommissioned", its pending credentials dropped)
 * and its EK, if it has one, is refused at enrolment, until store_agent_readmit(). Readmitting
 * restores the state the agent had and lifts the EK refusal, also after the agent was deleted.
 * -ENOENT no such agent (readmit: nor refused EK of that agent id), -EALREADY not decommissioned.
 */
int store_agent_decommission(struct store *s, const char *id, int64_t now) _wur_;
/* Readmitting writes agent.readmitted (now: its time) with the change. */
int store_agent_readmit(struct store *s, const char *id, int64_t now) _wur_;
/* -EPERM when the EK was decommissioned (by agent ret_agent, NUL-terminated in n bytes). */
int store_ek_refused(struct store *s, const uint8_t ek_id[STORE_EK_ID_LEN], char *ret_agent,
                     size_t n) _wur_;
/* An agent row's state as an answer: 0 active, -EACCES not yet activated, -EPERM
 * decommissioned. */
int store_agent_active(const struct store_agent *a) _wur_;
/* The same answer for a state. */
int store_state_active(enum agent_state state) _wur_;
/* Calls fn for every agent in id order (without blobs and replay state); fn < 0 stops. */
int store_agent_list(struct store *s, int (*fn)(const struct store_agent *a, void *arg), void *arg)
        _wur_;
/* Forget the agent; agent.deleted (now: its time) commits with it. -ENOENT no such agent. */
int store_agent_delete(struct store *s, const char *id, int64_t now) _wur_;

/* The JSON object text of h's labels, in order ("{}" for none): n bytes at most. -E2BIG. */
#define STORE_LABELS_JSON_MAX                                                                      \
        (2 + EVIDENCE_LABELS_MAX * (EVIDENCE_LABEL_KEY_MAX + EVIDENCE_LABEL_VALUE_MAX + 6) + 1)
int store_labels_json(const struct evidence_host *h, char *buf, size_t n) _wur_;
/*
 * Record what the host reported about itself: the host name and machine id when h has them, the
 * labels when h->labels_present (replacing all earlier ones). 0 also when nothing changed
 * (compare with store_agent_identity_differs() first to save the write); -ENOENT no agent.
 */
int store_agent_set_identity(struct store *s, const char *id, const struct evidence_host *h) _wur_;
/* Whether h reports anything a's stored identity does not hold. */
bool store_agent_identity_differs(const struct store_agent *a, const struct evidence_host *h);

/*
 * GET /v1/agents's filters, applied in SQL (indexes on hostname, last_status and labels), in id
 * order from after the cursor. Status (docs/api.md), where stale means past next_due
 * (created + interval before the first verdict) + grace:
 *   pending, active, decommissioned  the stored state, stale or not
 *   pass, fail                       state active, last verdict pass / fail, not stale
 *   failing                          state active, last verdict fail, stale or not
 *   stale                            stale (any state but decommissioned)
 *   never                            state active, no verdict yet
 */
enum store_status {
        STORE_STATUS_ANY,
#define STORE_STATUS_OF_STATE(id, name) STORE_STATUS_##id,
        AGENT_STATES(STORE_STATUS_OF_STATE)
#undef STORE_STATUS_OF_STATE
                STORE_STATUS_PASS,
        STORE_STATUS_FAIL,
        STORE_STATUS_FAILING,
        STORE_STATUS_STALE,
        STORE_STATUS_NEVER,
        STORE_STATUS__COUNT,
};
const char *store_status_name(enum store_status s);

#define STORE_LABEL_FILTERS_MAX 4

/*
 * Mark the active agents that became stale since the last scan (once each: a verdict re-arms
 * the mark) and call fn for each (id, host name or "", last status or NULL, last seen ms).
 * A read first: nothing is written while no result falls due and no watched agent is due
 * (store-fleet.c says how due times are found). Returns how many were marked.
 */
int store_agent_stale_scan(struct store *s, int64_t now, int64_t grace, int64_t interval,
                           void (*fn)(const char *id, const char *hostname, const char *last_status,
                                      int64_t last_seen, void *arg),
                           void *arg) _wur_;

struct store_agent_filter {
        enum store_status status;
        const char *hostname; /* NULL: any */
        unsigned n_labels;    /* all must match (AND) */
        const char *label_key[STORE_LABEL_FILTERS_MAX], *label_value[STORE_LABEL_FILTERS_MAX];
        const char *after;            /* ids greater than this; NULL: from the first */
        const char *prefix;           /* ids that start with this; NULL: any */
        const char *policy;           /* agents bound to this policy; NULL: any */
        uint64_t limit;               /* rows at most */
        int64_t now, grace, interval; /* ms: for stale */
};
/* Calls fn for each matching agent (without blobs and replay state), fn < 0 stops. */
int store_agent_query(struct store *s, const struct store_agent_filter *f,
                      int (*fn)(const struct store_agent *a, void *arg), void *arg) _wur_;
/* How many agents match f (its after and limit ignored). */
int store_agent_query_count(struct store *s, const struct store_agent_filter *f, uint64_t *ret)
        _wur_;

/*
 * The refused EKs (decommissioned, the agent deleted or not), in (agent id, EK id) order after
 * (after, after_ek) (after NULL: from the first; after_ek NULL: all of agent after's too), those
 * whose agent id starts with prefix (NULL: any), at most limit; fn gets the EK identity, the
 * agent id, the time it was refused (ms) and whether the agent row still exists. fn < 0 stops.
 */
int store_ek_refused_list(struct store *s, const char *after, const uint8_t *after_ek,
                          const char *prefix, uint64_t limit,
                          int (*fn)(const uint8_t ek_id[STORE_EK_ID_LEN], const char *agent,
                                    int64_t time, bool agent_exists, void *arg),
                          void *arg) _wur_;
/* policy NULL: back to the default. -ENOENT agent, -ENODATA no such policy. */
int store_agent_set_policy(struct store *s, const char *id, const char *policy) _wur_;

/*
 * Agents by health, a partition of the agents that are not decommissioned (each counted once):
 *   failing  last verdict fail, stale or not (a failing host that stops reporting stays failing)
 *   stale    stale and last verdict not fail (passing or never attested)
 *   active   last verdict pass, not stale
 *   never    no verdict yet, not stale (pending agents too)
 * plus decommissioned. Stale: past next_due (created + interval before the first verdict) +
 * grace; times in ms.
 */
struct store_counts {
        uint64_t active, stale, failing, never, decommissioned;
};
int store_agent_counts(struct store *s, int64_t now, int64_t grace, int64_t interval,
                       struct store_counts *ret) _wur_;

/*
 * A result's EAR appraisal (daemon/ear.h makes it from the typed verdict and reads it back):
 * ear.status as its AR4SI tier value and the trustworthiness vector, integers the store keeps as
 * given and does not interpret. Results written before schema 8 have none.
 */
#define STORE_TV_COUNT 4
struct store_appraisal {
        int64_t status;
        int64_t tv[STORE_TV_COUNT];
};

/* A verdict to record, with the agent state that goes with it. */
struct store_result {
        const char *agent;
        int64_t time;
        const char *status; /* "pass" / "fail" */
        const char *policy; /* name@version or NULL */
        /* the text the lists give back (daemon: the verdict without the members the columns above
         * hold, daemon/api/api-results.c); the store never reads it */
        const char *verdict;
        const struct store_appraisal *appraisal; /* NULL: none (stored as NULLs) */
        /* for the agent.fail / agent.error event, rendered by the caller from the typed verdict:
         * the failing claims' names as a JSON array (NULL: "[]"), and the code of a round that
         * failed verification or could not be judged (NULL: none). The store never reads the
         * verdict text. */
        const char *failing;
        const char *reason;
        int64_t next_due;
        uint64_t ima_offset;
        const uint8_t *replay_state; /* replay_state_encode() bytes, or NULL */
        size_t replay_state_len;
        /* the agent's results_kept as its row was read with expect_seq: the prune then takes
         * the oldest results in one step. Not known (false, as zeroed, or results_kept -1):
         * the store finds the cut among the newest retain results and counts them. */
        bool kept_known;
        int64_t kept;
};

/*
 * Insert the result, update the agent (last_seen, next_due, status, replay state, last_result,
 * seq + 1) only if its seq is still expect_seq (-ESTALE otherwise, nothing written), and keep at
 * most retain results of the agent. *ret_id: result id. (The new last_result is what makes every
 * nonce issued before stale: daemon/nonce.h.)
 */
int store_result_add(struct store *s, const struct store_result *r, uint64_t expect_seq,
                     uint64_t retain, int64_t *ret_id) _wur_;
/*
 * A reboot was seen: challenges ask for the log from entry 0 again (the old per-boot state stays,
 * so the next verification sees the changed reset count), if seq still matches.
 */
int store_agent_reset_replay(struct store *s, const char *id, uint64_t expect_seq) _wur_;
/* A stored result as the two lists below hand it out (valid during the callback only). */
struct store_result_row {
        int64_t id, time;
        int64_t due; /* the agent's next_due this result gave (0: before schema 10) */
        const char *status, *policy; /* policy NULL: none judged */
        const char *verdict;         /* as store_result_add was given it */
};
/* Results of an agent, newest first, ids below before (0: no bound), at most limit. */
int store_results_list(struct store *s, const char *agent, uint64_t limit, int64_t before,
                       int (*fn)(const struct store_result_row *row, void *arg), void *arg) _wur_;
/* Results of an agent, oldest first: ids above after, times at or after since (ms), at most
 * limit (the export's pages: a cursor that retention cannot move). -ENOENT no such agent. */
int store_results_since(struct store *s, const char *agent, uint64_t limit, int64_t after,
                        int64_t since, int (*fn)(const struct store_result_row *row, void *arg),
                        void *arg) _wur_;

#define STORE_POLICY_REF_MAX (STORE_ID_MAX + 24) /* name@version, with its NUL */
/* The newest result of an agent, without its verdict text. */
struct store_result_head {
        int64_t id, time;
        char policy[STORE_POLICY_REF_MAX]; /* name@version, "" when none judged */
        bool has_appraisal;                /* false: written before schema 8 */
        struct store_appraisal appraisal;
};
/*
 * -ENOENT no such agent, -ENODATA no result yet, -EBADMSG a row the store cannot have written
 * (some appraisal columns NULL and others not, a policy longer than STORE_POLICY_REF_MAX).
 */
int store_result_latest(struct store *s, const char *agent, struct store_result_head *ret) _wur_;

/*
 * The webhook outbox (docs/webhooks.md). Events are written by the store functions above in the
 * transaction of their change: agent.enrolled (store_agent_add of an active agent,
 * store_agent_activate), agent.pass / agent.fail (store_result_add when the status differs from
 * the previous one, the agent was stale, or it is the first verdict), agent.decommissioned
 * (store_agent_decommission), agent.readmitted (store_agent_readmit), agent.deleted
 * (store_agent_delete), agent.stale (store_agent_stale_scan). Event ids grow with commit
 * order (one writer at a time) and are never reused.
 */
#define STORE_EVENT_TYPE_MAX 32

/* An event row; strings borrowed for the callback only, NULL when absent. */
struct store_event {
        int64_t id, time;
        const char *type, *agent, *hostname, *status, *previous;
        const char *claims; /* JSON array of the failing claims' names, or NULL */
        const char *reason; /* the code of a failed verification, or NULL */
};

/*
 * At start: the outbox keeps at most cap events (an insert beyond drops the oldest, counted);
 * the receivers are exactly urls: a new one starts after the newest event, cursors of receivers
 * no longer configured are dropped.
 */
int store_outbox_setup(struct store *s, uint64_t cap, const char *const *urls, size_t n) _wur_;
/* The last event id receiver url acknowledged (-ENOENT: not a configured receiver). */
int store_outbox_cursor(struct store *s, const char *url, int64_t *ret) _wur_;
/* Events with id > after, in id order, at most limit; fn < 0 stops. */
int store_outbox_next(struct store *s, int64_t after, unsigned limit,
                      int (*fn)(const struct store_event *ev, void *arg), void *arg) _wur_;
/* Receiver url acknowledged event id (its cursor only moves forward). */
int store_outbox_delivered(struct store *s, const char *url, int64_t id) _wur_;
/* Delete events every receiver acknowledged that are older than before (ms); at most max. */
int store_outbox_prune(struct store *s, int64_t before, unsigned max, uint64_t *ret_n) _wur_;

struct store_outbox_stats {
        uint64_t events;  /* in the outbox */
        uint64_t pending; /* not yet acknowledged by every receiver */
        uint64_t dropped; /* ever dropped by the cap */
};
int store_outbox_stats(struct store *s, struct store_outbox_stats *ret) _wur_;

/* PUT: a new version (1 for a new name, max + 1 otherwise, deleted versions counted). */
int store_policy_put(struct store *s, const char *name, const char *body, int64_t now,
                     int64_t *ret_version) _wur_;
/* version 0: the latest. *ret_body malloc'ed. */
int store_policy_get(struct store *s, const char *name, int64_t version, char **ret_body,
                     int64_t *ret_version, int64_t *ret_created) _wur_;
/* The latest live version of policy name (no body): -ENOENT when there is none. */
int store_policy_version(struct store *s, const char *name, int64_t *ret_version) _wur_;
/* Latest version of every live policy, in name order. */
int store_policy_list(struct store *s,
                      int (*fn)(const char *name, int64_t version, int64_t created, void *arg),
                      void *arg) _wur_;
int store_policy_delete(struct store *s, const char *name) _wur_;

#endif
