/* SPDX-License-Identifier: MIT */
#ifndef ATTEST_STORE_STORE_INTERNAL_H
#define ATTEST_STORE_STORE_INTERNAL_H

/*
 * What the store-*.c files share: the prepared statements of a connection, the way a function runs
 * on one (store_write inside a durable write transaction, store_read outside any), and the small
 * bind/column helpers. Only daemon/store/ includes this; everyone else uses daemon/store/store.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/store/db.h"

#include "daemon/store/store.h"

enum stmt {
        ST_AGENT_ADD,
        ST_AGENT_GET,
        ST_AGENT_LIST,
        ST_AGENT_DELETE,
        ST_RESULTS_DELETE,
        ST_AGENT_SET_POLICY,
        ST_POLICY_LIVE,
        ST_AGENT_COUNTS,
        ST_AGENT_UPDATE,
        ST_AGENT_EXISTS,
        ST_AGENT_RESET_REPLAY,
        ST_RESULT_ADD,
        ST_RESULT_PRUNE,
        ST_RESULT_PRUNE_OLDEST,
        ST_AGENT_KEPT_COUNT,
        ST_RESULT_LIST,
        ST_RESULT_LATEST,
        ST_POLICY_NEXT,
        ST_POLICY_ADD,
        ST_POLICY_GET_LATEST,
        ST_POLICY_GET_VERSION,
        ST_POLICY_LATEST,
        ST_POLICY_LIST,
        ST_POLICY_BOUND,
        ST_POLICY_DELETE,
        ST_ENROL_PUT,
        ST_ENROL_GET,
        ST_ENROL_DELETE,
        ST_AGENT_STATE,
        ST_AGENT_SET_STATE,
        ST_ENROL_COUNT,
        ST_ENROL_PURGE,
        ST_ENROL_LIST,
        ST_AGENT_ACTIVATE,
        ST_AGENT_TAKEOVER,
        ST_EK_DECOM_GET,
        ST_EK_DECOM_PUT,
        ST_EK_DECOM_DELETE,
        ST_AGENT_DECOM,
        ST_AGENT_READMIT,
        ST_AGENT_EK,
        ST_HEALTH_PUT,
        ST_AGENT_IDENTITY,
        ST_LABELS_DELETE,
        ST_LABEL_PUT,
        ST_STALE_DUE,
        ST_STALE_TURN, /* PostgreSQL: this scan's turn (a try lock), its lock timeout */
        ST_STALE_CURSOR,
        ST_STALE_CURSOR_SET,
        ST_STALE_HI,
        ST_STALE_MARK_WATCH,
        ST_STALE_WATCH_DROP,
        ST_STALE_WATCH_LATER,
        ST_STALE_WATCH_ADD,
        ST_STALE_WATCH_DONE,
        ST_OUTBOX_PREV,
        ST_OUTBOX_HOSTNAME, /* prepared on use: NULL until the schema has agents.hostname */
        ST_EVENT_ADD,
        ST_EVENT_LOCK,  /* PostgreSQL only */
        ST_VERDICT_ONE, /* PostgreSQL only: attestd_verdict() */
        ST_VERDICTS,    /* PostgreSQL only: attestd_verdicts(), one group's */
        ST_SCHEMA_VERSION,
        ST_EVENT_CAP,
        ST_EVENT_DROPPED,
        ST_EVENT_CAP_LOST,
        ST_EVENT_NEXT,
        ST_CURSOR_SET,
        ST_STALE_MARK, /* the results whose due passed: the agents they are the last of */
        ST_BEGIN,
        ST_COMMIT,
        ST_ROLLBACK,
        ST_SAVEPOINT,
        ST_RELEASE,
        ST_ROLLBACK_TO,
        ST_COUNT,
};

/* The columns agent lists read (no blobs, no replay state), in agent_row()'s order. */
#define STORE_AGENT_LIST_COLS                                                                      \
        "id, NULL, NULL, NULL, state, policy, created, last_seen, next_due, last_status,"          \
        " last_policy, last_result, ima_offset, NULL, seq, ek_id, hostname, machine_id, labels"

struct conn {
        struct db *db;
        struct db_stmt *st[ST_COUNT];
        struct conn *next_free;
        bool pg; /* db is PostgreSQL */
};

/*
 * Writer mode: writes queued while a batch runs join its commit until it holds this many
 * (a batch taken from the queue at the start is taken whole, as before): bounds how long the
 * first waits for the statements of those that joined after it.
 */
