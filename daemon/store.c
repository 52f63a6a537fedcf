/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <openssl/crypto.h>

#include "daemon/store.h"

/* Forward migrations: migration[i] takes user_version i to i + 1. */
static const char *const migration[STORE_SCHEMA_VERSION] = {
        "CREATE TABLE agents ("
        " id TEXT PRIMARY KEY,"
        " ak_public BLOB NOT NULL,"
        " ak_name BLOB NOT NULL UNIQUE,"
        " ek_cert BLOB,"
        " state TEXT NOT NULL,"
        " policy TEXT,"
        " created INTEGER NOT NULL,"
        " last_seen INTEGER NOT NULL DEFAULT 0,"
        " next_due INTEGER NOT NULL DEFAULT 0,"
        " last_status TEXT,"
        " last_policy TEXT,"
        " last_result INTEGER NOT NULL DEFAULT 0,"
        " ima_offset INTEGER NOT NULL DEFAULT 0,"
        " replay_state TEXT,"
        " seq INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE policies ("
        " name TEXT NOT NULL,"
        " version INTEGER NOT NULL,"
        " body TEXT NOT NULL,"
        " created INTEGER NOT NULL,"
        " deleted INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (name, version));"
        "CREATE TABLE results ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " time INTEGER NOT NULL,"
        " status TEXT NOT NULL,"
        " policy TEXT,"
        " verdict TEXT NOT NULL);"
        "CREATE INDEX results_by_agent ON results(agent, id);",
        /* 1 -> 2: enrolment by credential activation (DESIGN §4) */
        "CREATE TABLE enrolments ("
        " agent TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BLOB NOT NULL,"
        " cred_hash BLOB NOT NULL,"
        " expires INTEGER NOT NULL);",
        /* 2 -> 3 (issue 9): one live identity per EK, several pending credentials per agent
         * (a second enrolment never replaces the first), decommissioning, consumed nonces */
        "ALTER TABLE agents ADD COLUMN ek_id BLOB;"
        "ALTER TABLE agents ADD COLUMN prev_state TEXT;"
        "CREATE INDEX agents_by_ek ON agents(ek_id);"
        "CREATE TABLE enrolments3 ("
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BLOB NOT NULL,"
        " ek_id BLOB,"
        " ek_cert BLOB,"
        " cred_hash BLOB NOT NULL,"
        " expires INTEGER NOT NULL);"
        "INSERT INTO enrolments3 (agent, ek_public, cred_hash, expires)"
        " SELECT agent, ek_public, cred_hash, expires FROM enrolments;"
        "DROP TABLE enrolments;"
        "ALTER TABLE enrolments3 RENAME TO enrolments;"
        "CREATE INDEX enrolments_by_agent ON enrolments(agent);"
        "CREATE TABLE ek_decommissioned ("
        " ek_id BLOB PRIMARY KEY,"
        " agent TEXT NOT NULL,"
        " time INTEGER NOT NULL);"
        "CREATE TABLE nonces_used ("
        " nonce BLOB PRIMARY KEY,"
        " expires INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE INDEX nonces_used_by_expiry ON nonces_used(expires);"
        "CREATE TABLE health (id INTEGER PRIMARY KEY, time INTEGER NOT NULL);",
};

enum stmt {
        ST_AGENT_ADD,
        ST_AGENT_GET,
        ST_AGENT_LIST,
        ST_AGENT_DELETE,
        ST_AGENT_SET_POLICY,
        ST_POLICY_LIVE,
        ST_AGENT_COUNTS,
        ST_AGENT_UPDATE,
        ST_AGENT_EXISTS,
        ST_AGENT_OFFSET,
        ST_AGENT_RESET_REPLAY,
        ST_RESULT_ADD,
        ST_RESULT_PRUNE,
        ST_RESULT_LIST,
        ST_POLICY_NEXT,
        ST_POLICY_ADD,
        ST_POLICY_GET_LATEST,
        ST_POLICY_GET_VERSION,
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
        ST_NONCE_PURGE,
        ST_NONCE_PUT,
        ST_NONCE_GET,
        ST_HEALTH_PUT,
        ST_BEGIN,
        ST_COMMIT,
        ST_ROLLBACK,
        ST_SAVEPOINT,
        ST_RELEASE,
        ST_ROLLBACK_TO,
        ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
        [ST_AGENT_ADD] = "INSERT INTO agents (id, ak_public, ak_name, ek_cert, state, created,"
                         " ek_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        [ST_AGENT_GET] = "SELECT id, ak_public, ak_name, ek_cert, state, policy, created,"
                         " last_seen, next_due, last_status, last_policy, last_result,"
                         " ima_offset, replay_state, seq, ek_id FROM agents WHERE id = ?1",
        [ST_AGENT_LIST] = "SELECT id, NULL, NULL, NULL, state, policy, created, last_seen,"
                          " next_due, last_status, last_policy, last_result, ima_offset, NULL,"
                          " seq, ek_id FROM agents ORDER BY id",
        [ST_AGENT_DELETE] = "DELETE FROM agents WHERE id = ?1",
        [ST_AGENT_SET_POLICY] = "UPDATE agents SET policy = ?2 WHERE id = ?1",
        [ST_POLICY_LIVE] = "SELECT 1 FROM policies WHERE name = ?1 AND deleted = 0 LIMIT 1",
        [ST_AGENT_COUNTS] =
                "SELECT coalesce(sum(stale), 0),"
                " coalesce(sum(NOT stale AND last_seen = 0), 0),"
                " coalesce(sum(NOT stale AND last_seen <> 0 AND last_status = 'fail'), 0),"
                " coalesce(sum(NOT stale AND last_seen <> 0 AND last_status <> 'fail'), 0)"
                " FROM (SELECT last_seen, last_status, (CASE WHEN next_due = 0 THEN created + ?3"
                " ELSE next_due END) + ?2 < ?1 AS stale FROM agents)",
        [ST_AGENT_UPDATE] = "UPDATE agents SET last_seen = ?3, next_due = ?4, last_status = ?5,"
                            " last_policy = ?6, last_result = ?7, ima_offset = ?8,"
                            " replay_state = ?9, seq = seq + 1 WHERE id = ?1 AND seq = ?2",
        [ST_AGENT_EXISTS] = "SELECT 1 FROM agents WHERE id = ?1",
        [ST_AGENT_OFFSET] = "SELECT ima_offset, state FROM agents WHERE id = ?1",
        [ST_AGENT_RESET_REPLAY] = "UPDATE agents SET ima_offset = 0, seq = seq + 1"
                                  " WHERE id = ?1 AND seq = ?2",
        [ST_RESULT_ADD] = "INSERT INTO results (agent, time, status, policy, verdict)"
                          " VALUES (?1, ?2, ?3, ?4, ?5)",
        [ST_RESULT_PRUNE] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id FROM"
                            " results WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        [ST_RESULT_LIST] = "SELECT id, time, status, policy, verdict FROM results WHERE"
                           " agent = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
        [ST_POLICY_NEXT] = "SELECT coalesce(max(version), 0) + 1 FROM policies WHERE name = ?1",
        [ST_POLICY_ADD] = "INSERT INTO policies (name, version, body, created)"
                          " VALUES (?1, ?2, ?3, ?4)",
        [ST_POLICY_GET_LATEST] = "SELECT body, version, created FROM policies WHERE name = ?1"
                                 " AND deleted = 0 ORDER BY version DESC LIMIT 1",
        [ST_POLICY_GET_VERSION] = "SELECT body, version, created FROM policies WHERE name = ?1"
                                  " AND deleted = 0 AND version = ?2",
        [ST_POLICY_LIST] = "SELECT name, max(version), max(created) FROM policies WHERE"
                           " deleted = 0 GROUP BY name ORDER BY name",
        [ST_POLICY_BOUND] = "SELECT 1 FROM agents WHERE policy = ?1 LIMIT 1",
        [ST_POLICY_DELETE] = "UPDATE policies SET deleted = 1 WHERE name = ?1 AND deleted = 0",
        [ST_ENROL_PUT] = "INSERT INTO enrolments (agent, ek_public, cred_hash, expires, ek_id,"
                         " ek_cert) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        [ST_ENROL_GET] = "SELECT cred_hash, expires, rowid FROM enrolments WHERE agent = ?1",
        [ST_ENROL_DELETE] = "DELETE FROM enrolments WHERE agent = ?1",
        [ST_AGENT_STATE] = "SELECT state FROM agents WHERE id = ?1",
        [ST_AGENT_SET_STATE] = "UPDATE agents SET state = ?2 WHERE id = ?1",
        [ST_ENROL_COUNT] = "SELECT count(*) FROM enrolments WHERE agent = ?1",
        [ST_ENROL_PURGE] = "DELETE FROM enrolments WHERE agent = ?1 AND expires < ?2",
        [ST_ENROL_LIST] = "SELECT ek_id, ek_cert FROM enrolments WHERE rowid = ?1",
        [ST_AGENT_ACTIVATE] = "UPDATE agents SET state = 'active', ek_id = ?2, ek_cert = ?3"
                              " WHERE id = ?1",
        [ST_AGENT_TAKEOVER] = "SELECT id FROM agents WHERE ek_id = ?1 AND id <> ?2"
                              " AND state <> 'pending'",
        [ST_EK_DECOM_GET] = "SELECT agent FROM ek_decommissioned WHERE ek_id = ?1",
        [ST_EK_DECOM_PUT] = "INSERT OR REPLACE INTO ek_decommissioned (ek_id, agent, time)"
                            " VALUES (?1, ?2, ?3)",
        [ST_EK_DECOM_DELETE] = "DELETE FROM ek_decommissioned WHERE agent = ?1",
        [ST_AGENT_DECOM] = "UPDATE agents SET prev_state = state, state = 'decommissioned'"
                           " WHERE id = ?1 AND state <> 'decommissioned'",
        [ST_AGENT_READMIT] = "UPDATE agents SET state = coalesce(prev_state, 'active'),"
                             " prev_state = NULL WHERE id = ?1 AND state = 'decommissioned'",
        [ST_AGENT_EK] = "SELECT ek_id FROM agents WHERE id = ?1",
        [ST_NONCE_PURGE] = "DELETE FROM nonces_used WHERE expires <= ?1",
        [ST_NONCE_PUT] = "INSERT INTO nonces_used (nonce, expires) VALUES (?1, ?2)",
        [ST_NONCE_GET] = "SELECT 1 FROM nonces_used WHERE nonce = ?1",
        [ST_HEALTH_PUT] = "INSERT OR REPLACE INTO health (id, time) VALUES (1, ?1)",
        [ST_BEGIN] = "BEGIN IMMEDIATE",
        [ST_COMMIT] = "COMMIT",
        [ST_ROLLBACK] = "ROLLBACK",
        [ST_SAVEPOINT] = "SAVEPOINT job",
        [ST_RELEASE] = "RELEASE job",
        [ST_ROLLBACK_TO] = "ROLLBACK TO job",
};

