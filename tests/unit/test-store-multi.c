/* SPDX-License-Identifier: MIT */
/*
 * Several stores on one database, as several attestd instances on one PostgreSQL (run
 * on SQLite too, where two stores are two connections' writers on one file): two rounds racing on
 * one agent record one verdict (the other -ESTALE); a change by another store (decommission,
 * policy bind, readmit) makes a round read before it stale; a statement
 * failing inside a group commit loses none of the group's other writes; events written by two
 * stores at once are delivered in id order without skipping a late-committing lower id; an
 * exhausted pool answers -EAGAIN (store_busy) within the wait; another store's new policy version
 * is seen within STORE_PG_POLICY_MAX_AGE_MS.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/store/store.h"
#include "store-target.h"

struct fix {
        char dir[64], db[128];
};

static void fix_init(struct fix *f)
{
        snprintf(f->dir, sizeof(f->dir), "/tmp/attestd-multi.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        store_target(f->dir, "t.db", f->db, sizeof(f->db));
}

static void fix_done(struct fix *f)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        ck_assert_int_eq(system(cmd), 0);
}

static struct store *open_store(const struct fix *f, enum store_mode mode)
{
        struct attest_err err = {0};
        struct store *s = NULL;

        ck_assert_msg(store_open(f->db, mode, 2, &s, &err) == 0, "%s", err.msg);
        return s;
}

static void add_agent(struct store *s, const char *id, uint8_t tag1, uint8_t tag2)
{
        uint8_t ak[4] = {1, 2, tag1, tag2}, name[4] = {5, 6, tag1, tag2};
        struct store_agent a = {0};

        snprintf(a.id, sizeof(a.id), "%s", id);
        a.state = AGENT_STATE_ACTIVE;
        a.ak_public = ak;
        a.ak_public_len = sizeof(ak);
        a.ak_name = name;
        a.ak_name_len = sizeof(name);
        a.created = 1000;
        ck_assert_int_eq(store_agent_add(s, &a), 0);
}

static uint64_t seq_of(struct store *s, const char *id)
{
        struct store_agent *a = NULL;
        uint64_t seq;

        ck_assert_int_eq(store_agent_get(s, id, &a), 0);
        seq = a->seq;
        store_agent_free(a);
        return seq;
}

static int verdict(struct store *s, const char *agent, const char *status, uint64_t seq)
{
        struct store_result r = {
                .agent = agent, .time = 2000, .status = status, .verdict = "{}", .next_due = 9000};

        return store_result_add(s, &r, seq, 10, NULL);
}

/* ---- two rounds racing on one agent ---- */

struct race {
        struct store *s;
        const char *agent;
        uint64_t seq;
        pthread_barrier_t *go;
        int rc;
};

static void *race_main(void *arg)
{
        struct race *r = arg;

        pthread_barrier_wait(r->go);
        r->rc = verdict(r->s, r->agent, "pass", r->seq);
        return NULL;
}

