/* SPDX-License-Identifier: MIT */
/*
 * Writer mode's group commit (daemon/store-db.c): a write queued while a batch runs its
 * statements joins that batch's commit instead of waiting for the next one, and is answered
 * only after that commit; joining stops at STORE_COMMIT_JOBS_MAX writes.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/store-internal.h"
#include "tests/unit/testutil.h"

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}

struct slow {
        atomic_bool running, second_queued;
};

/* the first write: runs until the second has been queued (and a while more) */
static int slow_fn(struct conn *c, void *arg)
{
        struct slow *sl = arg;

        (void)c;
        atomic_store(&sl->running, true);
        for (int i = 0; i < 1000 && !atomic_load(&sl->second_queued); i++)
                sleep_ms(5);
        sleep_ms(300);
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
        int rc;
};

static void *writer_main(void *arg)
{
        struct writer *w = arg;

        w->rc = store_write(w->s, w->fn, w->arg);
        return NULL;
}

/* A slow first write on its own thread, returned once it runs: the batch the others queue behind.
 */
static void slow_start(struct store *s, struct slow *sl, struct writer *w, pthread_t *t)
{
        atomic_init(&sl->running, false);
        atomic_init(&sl->second_queued, false);
        *w = (struct writer){.s = s, .fn = slow_fn, .arg = sl};
        ck_assert_int_eq(pthread_create(t, NULL, writer_main, w), 0);
        for (int i = 0; i < 2000 && !atomic_load(&sl->running); i++)
                sleep_ms(5);
        ck_assert(atomic_load(&sl->running));
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
        slow_start(s, &sl, &w1, &t1);
        w2 = (struct writer){.s = s, .fn = quick_fn};
        ck_assert_int_eq(pthread_create(&t2, NULL, writer_main, &w2), 0);
        /* the second thread queues its write at once; slow_fn runs 300 ms more after this */
        sleep_ms(50);
        atomic_store(&sl.second_queued, true);
        ck_assert_int_eq(pthread_join(t2, NULL), 0);
        ck_assert_int_eq(pthread_join(t1, NULL), 0);
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
        slow_start(s, &sl, &w0, &t0);
        for (int i = 0; i < N; i++) {
                w[i] = (struct writer){.s = s, .fn = quick_fn};
                ck_assert_int_eq(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
        }
        sleep_ms(100);
        atomic_store(&sl.second_queued, true);
        ck_assert_int_eq(pthread_join(t0, NULL), 0);
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