/* page cache of each pooled connection (KiB); the writer keeps SQLite's default */
#define STORE_POOL_CACHE_KIB 256
#define STR_(x) #x
#define STR(x) STR_(x)

struct conn {
        sqlite3 *db;
        sqlite3_stmt *st[ST_COUNT];
        struct conn *next_free;
};

struct job {
        int (*fn)(struct conn *c, void *arg);
        void *arg;
        int rc;
        bool done;
        pthread_cond_t done_cv; /* its caller waits on it: a commit wakes only its own callers */
        struct job *next;
};

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
        char *path;
        /* readiness probe: at most one real write per interval, the last answer cached */
        pthread_mutex_t probe_lock;
        int64_t probe_at;
        atomic_int probe_rc;
        char probe_msg[160];
};

static int db_fail(sqlite3 *db, int rc, struct attest_err *err, const char *what)
{
        return attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", what,
                           db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static void conn_close(struct conn *c)
{
        for (int i = 0; i < ST_COUNT; i++)
                sqlite3_finalize(c->st[i]);
        memset(c->st, 0, sizeof(c->st));
        sqlite3_close(c->db);
        c->db = NULL;
}

static int conn_open(struct conn *c, const char *path, struct attest_err *err)
{
        char *msg = NULL;
        int rc;

        memset(c, 0, sizeof(*c));
        rc = sqlite3_open_v2(path, &c->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
        if (rc != SQLITE_OK) {
                int e = db_fail(c->db, rc, err, path);

                conn_close(c);
                return e;
        }
        sqlite3_busy_timeout(c->db, 10000);
        rc = sqlite3_exec(c->db,
                          "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                          " PRAGMA foreign_keys=ON;",
                          NULL, NULL, &msg);
        if (rc != SQLITE_OK) {
                int e = attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", path, msg ? msg : "pragma");

                sqlite3_free(msg);
                conn_close(c);
                return e;
        }
        for (int i = 0; i < ST_COUNT; i++) {
                rc = sqlite3_prepare_v3(c->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                        &c->st[i], NULL);
                if (rc != SQLITE_OK && i < ST_BEGIN) {
                        /* before the migration the tables are missing: prepare lazily */
                        c->st[i] = NULL;
                        continue;
                }
                if (rc != SQLITE_OK) {
                        int e = db_fail(c->db, rc, err, "prepare");

                        conn_close(c);
                        return e;
                }
        }
        return 0;
}

/* The statement, reset and unbound; prepared on first use if the schema was missing at open. */
static sqlite3_stmt *st_get(struct conn *c, enum stmt i)
{
        if (!c->st[i] && sqlite3_prepare_v3(c->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                            &c->st[i], NULL) != SQLITE_OK)
                return NULL;
        sqlite3_reset(c->st[i]);
        sqlite3_clear_bindings(c->st[i]);
        return c->st[i];
}

static int st_exec(struct conn *c, enum stmt i)
{
        sqlite3_stmt *st = st_get(c, i);
        int rc;

        if (!st)
                return -EIO;
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -EIO;
}

static int migrate(struct conn *c, struct attest_err *err)
{
        sqlite3_stmt *st = NULL;
        int version, rc;
        char *msg = NULL;

        if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
                return db_fail(c->db, 0, err, "begin");
        rc = sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL);
        if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
                sqlite3_finalize(st);
                sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
                return db_fail(c->db, rc, err, "user_version");
        }
        version = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (version > STORE_SCHEMA_VERSION) {
                sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
                return attest_fail(err, -EINVAL, AE_STORE_SCHEMA,
                                   "database schema %d is newer than this attestd (%d)", version,
                                   STORE_SCHEMA_VERSION);
        }
        for (int v = version; v < STORE_SCHEMA_VERSION; v++) {
                char set[64];

                snprintf(set, sizeof(set), "PRAGMA user_version = %d", v + 1);
                if (sqlite3_exec(c->db, migration[v], NULL, NULL, &msg) != SQLITE_OK ||
                    sqlite3_exec(c->db, set, NULL, NULL, &msg) != SQLITE_OK) {
                        int e = attest_fail(err, -EIO, AE_STORE_SCHEMA, "migration %d: %s", v + 1,
                                            msg ? msg : "?");

                        sqlite3_free(msg);
                        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
                        return e;
                }
        }
        if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
                return db_fail(c->db, 0, err, "commit");
        return 0;
}

