/* SPDX-License-Identifier: MIT */
/* util/hash (FNV-1a 64) and util/lru (intrusive recency list + chained hash table). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "util/hash.h"
#include "util/lru.h"

START_TEST(test_hash_fnv1a_known_vectors)
{
        /* the FNV reference vectors (Fowler, Noll, Vo: FNV-1a 64) */
        ck_assert_uint_eq(hash_fnv1a("", 0, 0), 0xcbf29ce484222325ull);
        ck_assert_uint_eq(hash_fnv1a_str("a"), 0xaf63dc4c8601ec8cull);
        ck_assert_uint_eq(hash_fnv1a_str("foobar"), 0x85944171f73967e8ull);
        ck_assert_uint_eq(hash_fnv1a(LIT("foobar"), 0), hash_fnv1a_str("foobar"));
        /* bytes, not text: a NUL counts */
        ck_assert_uint_ne(hash_fnv1a("a\0", 2, 0), hash_fnv1a("a", 1, 0));
        /* a seed moves every value */
        ck_assert_uint_ne(hash_fnv1a(LIT("foobar"), 1), hash_fnv1a(LIT("foobar"), 0));
        ck_assert_uint_eq(hash_fnv1a("", 0, 0xcbf29ce484222325ull), 0);
}
END_TEST

struct item {
        char key[16];
        struct lru_node node;
};

static bool item_eq(const struct lru_node *n, const void *key)
{
        return strcmp(LRU_ENTRY(n, const struct item, node)->key, key) == 0;
}

static struct item *find(struct lru *l, const char *key)
{
        struct lru_node *n = lru_find(l, hash_fnv1a_str(key), item_eq, key);

        return n ? LRU_ENTRY(n, struct item, node) : NULL;
}

START_TEST(test_lru_find_touch_evict_order)
{
        struct item it[5];
        struct lru l;

        ck_assert_int_eq(lru_init(&l, 3), 0); /* 4 buckets: chains of several */
        ck_assert_ptr_null(lru_oldest(&l));
        ck_assert_ptr_null(find(&l, "k0"));
        for (int i = 0; i < 5; i++) {
                snprintf(it[i].key, sizeof(it[i].key), "k%d", i);
                lru_add(&l, &it[i].node, hash_fnv1a_str(it[i].key));
        }
        ck_assert_uint_eq(lru_count(&l), 5);
        for (int i = 0; i < 5; i++)
                ck_assert_ptr_eq(find(&l, it[i].key), &it[i]);
        ck_assert_ptr_null(find(&l, "k5"));
        /* finding does not touch: k0 is still the oldest */
        ck_assert_ptr_eq(lru_oldest(&l), &it[0].node);
        lru_touch(&l, &it[0].node);
        ck_assert_ptr_eq(lru_oldest(&l), &it[1].node);
        ck_assert_ptr_eq(lru_newest(&l), &it[0].node);
        lru_touch(&l, &it[0].node); /* the newest already */
        ck_assert_ptr_eq(lru_newest(&l), &it[0].node);
        /* newest to oldest: 0 4 3 2 1 */
        {
                static const int want[] = {0, 4, 3, 2, 1};
                struct lru_node *n = lru_newest(&l);

                for (size_t i = 0; i < 5; i++, n = lru_older(n))
                        ck_assert_ptr_eq(n, &it[want[i]].node);
                ck_assert_ptr_null(n);
        }
        /* evicting the oldest, then one from the middle of its chain */
        lru_remove(&l, lru_oldest(&l));
        ck_assert_ptr_null(find(&l, "k1"));
        ck_assert_ptr_eq(lru_oldest(&l), &it[2].node);
        lru_remove(&l, &it[3].node);
        ck_assert_ptr_null(find(&l, "k3"));
        ck_assert_uint_eq(lru_count(&l), 3);
        for (int i = 0; i < 5; i++)
                if (i != 1 && i != 3)
                        ck_assert_ptr_eq(find(&l, it[i].key), &it[i]);
        lru_remove(&l, &it[0].node);
        lru_remove(&l, &it[2].node);
        lru_remove(&l, &it[4].node);
        ck_assert_uint_eq(lru_count(&l), 0);
        ck_assert_ptr_null(lru_oldest(&l));
        ck_assert_ptr_null(lru_newest(&l));
        lru_done(&l);
}
END_TEST

START_TEST(test_lru_same_hash_told_apart_by_key)
{
        struct item a = {.key = "a"}, b = {.key = "b"};
        struct lru l;

        ck_assert_int_eq(lru_init(&l, 16), 0);
        /* a forced collision: both under hash 7 */
        lru_add(&l, &a.node, 7);
        lru_add(&l, &b.node, 7);
        ck_assert_ptr_eq(lru_find(&l, 7, item_eq, "a"), &a.node);
        ck_assert_ptr_eq(lru_find(&l, 7, item_eq, "b"), &b.node);
        ck_assert_ptr_null(lru_find(&l, 7 + 16, item_eq, "a")); /* same bucket, other hash */
        lru_remove(&l, &b.node);
        ck_assert_ptr_eq(lru_find(&l, 7, item_eq, "a"), &a.node);
        lru_remove(&l, &a.node);
        lru_done(&l);
}
END_TEST

START_TEST(test_lru_bucket_count_bounds)
{
        struct lru l;

        ck_assert_int_eq(lru_init(&l, 0), 0); /* one bucket */
        ck_assert_uint_eq(l.mask, 0);
        lru_done(&l);
        ck_assert_int_eq(lru_init(&l, 5), 0);
        ck_assert_uint_eq(l.mask, 7);
        lru_done(&l);
        ck_assert_int_eq(lru_init(&l, 1u << 24), 0);
        lru_done(&l);
        ck_assert_int_eq(lru_init(&l, (1u << 24) + 1), -EINVAL);
}
END_TEST

static Suite *lru_suite(void)
{
        Suite *s = suite_create("lru");
        TCase *tc = tcase_create("lru");

        tcase_add_test(tc, test_hash_fnv1a_known_vectors);
        tcase_add_test(tc, test_lru_find_touch_evict_order);
        tcase_add_test(tc, test_lru_same_hash_told_apart_by_key);
        tcase_add_test(tc, test_lru_bucket_count_bounds);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(lru_suite());
}