#define STORE_COMMIT_JOBS_MAX 64

/* advisory lock keys (pg_advisory_xact_lock): the migration, the event writers, the stale scan */
#define PG_LOCK_MIGRATE "7631463249"
#define PG_LOCK_EVENTS "7631463250"
#define PG_LOCK_STALE "7631463251"

/* a write waiting for the writer thread (store-writer.c) */
struct job;

/*
 * A store: its pooled connections, the writer thread and its queue, the counters, the claims and
 * the readiness probe. Opened and closed in store-db.c; store-writer.c runs functions on it.
 */
struct store {
        enum store_mode mode;
        pthread_mutex_t lock;      /* the writer's queue */
        pthread_mutex_t pool_lock; /* the pooled connections: readers do not wait on the queue */
        pthread_cond_t conn_free;  /* a pooled connection came back */
        struct conn *free;         /* pooled connections */
        struct conn *conns;        /* all pooled connections */
        unsigned nconns;
        /* writer mode */
        struct conn writer;
        pthread_t writer_thread;
        bool writer_running, stopping;
        pthread_cond_t job_ready;
        struct job *queue, *queue_tail;
        atomic_uint_fast64_t commits, writes; /* write transactions, writes in them */
        atomic_uint_fast64_t wal_pages;       /* pages those commits wrote to the WAL */
        char *path;                           /* a SQLite file or a PostgreSQL URL */
        char *password;                       /* PostgreSQL, or NULL */
        bool pg;
        int64_t wait_ms; /* how long a caller waits for a pooled connection (<= 0: for ever) */
        atomic_uint_fast64_t statements;            /* executions (sqlite3_step / PQexec*) */
        atomic_uint_fast64_t pool_waits, pool_busy; /* waited for a connection, gave up */
        atomic_uint_fast64_t in_use;                /* pooled connections taken */
        /* PostgreSQL session locks this store holds (store_claim): duties of one instance */
        pthread_mutex_t claim_lock;
        char *claimed[STORE_CLAIMS_MAX];
        struct conn *claimed_on[STORE_CLAIMS_MAX];  /* the connection holding the lock */
        unsigned claimed_session[STORE_CLAIMS_MAX]; /* and its session then */
        /* readiness probe: at most one real write per interval, the last answer cached */
        pthread_mutex_t probe_lock;
        int64_t probe_at;
        atomic_int probe_rc;
        char probe_msg[160];
        struct store_cache *cache; /* store-cache.c */
        unsigned stale_chunk;      /* results a transaction of the stale scan looks at, at most */
};

/* The stale scan's chunk (store-fleet.c; tests make it small to cross chunks with few rows). */
#define STORE_STALE_CHUNK 20000

/* A failure of d while doing what: -EIO with the engine's message in err. */
static inline int store_db_fail(struct db *d, struct attest_err *err, const char *what)
{
        return attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", what, d ? db_errmsg(d) : "?");
}

/* Connect c to the store's database and prepare its statements (store-stmt.c): 0 or -errno. */
int store_conn_open(struct store *s, struct conn *c, struct attest_err *err);
/* Finalize c's statements and close its connection; c may be half open. */
void store_conn_close(struct conn *c);
/* Statement i (no parameters) run once on c: 0 or -EIO. */
int store_st_exec(struct conn *c, enum stmt i);
/* Bring the database's schema to STORE_SCHEMA_VERSION (store-schema.c): 0 or -errno. */
int store_migrate(struct conn *c, struct attest_err *err);
/* The writer thread of writer mode (store-writer.c): runs the queued jobs until s->stopping. */
void *store_writer_main(void *arg);

/* The read cache (store-cache.c); the store-*.c files keep it coherent with their writes. */
struct store_cache;
struct store_cache *store_cache_of(struct store *s);
/* Whether the store is on PostgreSQL. */
bool store_on_pg(const struct store *s);
int store_cache_new(size_t max, struct store_cache **ret);
void store_cache_free(struct store_cache *c);
void store_cache_set_max(struct store_cache *c, size_t max);
/* Serve a policy's live version at most ms after it was read (0: until a local write). */
void store_cache_set_policy_max_age(struct store_cache *c, int64_t ms);
void store_cache_stats_read(struct store_cache *c, struct store_cache_stats *ret);
/* A deep copy (every owned pointer copied), NULL on ENOMEM. */
struct store_agent *store_agent_dup(const struct store_agent *a);
/*
 * 1 with a copy of the cached row in *ret (-ENOMEM), 0 on a miss. *ret_gen (also on a hit) goes
 * to store_cache_agent_add() with the row read from the database after a miss.
 */