static void *writer_main(void *arg)
{
        struct store *s = arg;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                struct job *batch;
                int rc;

                while (!s->queue && !s->stopping)
                        pthread_cond_wait(&s->job_ready, &s->lock);
                if (!s->queue)
                        break;
                batch = s->queue;
                s->queue = s->queue_tail = NULL;
                pthread_mutex_unlock(&s->lock);

                /* one transaction, one fsync, for the whole batch; a failing job is rolled back
                 * to its savepoint and does not take the others with it */
                rc = st_exec(&s->writer, ST_BEGIN);
                for (struct job *j = batch; j; j = j->next) {
                        if (rc < 0) {
                                j->rc = rc;
                                continue;
                        }
                        if (st_exec(&s->writer, ST_SAVEPOINT) < 0) {
                                j->rc = -EIO;
                                continue;
                        }
                        j->rc = j->fn(&s->writer, j->arg);
                        if (j->rc < 0)
                                (void)st_exec(&s->writer, ST_ROLLBACK_TO);
                        (void)st_exec(&s->writer, ST_RELEASE);
                }
                if (rc == 0)
                        atomic_fetch_add(&s->commits, 1);
                if (rc == 0 && st_exec(&s->writer, ST_COMMIT) < 0) {
                        (void)st_exec(&s->writer, ST_ROLLBACK);
                        for (struct job *j = batch; j; j = j->next)
                                j->rc = -EIO;
                }

                /* wake exactly the callers of this batch (a broadcast woke every thread
                 * waiting, also those whose jobs were still queued, to sleep again) */
                pthread_mutex_lock(&s->lock);
                for (struct job *j = batch, *next; j; j = next) {
                        next = j->next;
                        j->done = true;
                        atomic_fetch_add(&s->writes, 1);
                        pthread_cond_signal(&j->done_cv);
                }
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static struct conn *conn_get(struct store *s)
{
        struct conn *c;

        pthread_mutex_lock(&s->pool_lock);
        while (!s->free)
                pthread_cond_wait(&s->conn_free, &s->pool_lock);
        c = s->free;
        s->free = c->next_free;
        pthread_mutex_unlock(&s->pool_lock);
        return c;
}

static void conn_put(struct store *s, struct conn *c)
{
        pthread_mutex_lock(&s->pool_lock);
        c->next_free = s->free;
        s->free = c;
        pthread_cond_signal(&s->conn_free);
        pthread_mutex_unlock(&s->pool_lock);
}

/* Run fn inside a write transaction, durable when this returns 0. */
static int store_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        struct conn *c;
        int rc;

        if (s->mode == STORE_WRITER) {
                struct job j = {.fn = fn, .arg = arg};

                pthread_cond_init(&j.done_cv, NULL);
                pthread_mutex_lock(&s->lock);
                if (s->queue_tail)
                        s->queue_tail->next = &j;
                else
                        s->queue = &j;
                s->queue_tail = &j;
                pthread_cond_signal(&s->job_ready);
                while (!j.done)
                        pthread_cond_wait(&j.done_cv, &s->lock);
                pthread_mutex_unlock(&s->lock);
                pthread_cond_destroy(&j.done_cv);
                return j.rc;
        }
        c = conn_get(s);
        atomic_fetch_add(&s->commits, 1);
        atomic_fetch_add(&s->writes, 1);
        rc = st_exec(c, ST_BEGIN);
        if (rc == 0) {
                rc = fn(c, arg);
                if (rc < 0)
                        (void)st_exec(c, ST_ROLLBACK);
                else if (st_exec(c, ST_COMMIT) < 0) {
                        (void)st_exec(c, ST_ROLLBACK);
                        rc = -EIO;
                }
        }
        conn_put(s, c);
        return rc;
}

/* Run fn on a pooled connection, outside any explicit transaction (one statement reads). */
static int store_read(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        struct conn *c = conn_get(s);
        int rc = fn(c, arg);

        conn_put(s, c);
        return rc;
}

/*
 * The database holds agent identities and verdicts: its directory is created 0700 when missing
 * and refused when anyone may write to it; the file is created 0600 before SQLite opens it (the
 * WAL and SHM files inherit the mode of the database) and narrowed to 0600 when it was wider.
 */
static int store_prepare_files(const char *path, struct attest_err *err)
{
        char dir[4096], side[4096 + 8];
        const char *slash = strrchr(path, '/');
        struct stat st;
        int fd;

        if (!path[0] || path[0] == ':' || !strncmp(path, "file:", 5))
                return 0;
        if (slash) {
                size_t n = slash == path ? 1 : (size_t)(slash - path);

                if (n >= sizeof(dir))
                        return attest_fail(err, -ENAMETOOLONG, AE_STORE_IO, "%s: path too long",
                                           path);
                memcpy(dir, path, n);
                dir[n] = '\0';
        } else {
                snprintf(dir, sizeof(dir), ".");
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return attest_fail(err, -errno, AE_STORE_IO, "creating %s: %s", dir,
                                   strerror(errno));
        if (stat(dir, &st) < 0)
                return attest_fail(err, -errno, AE_STORE_IO, "%s: %s", dir, strerror(errno));
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
                return attest_fail(err, -EPERM, AE_STORE_IO,
                                   "%s: the database directory is writable by anyone", dir);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return attest_fail(err, -errno, AE_STORE_IO, "%s: %s", path, strerror(errno));
        if (fstat(fd, &st) == 0 && (st.st_mode & 0077) && fchmod(fd, 0600) < 0) {
                int e = -errno;

                close(fd);
                return attest_fail(err, e, AE_STORE_IO, "chmod %s: %s", path, strerror(-e));
        }
        close(fd);
        for (int i = 0; i < 2; i++) {
                snprintf(side, sizeof(side), "%s%s", path, i ? "-shm" : "-wal");
                if (chmod(side, 0600) < 0 && errno != ENOENT)
                        return attest_fail(err, -errno, AE_STORE_IO, "chmod %s: %s", side,
                                           strerror(errno));
        }
        return 0;
}

int store_open(const char *path, enum store_mode mode, unsigned connections, struct store **ret,
               struct attest_err *err)
{
        struct store *s;
        int e;

        if (connections == 0 || connections > 1024)
                return attest_fail(err, -EINVAL, AE_STORE_CONFIG, "connections: %u", connections);
        if ((e = store_prepare_files(path, err)) < 0)
                return e;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->path = strdup(path);
        if (!s->path) {
                free(s);
                return -ENOMEM;
        }
        pthread_mutex_init(&s->probe_lock, NULL);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->pool_lock, NULL);
        pthread_cond_init(&s->conn_free, NULL);
        pthread_cond_init(&s->job_ready, NULL);
        s->conns = calloc(connections, sizeof(*s->conns));
        if (!s->conns) {
                store_close(s);
                return -ENOMEM;
        }
        /* the first connection migrates before the others prepare their statements */
        for (unsigned i = 0; i < connections; i++) {
                if ((e = conn_open(&s->conns[i], path, err)) < 0) {
                        store_close(s);
                        return e;
                }
                s->nconns = i + 1;
                if (i == 0 && (e = migrate(&s->conns[0], err)) < 0) {
                        store_close(s);
                        return e;
                }
                /*
                 * A pooled connection's page cache is dropped whenever another connection has
                 * committed since its last transaction: under load (hundreds of commits a
                 * second) every read starts cold, so SQLite's default 2 MiB per connection only
                 * grew RSS with the database (18 -> 41 MiB over 10 minutes of bench-daemon,
                 * 16 connections) without saving a read.
                 */
                if (sqlite3_exec(s->conns[i].db, "PRAGMA cache_size=-" STR(STORE_POOL_CACHE_KIB),
                                 NULL, NULL, NULL) != SQLITE_OK) {
                        e = db_fail(s->conns[i].db, 0, err, "cache_size");
                        store_close(s);
                        return e;
                }
                s->conns[i].next_free = s->free;
                s->free = &s->conns[i];
        }
        if (mode == STORE_WRITER) {
                if ((e = conn_open(&s->writer, path, err)) < 0) {
                        store_close(s);
                        return e;
                }
                if (pthread_create(&s->writer_thread, NULL, writer_main, s) != 0) {
                        store_close(s);
                        return -ENOMEM;
                }
                s->writer_running = true;
        }
        *ret = s;
        return 0;
}

