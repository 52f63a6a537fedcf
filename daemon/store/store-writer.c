/* SPDX-License-Identifier: MIT */
/*
 * How the store runs a function on a connection: writes through the writer thread's group
 * commit (writer mode) or on a pooled connection in a transaction of their own, reads on a pooled
 * connection; the pool's bounded wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "daemon/store/store-internal.h"

struct job {
        int (*fn)(struct conn *c, void *arg);
        void *arg;
        bool one; /* fn runs one statement that never aborts the transaction: no savepoint */
        const struct store_group *group; /* what can write it with others (one is set too) */
        int rc;
        bool done;
        pthread_cond_t done_cv; /* its caller waits on it: a commit wakes only its own callers */
        struct job *next;
};

/* After a commit on c (by the thread using c): the pages it wrote to the WAL. */
static void count_wal_pages(struct store *s, struct conn *c)
{
        uint64_t n = db_pages_written(c->db);

        if (n > 0)
                atomic_fetch_add(&s->wal_pages, n);
}

/* -EIO from a connection that is now broken (the server gone, a failover): -ENOTCONN, which
 * the API answers 503 store_unavailable (try again shortly), not 500 */
static int unreachable(struct conn *c, int rc)
{
        return rc == -EIO && !db_ok(c->db) ? -ENOTCONN : rc;
}

/*
 * The grouped jobs of a batch (gj, n of them, one group's): one statement, its own transaction.
 * When it fails, each job alone (each its own transaction), so that one bad write is refused
 * alone, as in a batch's transaction its savepoint keeps it.
 */
static void run_group(struct store *s, struct job **gj, size_t n)
{
        void *args[STORE_COMMIT_JOBS_MAX];
        int rcs[STORE_COMMIT_JOBS_MAX];
        int rc = db_reconnect(s->writer.db);

        for (size_t i = 0; i < n; i++)
                args[i] = gj[i]->arg;
        if (rc == 0 && gj[0]->group->run(&s->writer, args, rcs, n) == 0) {
                atomic_fetch_add(&s->commits, 1);
                for (size_t i = 0; i < n; i++)
                        gj[i]->rc = rcs[i];
        } else {
                for (size_t i = 0; i < n; i++) {
                        gj[i]->rc = rc < 0 ? rc : gj[i]->fn(&s->writer, gj[i]->arg);
                        if (rc == 0)
                                atomic_fetch_add(&s->commits, 1);
                }
        }
        count_wal_pages(s, &s->writer);
        for (size_t i = 0; i < n; i++)
                gj[i]->rc = unreachable(&s->writer, gj[i]->rc);
}

/* The jobs of a batch that are not grouped: one transaction, a savepoint each. */
static void run_batch(struct store *s, struct job *batch)
{
        unsigned n = 0;
        int rc;

        /* one transaction, one fsync, for the whole batch; a failing job is rolled back to its
         * savepoint and does not take the others with it. A PostgreSQL connection that broke
         * (server restart, failover) is connected again first. */
        rc = db_reconnect(s->writer.db);
        if (rc == 0)
                rc = store_st_exec(&s->writer, ST_BEGIN);
        for (struct job *j = batch; j; j = j->next) {
                n++;
                if (rc < 0) {
                        j->rc = rc;
                        continue;
                }
                /* a one-statement job needs no savepoint: its function undoes its own failure
                 * (store-results.c) */
                if (j->one) {
                        j->rc = j->fn(&s->writer, j->arg);
                } else if (store_st_exec(&s->writer, ST_SAVEPOINT) < 0) {
                        j->rc = -EIO;
                } else {
                        j->rc = j->fn(&s->writer, j->arg);
                        if (j->rc < 0)
                                (void)store_st_exec(&s->writer, ST_ROLLBACK_TO);
                        (void)store_st_exec(&s->writer, ST_RELEASE);
                }
                /* the callers that queued while this batch ran join it, before its commit:
                 * they are answered a whole fsync sooner, and the callers already in it wait
                 * only for their statements (joining stops at STORE_COMMIT_JOBS_MAX jobs, and
                 * at a grouped job: those wait for the next batch, written together), never
                 * for a timer */
                if (!j->next && n < STORE_COMMIT_JOBS_MAX) {
                        pthread_mutex_lock(&s->lock);
                        if (s->queue && !s->queue->group) {
                                struct job *last = s->queue;

                                for (unsigned k = n + 1;
                                     last->next && !last->next->group && k < STORE_COMMIT_JOBS_MAX;
                                     k++)
                                        last = last->next;
                                j->next = s->queue;
                                s->queue = last->next;
                                if (!s->queue)
                                        s->queue_tail = NULL;
                                last->next = NULL;
                        }
                        pthread_mutex_unlock(&s->lock);
                }
        }
        if (rc == 0)
                atomic_fetch_add(&s->commits, 1);
        if (rc == 0 && store_st_exec(&s->writer, ST_COMMIT) < 0) {
                (void)store_st_exec(&s->writer, ST_ROLLBACK);
                for (struct job *j = batch; j; j = j->next)
                        j->rc = -EIO;
        }
        count_wal_pages(s, &s->writer);
        /* a failure because the database is gone (the connection broke): -ENOTCONN */
        if (!db_ok(s->writer.db))
                for (struct job *j = batch; j; j = j->next)
                        j->rc = unreachable(&s->writer, j->rc);
}

/* Wake exactly the callers of these jobs (a broadcast woke every thread waiting, also those whose
 * jobs were still queued, to sleep again). Lock held. */
static void wake(struct store *s, struct job *list)
{
        for (struct job *j = list, *next; j; j = next) {
                next = j->next;
                j->done = true;
                if (!(j->one && j->rc > 0)) /* > 0: it wrote nothing */
                        atomic_fetch_add(&s->writes, 1);
                pthread_cond_signal(&j->done_cv);
        }
}