static void race_two(struct race *a, struct race *b)
{
        pthread_barrier_t go;
        pthread_t ta, tb;

        pthread_barrier_init(&go, NULL, 2);
        a->go = b->go = &go;
        ck_assert_int_eq(pthread_create(&ta, NULL, race_main, a), 0);
        ck_assert_int_eq(pthread_create(&tb, NULL, race_main, b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&go);
}

START_TEST(test_two_stores_racing_one_agent_record_one_verdict)
{
        struct fix f;
        struct store *s1, *s2;
        int accepted = 0;

        fix_init(&f);
        s1 = open_store(&f, STORE_WRITER);
        s2 = open_store(&f, STORE_WRITER);
        add_agent(s1, "a", 1, 1);
        for (int round = 0; round < 20; round++) {
                /* both rounds read the agent (each store its own cached row), then both submit */
                struct race r1 = {.s = s1, .agent = "a", .seq = seq_of(s1, "a")};
                struct race r2 = {.s = s2, .agent = "a", .seq = seq_of(s2, "a")};

                ck_assert_uint_eq(r1.seq, (uint64_t)round);
                ck_assert_uint_eq(r2.seq, (uint64_t)round);
                race_two(&r1, &r2);
                ck_assert_msg((r1.rc == 0 && r2.rc == -ESTALE) || (r1.rc == -ESTALE && r2.rc == 0),
                              "round %d: %d and %d, want one 0 and one -ESTALE", round, r1.rc,
                              r2.rc);
                accepted++;
        }
        ck_assert_uint_eq(seq_of(s1, "a"), 20);
        ck_assert_int_eq(accepted, 20);
        store_close(s1);
        store_close(s2);
        fix_done(&f);
}
END_TEST

START_TEST(test_another_stores_change_makes_a_read_round_stale)
{
        struct fix f;
        struct store *s1, *s2;
        uint64_t seq;

        fix_init(&f);
        s1 = open_store(&f, STORE_WRITER);
        s2 = open_store(&f, STORE_WRITER);
        add_agent(s1, "a", 1, 1);
        ck_assert_int_eq(store_policy_put(s1, "p", "{}", 1, &(int64_t){0}), 0);

        /* decommissioned by another instance while this one's round was in flight */
        seq = seq_of(s1, "a");
        ck_assert_int_eq(store_agent_decommission(s2, "a", 3000), 0);
        ck_assert_int_eq(verdict(s1, "a", "pass", seq), -ESTALE);
        /* readmitted elsewhere: again a change */
        seq = seq_of(s1, "a");
        ck_assert_int_eq(store_agent_readmit(s2, "a", 1000), 0);
        ck_assert_int_eq(verdict(s1, "a", "pass", seq), -ESTALE);
        /* a policy bound elsewhere: the round judged under the old one */
        seq = seq_of(s1, "a");
        ck_assert_int_eq(store_agent_set_policy(s2, "a", "p"), 0);
        ck_assert_int_eq(verdict(s1, "a", "pass", seq), -ESTALE);
        /* the replay reset elsewhere */
        seq = seq_of(s1, "a");
        ck_assert_int_eq(store_agent_reset_replay(s2, "a", seq), 0);
        ck_assert_int_eq(verdict(s1, "a", "pass", seq), -ESTALE);
        /* deleted elsewhere */
        seq = seq_of(s1, "a");
        ck_assert_int_eq(store_agent_delete(s2, "a", 1000), 0);
        ck_assert_int_lt(verdict(s1, "a", "pass", seq), 0);
        store_close(s1);
        store_close(s2);
        fix_done(&f);
}
END_TEST

/* ---- a failing write inside a group commit ---- */

/*
 * The jobs of one group: a good agent insert (GOOD); a verdict without its verdict text for an
 * agent whose status it keeps (BAD_VERDICT: on PostgreSQL it fails inside attestd_verdict(), the
 * one-statement write that runs without a savepoint of its own; on SQLite the results insert of
 * the statement path fails); an agent insert without an AK (BAD_AGENT: a NOT NULL violation in
 * a job with a savepoint).
 */
enum job_kind { GOOD, BAD_VERDICT, BAD_AGENT };

struct job {
        struct store *s;
        char id[16];
        enum job_kind kind;
        pthread_barrier_t *go;
        int rc;
};

static void *job_main(void *arg)
{
        struct job *j = arg;

        pthread_barrier_wait(j->go);
        if (j->kind == BAD_VERDICT) {
                struct store_result r = {.agent = j->id,
                                         .time = 3000,
                                         .status = "pass",
                                         .verdict = NULL,
                                         .next_due = 9000};

                j->rc = store_result_add(j->s, &r, 1, 10, NULL);
        } else {
                uint8_t ak[4] = {9, 9, (uint8_t)j->id[1], (uint8_t)j->id[2]};
                struct store_agent a = {0};

                snprintf(a.id, sizeof(a.id), "%s", j->id);
                a.state = AGENT_STATE_PENDING;
                a.ak_public = j->kind == GOOD ? ak : NULL;
                a.ak_public_len = j->kind == GOOD ? sizeof(ak) : 0;
                a.ak_name = ak;
                a.ak_name_len = sizeof(ak);
                a.created = 1000;
                j->rc = store_agent_add(j->s, &a);
        }
        return NULL;
}

#define JOBS 12

START_TEST(test_failing_write_in_a_group_loses_no_other_write)
{
        static const char tag[] = {[GOOD] = 'g', [BAD_VERDICT] = 'v', [BAD_AGENT] = 'x'};
        struct fix f;
        struct store *s, *check;
        uint64_t commits, writes;

        fix_init(&f);
        s = open_store(&f, STORE_WRITER);
        for (int round = 0; round < 6; round++)
                for (int i = 0; i < JOBS; i++) {
                        char id[16];

                        if (i % 3 != BAD_VERDICT)
                                continue;
                        snprintf(id, sizeof(id), "v%c%c", 'a' + round, 'a' + i);
                        add_agent(s, id, (uint8_t)(round + 1), (uint8_t)(i + 1));
                        ck_assert_int_eq(verdict(s, id, "pass", 0), 0);
                }
        for (int round = 0; round < 6; round++) {
                struct job j[JOBS];
                pthread_t t[JOBS];
                pthread_barrier_t go;

                pthread_barrier_init(&go, NULL, JOBS);
                for (int i = 0; i < JOBS; i++) {
                        j[i] = (struct job){.s = s, .kind = (enum job_kind)(i % 3), .go = &go};
                        snprintf(j[i].id, sizeof(j[i].id), "%c%c%c", tag[j[i].kind], 'a' + round,
                                 'a' + i);
                        ck_assert_int_eq(pthread_create(&t[i], NULL, job_main, &j[i]), 0);
                }
                for (int i = 0; i < JOBS; i++)
                        pthread_join(t[i], NULL);
                pthread_barrier_destroy(&go);
                for (int i = 0; i < JOBS; i++)
                        ck_assert_msg(j[i].kind != GOOD ? j[i].rc < 0 : j[i].rc == 0, "%s: %d",
                                      j[i].id, j[i].rc);
        }
        store_stats(s, &commits, &writes);
        /* the failing writes shared transactions with the good ones (else this proves nothing) */
        ck_assert_msg(commits < writes, "no group commit happened: %llu commits, %llu writes",
                      (unsigned long long)commits, (unsigned long long)writes);
        /* every good write is in the database, no failed one is (a fresh store: no cache) */
        check = open_store(&f, STORE_POOL);
        for (int round = 0; round < 6; round++)
                for (int i = 0; i < JOBS; i++) {
                        char id[16];
                        struct store_agent *a = NULL;

                        snprintf(id, sizeof(id), "%c%c%c", tag[i % 3], 'a' + round, 'a' + i);
                        if (i % 3 == GOOD) {
                                ck_assert_msg(store_agent_get(check, id, &a) == 0, "%s lost", id);
                        } else if (i % 3 == BAD_VERDICT) {
                                ck_assert_int_eq(store_agent_get(check, id, &a), 0);
                                ck_assert_uint_eq(a->seq, 1); /* the failed verdict wrote nothing */
                                ck_assert_int_eq(a->last_seen, 2000);
                        } else {
                                ck_assert_int_eq(store_agent_get(check, id, &a), -ENOENT);
                        }
                        store_agent_free(a);
                }
        store_close(check);
        store_close(s);
        fix_done(&f);
}
END_TEST

/* ---- round trips of the steady-state verdict ---- */

static uint64_t statements(struct store *s)
{
        struct store_db_stats ds;

        store_db_stats(s, &ds);
        return ds.statements;
}

static int count_events(const struct store_event *ev, void *arg)
{
        (void)ev;
        ++*(uint64_t *)arg;
        return 0;
}

/*
 * A verdict that keeps the agent's status (every round of a healthy fleet) is one statement on
 * PostgreSQL, its own transaction: with a pooled connection attestd_verdict(), with the writer a
 * group of one, attestd_verdicts() (tests/unit/test-store-commit.c groups more); one that changes
 * it writes its webhook event through the statement path. What each writes is read back from
 * another store.
 */
static void steady_verdicts(enum store_mode mode)
{
        struct fix f;
        struct store *s, *check;
        struct store_agent *a = NULL;
        uint64_t before, used, n = 0;

        fix_init(&f);
        s = open_store(&f, mode);
        add_agent(s, "a", 1, 1);
        ck_assert_int_eq(verdict(s, "a", "pass", 0), 0); /* first status: an event */
        for (uint64_t seq = 1; seq <= 4; seq++) {
                before = statements(s);
                ck_assert_int_eq(verdict(s, "a", "pass", seq), 0);
                used = statements(s) - before;
                if (store_target_pg() && seq > 1) /* the first call prepares it */
                        ck_assert_uint_eq(used, 1);
        }
        /* a stale seq, a deleted agent: refused, nothing written */
        ck_assert_int_eq(verdict(s, "a", "pass", 4), -ESTALE);
        check = open_store(&f, STORE_POOL);
        ck_assert_int_eq(store_agent_get(check, "a", &a), 0);
        ck_assert_uint_eq(a->seq, 5);
        ck_assert_str_eq(a->last_status, "pass");
        store_agent_free(a);
        /* a change of status: through the statement path, with its event */
        ck_assert_int_eq(verdict(s, "a", "fail", 5), 0);
        ck_assert_int_eq(store_outbox_next(check, 0, 50, count_events, &n), 0);
        /* agent.enrolled, agent.pass, agent.fail: none for the four unchanged verdicts */
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(store_agent_delete(s, "a", 1000), 0);
        ck_assert_int_eq(verdict(s, "a", "fail", 6), -ENOENT);
        store_close(check);
        store_close(s);
        fix_done(&f);
}

START_TEST(test_steady_verdict_one_round_trip_pool)
{
        steady_verdicts(STORE_POOL);
}
END_TEST

START_TEST(test_steady_verdict_one_round_trip_writer)
{
        steady_verdicts(STORE_WRITER);
}
END_TEST

/* ---- events from two stores, delivered in order ---- */

#define EV_AGENTS 4
#define EV_ROUNDS 60

struct ev_writer {
        struct store *s;
        char prefix;
        int failed;
};

static void *ev_writer_main(void *arg)
{
        struct ev_writer *w = arg;

        for (int r = 0; r < EV_ROUNDS; r++) {
                /* every verdict flips the status: one event each */
                for (int i = 0; i < EV_AGENTS; i++) {
                        char id[8];

                        snprintf(id, sizeof(id), "%c%d", w->prefix, i);
                        if (verdict(w->s, id, r % 2 ? "fail" : "pass", (uint64_t)r) != 0)
                                w->failed++;
                }
        }
        return NULL;
}

struct ev_reader {
        struct store *s;
        atomic_bool stop;
        int64_t cursor;
        uint8_t *seen; /* by id */
        size_t max;
        int bad;
        uint64_t reads;
};

static int ev_collect(const struct store_event *ev, void *arg)
{
        struct ev_reader *r = arg;

        if (ev->id <= r->cursor || (size_t)ev->id >= r->max)
                r->bad++;
        else
                r->seen[ev->id] = 1;
        r->cursor = ev->id; /* a receiver's cursor: acknowledged up to here */
        return 0;
}

static void *ev_reader_main(void *arg)
{
        struct ev_reader *r = arg;

        struct timespec t0, t;

        /* concurrent with the writers until they stop: bounded by 120 s, not by a count of
         * reads (a count ran out before slow writers finished under load, and the reader
         * stopped early) */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (!atomic_load(&r->stop)) {
                int64_t before = r->cursor;

                ck_assert_int_eq(store_outbox_next(r->s, r->cursor, 50, ev_collect, r), 0);
                clock_gettime(CLOCK_MONOTONIC, &t);
                ck_assert_msg(t.tv_sec - t0.tv_sec < 120, "reader: writers still running");
                if (r->cursor == before)
                        usleep(1000);
                r->reads++;
        }
        return NULL;
}

static int count_ids(const struct store_event *ev, void *arg)
{
        struct ev_reader *all = arg;

        if ((size_t)ev->id < all->max)
                all->seen[ev->id] = 1;
        return 0;
}

START_TEST(test_events_from_two_stores_delivered_without_a_gap)
{
        struct fix f;
        struct store *s1, *s2, *rs;
        struct ev_writer w1, w2;
        struct ev_reader rd = {0}, all = {0};
        pthread_t t1, t2, tr;
        size_t missed = 0, total = 0;

        fix_init(&f);
        s1 = open_store(&f, STORE_WRITER);
        s2 = open_store(&f, STORE_WRITER);
        rs = open_store(&f, STORE_POOL);
        for (int i = 0; i < EV_AGENTS; i++) {
                char id[8];

                snprintf(id, sizeof(id), "x%d", i);
                add_agent(s1, id, 1, (uint8_t)i);
                snprintf(id, sizeof(id), "y%d", i);
                add_agent(s2, id, 2, (uint8_t)i);
        }
        rd.s = rs;
        rd.max = 4096;
        rd.seen = calloc(rd.max, 1);
        all.max = rd.max;
        all.seen = calloc(all.max, 1);
        ck_assert(rd.seen && all.seen);
        /* start after the enrolment events */
        ck_assert_int_eq(store_outbox_next(rs, 0, 100, count_ids, &all), 0);
        for (size_t i = 0; i < all.max; i++)
                if (all.seen[i])
                        rd.cursor = (int64_t)i;
        memset(all.seen, 0, all.max);
        w1 = (struct ev_writer){.s = s1, .prefix = 'x'};
        w2 = (struct ev_writer){.s = s2, .prefix = 'y'};
        ck_assert_int_eq(pthread_create(&tr, NULL, ev_reader_main, &rd), 0);
        ck_assert_int_eq(pthread_create(&t1, NULL, ev_writer_main, &w1), 0);
        ck_assert_int_eq(pthread_create(&t2, NULL, ev_writer_main, &w2), 0);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        atomic_store(&rd.stop, true);
        pthread_join(tr, NULL);
        /* the reader ran the whole time (else this proved little) */
        ck_assert_uint_gt(rd.reads, 10);
        /* the receiver catches up after the writers stopped: the events committed after its last
         * concurrent read (a skip is an id below its cursor it never saw) */
        for (int i = 0; i < 100; i++) {
                int64_t before = rd.cursor;

                ck_assert_int_eq(store_outbox_next(rs, rd.cursor, 50, ev_collect, &rd), 0);
                if (rd.cursor == before)
                        break;
        }
        ck_assert_int_eq(w1.failed + w2.failed, 0);
        ck_assert_int_eq(rd.bad, 0);
        /* every event in the outbox after the start was seen by the cursor-driven reader */
        ck_assert_int_eq(store_outbox_next(rs, 0, 4000, count_ids, &all), 0);
        for (size_t i = (size_t)1; i < all.max; i++) {
                if (!all.seen[i] || i <= 2 * EV_AGENTS)
                        continue;
                total++;
                if (!rd.seen[i]) {
                        if (getenv("MULTI_DEBUG") && missed < 5)
                                fprintf(stderr, "missed %zu (reader cursor %lld)\n", i,
                                        (long long)rd.cursor);
                        missed++;
                }
        }
        ck_assert_uint_eq(total, 2 * EV_AGENTS * EV_ROUNDS);
        ck_assert_msg(missed == 0, "the reader's cursor skipped %zu of %zu events", missed, total);
        free(rd.seen);
        free(all.seen);
        store_close(rs);
        store_close(s1);
        store_close(s2);
        fix_done(&f);
}
END_TEST

/* ---- the pool ---- */

/* holds the pool's one connection (inside a list callback) from "holding" until "release": the
 * test's read runs in between, ordered by the condition variable, not by a 600 ms sleep */
struct holder {
        pthread_mutex_t lock;
        pthread_cond_t cv;
        bool holding, release;
};

static int hold_conn(const struct store_agent *a, void *arg)
{
        struct holder *h = arg;
        struct timespec until;

        (void)a;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&h->lock);
        h->holding = true;
        pthread_cond_broadcast(&h->cv);
        while (!h->release && pthread_cond_timedwait(&h->cv, &h->lock, &until) == 0)
                ;
        pthread_mutex_unlock(&h->lock);
        return -ECANCELED;
}