struct store *store_close(struct store *s)
{
        if (!s)
                return NULL;
        if (s->writer_running) {
                pthread_mutex_lock(&s->lock);
                s->stopping = true;
                pthread_cond_signal(&s->job_ready);
                pthread_mutex_unlock(&s->lock);
                pthread_join(s->writer_thread, NULL);
        }
        if (s->writer.db)
                conn_close(&s->writer);
        for (unsigned i = 0; i < s->nconns; i++)
                conn_close(&s->conns[i]);
        free(s->conns);
        pthread_cond_destroy(&s->job_ready);
        pthread_cond_destroy(&s->conn_free);
        pthread_mutex_destroy(&s->pool_lock);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->probe_lock);
        free(s->path);
        free(s);
        return NULL;
}

void store_stats(struct store *s, uint64_t *ret_commits, uint64_t *ret_writes)
{
        *ret_commits = atomic_load(&s->commits);
        *ret_writes = atomic_load(&s->writes);
}

static int schema_version_fn(struct conn *c, void *arg)
{
        sqlite3_stmt *st = NULL;
        int rc = -EIO;

        if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
                *(int *)arg = sqlite3_column_int(st, 0);
                rc = 0;
        }
        sqlite3_finalize(st);
        return rc;
}

int store_schema_version(struct store *s, int *ret)
{
        return store_read(s, schema_version_fn, ret);
}

static int bind_i64(sqlite3_stmt *st, int i, int64_t v);
static int step_changes(struct conn *c, sqlite3_stmt *st);

static int health_put_fn(struct conn *c, void *arg)
{
        sqlite3_stmt *st = st_get(c, ST_HEALTH_PUT);

        if (!st || bind_i64(st, 1, *(int64_t *)arg) < 0)
                return -EIO;
        return step_changes(c, st) < 0 ? -EIO : 0;
}

/* A page-sized file written, synced and removed beside the database: SQLite may still reuse
 * room in its WAL when the file system is full, a new file cannot be written. */
static int probe_file(const char *path, char *msg, size_t n)
{
        char p[4096 + 8];
        uint8_t page[4096];
        size_t put = 0;
        int fd, e = 0;

        if (!path[0] || path[0] == ':' || !strncmp(path, "file:", 5))
                return 0;
        memset(page, 0, sizeof(page));
        snprintf(p, sizeof(p), "%s-probe", path);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                e = -errno;
                snprintf(msg, n, "cannot create a file beside the database: %s", strerror(-e));
                return e;
        }
        while (put < sizeof(page)) {
                ssize_t w = write(fd, page + put, sizeof(page) - put);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        e = w < 0 ? -errno : -EIO;
                        break;
                }
                put += (size_t)w;
        }
        if (e == 0 && fsync(fd) < 0)
                e = -errno;
        close(fd);
        unlink(p);
        if (e < 0)
                snprintf(msg, n, "writing beside the database failed: %s", strerror(-e));
        return e;
}

int store_probe(struct store *s, int64_t now, int64_t min_interval_ms, char *ret_msg, size_t n)
{
        int rc;

        if (pthread_mutex_trylock(&s->probe_lock) != 0) {
                /* another request is probing: its previous answer stands */
                rc = atomic_load(&s->probe_rc);
                snprintf(ret_msg, n, "%s", rc < 0 ? "the last probe failed" : "");
                return rc;
        }
        if (s->probe_at && now >= s->probe_at && now - s->probe_at < min_interval_ms) {
                rc = atomic_load(&s->probe_rc);
                snprintf(ret_msg, n, "%s", s->probe_msg);
                pthread_mutex_unlock(&s->probe_lock);
                return rc;
        }
        s->probe_msg[0] = '\0';
        rc = probe_file(s->path, s->probe_msg, sizeof(s->probe_msg));
        if (rc == 0 && (rc = store_write(s, health_put_fn, &now)) < 0)
                snprintf(s->probe_msg, sizeof(s->probe_msg), "a database write failed");
        s->probe_at = now;
        atomic_store(&s->probe_rc, rc);
        snprintf(ret_msg, n, "%s", s->probe_msg);
        pthread_mutex_unlock(&s->probe_lock);
        return rc;
}

/* ---- agents ---- */

void store_agent_free(struct store_agent *a)
{
        if (!a)
                return;
        free(a->ak_public);
        free(a->ak_name);
        free(a->ek_cert);
        free(a->policy);
        free(a->last_status);
        free(a->last_policy);
        free(a->replay_state);
        free(a);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
        if (!s)
                return sqlite3_bind_null(st, i) == SQLITE_OK ? 0 : -EIO;
        return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) == SQLITE_OK ? 0 : -EIO;
}

static int bind_blob(sqlite3_stmt *st, int i, const uint8_t *p, size_t n)
{
        if (!p)
                return sqlite3_bind_null(st, i) == SQLITE_OK ? 0 : -EIO;
        return sqlite3_bind_blob64(st, i, p, n, SQLITE_STATIC) == SQLITE_OK ? 0 : -EIO;
}

static int bind_i64(sqlite3_stmt *st, int i, int64_t v)
{
        return sqlite3_bind_int64(st, i, v) == SQLITE_OK ? 0 : -EIO;
}

static int col_text(sqlite3_stmt *st, int i, char **ret)
{
        const unsigned char *t = sqlite3_column_text(st, i);

        *ret = NULL;
        if (!t)
                return sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM ? -ENOMEM : 0;
        *ret = strdup((const char *)t);
        return *ret ? 0 : -ENOMEM;
}

