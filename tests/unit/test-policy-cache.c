/* SPDX-License-Identifier: MIT */
/*
 * daemon/policy-cache.c against a real SQLite store (Check): a policy is parsed once however
 * often it is looked up, a new version is used by the next lookup, a deleted policy is not
 * served, the cap evicts while held references stay valid, threads that miss together parse
 * once, and many threads may look up, add and drop at once (run under ASan and UBSan in build-asan;
 * the same binary runs under TSan).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/policy-cache.h"
#include "daemon/store/store.h"
#include "store-target.h"

struct fixture {
        char dir[64], db[96];
        struct store *s;
};

static void fixture_open(struct fixture *f)
{
        struct attest_err err = {0};

        snprintf(f->dir, sizeof(f->dir), "/tmp/attestd-pcache.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        store_target(f->dir, "a.db", f->db, sizeof(f->db));
        ck_assert_int_eq(store_open(f->db, STORE_WRITER, 4, &f->s, &err), 0);
}

static void fixture_close(struct fixture *f)
{
        char cmd[128];

        f->s = store_close(f->s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        ck_assert_int_eq(system(cmd), 0);
}

static int64_t put(struct fixture *f, const char *name, const char *kernel)
{
        char body[256];
        int64_t v = 0;

        snprintf(body, sizeof(body), "{\"kernel\":{\"versions\":[\"%s\"]},\"name\":\"%s\"}", kernel,
                 name);
        ck_assert_int_eq(store_policy_put(f->s, name, body, 1000, &v), 0);
        return v;
}

START_TEST(test_policy_cache_parses_a_policy_once_for_many_lookups)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct policy_cache_stats st;
        struct attest_err err = {0};
        const struct policy *first = NULL;
        struct fixture f;

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(8, &c), 0);
        ck_assert_int_eq(put(&f, "prod", "6.1.*"), 1);
        for (int i = 0; i < 100; i++) {
                struct policy_cached *e = NULL;

                ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), 0);
                ck_assert_int_eq(policy_cached_version(e), 1);
                ck_assert_str_eq(policy_name(policy_cached_policy(e)), "prod");
                if (!first)
                        first = policy_cached_policy(e);
                ck_assert_ptr_eq(policy_cached_policy(e), first);
                policy_cached_unref(e);
        }
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.parses, 1);
        ck_assert_uint_eq(st.misses, 1);
        ck_assert_uint_eq(st.hits, 99);
        ck_assert_uint_eq(st.entries, 1);
        fixture_close(&f);
}
END_TEST

START_TEST(test_policy_cache_serves_the_new_version_at_once)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct policy_cached *e = NULL, *held = NULL;
        struct policy_cache_stats st;
        struct attest_err err = {0};
        struct fixture f;

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(8, &c), 0);
        put(&f, "prod", "6.1.*");
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &held, &err), 0);
        ck_assert_int_eq(policy_cached_version(held), 1);
        /* a PUT: stored, then added with the parse that validated it */
        {
                json_auto_t *doc = json_pack("{s:s, s:{s:[s]}}", "name", "prod", "kernel",
                                             "versions", "6.6.*");
                struct policy *p = NULL;
                int64_t v = 0;

                ck_assert_int_eq(policy_cache_parse(c, doc, &p, &err), 0);
                ck_assert_int_eq(store_policy_put(f.s, "prod", "{\"name\":\"prod\"}", 2000, &v), 0);
                ck_assert_int_eq(v, 2);
                ck_assert_int_eq(policy_cache_add(c, "prod", v, p, NULL), 0);
        }
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), 0);
        ck_assert_int_eq(policy_cached_version(e), 2);
        ck_assert_ptr_ne(policy_cached_policy(e), policy_cached_policy(held));
        policy_cached_unref(e);
        /* the old version is still usable by whoever holds it */
        ck_assert_str_eq(policy_name(policy_cached_policy(held)), "prod");
        policy_cached_unref(held);
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.parses, 2); /* version 1 on its miss, version 2 on its PUT */
        ck_assert_uint_eq(st.hits, 1);
        /* a version the store has but the cache never saw: parsed from the store on the miss */
        put(&f, "prod", "6.8.*");
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), 0);
        ck_assert_int_eq(policy_cached_version(e), 3);
        policy_cached_unref(e);
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.parses, 3);
        fixture_close(&f);
}
END_TEST