/* *flag (a field of h) set, or 60 s gone */
static bool holder_wait(struct holder *h, const bool *flag)
{
        struct timespec until;
        bool ok;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&h->lock);
        while (!*flag && pthread_cond_timedwait(&h->cv, &h->lock, &until) == 0)
                ;
        ok = *flag;
        pthread_mutex_unlock(&h->lock);
        return ok;
}

struct hold_arg {
        struct store *s;
        struct holder h;
};

static void *hold_main(void *arg)
{
        struct hold_arg *a = arg;

        int e = store_agent_list(a->s, hold_conn, &a->h);

        return e == -ECANCELED ? NULL : (void *)1;
}

START_TEST(test_exhausted_pool_answers_busy_within_the_wait)
{
        struct fix f;
        struct store_options o = {.mode = STORE_POOL, .connections = 1, .wait_ms = 100};
        struct attest_err err = {0};
        struct hold_arg ha = {0};
        struct store_db_stats ds;
        pthread_t t;
        char *body = NULL;

        fix_init(&f);
        o.target = f.db;
        ck_assert_msg(store_open_opts(&o, &ha.s, &err) == 0, "%s", err.msg);
        add_agent(ha.s, "a", 1, 1);
        pthread_mutex_init(&ha.h.lock, NULL);
        pthread_cond_init(&ha.h.cv, NULL);
        ck_assert_int_eq(pthread_create(&t, NULL, hold_main, &ha), 0);
        ck_assert_msg(holder_wait(&ha.h, &ha.h.holding), "the holder did not start within 60 s");
        /* the one connection is held until the read below gave up after its 100 ms wait */
        ck_assert_int_eq(store_policy_get(ha.s, "p", 0, &body, NULL, NULL), -EAGAIN);
        store_db_stats(ha.s, &ds);
        ck_assert_uint_eq(ds.pool_exhausted, 1);
        ck_assert_uint_ge(ds.pool_waits, 1);
        ck_assert_uint_eq(ds.pool_size, 1);
        ck_assert_uint_eq(ds.pool_in_use, 1);
        pthread_mutex_lock(&ha.h.lock);
        ha.h.release = true;
        pthread_cond_broadcast(&ha.h.cv);
        pthread_mutex_unlock(&ha.h.lock);
        pthread_join(t, NULL);
        pthread_cond_destroy(&ha.h.cv);
        pthread_mutex_destroy(&ha.h.lock);
        /* given back: answered again */
        ck_assert_int_eq(store_policy_get(ha.s, "p", 0, &body, NULL, NULL), -ENOENT);
        store_db_stats(ha.s, &ds);
        ck_assert_uint_eq(ds.pool_in_use, 0);
        ck_assert_uint_gt(ds.statements, 0);
        store_close(ha.s);
        fix_done(&f);
}
END_TEST