int store_cache_agent_get(struct store_cache *c, const char *id, struct store_agent **ret,
                          uint64_t *ret_gen);
/* Hold a copy of a, unless a write of that id came after gen was taken, or it is held already. */
void store_cache_agent_add(struct store_cache *c, const struct store_agent *a, uint64_t gen);
/* After a write to agent id committed (or may have): drop its row. */
void store_cache_agent_forget(struct store_cache *c, const char *id);
/* After store_result_add() committed: the same change to the held row (if it is at expect_seq);
 * kept: the agent's results_kept now. */
void store_cache_agent_verdict(struct store_cache *c, const struct store_result *r,
                               uint64_t expect_seq, int64_t result_id, int64_t kept);
/* After store_agent_reset_replay() committed. */
void store_cache_agent_replay_reset(struct store_cache *c, const char *id, uint64_t expect_seq);
/* Live policy versions: 1 with *ret_version (0: none live), 0 on a miss. */
int store_cache_policy_get(struct store_cache *c, const char *name, int64_t *ret_version,
                           uint64_t *ret_gen);
void store_cache_policy_add(struct store_cache *c, const char *name, int64_t version, uint64_t gen);
/* After any policy write committed (or may have). */
void store_cache_policy_forget(struct store_cache *c);

/*
 * The agent in the current row of st, its columns in STORE_AGENT_LIST_COLS' order (store-agents.c):
 * 0 with *ret, -ENOMEM, -EBADMSG an unknown state.
 */
int store_agent_row(struct db_stmt *st, struct store_agent **ret);
/* Insert agent arg (a const struct store_agent *) on c: 0, -EEXIST (its id or AK is taken), -EIO.
 */
int store_agent_add_fn(struct conn *c, void *arg);

/* Prepare statement i on c (first use when the schema was missing at open): 0 or -EIO. */
int store_stmt_prepare(struct conn *c, enum stmt i);

/* The statement, reset and unbound; prepared on first use if the schema was missing at open. */
static inline struct db_stmt *st_get(struct conn *c, enum stmt i)
{
        if (!c->st[i] && store_stmt_prepare(c, i) < 0)
                return NULL;
        db_clear(c->st[i]);
        return c->st[i];
}

/* Run fn inside a write transaction, durable when this returns 0. */
int store_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg);
/*
 * The same for an fn that runs exactly one statement which never aborts a transaction (it
 * reports its failures as values, like attestd_verdict()): the writer runs it without a
 * savepoint of its own, a pooled connection without a transaction block (the statement is its
 * own transaction), so the write is one round trip. Durable when this returns 0; fn returns
 * > 0 when it wrote nothing (not counted in store_stats' writes), and so does this.
 */
int store_write_one(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg);
/*
 * store_write() in a transaction of its own: on PostgreSQL never joined with other writes in a
 * batch (a pooled connection's), so that the locks it takes are its own alone (the stale scan:
 * its lock timeout, its order). SQLite has one writer at a time: store_write().
 */
int store_write_apart(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg);
/*
 * Writes one statement can make together: run() makes the n writes of args in one statement
 * outside any transaction block (its own transaction), sets rcs[i] to what fn(args[i]) would have
 * returned and returns 0; < 0 when the statement failed and wrote nothing.
 */
struct store_group {
        int (*run)(struct conn *c, void *const *args, int *rcs, size_t n);
};
/*
 * store_write_one() for an fn whose writes g can make together: the writer thread makes those
 * of a batch in one g->run() (one round trip, one transaction for all of them), and each alone
 * with fn when that fails; a pooled connection runs fn as store_write_one() does.
 */
int store_write_grouped(struct store *s, const struct store_group *g,
                        int (*fn)(struct conn *c, void *arg), void *arg);
/* Run fn on a pooled connection, outside any explicit transaction (one statement reads). */
int store_read(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg);
/* The integer in the first column of the first row of an unprepared one-off query: 0 or -EIO. */
int store_query_i64(struct conn *c, const char *sql, int64_t *ret);

static inline int bind_text(struct db_stmt *st, int i, const char *s)
{
        return db_bind_text(st, i, s);
}

static inline int bind_blob(struct db_stmt *st, int i, const uint8_t *p, size_t n)
{
        return db_bind_blob(st, i, p, n);
}