static int col_blob(sqlite3_stmt *st, int i, uint8_t **ret, size_t *ret_len)
{
        const void *b = sqlite3_column_blob(st, i);
        int n = sqlite3_column_bytes(st, i);

        *ret = NULL;
        *ret_len = 0;
        if (!b)
                return 0;
        *ret = malloc(n > 0 ? (size_t)n : 1);
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, b, (size_t)n);
        *ret_len = (size_t)n;
        return 0;
}

static int agent_row(sqlite3_stmt *st, struct store_agent **ret)
{
        struct store_agent *a = calloc(1, sizeof(*a));
        const unsigned char *t;
        int e = 0;

        if (!a)
                return -ENOMEM;
        t = sqlite3_column_text(st, 0);
        snprintf(a->id, sizeof(a->id), "%s", t ? (const char *)t : "");
        t = sqlite3_column_text(st, 4);
        snprintf(a->state, sizeof(a->state), "%s", t ? (const char *)t : "");
        if ((e = col_blob(st, 1, &a->ak_public, &a->ak_public_len)) < 0 ||
            (e = col_blob(st, 2, &a->ak_name, &a->ak_name_len)) < 0 ||
            (e = col_blob(st, 3, &a->ek_cert, &a->ek_cert_len)) < 0 ||
            (e = col_text(st, 5, &a->policy)) < 0 || (e = col_text(st, 9, &a->last_status)) < 0 ||
            (e = col_text(st, 10, &a->last_policy)) < 0 ||
            (e = col_text(st, 13, &a->replay_state)) < 0) {
                store_agent_free(a);
                return e;
        }
        a->created = sqlite3_column_int64(st, 6);
        a->last_seen = sqlite3_column_int64(st, 7);
        a->next_due = sqlite3_column_int64(st, 8);
        a->last_result = sqlite3_column_int64(st, 11);
        a->ima_offset = (uint64_t)sqlite3_column_int64(st, 12);
        a->seq = (uint64_t)sqlite3_column_int64(st, 14);
        if (sqlite3_column_bytes(st, 15) == (int)sizeof(a->ek_id)) {
                memcpy(a->ek_id, sqlite3_column_blob(st, 15), sizeof(a->ek_id));
                a->has_ek_id = true;
        }
        *ret = a;
        return 0;
}

static int agent_add_fn(struct conn *c, void *arg)
{
        const struct store_agent *a = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_ADD);
        int rc;

        if (!st || bind_text(st, 1, a->id) < 0 ||
            bind_blob(st, 2, a->ak_public, a->ak_public_len) < 0 ||
            bind_blob(st, 3, a->ak_name, a->ak_name_len) < 0 ||
            bind_blob(st, 4, a->ek_cert, a->ek_cert_len) < 0 || bind_text(st, 5, a->state) < 0 ||
            bind_i64(st, 6, a->created) < 0 ||
            bind_blob(st, 7, a->has_ek_id ? a->ek_id : NULL, sizeof(a->ek_id)) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc == SQLITE_CONSTRAINT)
                return -EEXIST;
        return rc == SQLITE_DONE ? 0 : -EIO;
}

int store_agent_add(struct store *s, const struct store_agent *a)
{
        return store_write(s, agent_add_fn, (void *)a);
}

static int step_changes(struct conn *c, sqlite3_stmt *st);

/* The agent's state into buf: 0, -ENOENT when there is no such agent. */
static int agent_state(struct conn *c, const char *id, char *buf, size_t n)
{
        sqlite3_stmt *st = st_get(c, ST_AGENT_STATE);
        int rc;

        if (!st || bind_text(st, 1, id) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                const unsigned char *t = sqlite3_column_text(st, 0);

                snprintf(buf, n, "%s", t ? (const char *)t : "");
        }
        sqlite3_reset(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        return rc == SQLITE_ROW ? 0 : -EIO;
}

/* The agent that decommissioned this EK into who (may be NULL): 1 when refused, 0 when not. */
static int ek_refused(struct conn *c, const uint8_t *ek_id, char *who, size_t n)
{
        sqlite3_stmt *st;
        int rc;

        if (!ek_id)
                return 0;
        st = st_get(c, ST_EK_DECOM_GET);
        if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && who) {
                const unsigned char *t = sqlite3_column_text(st, 0);

                snprintf(who, n, "%s", t ? (const char *)t : "");
        }
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : -EIO;
}

struct pending_arg {
        const struct store_agent *a;
        const uint8_t *ek;
        size_t ek_len;
        const uint8_t *cred_hash;
        int64_t expires, now;
};

static int agent_add_pending_fn(struct conn *c, void *arg)
{
        struct pending_arg *p = arg;
        const uint8_t *ek_id = p->a->has_ek_id ? p->a->ek_id : NULL;
        struct store_agent row = *p->a;
        char state[16];
        sqlite3_stmt *st;
        int e;

        if ((e = ek_refused(c, ek_id, NULL, 0)) != 0)
                return e < 0 ? e : -EPERM;
        /* the agent row carries no EK until a credential is activated: an unproven claim on an
         * EK must not look like its identity */
        row.ek_cert = NULL;
        row.ek_cert_len = 0;
        row.has_ek_id = false;
        e = agent_add_fn(c, &row);
        if (e == -EEXIST) {
                /* enrolling a pending agent again adds a credential beside the others (the
                 * proof picks the right one); an active one stays, a decommissioned one too */
                if ((e = agent_state(c, p->a->id, state, sizeof(state))) < 0)
                        return e == -ENOENT ? -EEXIST : e;
                if (!strcmp(state, "decommissioned"))
                        return -EPERM;
                if (strcmp(state, "pending") != 0)
                        return -EEXIST;
        } else if (e < 0) {
                return e;
        }
        st = st_get(c, ST_ENROL_PURGE);
        if (!st || bind_text(st, 1, p->a->id) < 0 || bind_i64(st, 2, p->now) < 0 ||
            step_changes(c, st) < 0)
                return -EIO;
        st = st_get(c, ST_ENROL_COUNT);
        if (!st || bind_text(st, 1, p->a->id) < 0 || sqlite3_step(st) != SQLITE_ROW) {
                if (st)
                        sqlite3_reset(st);
                return -EIO;
        }
        e = sqlite3_column_int(st, 0);
        sqlite3_reset(st);
        if (e >= STORE_PENDING_MAX)
                return -EBUSY;
        st = st_get(c, ST_ENROL_PUT);
        if (!st || bind_text(st, 1, p->a->id) < 0 || bind_blob(st, 2, p->ek, p->ek_len) < 0 ||
            bind_blob(st, 3, p->cred_hash, 32) < 0 || bind_i64(st, 4, p->expires) < 0 ||
            bind_blob(st, 5, ek_id, STORE_EK_ID_LEN) < 0 ||
            bind_blob(st, 6, p->a->ek_cert, p->a->ek_cert_len) < 0)
                return -EIO;
        e = step_changes(c, st);
        return e < 0 ? e : 0;
}

int store_agent_add_pending(struct store *s, const struct store_agent *a, const uint8_t *ek_public,
                            size_t ek_len, const uint8_t *cred_hash, int64_t expires)
{
        struct pending_arg p = {a, ek_public, ek_len, cred_hash, expires, 0};

        /* credentials expire: the ones past it make room (now = their creation time) */
        p.now = a->created;
        return store_write(s, agent_add_pending_fn, &p);
}

struct activate_arg {
        const char *id;
        const uint8_t *proof_hash;
        int64_t now;
        char *replaced;
};