START_TEST(test_another_stores_policy_version_seen_within_the_bound)
{
        struct fix f;
        struct store *s1, *s2;
        int64_t v = 0;

        fix_init(&f);
        s1 = open_store(&f, STORE_WRITER);
        s2 = open_store(&f, STORE_WRITER);
        ck_assert_int_eq(store_policy_put(s1, "p", "{}", 1, &v), 0);
        ck_assert_int_eq(store_policy_version(s2, "p", &v), 0);
        ck_assert_int_eq(v, 1);
        ck_assert_int_eq(store_policy_put(s1, "p", "{\"x\":1}", 2, &v), 0);
        ck_assert_int_eq(v, 2);
        usleep((STORE_PG_POLICY_MAX_AGE_MS + 100) * 1000);
        ck_assert_int_eq(store_policy_version(s2, "p", &v), 0);
        if (store_target_pg())
                ck_assert_int_eq(v, 2); /* several instances: bounded staleness */
        else
                ck_assert_int_eq(v, 1); /* SQLite: one instance per file, cached until a write */
        store_close(s1);
        store_close(s2);
        fix_done(&f);
}
END_TEST

START_TEST(test_a_receiver_is_claimed_by_one_store_until_it_closes)
{
        struct fix f;
        struct store *s1, *s2;
        int c = 0;

        fix_init(&f);
        s1 = open_store(&f, STORE_WRITER);
        s2 = open_store(&f, STORE_WRITER);
        ck_assert_int_eq(store_claim(s1, "https://a.example/hook"), 1);
        ck_assert_int_eq(store_claim(s1, "https://a.example/hook"), 1); /* held: still */
        ck_assert_int_eq(store_claim(s2, "https://b.example/hook"), 1); /* another receiver */
        if (!store_target_pg()) {
                /* SQLite: one instance per database, every claim its own */
                ck_assert_int_eq(store_claim(s2, "https://a.example/hook"), 1);
        } else {
                ck_assert_int_eq(store_claim(s2, "https://a.example/hook"), 0);
                ck_assert_int_eq(store_claim(s1, "https://b.example/hook"), 0);
                /* the holder goes (its sessions end): the other takes over (bounded wait) */
                store_close(s1);
                s1 = NULL;
                for (int i = 0; i < 100 && c != 1; i++) {
                        c = store_claim(s2, "https://a.example/hook");
                        if (c != 1)
                                usleep(20 * 1000);
                }
                ck_assert_int_eq(c, 1);
        }
        store_close(s1);
        store_close(s2);
        fix_done(&f);
}
END_TEST

