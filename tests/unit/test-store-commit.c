/* SPDX-License-Identifier: MIT */
/*
 * Writer mode's group commit (daemon/store/store-writer.c): a write queued while a batch runs its
 * statements joins that batch's commit instead of waiting for the next one, and is answered
 * only after that commit; joining stops at STORE_COMMIT_JOBS_MAX writes. On PostgreSQL (the
 * store-pg suite runs it too) the steady verdicts queued meanwhile do not join: they are written
 * next, all of them by one statement, attestd_verdicts().
 */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/store/store-internal.h"
#include "tests/unit/store-target.h"
#include "tests/unit/testutil.h"

/*
 * Ordered by events, never by sleeps (a 50 ms head start is a guess that load can beat): the first
 * write's function holds its batch open until the test's other writers are in the writer's queue.
 * What tells "queued": write_job (daemon/store/store-writer.c) links the job into the queue and,
 * still under the store's lock, wakes the writer thread with pthread_cond_signal; this test is
 * linked with -Wl,--wrap=pthread_cond_signal (tests/unit/meson.build), and the first signal a test
 * writer thread sends after it marked itself (tl_announce) counts as its write queued.
 */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cv = PTHREAD_COND_INITIALIZER;
static unsigned queued; /* test writes in the writer's queue (under ev_lock) */
static _Thread_local bool tl_announce;

int __real_pthread_cond_signal(pthread_cond_t *cv);
int __wrap_pthread_cond_signal(pthread_cond_t *cv);

int __wrap_pthread_cond_signal(pthread_cond_t *cv)
{
        int rc = __real_pthread_cond_signal(cv);

        if (tl_announce) {
                tl_announce = false;
                pthread_mutex_lock(&ev_lock);
                queued++;
                pthread_cond_broadcast(&ev_cv);
                pthread_mutex_unlock(&ev_lock);
        }
        return rc;
}

/* wait on ev_cv until *flag (a bool) or *count >= want; false after 60 s (the test then fails) */
static bool ev_wait(const bool *flag, const unsigned *count, unsigned want)
{
        struct timespec until;
        bool ok = true;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&ev_lock);
        while (ok && !(flag ? *flag : *count >= want))
                ok = pthread_cond_timedwait(&ev_cv, &ev_lock, &until) == 0;
        ok = flag ? *flag : *count >= want;
        pthread_mutex_unlock(&ev_lock);
        return ok;
}

struct slow {
        bool running;    /* under ev_lock: the first write's function runs */
        unsigned want;   /* it returns once this many test writes are queued */
        bool all_queued; /* ... and they were (false: it gave up after 60 s) */
};

/* the first write: runs until the other test writes are queued behind its batch */
static int slow_fn(struct conn *c, void *arg)
{
        struct slow *sl = arg;

        (void)c;
        pthread_mutex_lock(&ev_lock);
        sl->running = true;
        pthread_cond_broadcast(&ev_cv);
        pthread_mutex_unlock(&ev_lock);
        sl->all_queued = ev_wait(NULL, &queued, sl->want);
        return 0;
}

static int quick_fn(struct conn *c, void *arg)
{
        (void)c;
        (void)arg;
        return 0;
}

struct writer {
        struct store *s;
        int (*fn)(struct conn *c, void *arg);
        void *arg;
        bool announce; /* count this write in queued once it is in the writer's queue */
        int rc;
};

static void *writer_main(void *arg)
{
        struct writer *w = arg;

        tl_announce = w->announce;
        w->rc = store_write(w->s, w->fn, w->arg);
        tl_announce = false;
        return NULL;
}

/* The test's database: a SQLite file in f's directory, or a fresh PostgreSQL database. */
static struct store *open_writer(struct tu_dbdir *f)
{
        struct attest_err err = {0};
        struct store *s = NULL;

        tu_dbdir_init(f, "commit");
        store_target(f->dir, "t.db", f->db, sizeof(f->db));
        ck_assert_msg(store_open(f->db, STORE_WRITER, 2, &s, &err) == 0, "%s", err.msg);
        return s;
}

/* A slow first write on its own thread, returned once it runs: the batch the others queue behind;
 * it commits once WANT announced writes are queued. */
static void slow_start(struct store *s, struct slow *sl, unsigned want, struct writer *w,
                       pthread_t *t)
{
        pthread_mutex_lock(&ev_lock);
        queued = 0;
        pthread_mutex_unlock(&ev_lock);
        *sl = (struct slow){.want = want};
        *w = (struct writer){.s = s, .fn = slow_fn, .arg = sl};
        ck_assert_int_eq(pthread_create(t, NULL, writer_main, w), 0);
        ck_assert_msg(ev_wait(&sl->running, NULL, 0), "the first write did not run within 60 s");
}

