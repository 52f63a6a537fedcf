/* SPDX-License-Identifier: MIT */
/*
 * The store's read cache (daemon/store/store-cache.c): every write path leaves what a read returns
 * equal to the database (checked against a second store on the same file, which has read nothing
 * yet), a read that raced a write does not put the old row back, the cap holds, and concurrent
 * rounds and admin writes end coherent. Real SQLite files, or real PostgreSQL databases (suite
 * store-pg): there the agent cache is off by default (another instance may write any row) and the
 * tests of the cache's own workings turn it on with store_cache_limit().
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/store/store-internal.h"
#include "store-target.h"

static void rm_rf(const char *dir)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

static void db_in_tmp(char *dir, char *db, size_t n)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        store_target(dir, "t.db", db, n);
}

static void agent_rec(struct store_agent *a, const char *id, enum agent_state state, uint8_t *ak,
                      uint8_t *name)
{
        memset(a, 0, sizeof(*a));
        snprintf(a->id, sizeof(a->id), "%s", id);
        a->state = state;
        a->ak_public = ak;
        a->ak_public_len = 4;
        a->ak_name = name;
        a->ak_name_len = 4;
        a->created = 1000;
}

static bool same_str(const char *a, const char *b)
{
        return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_blob(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
        return an == bn && (!an || !memcmp(a, b, an)) && (!a) == (!b);
}

/*
 * What s answers for id (through its cache) equals what the database holds (read by a store
 * that opened the file just now): both -ENOENT, or every field equal.
 */
static void coherent(struct store *s, const char *db, const char *id, const char *what)
{
        struct store *t;
        struct attest_err err = {0};
        struct store_agent *a = NULL, *b = NULL;
        int ea, eb;

        ea = store_agent_get(s, id, &a);
        ck_assert_int_eq(store_open(db, STORE_POOL, 1, &t, &err), 0);
        eb = store_agent_get(t, id, &b);
        store_close(t);
        ck_assert_msg(ea == eb, "%s: %s: cached %d, database %d", what, id, ea, eb);
        if (ea == 0) {
                ck_assert_msg(a->state == b->state, "%s: state %s, database %s", what,
                              agent_state_name(a->state), agent_state_name(b->state));
                ck_assert_msg(same_str(a->policy, b->policy), "%s: policy %s, database %s", what,
                              a->policy ? a->policy : "-", b->policy ? b->policy : "-");
                ck_assert_msg(a->seq == b->seq, "%s: seq %llu, database %llu", what,
                              (unsigned long long)a->seq, (unsigned long long)b->seq);
                ck_assert_msg(a->ima_offset == b->ima_offset, "%s: offset %llu, database %llu",
                              what, (unsigned long long)a->ima_offset,
                              (unsigned long long)b->ima_offset);
                ck_assert_msg(same_str(a->last_status, b->last_status), "%s: last_status", what);
                ck_assert_msg(same_str(a->last_policy, b->last_policy), "%s: last_policy", what);
                ck_assert_msg(a->last_result == b->last_result, "%s: last_result", what);
                ck_assert_msg(a->last_seen == b->last_seen && a->next_due == b->next_due,
                              "%s: times", what);
                ck_assert_msg(same_blob(a->replay_state, a->replay_state_len, b->replay_state,
                                        b->replay_state_len),
                              "%s: replay state", what);
                ck_assert_msg(
                        same_blob(a->ak_public, a->ak_public_len, b->ak_public, b->ak_public_len),
                        "%s: AK", what);
                ck_assert_msg(same_blob(a->ak_name, a->ak_name_len, b->ak_name, b->ak_name_len),
                              "%s: AK name", what);
                ck_assert_msg(same_blob(a->ek_cert, a->ek_cert_len, b->ek_cert, b->ek_cert_len),
                              "%s: EK certificate", what);
                ck_assert_msg(
                        a->has_ek_id == b->has_ek_id &&
                                (!a->has_ek_id || !memcmp(a->ek_id, b->ek_id, sizeof(a->ek_id))),
                        "%s: EK", what);
                ck_assert_msg(same_str(a->labels, b->labels), "%s: labels", what);
                ck_assert_msg(!strcmp(a->hostname, b->hostname) &&
                                      !strcmp(a->machine_id, b->machine_id),
                              "%s: host identity", what);
                ck_assert_msg(a->created == b->created, "%s: created", what);
        }
        store_agent_free(a);
        store_agent_free(b);
}