START_TEST(test_store_reconnects_after_the_server_drops_it)
{
        struct fix f;
        struct store *s;
        struct store_agent *a = NULL;
        int e = 0;

        fix_init(&f);
        s = open_store(&f, STORE_WRITER);
        add_agent(s, "a", 1, 1);
        ck_assert_int_eq(store_claim(s, "https://a.example/hook"), 1);
        /* PostgreSQL restarted or failed over: every session of the store is gone */
        if (store_target_pg())
                ck_assert_int_eq(store_target_sql(f.db, "SELECT pg_terminate_backend(pid) FROM"
                                                        " pg_stat_activity WHERE"
                                                        " application_name = 'attestd'"),
                                 0);
        /* a failed statement at most once per connection, then served again; the failure says
         * the connection broke (-ENOTCONN: the API's 503 store_unavailable), on a pooled
         * connection (the read) and on the writer's (the verdict) */
        for (int i = 0; i < 4 && (e = store_agent_get(s, "nobody", &a)) != -ENOENT; i++)
                ck_assert_int_eq(e, store_target_pg() ? -ENOTCONN : -EIO);
        ck_assert_int_eq(e, -ENOENT);
        for (int i = 0; i < 4 && (e = verdict(s, "a", "pass", 0)) != 0; i++)
                ck_assert_int_eq(e, store_target_pg() ? -ENOTCONN : -EIO);
        ck_assert_int_eq(e, 0);
        for (int i = 0; i < 4 && (e = store_claim(s, "https://a.example/hook")) != 1; i++)
                ck_assert_int_ge(e, 0);
        ck_assert_int_eq(e, 1);
        store_close(s);
        fix_done(&f);
}
END_TEST