void *store_writer_main(void *arg)
{
        struct store *s = arg;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                struct job *batch, *rest = NULL, **rest_end = &rest, *grouped = NULL;
                struct job *gj[STORE_COMMIT_JOBS_MAX];
                size_t ng = 0;

                while (!s->queue && !s->stopping)
                        pthread_cond_wait(&s->job_ready, &s->lock);
                if (!s->queue)
                        break;
                batch = s->queue;
                s->queue = s->queue_tail = NULL;
                pthread_mutex_unlock(&s->lock);

                /* the first group's jobs (up to STORE_COMMIT_JOBS_MAX) apart, the rest in order */
                for (struct job *j = batch, *next; j; j = next) {
                        next = j->next;
                        j->next = NULL;
                        if (j->group && ng < STORE_COMMIT_JOBS_MAX &&
                            (!ng || j->group == gj[0]->group)) {
                                gj[ng++] = j;
                                j->next = grouped;
                                grouped = j;
                        } else {
                                *rest_end = j;
                                rest_end = &j->next;
                        }
                }
                if (ng)
                        run_group(s, gj, ng);
                if (rest)
                        run_batch(s, rest);

                pthread_mutex_lock(&s->lock);
                wake(s, grouped);
                wake(s, rest);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

/*
 * A pooled connection; NULL when none came back within wait_ms (the pool is exhausted: the
 * caller answers store_busy). wait_ms <= 0 waits for ever.
 */
static struct conn *conn_get(struct store *s)
{
        struct timespec until;
        struct conn *c;

        pthread_mutex_lock(&s->pool_lock);
        if (!s->free) {
                atomic_fetch_add(&s->pool_waits, 1);
                if (s->wait_ms > 0) {
                        clock_gettime(CLOCK_REALTIME, &until);
                        until.tv_sec += s->wait_ms / 1000;
                        until.tv_nsec += (long)(s->wait_ms % 1000) * 1000000L;
                        if (until.tv_nsec >= 1000000000L) {
                                until.tv_sec++;
                                until.tv_nsec -= 1000000000L;
                        }
                }
        }
        while (!s->free) {
                if (s->wait_ms <= 0) {
                        pthread_cond_wait(&s->conn_free, &s->pool_lock);
                        continue;
                }
                if (pthread_cond_timedwait(&s->conn_free, &s->pool_lock, &until) == ETIMEDOUT &&
                    !s->free) {
                        pthread_mutex_unlock(&s->pool_lock);
                        atomic_fetch_add(&s->pool_busy, 1);
                        return NULL;
                }
        }
        c = s->free;
        s->free = c->next_free;
        atomic_fetch_add(&s->in_use, 1);
        pthread_mutex_unlock(&s->pool_lock);
        /* broken (PostgreSQL restarted): connected again; if that fails the statements fail */
        (void)db_reconnect(c->db);
        return c;
}

static void conn_put(struct store *s, struct conn *c)
{
        pthread_mutex_lock(&s->pool_lock);
        c->next_free = s->free;
        s->free = c;
        atomic_fetch_sub(&s->in_use, 1);
        pthread_cond_signal(&s->conn_free);
        pthread_mutex_unlock(&s->pool_lock);
}

static int pooled_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg, bool one);

/* Run fn inside a write transaction, durable when this returns 0. */
static int write_job(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg, bool one,
                     const struct store_group *group)
{
        if (s->mode == STORE_WRITER) {
                struct job j = {.fn = fn, .arg = arg, .one = one, .group = group};

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
        return pooled_write(s, fn, arg, one);
}

/* write_job() on a pooled connection: fn's own transaction (one: its one statement's) */
static int pooled_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg, bool one)
{
        struct conn *c = conn_get(s);
        int rc;

        if (!c)
                return -EAGAIN;
        if (one) {
                /* one statement outside a transaction block: its own durable transaction */
                rc = fn(c, arg);
                if (rc <= 0) { /* > 0: it wrote nothing */
                        atomic_fetch_add(&s->commits, 1);
                        atomic_fetch_add(&s->writes, 1);
                }
                count_wal_pages(s, c);
                rc = unreachable(c, rc);
                conn_put(s, c);
                return rc;
        }
        atomic_fetch_add(&s->commits, 1);
        atomic_fetch_add(&s->writes, 1);
        rc = store_st_exec(c, ST_BEGIN);
        if (rc == 0) {
                rc = fn(c, arg);
                if (rc < 0)
                        (void)store_st_exec(c, ST_ROLLBACK);
                else if (store_st_exec(c, ST_COMMIT) < 0) {
                        (void)store_st_exec(c, ST_ROLLBACK);
                        rc = -EIO;
                }
                count_wal_pages(s, c);
        }
        rc = unreachable(c, rc);
        conn_put(s, c);
        return rc;
}

int store_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        return write_job(s, fn, arg, false, NULL);
}

int store_write_apart(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        return s->pg ? pooled_write(s, fn, arg, false) : write_job(s, fn, arg, false, NULL);
}

int store_write_one(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        return write_job(s, fn, arg, true, NULL);
}

int store_write_grouped(struct store *s, const struct store_group *g,
                        int (*fn)(struct conn *c, void *arg), void *arg)
{
        return write_job(s, fn, arg, true, g);
}

/* Run fn on a pooled connection, outside any explicit transaction (one statement reads). */
int store_read(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        struct conn *c = conn_get(s);
        int rc;

        if (!c)
                return -EAGAIN;
        rc = unreachable(c, fn(c, arg));
        conn_put(s, c);
        return rc;
}
