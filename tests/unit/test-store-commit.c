/* SPDX-License-Identifier: MIT */
/*
 * Writer mode's group commit (daemon/store/store-writer.c): a write queued while a batch runs its
 * statements joins that batch's commit instead of waiting for the next one, and is answered
 * only after that commit; joining stops at STORE_COMMIT_JOBS_MAX writes.
 */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/store/store-internal.h"
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
        struct attest_err err = {0};
        struct tu_dbdir f;
        struct store *s = NULL;
        struct slow sl;
        struct writer w1, w2;
        pthread_t t1, t2;
        uint64_t c0, n0, c1, n1;

        tu_dbdir_init(&f, "commit");
        ck_assert_msg(store_open(f.db, STORE_WRITER, 2, &s, &err) == 0, "%s", err.msg);
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
        struct attest_err err = {0};
        struct tu_dbdir f;
        struct store *s = NULL;
        struct slow sl;
        struct writer w0, w[N];
        pthread_t t0, t[N];
        uint64_t c0, n0, c1, n1;

        tu_dbdir_init(&f, "commit");
        ck_assert_msg(store_open(f.db, STORE_WRITER, 2, &s, &err) == 0, "%s", err.msg);
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

int main(void)
{
        Suite *su = suite_create("store-commit");
        TCase *tc = tcase_create("group");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_write_queued_during_a_batch_joins_its_commit);
        tcase_add_test(tc, test_commit_carries_at_most_the_cap);
        suite_add_tcase(su, tc);
        return tu_run(su);
}