static int64_t verdict(struct store *s, const char *id, uint64_t offset, const char *status,
                       const char *policy, int expect)
{
        struct store_agent *a;
        uint8_t state[3] = {(uint8_t)offset, 1, 2};
        int64_t rid = 0;
        struct store_result r = {.agent = id,
                                 .time = 5000 + (int64_t)offset,
                                 .status = status,
                                 .policy = policy,
                                 .verdict = "{}",
                                 .next_due = 9000 + (int64_t)offset,
                                 .ima_offset = offset,
                                 .replay_state = state,
                                 .replay_state_len = sizeof(state)};

        ck_assert_int_eq(store_agent_get(s, id, &a), 0);
        r.kept_known = a->results_kept >= 0; /* as a round passes its row's count */
        r.kept = a->results_kept;
        ck_assert_int_eq(store_result_add(s, &r, a->seq, 5, &rid), expect);
        store_agent_free(a);
        return rid;
}

/* Every write path of an agent row, each right after a read filled the cache. */
static void every_write_path(enum store_mode mode)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64], replaced[STORE_ID_MAX + 1];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a, *got;
        struct store_cache_stats st;
        uint8_t ak[4] = {1, 2, 3, 4}, ak2[4] = {4, 3, 2, 1}, name[4] = {5, 6, 7, 8},
                name2[4] = {9, 9, 9, 9}, ekpub[8] = {0}, h1[32], h2[32];
        uint64_t offset;

        memset(h1, 1, 32);
        memset(h2, 2, 32);
        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, mode, 2, &s, &err), 0);
        store_cache_limit(s, STORE_AGENT_CACHE_MAX);
        agent_rec(&a, "a1", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        coherent(s, db, "a1", "add");
        coherent(s, db, "a1", "a second read");
        store_cache_stats(s, &st);
        ck_assert_uint_ge(st.hits, 1);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);

        /* the host's identity and labels, then a read holds them: a verdict's copy keeps them */
        {
                struct evidence_host h = {.hostname = "web-1",
                                          .machine_id = "0123456789abcdef0123456789abcdef",
                                          .labels_present = true,
                                          .n_labels = 1,
                                          .labels = {{.key = "role", .value = "web"}}};

                ck_assert_int_eq(store_agent_set_identity(s, "a1", &h), 0);
                coherent(s, db, "a1", "identity");
                coherent(s, db, "a1", "identity, held");
        }
        /* a verdict changes the held row as the UPDATE changed the database row */
        verdict(s, "a1", 3, "pass", NULL, 0);
        coherent(s, db, "a1", "verdict");
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_uint_eq(offset, 3);
        verdict(s, "a1", 7, "fail", "p@1", 0);
        coherent(s, db, "a1", "second verdict");
        store_cache_stats(s, &st);
        ck_assert_uint_ge(st.updates, 2);
        ck_assert_int_eq(store_agent_reset_replay(s, "a1", 2), 0);
        coherent(s, db, "a1", "replay reset");
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_uint_eq(offset, 0);
        /* a stale seq is refused by the database, and the cache follows it */
        ck_assert_int_eq(store_agent_reset_replay(s, "a1", 2), -ESTALE);
        coherent(s, db, "a1", "stale replay reset");

        /* bind-policy and unbind */
        ck_assert_int_eq(store_policy_put(s, "p", "{}", 1, &(int64_t){0}), 0);
        ck_assert_int_eq(store_agent_set_policy(s, "a1", "p"), 0);
        coherent(s, db, "a1", "bind-policy");
        ck_assert_int_eq(store_agent_set_policy(s, "a1", NULL), 0);
        coherent(s, db, "a1", "unbind");

        /* decommission and readmit, through the challenge's read too */
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_int_eq(store_agent_decommission(s, "a1", 6000), 0);
        coherent(s, db, "a1", "decommission");
        ck_assert_int_eq(store_agent_decommission(s, "a1", 6000), 0);
        ck_assert_int_eq(store_agent_readmit(s, "a1", 1000), 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_int_eq(store_agent_decommission(s, "a1", 6000), 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), -EPERM);
        ck_assert_int_eq(store_agent_readmit(s, "a1", 1000), 0);
        coherent(s, db, "a1", "readmit");

        /* delete, then the same id enrolled again with another AK */
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_int_eq(store_agent_delete(s, "a1", 1000), 0);
        coherent(s, db, "a1", "delete");
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), -ENOENT);
        agent_rec(&a, "a1", AGENT_STATE_ACTIVE, ak2, name2);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        coherent(s, db, "a1", "enrolled again");
        ck_assert_int_eq(store_agent_delete(s, "a1", 1000), 0);

        /* enrolment by credential: pending, activated; a later identity on the same EK takes
         * over and the old agent is gone */
        agent_rec(&a, "old", AGENT_STATE_PENDING, ak, name);
        memset(a.ek_id, 0xee, sizeof(a.ek_id));
        a.has_ek_id = true;
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h1, 100000), 0);
        ck_assert_int_eq(store_test_offset(s, "old", &offset), -EACCES);
        coherent(s, db, "old", "pending");
        ck_assert_int_eq(store_agent_activate(s, "old", h1, 2000, replaced), 0);
        coherent(s, db, "old", "activate");
        ck_assert_int_eq(store_test_offset(s, "old", &offset), 0);
        agent_rec(&a, "new", AGENT_STATE_PENDING, ak2, name2);
        memset(a.ek_id, 0xee, sizeof(a.ek_id));
        a.has_ek_id = true;
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h2, 100000), 0);
        coherent(s, db, "new", "pending on a held EK");
        coherent(s, db, "old", "another pending on its EK");
        ck_assert_int_eq(store_agent_activate(s, "new", h2, 3000, replaced), 0);
        ck_assert_str_eq(replaced, "old");
        coherent(s, db, "old", "taken over");
        coherent(s, db, "new", "took over");
        ck_assert_int_eq(store_agent_get(s, "old", &got), -ENOENT);
        ck_assert_int_eq(store_test_offset(s, "old", &offset), -ENOENT);

        /* a restarted store continues from what was stored */
        verdict(s, "new", 11, "pass", NULL, 0);
        store_close(s);
        ck_assert_int_eq(store_open(db, mode, 2, &s, &err), 0);
        store_cache_limit(s, STORE_AGENT_CACHE_MAX);
        ck_assert_int_eq(store_test_offset(s, "new", &offset), 0);
        ck_assert_uint_eq(offset, 11);
        coherent(s, db, "new", "reopened");
        verdict(s, "new", 12, "pass", NULL, 0);
        coherent(s, db, "new", "a verdict after reopening");
        store_close(s);
        rm_rf(dir);
}