/* ---- enrolments beside the stale scans of two stores ---- */

#define SCAN_ADDERS 4  /* a store */
#define SCAN_AGENTS 30 /* an adder */
#define SCAN_NOW 1000000000

struct adder {
        struct store *s;
        int tag, failed;
};

static void *adder_main(void *arg)
{
        struct adder *a = arg;

        for (int i = 0; i < SCAN_AGENTS; i++) {
                uint8_t ak[4] = {7, 7, (uint8_t)a->tag, (uint8_t)i},
                        name[4] = {8, 8, (uint8_t)a->tag, (uint8_t)i};
                struct store_agent g = {.state = AGENT_STATE_ACTIVE,
                                        .ak_public = ak,
                                        .ak_public_len = sizeof(ak),
                                        .ak_name = name,
                                        .ak_name_len = sizeof(name),
                                        .created = 1000}; /* due long ago: stale when scanned */

                snprintf(g.id, sizeof(g.id), "e%d-%d", a->tag, i);
                if (store_agent_add(a->s, &g) != 0)
                        a->failed++;
        }
        return NULL;
}

struct scanner {
        struct store *s;
        atomic_bool stop;
        int marked, errors;
};

static void *scanner_main(void *arg)
{
        struct scanner *sc = arg;

        while (!atomic_load(&sc->stop)) {
                int n = store_agent_stale_scan(sc->s, SCAN_NOW, 50, 100, store_stale_quiet, NULL);

                n < 0 ? sc->errors++ : (sc->marked += n);
        }
        return NULL;
}