START_TEST(test_policy_cache_does_not_serve_a_deleted_policy)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct policy_cached *e = NULL;
        struct policy_cache_stats st;
        struct attest_err err = {0};
        struct fixture f;

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(8, &c), 0);
        put(&f, "prod", "6.1.*");
        put(&f, "other", "6.1.*");
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), 0);
        e = policy_cached_unref(e);
        ck_assert_int_eq(policy_cache_get(c, f.s, "other", &e, &err), 0);
        e = policy_cached_unref(e);
        ck_assert_int_eq(store_policy_delete(f.s, "prod"), 0);
        policy_cache_drop(c, "prod");
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.entries, 1); /* "other" stays */
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), -ENOENT);
        ck_assert_ptr_null(e);
        /* a new PUT of the name is a new version, parsed anew */
        ck_assert_int_eq(put(&f, "prod", "6.6.*"), 2);
        ck_assert_int_eq(policy_cache_get(c, f.s, "prod", &e, &err), 0);
        ck_assert_int_eq(policy_cached_version(e), 2);
        policy_cached_unref(e);
        fixture_close(&f);
}
END_TEST

START_TEST(test_policy_cache_cap_evicts_the_least_recently_used)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct policy_cached *held = NULL, *e = NULL;
        struct policy_cache_stats st;
        struct attest_err err = {0};
        struct fixture f;
        char name[16];

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(3, &c), 0);
        for (int i = 0; i < 6; i++) {
                snprintf(name, sizeof(name), "p%d", i);
                put(&f, name, "6.1.*");
        }
        ck_assert_int_eq(policy_cache_get(c, f.s, "p0", &held, &err), 0);
        for (int i = 1; i < 6; i++) {
                snprintf(name, sizeof(name), "p%d", i);
                ck_assert_int_eq(policy_cache_get(c, f.s, name, &e, &err), 0);
                e = policy_cached_unref(e);
        }
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.entries, 3);
        ck_assert_uint_eq(st.evictions, 3);
        /* p0 left the cache but its holder's reference is intact (ASan would see a use after
         * free) */
        ck_assert_str_eq(policy_name(policy_cached_policy(held)), "p0");
        held = policy_cached_unref(held);
        /* p5 is the most recent: a hit; p0 was evicted: parsed again */
        ck_assert_int_eq(policy_cache_get(c, f.s, "p5", &e, &err), 0);
        e = policy_cached_unref(e);
        ck_assert_int_eq(policy_cache_get(c, f.s, "p0", &e, &err), 0);
        e = policy_cached_unref(e);
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.parses, 7);
        ck_assert_uint_eq(st.entries, 3);
        fixture_close(&f);
}
END_TEST

#define THREADS 8
#define ROUNDS 300

struct worker {
        struct policy_cache *c;
        struct store *s;
        unsigned id;
        int failures;
};

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct attest_err err = {0};
        char name[16];

        for (unsigned i = 0; i < ROUNDS; i++) {
                struct policy_cached *e = NULL;
                unsigned k = (w->id * 7 + i) % 6;

                snprintf(name, sizeof(name), "p%u", k);
                switch ((w->id + i) % 5) {
                case 0:
                        policy_cache_drop(w->c, name);
                        break;
                case 1: {
                        json_auto_t *doc = json_pack("{s:s}", "name", name);
                        struct policy *p = NULL;

                        if (!doc || policy_cache_parse(w->c, doc, &p, &err) < 0 ||
                            policy_cache_add(w->c, name, 1, p, &e) < 0)
                                w->failures++;
                        else if (strcmp(policy_name(policy_cached_policy(e)), name) != 0)
                                w->failures++;
                        policy_cached_unref(e);
                        break;
                }
                default:
                        if (policy_cache_get(w->c, w->s, name, &e, &err) < 0 ||
                            strcmp(policy_name(policy_cached_policy(e)), name) != 0)
                                w->failures++;
                        policy_cached_unref(e);
                }
        }
        return NULL;
}

START_TEST(test_policy_cache_many_threads_get_add_and_drop)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct worker w[THREADS];
        pthread_t t[THREADS];
        struct policy_cache_stats st;
        struct fixture f;
        char name[16];

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(4, &c), 0); /* smaller than the 6 names: evictions */
        for (int i = 0; i < 6; i++) {
                snprintf(name, sizeof(name), "p%d", i);
                put(&f, name, "6.1.*");
        }
        for (unsigned i = 0; i < THREADS; i++) {
                w[i] = (struct worker){c, f.s, i, 0};
                ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++) {
                ck_assert_int_eq(pthread_join(t[i], NULL), 0);
                ck_assert_int_eq(w[i].failures, 0);
        }
        policy_cache_stats(c, &st);
        ck_assert_uint_le(st.entries, 4);
        ck_assert_uint_eq(st.hits + st.misses, THREADS * ROUNDS * 3 / 5);
        fixture_close(&f);
}
END_TEST