static int agent_activate_fn(struct conn *c, void *arg)
{
        struct activate_arg *a = arg;
        sqlite3_stmt *st;
        char state[16], old[STORE_ID_MAX + 1];
        uint8_t ek_id[STORE_EK_ID_LEN];
        _cleanup_free_ uint8_t *ek_cert = NULL;
        size_t ek_cert_len = 0;
        bool have_ek = false, any = false, live = false, match = false, match_live = false;
        int64_t match_row = 0;
        int rc, e;

        if ((e = agent_state(c, a->id, state, sizeof(state))) < 0)
                return e;
        if (!strcmp(state, "decommissioned"))
                return -EPERM;
        if (strcmp(state, "pending") != 0)
                return -EALREADY;
        st = st_get(c, ST_ENROL_GET);
        if (!st || bind_text(st, 1, a->id) < 0)
                return -EIO;
        /* every credential of the agent is compared (constant time each) */
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                bool ok = sqlite3_column_bytes(st, 0) == 32 &&
                          CRYPTO_memcmp(sqlite3_column_blob(st, 0), a->proof_hash, 32) == 0;
                bool alive = sqlite3_column_int64(st, 1) >= a->now;

                any = true;
                live = live || alive;
                if (ok && !match) {
                        match = true;
                        match_live = alive;
                        match_row = sqlite3_column_int64(st, 2);
                }
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
                return -EIO;
        if (!any)
                return -EALREADY;
        if (match && !match_live)
                return -ETIME;
        if (!match)
                return live ? -EKEYREJECTED : -ETIME;
        st = st_get(c, ST_ENROL_LIST);
        if (!st || bind_i64(st, 1, match_row) < 0 || sqlite3_step(st) != SQLITE_ROW) {
                if (st)
                        sqlite3_reset(st);
                return -EIO;
        }
        if (sqlite3_column_bytes(st, 0) == STORE_EK_ID_LEN) {
                memcpy(ek_id, sqlite3_column_blob(st, 0), STORE_EK_ID_LEN);
                have_ek = true;
        }
        e = col_blob(st, 1, &ek_cert, &ek_cert_len);
        sqlite3_reset(st);
        if (e < 0)
                return e;
        if ((e = ek_refused(c, have_ek ? ek_id : NULL, NULL, 0)) != 0)
                return e < 0 ? e : -EACCES;
        /* the proof came from the TPM of this EK: this agent takes over the EK's identity */
        if (have_ek) {
                st = st_get(c, ST_AGENT_TAKEOVER);
                if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0 ||
                    bind_text(st, 2, a->id) < 0)
                        return -EIO;
                rc = sqlite3_step(st);
                if (rc == SQLITE_ROW) {
                        const unsigned char *t = sqlite3_column_text(st, 0);

                        snprintf(old, sizeof(old), "%s", t ? (const char *)t : "");
                }
                sqlite3_reset(st);
                if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                        return -EIO;
                if (rc == SQLITE_ROW) {
                        /* at most one live identity per EK exists, so one row at most */
                        st = st_get(c, ST_AGENT_DELETE);
                        if (!st || bind_text(st, 1, old) < 0 || step_changes(c, st) < 0)
                                return -EIO;
                        if (a->replaced)
                                snprintf(a->replaced, STORE_ID_MAX + 1, "%s", old);
                }
        }
        st = st_get(c, ST_AGENT_ACTIVATE);
        if (!st || bind_text(st, 1, a->id) < 0 ||
            bind_blob(st, 2, have_ek ? ek_id : NULL, STORE_EK_ID_LEN) < 0 ||
            bind_blob(st, 3, ek_cert, ek_cert_len) < 0 || (e = step_changes(c, st)) < 0)
                return -EIO;
        st = st_get(c, ST_ENROL_DELETE);
        if (!st || bind_text(st, 1, a->id) < 0 || (e = step_changes(c, st)) < 0)
                return -EIO;
        return 0;
}

int store_agent_activate(struct store *s, const char *id, const uint8_t *proof_hash, int64_t now,
                         char ret_replaced[STORE_ID_MAX + 1])
{
        struct activate_arg a = {id, proof_hash, now, ret_replaced};

        if (ret_replaced)
                ret_replaced[0] = '\0';
        return store_write(s, agent_activate_fn, &a);
}

struct decom_arg {
        const char *id;
        int64_t now;
        bool readmit;
};

static int agent_decom_fn(struct conn *c, void *arg)
{
        struct decom_arg *d = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_EK);
        uint8_t ek_id[STORE_EK_ID_LEN];
        bool have_ek = false;
        int rc, n, m;

        if (!st || bind_text(st, 1, d->id) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) == STORE_EK_ID_LEN) {
                memcpy(ek_id, sqlite3_column_blob(st, 0), STORE_EK_ID_LEN);
                have_ek = true;
        }
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return -EIO;
        if (d->readmit) {
                st = st_get(c, ST_EK_DECOM_DELETE);
                if (!st || bind_text(st, 1, d->id) < 0 || (n = step_changes(c, st)) < 0)
                        return -EIO;
                st = st_get(c, ST_AGENT_READMIT);
                if (!st || bind_text(st, 1, d->id) < 0 || (m = step_changes(c, st)) < 0)
                        return -EIO;
                /* the agent may have been forgotten (DELETE) while its EK stayed refused */
                if (n == 0 && m == 0)
                        return rc == SQLITE_DONE ? -ENOENT : -EALREADY;
                return 0;
        }
        if (rc == SQLITE_DONE)
                return -ENOENT;
        st = st_get(c, ST_AGENT_DECOM);
        if (!st || bind_text(st, 1, d->id) < 0 || step_changes(c, st) < 0)
                return -EIO;
        /* its pending credentials die with it */
        st = st_get(c, ST_ENROL_DELETE);
        if (!st || bind_text(st, 1, d->id) < 0 || step_changes(c, st) < 0)
                return -EIO;
        if (have_ek) {
                st = st_get(c, ST_EK_DECOM_PUT);
                if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0 ||
                    bind_text(st, 2, d->id) < 0 || bind_i64(st, 3, d->now) < 0 ||
                    step_changes(c, st) < 0)
                        return -EIO;
        }
        return 0;
}

int store_agent_decommission(struct store *s, const char *id, int64_t now)
{
        struct decom_arg d = {id, now, false};

        return store_write(s, agent_decom_fn, &d);
}

int store_agent_readmit(struct store *s, const char *id)
{
        struct decom_arg d = {id, 0, true};

        return store_write(s, agent_decom_fn, &d);
}

struct ek_check_arg {
        const uint8_t *ek_id;
        char *who;
        size_t n;
};

static int ek_check_fn(struct conn *c, void *arg)
{
        struct ek_check_arg *a = arg;
        int e = ek_refused(c, a->ek_id, a->who, a->n);

        return e < 0 ? e : e ? -EPERM : 0;
}

int store_ek_refused(struct store *s, const uint8_t ek_id[STORE_EK_ID_LEN], char *ret_agent,
                     size_t n)
{
        struct ek_check_arg a = {ek_id, ret_agent, n};

        return store_read(s, ek_check_fn, &a);
}