START_TEST(test_every_write_path_writer)
{
        every_write_path(STORE_WRITER);
}
END_TEST

START_TEST(test_every_write_path_pool)
{
        every_write_path(STORE_POOL);
}
END_TEST

/* The live policy version, "none" included, follows PUT and DELETE. */
START_TEST(test_policy_versions)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_cache_stats st;
        int64_t v = 0;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 2, &s, &err), 0);
        ck_assert_int_eq(store_policy_version(s, "default", &v), -ENOENT);
        ck_assert_int_eq(store_policy_version(s, "default", &v), -ENOENT);
        store_cache_stats(s, &st);
        ck_assert_uint_eq(st.policy_hits, 1);
        ck_assert_int_eq(store_policy_put(s, "default", "{}", 1, &v), 0);
        ck_assert_int_eq(store_policy_version(s, "default", &v), 0);
        ck_assert_int_eq(v, 1);
        ck_assert_int_eq(store_policy_put(s, "default", "{}", 2, &v), 0);
        ck_assert_int_eq(store_policy_version(s, "default", &v), 0);
        ck_assert_int_eq(v, 2);
        ck_assert_int_eq(store_policy_version(s, "default", &v), 0);
        ck_assert_int_eq(v, 2);
        ck_assert_int_eq(store_policy_delete(s, "default"), 0);
        ck_assert_int_eq(store_policy_version(s, "default", &v), -ENOENT);
        ck_assert_int_eq(store_policy_put(s, "default", "{}", 3, &v), 0);
        ck_assert_int_eq(store_policy_version(s, "default", &v), 0);
        ck_assert_int_eq(v, 3);
        store_close(s);
        rm_rf(dir);
}
END_TEST