static inline int bind_i64(struct db_stmt *st, int i, int64_t v)
{
        return db_bind_i64(st, i, v);
}

static inline int col_text(struct db_stmt *st, int i, char **ret)
{
        const char *t = db_col_text(st, i);

        *ret = NULL;
        if (!t)
                return 0;
        *ret = strdup(t);
        return *ret ? 0 : -ENOMEM;
}

/* A text column into buf (truncated to n - 1 bytes, "" for NULL). */
static inline void col_str(struct db_stmt *st, int i, char *buf, size_t n)
{
        const char *t = db_col_text(st, i);

        snprintf(buf, n, "%s", t ? t : "");
}

/* An agent state column (the codec's text, daemon/agent-state.h): 0, -EBADMSG unknown or NULL. */
static inline int col_state(struct db_stmt *st, int i, enum agent_state *ret)
{
        return agent_state_parse(db_col_text(st, i), ret);
}

static inline int bind_state(struct db_stmt *st, int i, enum agent_state s)
{
        const char *name = agent_state_name(s);

        return name ? bind_text(st, i, name) : -EINVAL;
}

static inline int col_blob(struct db_stmt *st, int i, uint8_t **ret, size_t *ret_len)
{
        size_t n = 0;
        const uint8_t *b = db_col_blob(st, i, &n);

        *ret = NULL;
        *ret_len = 0;
        if (!b)
                return 0;
        *ret = malloc(n > 0 ? n : 1);
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, b, n);
        *ret_len = n;
        return 0;
}

/* A blob column of exactly n bytes copied into buf: true, else false (NULL or another size). */
static inline bool col_blob_fixed(struct db_stmt *st, int i, uint8_t *buf, size_t n)
{
        size_t len = 0;
        const uint8_t *b = db_col_blob(st, i, &len);

        if (!b || len != n)
                return false;
        memcpy(buf, b, n);
        return true;
}

static inline int step_changes(struct conn *c, struct db_stmt *st)
{
        int rc = db_step(st), n;

        (void)c;
        n = db_changes(st);
        db_reset(st);
        if (rc != DB_DONE)
                return -EIO;
        return n;
}

/*
 * Statement i with key bound to ?1, stepped once: 1 with the row in *ret_st (read its columns,
 * then db_reset it), 0 when there is none, -EIO.
 */
static inline int row_by_key(struct conn *c, enum stmt i, const char *key, struct db_stmt **ret_st)
{
        struct db_stmt *st = st_get(c, i);
        int rc;

        if (!st || bind_text(st, 1, key) < 0)
                return -EIO;
        rc = db_step(st);
        if (rc == DB_ROW) {
                *ret_st = st;
                return 1;
        }
        db_reset(st);
        return rc == DB_DONE ? 0 : -EIO;
}

/* 1 when statement i with key bound to ?1 yields a row, 0 when not, -EIO. */
static inline int exists(struct conn *c, enum stmt i, const char *key)
{
        struct db_stmt *st;
        int r = row_by_key(c, i, key, &st);

        if (r == 1)
                db_reset(st);
        return r;
}

/* Statement i (a write) with key bound to ?1: the rows it changed, or -EIO. */
static inline int exec_by_key(struct conn *c, enum stmt i, const char *key)
{
        struct db_stmt *st = st_get(c, i);

        if (!st || bind_text(st, 1, key) < 0)
                return -EIO;
        return step_changes(c, st);
}

/*
 * The webhook outbox (daemon/store/store-outbox.c): called inside the write transaction of the
 * change that causes the event, so the event commits with it or not at all. outbox_on_verdict()
 * and outbox_on_decommission() read the agent's previous state, so they run before its update.
 */
/* failing: JSON array text of the failing claims' names (NULL: "[]"); reason: NULL or a code */
int outbox_on_verdict(struct conn *c, const char *agent, const char *status, const char *failing,
                      const char *reason, int64_t now);
int outbox_on_enrolled(struct conn *c, const char *agent, int64_t now);
int outbox_on_decommission(struct conn *c, const char *agent, int64_t now);
/* agent.readmitted (after the readmit changed something); agent.deleted (before the delete, which
 * it reads the last status from; 0 and no event when there is no such agent) */
int outbox_on_readmit(struct conn *c, const char *agent, int64_t now);
int outbox_on_deleted(struct conn *c, const char *agent, int64_t now);
/* An agent the stale scan just marked (last_status NULL: no verdict yet). */
int outbox_on_stale(struct conn *c, const char *agent, const char *last_status, int64_t now);

#endif