static int last_id(const struct store_event *ev, void *arg)
{
        *(int64_t *)arg = ev->id;
        return 0;
}

static int count_stale(const struct store_event *ev, void *arg)
{
        *(int *)arg += !strcmp(ev->type, "agent.stale");
        return 0;
}

/*
 * Two stores, each with enrolments (an event and a watch-list row each) and a stale scan running
 * at once, as instances of a fleet do. The scan once ran inside the writer's batches: one store's
 * batch (an enrolment's event lock, then the scan's cursor) and the other's (the scan's cursor,
 * then an enrolment) deadlocked, and PostgreSQL failed an enrolment. No enrolment may fail, and
 * each agent is marked stale once, by one store or the other.
 */
START_TEST(test_enrolments_beside_the_stale_scans_of_two_stores)
{
        struct fix f;
        struct store *st[2];
        struct adder ad[2 * SCAN_ADDERS];
        struct scanner sc[2] = {0};
        pthread_t ta[2 * SCAN_ADDERS], ts[2];
        int marked = 0, events = 0;
        int64_t after = 0;

        fix_init(&f);
        for (int k = 0; k < 2; k++) {
                st[k] = open_store(&f, STORE_WRITER);
                sc[k].s = st[k];
                ck_assert_int_eq(pthread_create(&ts[k], NULL, scanner_main, &sc[k]), 0);
        }
        for (int k = 0; k < 2 * SCAN_ADDERS; k++) {
                ad[k] = (struct adder){.s = st[k % 2], .tag = k};
                ck_assert_int_eq(pthread_create(&ta[k], NULL, adder_main, &ad[k]), 0);
        }
        for (int k = 0; k < 2 * SCAN_ADDERS; k++) {
                ck_assert_int_eq(pthread_join(ta[k], NULL), 0);
                ck_assert_int_eq(ad[k].failed, 0);
        }
        for (int k = 0; k < 2; k++) {
                atomic_store(&sc[k].stop, true);
                ck_assert_int_eq(pthread_join(ts[k], NULL), 0);
                marked += sc[k].marked;
        }
        /* what the running scans left (a scan that lost its turn or timed out is retried) */
        for (int r = 0; r < 50 && marked < 2 * SCAN_ADDERS * SCAN_AGENTS; r++) {
                int n = store_agent_stale_scan(st[r % 2], SCAN_NOW, 50, 100, store_stale_quiet,
                                               NULL);

                ck_assert_int_ge(n, 0);
                marked += n;
        }
        ck_assert_int_eq(marked, 2 * SCAN_ADDERS * SCAN_AGENTS);
        ck_assert_int_eq(
                store_agent_stale_scan(st[0], SCAN_NOW + 1, 50, 100, store_stale_quiet, NULL), 0);
        for (;;) {
                int64_t before = after;

                ck_assert_int_eq(store_outbox_next(st[0], after, 100, count_stale, &events), 0);
                ck_assert_int_eq(store_outbox_next(st[0], after, 100, last_id, &after), 0);
                if (after == before)
                        break;
        }
        ck_assert_int_eq(events, 2 * SCAN_ADDERS * SCAN_AGENTS);
        store_close(st[0]);
        store_close(st[1]);
        fix_done(&f);
}
END_TEST

int main(void)
{
        Suite *su = suite_create("store-multi");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_two_stores_racing_one_agent_record_one_verdict);
        tcase_add_test(tc, test_another_stores_change_makes_a_read_round_stale);
        tcase_add_test(tc, test_failing_write_in_a_group_loses_no_other_write);
        tcase_add_test(tc, test_steady_verdict_one_round_trip_pool);
        tcase_add_test(tc, test_steady_verdict_one_round_trip_writer);
        tcase_add_test(tc, test_events_from_two_stores_delivered_without_a_gap);
        tcase_add_test(tc, test_exhausted_pool_answers_busy_within_the_wait);
        tcase_add_test(tc, test_another_stores_policy_version_seen_within_the_bound);
        tcase_add_test(tc, test_a_receiver_is_claimed_by_one_store_until_it_closes);
        tcase_add_test(tc, test_store_reconnects_after_the_server_drops_it);
        tcase_add_test(tc, test_enrolments_beside_the_stale_scans_of_two_stores);
        suite_add_tcase(su, tc);
        sr = srunner_create(su);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