static int nonce_used_fn(struct conn *c, void *arg)
{
        const uint8_t *nonce = arg;
        sqlite3_stmt *st = st_get(c, ST_NONCE_GET);
        int rc;

        if (!st || bind_blob(st, 1, nonce, STORE_NONCE_LEN) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return -EALREADY;
        return rc == SQLITE_DONE ? 0 : -EIO;
}

int store_nonce_used(struct store *s, const uint8_t nonce[STORE_NONCE_LEN])
{
        return store_read(s, nonce_used_fn, (void *)nonce);
}

static int nonces_used_count_fn(struct conn *c, void *arg)
{
        sqlite3_stmt *st = NULL;
        int rc = -EIO;

        if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM nonces_used", -1, &st, NULL) ==
                    SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
                *(uint64_t *)arg = (uint64_t)sqlite3_column_int64(st, 0);
                rc = 0;
        }
        sqlite3_finalize(st);
        return rc;
}

int store_nonces_used_count(struct store *s, uint64_t *ret)
{
        return store_read(s, nonces_used_count_fn, ret);
}

struct agent_get_arg {
        const char *id;
        struct store_agent *a;
};

static int agent_get_fn(struct conn *c, void *arg)
{
        struct agent_get_arg *g = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_GET);
        int rc, e;

        if (!st || bind_text(st, 1, g->id) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
                sqlite3_reset(st);
                return -ENOENT;
        }
        if (rc != SQLITE_ROW) {
                sqlite3_reset(st);
                return -EIO;
        }
        e = agent_row(st, &g->a);
        sqlite3_reset(st);
        return e;
}

int store_agent_get(struct store *s, const char *id, struct store_agent **ret)
{
        struct agent_get_arg g = {.id = id};
        int e = store_read(s, agent_get_fn, &g);

        if (e < 0)
                return e;
        *ret = g.a;
        return 0;
}

struct offset_arg {
        const char *id;
        uint64_t offset;
};

static int agent_offset_fn(struct conn *c, void *arg)
{
        struct offset_arg *o = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_OFFSET);
        int rc;

        if (!st || bind_text(st, 1, o->id) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                const unsigned char *t = sqlite3_column_text(st, 1);

                o->offset = (uint64_t)sqlite3_column_int64(st, 0);
                if (t && !strcmp((const char *)t, "decommissioned"))
                        rc = SQLITE_AUTH;
                else if (!t || strcmp((const char *)t, "active") != 0)
                        rc = SQLITE_PERM; /* enrolled, not yet activated */
        }
        sqlite3_reset(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc == SQLITE_PERM)
                return -EACCES;
        if (rc == SQLITE_AUTH)
                return -EPERM;
        return rc == SQLITE_ROW ? 0 : -EIO;
}

int store_agent_offset(struct store *s, const char *id, uint64_t *ret)
{
        struct offset_arg o = {id, 0};
        int e = store_read(s, agent_offset_fn, &o);

        if (e < 0)
                return e;
        *ret = o.offset;
        return 0;
}

struct list_arg {
        int (*fn)(const struct store_agent *a, void *arg);
        void *arg;
};

static int agent_list_fn(struct conn *c, void *arg)
{
        struct list_arg *l = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_LIST);
        int rc, e = 0;

        if (!st)
                return -EIO;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_agent *a;

                if ((e = agent_row(st, &a)) < 0)
                        break;
                e = l->fn(a, l->arg);
                store_agent_free(a);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != SQLITE_DONE)
                e = -EIO;
        sqlite3_reset(st);
        return e;
}

int store_agent_list(struct store *s, int (*fn)(const struct store_agent *a, void *arg), void *arg)
{
        struct list_arg l = {fn, arg};

        return store_read(s, agent_list_fn, &l);
}

static int step_changes(struct conn *c, sqlite3_stmt *st)
{
        int rc = sqlite3_step(st);

        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
                return -EIO;
        return sqlite3_changes(c->db);
}

static int agent_delete_fn(struct conn *c, void *arg)
{
        sqlite3_stmt *st = st_get(c, ST_AGENT_DELETE);
        int n;

        if (!st || bind_text(st, 1, arg) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        return n == 0 ? -ENOENT : 0;
}

int store_agent_delete(struct store *s, const char *id)
{
        return store_write(s, agent_delete_fn, (void *)id);
}

static int exists(struct conn *c, enum stmt i, const char *key)
{
        sqlite3_stmt *st = st_get(c, i);
        int rc;

        if (!st || bind_text(st, 1, key) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : -EIO;
}

struct set_policy_arg {
        const char *id, *policy;
};

static int agent_set_policy_fn(struct conn *c, void *arg)
{
        struct set_policy_arg *p = arg;
        sqlite3_stmt *st;
        int n;

        if ((n = exists(c, ST_AGENT_EXISTS, p->id)) <= 0)
                return n < 0 ? n : -ENOENT;
        if (p->policy && (n = exists(c, ST_POLICY_LIVE, p->policy)) <= 0)
                return n < 0 ? n : -ENODATA;
        st = st_get(c, ST_AGENT_SET_POLICY);
        if (!st || bind_text(st, 1, p->id) < 0 || bind_text(st, 2, p->policy) < 0)
                return -EIO;
        n = step_changes(c, st);
        return n < 0 ? n : 0;
}

int store_agent_set_policy(struct store *s, const char *id, const char *policy)
{
        struct set_policy_arg p = {id, policy};

        return store_write(s, agent_set_policy_fn, &p);
}

struct counts_arg {
        int64_t now, grace, interval;
        struct store_counts c;
};

static int agent_counts_fn(struct conn *c, void *arg)
{
        struct counts_arg *a = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_COUNTS);
        int rc;

        if (!st || bind_i64(st, 1, a->now) < 0 || bind_i64(st, 2, a->grace) < 0 ||
            bind_i64(st, 3, a->interval) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                a->c.stale = (uint64_t)sqlite3_column_int64(st, 0);
                a->c.never = (uint64_t)sqlite3_column_int64(st, 1);
                a->c.failing = (uint64_t)sqlite3_column_int64(st, 2);
                a->c.active = (uint64_t)sqlite3_column_int64(st, 3);
        }
        sqlite3_reset(st);
        return rc == SQLITE_ROW ? 0 : -EIO;
}

int store_agent_counts(struct store *s, int64_t now, int64_t grace, int64_t interval,
                       struct store_counts *ret)
{
        struct counts_arg a = {.now = now, .grace = grace, .interval = interval};
        int e = store_read(s, agent_counts_fn, &a);

        if (e < 0)
                return e;
        *ret = a.c;
        return 0;
}

/* ---- results ---- */

struct result_arg {
        const struct store_result *r;
        uint64_t seq, retain;
        int64_t id;
};

static int result_add_fn(struct conn *c, void *arg)
{
        struct result_arg *a = arg;
        const struct store_result *r = a->r;
        sqlite3_stmt *st;
        int n, rc;

        /* the nonce the verified quote consumed: remembered until it expires, then purged */
        if (r->nonce) {
                st = st_get(c, ST_NONCE_PURGE);
                if (!st || bind_i64(st, 1, r->time) < 0 || step_changes(c, st) < 0)
                        return -EIO;
                st = st_get(c, ST_NONCE_PUT);
                if (!st || bind_blob(st, 1, r->nonce, STORE_NONCE_LEN) < 0 ||
                    bind_i64(st, 2, r->nonce_expires) < 0)
                        return -EIO;
                rc = sqlite3_step(st);
                sqlite3_reset(st);
                if (rc == SQLITE_CONSTRAINT)
                        return -EALREADY;
                if (rc != SQLITE_DONE)
                        return -EIO;
        }
        st = st_get(c, ST_RESULT_ADD);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, r->time) < 0 ||
            bind_text(st, 3, r->status) < 0 || bind_text(st, 4, r->policy) < 0 ||
            bind_text(st, 5, r->verdict) < 0)
                return -EIO;
        if (sqlite3_step(st) != SQLITE_DONE) {
                sqlite3_reset(st);
                return -EIO;
        }
        sqlite3_reset(st);
        a->id = sqlite3_last_insert_rowid(c->db);

        st = st_get(c, ST_AGENT_UPDATE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0 ||
            bind_i64(st, 3, r->time) < 0 || bind_i64(st, 4, r->next_due) < 0 ||
            bind_text(st, 5, r->status) < 0 || bind_text(st, 6, r->policy) < 0 ||
            bind_i64(st, 7, a->id) < 0 || bind_i64(st, 8, (int64_t)r->ima_offset) < 0 ||
            bind_text(st, 9, r->replay_state) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, r->agent);
                return n < 0 ? n : n == 0 ? -ENOENT : -ESTALE;
        }

        st = st_get(c, ST_RESULT_PRUNE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->retain) < 0)
                return -EIO;
        n = step_changes(c, st);
        return n < 0 ? n : 0;
}