START_TEST(test_write_queued_during_a_batch_joins_its_commit)
{
        struct tu_dbdir f;
        struct store *s = NULL;
        struct slow sl;
        struct writer w1, w2;
        pthread_t t1, t2;
        uint64_t c0, n0, c1, n1;

        s = open_writer(&f);
        store_stats(s, &c0, &n0);
        slow_start(s, &sl, 1, &w1, &t1);
        /* the second write is queued while the first one's batch runs its statements */
        w2 = (struct writer){.s = s, .fn = quick_fn, .announce = true};
        ck_assert_int_eq(pthread_create(&t2, NULL, writer_main, &w2), 0);
        ck_assert_int_eq(pthread_join(t2, NULL), 0);
        ck_assert_int_eq(pthread_join(t1, NULL), 0);
        ck_assert_msg(sl.all_queued, "the second write was not queued within 60 s");
        ck_assert_int_eq(w1.rc, 0);
        ck_assert_int_eq(w2.rc, 0);
        store_stats(s, &c1, &n1);
        ck_assert_uint_eq(n1 - n0, 2);
        ck_assert_uint_eq(c1 - c0, 1);
        store_close(s);
        tu_dbdir_done(&f);
}
END_TEST

/* many writers queued while a batch runs: every one answered, no more than the cap join it */
START_TEST(test_commit_carries_at_most_the_cap)
{
        enum { N = 200 };
        struct tu_dbdir f;
        struct store *s = NULL;
        struct slow sl;
        struct writer w0, w[N];
        pthread_t t0, t[N];
        uint64_t c0, n0, c1, n1;

        s = open_writer(&f);
        store_stats(s, &c0, &n0);
        /* a slow first commit, so that all N queue behind it and join the next batch */
        slow_start(s, &sl, N, &w0, &t0);
        for (int i = 0; i < N; i++) {
                w[i] = (struct writer){.s = s, .fn = quick_fn, .announce = true};
                ck_assert_int_eq(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
        }
        ck_assert_int_eq(pthread_join(t0, NULL), 0);
        ck_assert_msg(sl.all_queued, "not all %d writes were queued within 60 s", N);
        for (int i = 0; i < N; i++) {
                ck_assert_int_eq(pthread_join(t[i], NULL), 0);
                ck_assert_int_eq(w[i].rc, 0);
        }
        store_stats(s, &c1, &n1);
        ck_assert_uint_eq(n1 - n0, N + 1);
        /* the slow write and 63 that joined it, then the other 137 taken whole */
        ck_assert_uint_eq(c1 - c0, 2);
        store_close(s);
        tu_dbdir_done(&f);
}
END_TEST

/* ---- verdicts written together (PostgreSQL: attestd_verdicts()) ---- */

enum { GROUP_N = 8 };

struct verdicter {
        struct store *s;
        char agent[STORE_ID_MAX + 1];
        const char *verdict;
        uint64_t seq;
        int rc;
        int64_t rid;
};

static void *verdicter_main(void *arg)
{
        struct verdicter *v = arg;
        struct store_appraisal ap = {2, {2, 2, 3, 2}};
        struct store_result r = {.agent = v->agent,
                                 .time = 2000 + (int64_t)v->seq,
                                 .status = "pass",
                                 .verdict = v->verdict,
                                 .appraisal = &ap,
                                 .next_due = 9000,
                                 .ima_offset = 7 + v->seq,
                                 .replay_state = (const uint8_t *)"state",
                                 .replay_state_len = 5};

        tl_announce = true;
        v->rc = store_result_add(v->s, &r, v->seq, 10, &v->rid);
        tl_announce = false;
        return NULL;
}

/* An active agent enrolled at 1000 with an AK and AK name of its own (kind k, number i). */
static void active_agent(struct store *s, const char *id, uint8_t k, int i)
{
        uint8_t ak[4] = {k, 2, 3, (uint8_t)i}, name[4] = {(uint8_t)(k + 4), 6, 7, (uint8_t)i};
        struct store_agent a = {.state = AGENT_STATE_ACTIVE,
                                .ak_public = ak,
                                .ak_public_len = sizeof(ak),
                                .ak_name = name,
                                .ak_name_len = sizeof(name),
                                .created = 1000};

        snprintf(a.id, sizeof(a.id), "%s", id);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
}

/* GROUP_N active agents g0.., each with a first verdict "pass" (their status is set: the
 * following ones are steady) */
static void group_agents(struct store *s, struct verdicter *v)
{
        for (int i = 0; i < GROUP_N; i++) {
                char id[16];

                /* ids not in queue order: the group is written in id order */
                snprintf(id, sizeof(id), "g%d", (i * 5) % GROUP_N);
                active_agent(s, id, 1, i);
                v[i] = (struct verdicter){.s = s, .verdict = "{\"status\":\"pass\"}", .seq = 0};
                snprintf(v[i].agent, sizeof(v[i].agent), "%s", id);
                verdicter_main(&v[i]);
                ck_assert_int_eq(v[i].rc, 0);
                v[i].seq = 1;
        }
}

/* The GROUP_N verdicts of v queued behind a slow batch, then let go; statements and commits
 * they took. */
static void group_run(struct store *s, struct verdicter *v, uint64_t *ret_statements,
                      uint64_t *ret_commits)
{
        struct store_db_stats d0, d1;
        struct slow sl;
        struct writer w0;
        pthread_t t0, t[GROUP_N];
        uint64_t c0, n0, c1, n1;

        store_db_stats(s, &d0);
        store_stats(s, &c0, &n0);
        slow_start(s, &sl, GROUP_N, &w0, &t0);
        for (int i = 0; i < GROUP_N; i++)
                ck_assert_int_eq(pthread_create(&t[i], NULL, verdicter_main, &v[i]), 0);
        ck_assert_int_eq(pthread_join(t0, NULL), 0);
        ck_assert_msg(sl.all_queued, "not all %d verdicts were queued within 60 s", GROUP_N);
        for (int i = 0; i < GROUP_N; i++)
                ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        store_db_stats(s, &d1);
        store_stats(s, &c1, &n1);
        *ret_statements = d1.statements - d0.statements;
        *ret_commits = c1 - c0;
}

/* What v[i]'s verdict left, read back by a store of its own: written (seq 2, its result with its
 * appraisal and id) or not (seq 1). */
static void group_check(const char *db, const struct verdicter *v, int i, bool written)
{
        struct attest_err err = {0};
        struct store *s = NULL;
        struct store_agent *a = NULL;
        struct store_result_head h;

        ck_assert_msg(store_open(db, STORE_POOL, 1, &s, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(store_agent_get(s, v[i].agent, &a), 0);
        ck_assert_uint_eq(a->seq, written ? 2 : 1);
        ck_assert_uint_eq(a->ima_offset, written ? 8 : 7);
        ck_assert_int_eq(a->last_seen, written ? 2001 : 2000);
        ck_assert_uint_eq(a->replay_state_len, 5);
        ck_assert_mem_eq(a->replay_state, "state", 5);
        ck_assert_int_eq(store_result_latest(s, v[i].agent, &h), 0);
        ck_assert_int_eq(h.time, written ? 2001 : 2000);
        if (written)
                ck_assert_int_eq(h.id, v[i].rid);
        ck_assert(h.has_appraisal);
        ck_assert_int_eq(h.appraisal.tv[2], 3);
        if (written)
                ck_assert_int_eq(a->last_result, v[i].rid);
        store_agent_free(a);
        store_close(s);
}

/*
 * Steady verdicts queued while a batch runs: on PostgreSQL they do not join its transaction but
 * are written next, all GROUP_N by one statement in a transaction of its own (two commits: the
 * slow batch's, theirs); each reads back as written, with its own result id. On SQLite they join
 * the batch (one commit).
 */
START_TEST(test_verdicts_queued_together_are_one_statement)
{
        struct verdicter v[GROUP_N];
        struct tu_dbdir f;
        struct store *s = open_writer(&f);
        uint64_t statements, commits;

        group_agents(s, v);
        group_run(s, v, &statements, &commits);
        for (int i = 0; i < GROUP_N; i++)
                ck_assert_msg(v[i].rc == 0, "verdict %d: %d", i, v[i].rc);
        for (int i = 1; i < GROUP_N; i++)
                ck_assert_int_ne(v[i].rid, v[i - 1].rid);
        if (store_target_pg()) {
                /* BEGIN, SAVEPOINT, RELEASE, COMMIT of the slow batch, then attestd_verdicts()
                 * (prepared by the first verdicts, group_agents) */
                ck_assert_uint_eq(statements, 4 + 1);
                ck_assert_uint_eq(commits, 2);
        } else {
                ck_assert_uint_eq(commits, 1);
        }
        store_close(s);
        for (int i = 1; i < GROUP_N; i++)
                group_check(f.db, v, i, true);
        tu_dbdir_done(&f);
}
END_TEST

/*
 * One verdict of the group the database refuses (text that is not UTF-8): the group's statement
 * fails and writes nothing, then each verdict is written alone; the others are written, that one
 * is refused (-EIO) and leaves its agent as it was.
 */
START_TEST(test_verdict_group_with_a_bad_one_writes_the_others)
{
        struct verdicter v[GROUP_N];
        struct tu_dbdir f;
        struct store *s = open_writer(&f);
        uint64_t statements, commits;
        const int bad = 3;

        group_agents(s, v);
        v[bad].verdict = "{\"status\":\"\xff\"}";
        group_run(s, v, &statements, &commits);
        for (int i = 0; i < GROUP_N; i++)
                ck_assert_msg(v[i].rc == (i == bad && store_target_pg() ? -EIO : 0),
                              "verdict %d: %d", i, v[i].rc);
        if (store_target_pg())
                /* the slow batch's four, the group's, then GROUP_N alone (attestd_verdict(),
                 * prepared first: one more) */
                ck_assert_uint_eq(statements, 4 + 1 + 1 + GROUP_N);
        store_close(s);
        for (int i = 0; i < GROUP_N; i++)
                group_check(f.db, v, i, !(i == bad && store_target_pg()));
        tu_dbdir_done(&f);
}
END_TEST

/* ---- the stale scan's chunks ---- */

static void stale_quiet(const char *id, const char *hostname, const char *last_status,
                        int64_t last_seen, void *arg)
{
        (void)id, (void)hostname, (void)last_status, (void)last_seen;
        ++*(int *)arg;
}

/* agent kI, active, one verdict at time 2000 due `due` (seq: the agent's seq) */
static void stale_agent(struct store *s, int i, uint64_t seq, int64_t due)
{
        char id[16];
        struct store_result r = {
                .agent = id, .time = 2000, .status = "pass", .verdict = "{}", .next_due = due};

        snprintf(id, sizeof(id), "k%d", i);
        if (seq == 0)
                active_agent(s, id, 9, i);
        ck_assert_int_eq(store_result_add(s, &r, seq, 10, NULL), 0);
}

/*
 * The scan goes through the results due since its cursor a chunk per transaction (here 3):
 * six due at one instant go together, no result is skipped at a chunk's edge, an agent's
 * earlier result does not make it stale, and each agent is marked once.
 */
START_TEST(test_stale_scan_goes_through_chunks)
{
        struct tu_dbdir f;
        struct store *s = open_writer(&f);
        uint64_t c0, n0, c1, n1;
        int logged = 0;

        s->stale_chunk = 3;
        for (int i = 0; i < 6; i++)
                stale_agent(s, i, 0, 9000);
        for (int i = 6; i < 12; i++)
                stale_agent(s, i, 0, 9001 + i); /* 9007 .. 9012 */
        stale_agent(s, 11, 1, 40000);           /* k11 attested again: due later */
        /* interval 100 s: the watch list (every agent: enrolled active) marks none, they all
         * attested; no result is due yet */
        ck_assert_int_eq(store_agent_stale_scan(s, 2001, 50, 100000, stale_quiet, &logged), 0);
        /* nothing due, nothing watched: a read, no write */
        store_stats(s, &c0, &n0);
        ck_assert_int_eq(store_agent_stale_scan(s, 8000, 50, 100000, stale_quiet, &logged), 0);
        store_stats(s, &c1, &n1);
        ck_assert_uint_eq(c1, c0);
        /* [1951, 9000) nothing, [9000, 9001) six, [9001, 9010) three, [9010, 29950) two (and
         * k11's first, not its last): four transactions */
        ck_assert_int_eq(store_agent_stale_scan(s, 30000, 50, 100000, stale_quiet, &logged), 11);
        store_stats(s, &c1, &n1);
        ck_assert_uint_eq(c1 - c0, 4);
        ck_assert_int_eq(logged, 11);
        ck_assert_int_eq(store_agent_stale_scan(s, 30001, 50, 100000, stale_quiet, &logged), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 40051, 50, 100000, stale_quiet, &logged), 1);
        ck_assert_int_eq(logged, 12);
        store_close(s);
        tu_dbdir_done(&f);
}
END_TEST

int main(void)
{
        Suite *su = suite_create("store-commit");
        TCase *tc = tcase_create("group");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_write_queued_during_a_batch_joins_its_commit);
        tcase_add_test(tc, test_commit_carries_at_most_the_cap);
        tcase_add_test(tc, test_verdicts_queued_together_are_one_statement);
        tcase_add_test(tc, test_verdict_group_with_a_bad_one_writes_the_others);
        tcase_add_test(tc, test_stale_scan_goes_through_chunks);
        suite_add_tcase(su, tc);
        return tu_run(su);
}