/*
 * A read that missed, then read the database before a write committed, must not put that row
 * back after the write: the add carries the generation taken before the read.
 */
START_TEST(test_add_after_a_write_is_refused)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a, *old = NULL, *got = NULL;
        struct store_cache_stats st;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        uint64_t gen;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 2, &s, &err), 0);
        store_cache_limit(s, STORE_AGENT_CACHE_MAX);
        agent_rec(&a, "a1", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_agent_get(s, "a1", &old), 0); /* the row before the write */
        store_cache_agent_forget(store_cache_of(s), "a1");
        /* the racing reader: a miss (its generation), then its database read (old) ... */
        ck_assert_int_eq(store_cache_agent_get(store_cache_of(s), "a1", &got, &gen), 0);
        /* ... a decommission commits meanwhile ... */
        ck_assert_int_eq(store_agent_decommission(s, "a1", 2000), 0);
        /* ... and the reader adds what it read */
        store_cache_agent_add(store_cache_of(s), old, gen);
        store_cache_stats(s, &st);
        ck_assert_uint_eq(st.refused, 1);
        ck_assert_int_eq(store_agent_get(s, "a1", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_DECOMMISSIONED);
        store_agent_free(got);
        /* nor does an add replace a row held already (it may be newer) */
        ck_assert_int_eq(store_cache_agent_get(store_cache_of(s), "a1", &got, &gen), 1);
        store_agent_free(got);
        store_cache_agent_add(store_cache_of(s), old, gen);
        ck_assert_int_eq(store_agent_get(s, "a1", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_DECOMMISSIONED);
        store_agent_free(got);
        store_agent_free(old);
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* At most the cap; the least recently used go first; evicted rows are read again correctly. */
START_TEST(test_bounded)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64], id[16];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a, *got;
        struct store_cache_stats st;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4];

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 2, &s, &err), 0);
        store_cache_limit(s, 4);
        for (int i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "a%d", i);
                memset(name, i, sizeof(name));
                agent_rec(&a, id, AGENT_STATE_ACTIVE, ak, name);
                ck_assert_int_eq(store_agent_add(s, &a), 0);
                verdict(s, id, (uint64_t)i, "pass", NULL, 0);
        }
        store_cache_stats(s, &st);
        ck_assert_uint_eq(st.entries, 4);
        ck_assert_uint_eq(st.evictions, 6);
        /* a0..a5 were pushed out; a9 is the most recent */
        for (int i = 9; i >= 0; i--) {
                snprintf(id, sizeof(id), "a%d", i);
                ck_assert_int_eq(store_agent_get(s, id, &got), 0);
                ck_assert_uint_eq(got->ima_offset, (uint64_t)i);
                ck_assert_uint_eq(got->seq, 1);
                store_agent_free(got);
                coherent(s, db, id, "after eviction");
        }
        store_cache_stats(s, &st);
        ck_assert_uint_le(st.entries, 4);
        store_cache_limit(s, 0);
        store_cache_stats(s, &st);
        ck_assert_uint_eq(st.entries, 0);
        ck_assert_int_eq(store_agent_get(s, "a3", &got), 0);
        store_agent_free(got);
        store_cache_stats(s, &st);
        ck_assert_uint_eq(st.entries, 0);
        store_close(s);
        rm_rf(dir);
}
END_TEST

struct worker {
        struct store *s;
        char id[16];
        int stale, ok;
};

/* One agent's rounds: read, verdict at the read seq (a racing admin write may make it stale). */
static void *rounds(void *arg)
{
        struct worker *w = arg;

        for (int i = 1; i <= 150; i++) {
                struct store_agent *a;
                uint8_t state[2] = {(uint8_t)i, 0};
                struct store_result r = {.agent = w->id,
                                         .time = i,
                                         .status = "pass",
                                         .verdict = "{}",
                                         .next_due = i + 1,
                                         .ima_offset = (uint64_t)i,
                                         .replay_state = state,
                                         .replay_state_len = sizeof(state)};
                int e;

                if (store_agent_get(w->s, w->id, &a) < 0)
                        continue;
                r.kept_known = a->results_kept >= 0;
                r.kept = a->results_kept;
                e = store_result_add(w->s, &r, a->seq, 3, NULL);
                store_agent_free(a);
                if (e == 0)
                        w->ok++;
                else if (e == -ESTALE)
                        w->stale++;
        }
        return NULL;
}

