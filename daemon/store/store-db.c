/* SPDX-License-Identifier: MIT */
/*
 * A store opened and closed: the database's files (mode 0600 in a directory only its user can
 * write), the pool and the writer thread; and what runs on a whole store: the claims of one
 * instance's duties, the counters, the schema version, the readiness probe.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/store/store-internal.h"

/* page cache of each pooled connection (KiB); the writer keeps SQLite's default */
#define STORE_POOL_CACHE_KIB 256
#define STR_(x) #x
#define STR(x) STR_(x)

struct store_cache *store_cache_of(struct store *s)
{
        return s->cache;
}

bool store_on_pg(const struct store *s)
{
        return s->pg;
}

void store_cache_stats(struct store *s, struct store_cache_stats *ret)
{
        store_cache_stats_read(s->cache, ret);
}

void store_cache_limit(struct store *s, size_t max)
{
        store_cache_set_max(s->cache, max);
}

/* The database directory dir could not be made (errno e): which directory, and what to do. */
static int store_dir_fail(const char *dir, int e, struct attest_err *err)
{
        char up[4096], top[4096];
        struct stat st;

        if (e != ENOENT)
                return attest_fail(err, -e, AE_STORE_IO,
                                   "cannot create database directory %s: %s; create it for "
                                   "attestd's user (install -d -m 0700 %s), set "
                                   "StateDirectory=attestd, or choose another --db",
                                   dir, strerror(e), dir);
        /* name the topmost directory that is missing: mkdir makes only the last one */
        snprintf(up, sizeof(up), "%s", dir);
        snprintf(top, sizeof(top), "%s", dir);
        for (unsigned i = 0; i < 64; i++) {
                char *slash = strrchr(up, '/');

                if (!slash || slash == up)
                        break;
                *slash = '\0';
                if (stat(up, &st) == 0)
                        break;
                snprintf(top, sizeof(top), "%s", up);
        }
        return attest_fail(err, -ENOENT, AE_STORE_IO,
                           "database directory %s missing (%s does not exist): create it "
                           "(install -d -m 0700 %s), set StateDirectory=attestd, or choose "
                           "another --db",
                           dir, top, dir);
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
                return store_dir_fail(dir, errno, err);
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

bool store_is_url(const char *target)
{
        return db_is_pg(target);
}

int store_open(const char *path, enum store_mode mode, unsigned connections, struct store **ret,
               struct attest_err *err)
{
        struct store_options o = {.target = path, .mode = mode, .connections = connections};

        return store_open_opts(&o, ret, err);
}

int store_open_opts(const struct store_options *o, struct store **ret, struct attest_err *err)
{
        const char *path = o->target;
        unsigned connections = o->connections;
        enum store_mode mode = o->mode;
        struct store *s;
        int e;

        if (connections == 0 || connections > 1024)
                return attest_fail(err, -EINVAL, AE_STORE_CONFIG, "connections: %u", connections);
        if (!db_is_pg(path) && (e = store_prepare_files(path, err)) < 0)
                return e;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->pg = db_is_pg(path);
        s->wait_ms = o->wait_ms;
        s->stale_chunk = STORE_STALE_CHUNK;
        s->path = strdup(path);
        s->password = o->password ? strdup(o->password) : NULL;
        if (!s->path || (o->password && !s->password)) {
                free(s->path);
                free(s->password);
                free(s);
                return -ENOMEM;
        }
        pthread_mutex_init(&s->probe_lock, NULL);
        pthread_mutex_init(&s->claim_lock, NULL);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->pool_lock, NULL);
        pthread_cond_init(&s->conn_free, NULL);
        pthread_cond_init(&s->job_ready, NULL);
        s->conns = calloc(connections, sizeof(*s->conns));
        if (!s->conns || store_cache_new(s->pg ? STORE_PG_AGENT_CACHE_MAX : STORE_AGENT_CACHE_MAX,
                                         &s->cache) < 0) {
                store_close(s);
                return -ENOMEM;
        }
        if (s->pg)
                store_cache_set_policy_max_age(s->cache, STORE_PG_POLICY_MAX_AGE_MS);
        /* the first connection migrates before the others prepare their statements */
        for (unsigned i = 0; i < connections; i++) {
                if ((e = store_conn_open(s, &s->conns[i], err)) < 0) {
                        store_close(s);
                        return e;
                }
                s->nconns = i + 1;
                if (i == 0 && (e = store_migrate(&s->conns[0], err)) < 0) {
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
                if (!s->pg &&
                    db_exec(s->conns[i].db, "PRAGMA cache_size=-" STR(STORE_POOL_CACHE_KIB), NULL,
                            0) < 0) {
                        e = store_db_fail(s->conns[i].db, err, "cache_size");
                        store_close(s);
                        return e;
                }
                s->conns[i].next_free = s->free;
                s->free = &s->conns[i];
        }
        if (mode == STORE_WRITER) {
                if ((e = store_conn_open(s, &s->writer, err)) < 0) {
                        store_close(s);
                        return e;
                }
                if (pthread_create(&s->writer_thread, NULL, store_writer_main, s) != 0) {
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
                store_conn_close(&s->writer);
        for (unsigned i = 0; i < s->nconns; i++)
                store_conn_close(&s->conns[i]);
        free(s->conns);
        store_cache_free(s->cache);
        pthread_cond_destroy(&s->job_ready);
        pthread_cond_destroy(&s->conn_free);
        pthread_mutex_destroy(&s->pool_lock);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->probe_lock);
        pthread_mutex_destroy(&s->claim_lock);
        for (unsigned i = 0; i < STORE_CLAIMS_MAX; i++)
                free(s->claimed[i]);
        free(s->path);
        if (s->password) {
                explicit_bzero(s->password, strlen(s->password));
                free(s->password);
        }
        free(s);
        return NULL;
}

void store_stats(struct store *s, uint64_t *ret_commits, uint64_t *ret_writes)
{
        *ret_commits = atomic_load(&s->commits);
        *ret_writes = atomic_load(&s->writes);
}

struct claim_arg {
        const char *key;
        struct conn *on;
        unsigned session;
};

static int claim_fn(struct conn *c, void *arg)
{
        struct claim_arg *a = arg;
        struct db_stmt *st = NULL;
        int rc;

        /* a session lock: held while this connection lives (the store's lifetime), released by
         * the server when the instance dies, so another instance's next claim takes it over */
        if (db_prepare(c->db, "SELECT pg_try_advisory_lock(hashtextextended(?1, 0))", NULL, 0,
                       false, &st) < 0)
                return -EIO;
        if (bind_text(st, 1, a->key) < 0 || db_step(st) != DB_ROW) {
                db_finalize(st);
                return -EIO;
        }
        rc = db_col_i64(st, 0) ? 1 : 0;
        db_finalize(st);
        a->on = c;
        a->session = db_session(c->db);
        return rc;
}

static int barrier_fn(struct conn *c, void *arg)
{
        int64_t xid;

        (void)arg;
        /* an xid of its own, so its commit writes a record and waits for the standby */
        return store_query_i64(c, "SELECT pg_current_xact_id()::text::bigint", &xid);
}

int store_durable_barrier(struct store *s)
{
        if (!s->pg)
                return 0;
        return store_read(s, barrier_fn, NULL);
}

int store_claim(struct store *s, const char *key)
{
        int rc, free_slot = -1;

        if (!s->pg)
                return 1; /* SQLite: one instance per database */
        pthread_mutex_lock(&s->claim_lock);
        for (int i = 0; i < STORE_CLAIMS_MAX; i++) {
                if (s->claimed[i] && !strcmp(s->claimed[i], key)) {
                        /* the session holding the lock ended (a reconnect): the server dropped
                         * it, so it is claimed anew (another instance may have it now) */
                        if (db_session(s->claimed_on[i]->db) == s->claimed_session[i]) {
                                pthread_mutex_unlock(&s->claim_lock);
                                return 1;
                        }
                        free(s->claimed[i]);
                        s->claimed[i] = NULL;
                }
                if (!s->claimed[i] && free_slot < 0)
                        free_slot = i;
        }
        if (free_slot < 0) {
                pthread_mutex_unlock(&s->claim_lock);
                return -E2BIG;
        }
        {
                struct claim_arg a = {key, NULL, 0};

                rc = store_read(s, claim_fn, &a);
                if (rc == 1 && !(s->claimed[free_slot] = strdup(key)))
                        rc = -ENOMEM; /* the lock stays held: the next claim fails, nothing is
                                       * doubled */
                if (rc == 1) {
                        s->claimed_on[free_slot] = a.on;
                        s->claimed_session[free_slot] = a.session;
                }
        }
        pthread_mutex_unlock(&s->claim_lock);
        return rc;
}

void store_db_stats(struct store *s, struct store_db_stats *ret)
{
        ret->statements = atomic_load(&s->statements);
        ret->pool_waits = atomic_load(&s->pool_waits);
        ret->pool_exhausted = atomic_load(&s->pool_busy);
        ret->pool_size = s->nconns;
        ret->pool_in_use = atomic_load(&s->in_use);
        ret->postgresql = s->pg;
}

uint64_t store_wal_pages(struct store *s)
{
        return atomic_load(&s->wal_pages);
}

static int schema_version_fn(struct conn *c, void *arg)
{
        int64_t v = 0;
        struct db_stmt *st = st_get(c, ST_SCHEMA_VERSION);
        int rc = -EIO;

        if (st && db_step(st) == DB_ROW) {
                v = db_col_i64(st, 0);
                rc = 0;
        }
        if (st)
                db_reset(st);

        if (rc == 0)
                *(int *)arg = (int)v;
        return rc;
}

int store_schema_version(struct store *s, int *ret)
{
        return store_read(s, schema_version_fn, ret);
}

static int health_put_fn(struct conn *c, void *arg)
{
        struct db_stmt *st = st_get(c, ST_HEALTH_PUT);

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
        rc = s->pg ? 0 : probe_file(s->path, s->probe_msg, sizeof(s->probe_msg));
        if (rc == 0 && (rc = store_write(s, health_put_fn, &now)) < 0)
                snprintf(s->probe_msg, sizeof(s->probe_msg), "a database write failed");
        s->probe_at = now;
        atomic_store(&s->probe_rc, rc);
        snprintf(ret_msg, n, "%s", s->probe_msg);
        pthread_mutex_unlock(&s->probe_lock);
        return rc;
}