int store_result_add(struct store *s, const struct store_result *r, uint64_t expect_seq,
                     uint64_t retain, int64_t *ret_id)
{
        struct result_arg a = {.r = r, .seq = expect_seq, .retain = retain};
        int e = store_write(s, result_add_fn, &a);

        if (e < 0)
                return e;
        if (ret_id)
                *ret_id = a.id;
        return 0;
}

struct reset_arg {
        const char *id;
        uint64_t seq;
};

static int agent_reset_fn(struct conn *c, void *arg)
{
        struct reset_arg *a = arg;
        sqlite3_stmt *st = st_get(c, ST_AGENT_RESET_REPLAY);
        int n;

        if (!st || bind_text(st, 1, a->id) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, a->id);
                return n < 0 ? n : n == 0 ? -ENOENT : -ESTALE;
        }
        return 0;
}

int store_agent_reset_replay(struct store *s, const char *id, uint64_t expect_seq)
{
        struct reset_arg a = {id, expect_seq};

        return store_write(s, agent_reset_fn, &a);
}

struct results_arg {
        const char *agent;
        uint64_t limit;
        int64_t before;
        int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                  const char *verdict, void *arg);
        void *arg;
};

static int results_list_fn(struct conn *c, void *arg)
{
        struct results_arg *a = arg;
        sqlite3_stmt *st;
        int rc, e = 0, n;

        if ((n = exists(c, ST_AGENT_EXISTS, a->agent)) <= 0)
                return n < 0 ? n : -ENOENT;
        st = st_get(c, ST_RESULT_LIST);
        if (!st || bind_text(st, 1, a->agent) < 0 ||
            bind_i64(st, 2, a->before > 0 ? a->before : INT64_MAX) < 0 ||
            bind_i64(st, 3, (int64_t)a->limit) < 0)
                return -EIO;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                e = a->fn(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                          (const char *)sqlite3_column_text(st, 2),
                          (const char *)sqlite3_column_text(st, 3),
                          (const char *)sqlite3_column_text(st, 4), a->arg);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != SQLITE_DONE)
                e = -EIO;
        sqlite3_reset(st);
        return e;
}

int store_results_list(struct store *s, const char *agent, uint64_t limit, int64_t before,
                       int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                                 const char *verdict, void *arg),
                       void *arg)
{
        struct results_arg a = {agent, limit, before, fn, arg};

        return store_read(s, results_list_fn, &a);
}

/* ---- policies ---- */

struct policy_put_arg {
        const char *name, *body;
        int64_t now, version;
};

static int policy_put_fn(struct conn *c, void *arg)
{
        struct policy_put_arg *p = arg;
        sqlite3_stmt *st = st_get(c, ST_POLICY_NEXT);
        int rc;

        if (!st || bind_text(st, 1, p->name) < 0)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                sqlite3_reset(st);
                return -EIO;
        }
        p->version = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        st = st_get(c, ST_POLICY_ADD);
        if (!st || bind_text(st, 1, p->name) < 0 || bind_i64(st, 2, p->version) < 0 ||
            bind_text(st, 3, p->body) < 0 || bind_i64(st, 4, p->now) < 0)
                return -EIO;
        rc = step_changes(c, st);
        return rc < 0 ? rc : 0;
}

int store_policy_put(struct store *s, const char *name, const char *body, int64_t now,
                     int64_t *ret_version)
{
        struct policy_put_arg p = {name, body, now, 0};
        int e = store_write(s, policy_put_fn, &p);

        if (e < 0)
                return e;
        *ret_version = p.version;
        return 0;
}

struct policy_get_arg {
        const char *name;
        int64_t version, created;
        char *body;
};

static int policy_get_fn(struct conn *c, void *arg)
{
        struct policy_get_arg *p = arg;
        sqlite3_stmt *st = st_get(c, p->version ? ST_POLICY_GET_VERSION : ST_POLICY_GET_LATEST);
        int rc, e;

        if (!st || bind_text(st, 1, p->name) < 0 || (p->version && bind_i64(st, 2, p->version) < 0))
                return -EIO;
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                sqlite3_reset(st);
                return rc == SQLITE_DONE ? -ENOENT : -EIO;
        }
        e = col_text(st, 0, &p->body);
        p->version = sqlite3_column_int64(st, 1);
        p->created = sqlite3_column_int64(st, 2);
        sqlite3_reset(st);
        return e;
}

int store_policy_get(struct store *s, const char *name, int64_t version, char **ret_body,
                     int64_t *ret_version, int64_t *ret_created)
{
        struct policy_get_arg p = {.name = name, .version = version};
        int e = store_read(s, policy_get_fn, &p);

        if (e < 0)
                return e;
        *ret_body = p.body;
        if (ret_version)
                *ret_version = p.version;
        if (ret_created)
                *ret_created = p.created;
        return 0;
}

struct policy_list_arg {
        int (*fn)(const char *name, int64_t version, int64_t created, void *arg);
        void *arg;
};

static int policy_list_fn(struct conn *c, void *arg)
{
        struct policy_list_arg *l = arg;
        sqlite3_stmt *st = st_get(c, ST_POLICY_LIST);
        int rc, e = 0;

        if (!st)
                return -EIO;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                e = l->fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
                          sqlite3_column_int64(st, 2), l->arg);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != SQLITE_DONE)
                e = -EIO;
        sqlite3_reset(st);
        return e;
}

int store_policy_list(struct store *s,
                      int (*fn)(const char *name, int64_t version, int64_t created, void *arg),
                      void *arg)
{
        struct policy_list_arg l = {fn, arg};

        return store_read(s, policy_list_fn, &l);
}

static int policy_delete_fn(struct conn *c, void *arg)
{
        sqlite3_stmt *st;
        int n;

        if ((n = exists(c, ST_POLICY_BOUND, arg)) != 0)
                return n < 0 ? n : -EBUSY;
        st = st_get(c, ST_POLICY_DELETE);
        if (!st || bind_text(st, 1, arg) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        return n == 0 ? -ENOENT : 0;
}

int store_policy_delete(struct store *s, const char *name)
{
        return store_write(s, policy_delete_fn, (void *)name);
}