#define MISS_ROUNDS 300

struct misser {
        struct policy_cache *c;
        struct store *s;
        pthread_barrier_t *go;
        int failures;
};

static void *misser_main(void *arg)
{
        struct misser *m = arg;
        struct attest_err err = {0};

        for (int i = 0; i < MISS_ROUNDS; i++) {
                struct policy_cached *e = NULL;

                /* all threads miss on a cold cache at once, then one empties it again */
                pthread_barrier_wait(m->go);
                if (policy_cache_get(m->c, m->s, "prod", &e, &err) < 0)
                        m->failures++;
                policy_cached_unref(e);
                if (pthread_barrier_wait(m->go) == PTHREAD_BARRIER_SERIAL_THREAD)
                        policy_cache_drop(m->c, "prod");
        }
        return NULL;
}

START_TEST(test_policy_cache_concurrent_misses_parse_once)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct misser m[THREADS];
        pthread_t t[THREADS];
        pthread_barrier_t go;
        struct policy_cache_stats st;
        struct fixture f;

        fixture_open(&f);
        ck_assert_int_eq(policy_cache_new(8, &c), 0);
        put(&f, "prod", "6.1.*");
        ck_assert_int_eq(pthread_barrier_init(&go, NULL, THREADS), 0);
        for (unsigned i = 0; i < THREADS; i++) {
                m[i] = (struct misser){c, f.s, &go, 0};
                ck_assert_int_eq(pthread_create(&t[i], NULL, misser_main, &m[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++) {
                ck_assert_int_eq(pthread_join(t[i], NULL), 0);
                ck_assert_int_eq(m[i].failures, 0);
        }
        pthread_barrier_destroy(&go);
        policy_cache_stats(c, &st);
        /* one parse per round, however many threads missed together */
        ck_assert_uint_eq(st.parses, MISS_ROUNDS);
        ck_assert_uint_eq(st.misses, MISS_ROUNDS);
        ck_assert_uint_eq(st.hits, (THREADS - 1) * MISS_ROUNDS);
        fixture_close(&f);
}
END_TEST

/* Look name up (a miss parses the stored text) and return its bytes. */
static uint64_t get_bytes(struct policy_cache *c, struct fixture *f, const char *name)
{
        struct policy_cached *e = NULL;
        struct attest_err err = {0};
        uint64_t n;

        ck_assert_int_eq(policy_cache_get(c, f->s, name, &e, &err), 0);
        n = policy_cached_bytes(e);
        policy_cached_unref(e);
        return n;
}

static uint64_t parses(struct policy_cache *c)
{
        struct policy_cache_stats st;

        policy_cache_stats(c, &st);
        return st.parses;
}

START_TEST(test_policy_cache_byte_cap_evicts_the_least_recently_used)
{
        struct policy_cache_stats st;
        struct fixture f;
        uint64_t one;

        fixture_open(&f);
        put(&f, "a", "6.1.*");
        put(&f, "b", "6.1.*");
        put(&f, "c", "6.1.*");
        put(&f, "d", "6.1.*");
        /* the cap at three entries' bytes -1, exactly, +1: two, three, three kept */
        for (int d = -1; d <= 1; d++) {
                _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;

                ck_assert_int_eq(policy_cache_new(8, &c), 0);
                one = get_bytes(c, &f, "a");
                ck_assert_uint_ge(one, POLICY_CACHE_ENTRY_BASE);
                ck_assert_int_eq(policy_cache_set_max_bytes(c, 3 * one + (uint64_t)(int64_t)d), 0);
                ck_assert_uint_eq(get_bytes(c, &f, "b"), one);
                ck_assert_uint_eq(get_bytes(c, &f, "c"), one);
                policy_cache_stats(c, &st);
                ck_assert_uint_eq(st.entries, d < 0 ? 2 : 3);
                ck_assert_uint_eq(st.bytes, st.entries * one);
                ck_assert_uint_le(st.bytes, 3 * one + (uint64_t)(int64_t)d);
                ck_assert_uint_eq(st.evictions, d < 0 ? 1 : 0);
                if (d < 0)
                        continue;
                /* a used again, then d: b is the least recently used and goes */
                get_bytes(c, &f, "a");
                get_bytes(c, &f, "d");
                policy_cache_stats(c, &st);
                ck_assert_uint_eq(st.entries, 3);
                ck_assert_uint_eq(st.evictions, 1);
                ck_assert_uint_eq(parses(c), 4);
                get_bytes(c, &f, "a"); /* held: no parse */
                ck_assert_uint_eq(parses(c), 4);
                get_bytes(c, &f, "b"); /* evicted: parsed again */
                ck_assert_uint_eq(parses(c), 5);
        }
        {
                _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;

                ck_assert_int_eq(policy_cache_new(8, &c), 0);
                ck_assert_int_eq(policy_cache_set_max_bytes(c, 0), -EINVAL);
        }
        fixture_close(&f);
}
END_TEST

/* A stored policy whose runtime section lists n digests. */
static void put_runtime(struct fixture *f, const char *name, int n)
{
        json_auto_t *d = json_object(), *doc = NULL;
        _cleanup_free_ char *text = NULL;
        char path[32];
        int64_t v = 0;

        for (int i = 0; i < n; i++) {
                snprintf(path, sizeof(path), "/usr/bin/f%d", i);
                json_object_set_new(d, path,
                                    json_pack("[s]", "sha256:000102030405060708090a0b0c0d0e0f"
                                                     "101112131415161718191a1b1c1d1e1f"));
        }
        doc = json_pack("{s:s, s:{s:{s:O}}}", "name", name, "ima", "runtime", "digests", d);
        ck_assert_ptr_nonnull(doc);
        text = json_dumps(doc, JSON_COMPACT);
        ck_assert_int_eq(store_policy_put(f->s, name, text, 1000, &v), 0);
}

START_TEST(test_policy_cache_entry_over_the_byte_cap_is_kept_alone)
{
        _cleanup_(policy_cache_freep) struct policy_cache *c = NULL;
        struct policy_cached *big = NULL;
        struct policy_cache_stats st;
        struct attest_err err = {0};
        struct fixture f;
        uint64_t one, nbig;

        fixture_open(&f);
        put(&f, "a", "6.1.*");
        put(&f, "b", "6.1.*");
        put_runtime(&f, "big", 20000);
        ck_assert_int_eq(policy_cache_new(8, &c), 0);
        one = get_bytes(c, &f, "a");
        ck_assert_int_eq(policy_cache_set_max_bytes(c, 2 * one), 0);
        get_bytes(c, &f, "b");
        /* 20,000 digests: far more than the cap; the rounds need it, so it is kept, alone */
        ck_assert_int_eq(policy_cache_get(c, f.s, "big", &big, &err), 0);
        nbig = policy_cached_bytes(big);
        ck_assert_uint_gt(nbig, 2 * one + 20000 * 32);
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.entries, 1);
        ck_assert_uint_eq(st.bytes, nbig);
        ck_assert_uint_eq(st.evictions, 2);
        /* looked up again: a hit, no parse */
        ck_assert_uint_eq(get_bytes(c, &f, "big"), nbig);
        ck_assert_uint_eq(parses(c), 3);
        /* the next add evicts it; the reference held stays valid */
        get_bytes(c, &f, "a");
        policy_cache_stats(c, &st);
        ck_assert_uint_eq(st.entries, 1);
        ck_assert_uint_eq(st.bytes, one);
        ck_assert_str_eq(policy_name(policy_cached_policy(big)), "big");
        ck_assert_ptr_nonnull(policy_runtime(policy_cached_policy(big)));
        policy_cached_unref(big);
        fixture_close(&f);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("policy-cache");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_policy_cache_parses_a_policy_once_for_many_lookups);
        tcase_add_test(tc, test_policy_cache_serves_the_new_version_at_once);
        tcase_add_test(tc, test_policy_cache_does_not_serve_a_deleted_policy);
        tcase_add_test(tc, test_policy_cache_cap_evicts_the_least_recently_used);
        tcase_add_test(tc, test_policy_cache_byte_cap_evicts_the_least_recently_used);
        tcase_add_test(tc, test_policy_cache_entry_over_the_byte_cap_is_kept_alone);
        tcase_add_test(tc, test_policy_cache_many_threads_get_add_and_drop);
        tcase_add_test(tc, test_policy_cache_concurrent_misses_parse_once);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