/* Rounds of four agents on four threads while the main thread binds, decommissions, readmits. */
START_TEST(test_concurrent_rounds_and_admin_writes)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a;
        struct worker w[4];
        pthread_t th[4];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4];

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 4, &s, &err), 0);
        store_cache_limit(s, STORE_AGENT_CACHE_MAX);
        ck_assert_int_eq(store_policy_put(s, "p", "{}", 1, &(int64_t){0}), 0);
        for (int i = 0; i < 4; i++) {
                w[i] = (struct worker){.s = s};
                snprintf(w[i].id, sizeof(w[i].id), "w%d", i);
                memset(name, i + 1, sizeof(name));
                agent_rec(&a, w[i].id, AGENT_STATE_ACTIVE, ak, name);
                ck_assert_int_eq(store_agent_add(s, &a), 0);
        }
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(pthread_create(&th[i], NULL, rounds, &w[i]), 0);
        for (int k = 0; k < 60; k++) {
                const char *id = w[k % 4].id;

                ck_assert_int_eq(store_agent_set_policy(s, id, k % 2 ? "p" : NULL), 0);
                ck_assert_int_eq(store_agent_decommission(s, id, k), 0);
                ck_assert_int_eq(store_agent_readmit(s, id, 1000), 0);
                {
                        struct store_agent *a1;
                        int e;

                        ck_assert_int_eq(store_agent_get(s, id, &a1), 0);
                        e = store_agent_reset_replay(s, id, a1->seq);
                        ck_assert(e == 0 || e == -ESTALE);
                        store_agent_free(a1);
                }
        }
        for (int i = 0; i < 4; i++) {
                ck_assert_int_eq(pthread_join(th[i], NULL), 0);
                ck_assert_int_gt(w[i].ok, 0);
                coherent(s, db, w[i].id, "after the race");
        }
        store_close(s);
        rm_rf(dir);
}
END_TEST

/*
 * The default per engine. SQLite: this process is the only writer, rows are served from the
 * cache (a second read is a hit). PostgreSQL: another instance (a second store on the same
 * database) accepts a round; the first store's next challenge must answer the new offset, so
 * nothing is served from a cache there (the stale offset multi-instance once saw).
 */
START_TEST(test_default_per_engine)
{
        char dir[] = "/tmp/attestd-cache.XXXXXX", db[64];
        struct store *s, *t;
        struct attest_err err = {0};
        struct store_agent a, *got;
        struct store_cache_stats st;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        uint64_t offset;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_POOL, 2, &s, &err), 0);
        agent_rec(&a, "a1", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_uint_eq(offset, 0);
        store_cache_stats(s, &st);
        if (!store_target_pg()) {
                ck_assert_uint_ge(st.hits, 1);
                store_close(s);
                rm_rf(dir);
                return;
        }
        ck_assert_uint_eq(st.hits, 0);
        ck_assert_uint_eq(st.entries, 0);
        ck_assert_int_eq(store_open(db, STORE_POOL, 2, &t, &err), 0);
        verdict(t, "a1", 8, "pass", NULL, 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), 0);
        ck_assert_uint_eq(offset, 8);
        ck_assert_int_eq(store_agent_get(s, "a1", &got), 0);
        ck_assert_uint_eq(got->ima_offset, 8);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_decommission(t, "a1", 9000), 0);
        ck_assert_int_eq(store_test_offset(s, "a1", &offset), -EPERM);
        store_close(t);
        store_close(s);
        rm_rf(dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("store-cache");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_every_write_path_writer);
        tcase_add_test(tc, test_every_write_path_pool);
        tcase_add_test(tc, test_policy_versions);
        tcase_add_test(tc, test_add_after_a_write_is_refused);
        tcase_add_test(tc, test_bounded);
        tcase_add_test(tc, test_concurrent_rounds_and_admin_writes);
        tcase_add_test(tc, test_default_per_engine);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
