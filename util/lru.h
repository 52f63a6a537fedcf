/* SPDX-License-Identifier: MIT */
/*
 * The one small LRU of the tree: an intrusive recency list and a chained hash table over the
 * same nodes. The caller embeds a struct lru_node in its entry, hashes its key (util/hash.h),
 * compares keys through lru_find()'s callback, owns the entries and the locking; this only
 * links them. Nothing here allocates but lru_init().
 */
#ifndef ATTEST_LRU_H
#define ATTEST_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct lru_node {
        struct lru_node *prev, *next; /* recency, most recent first */
        struct lru_node *chain;       /* the next in its bucket */
        uint64_t hash;
};

struct lru {
        struct lru_node **bucket;
        size_t mask; /* buckets - 1 (a power of two) */
        struct lru_node *head, *tail;
        size_t n;
};

/* The entry of type holding node ptr as member. */
#define LRU_ENTRY(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* An empty LRU with at least buckets buckets (rounded up to a power of two, 1 .. 2^24). */
int lru_init(struct lru *l, size_t buckets) _wur_;
/* Frees the table; the entries are the caller's (take them out first). */
void lru_done(struct lru *l);

/* Link e (not linked) as the most recent, under hash. */
void lru_add(struct lru *l, struct lru_node *e, uint64_t hash);
/* Unlink e (linked). */
void lru_remove(struct lru *l, struct lru_node *e);
/* Make e (linked) the most recent. */
void lru_touch(struct lru *l, struct lru_node *e);
/* The least recently used node, NULL when empty. */
struct lru_node *lru_oldest(const struct lru *l);
/* The most recently used node, NULL when empty; lru_older() the one after it (NULL at the end). */
struct lru_node *lru_newest(const struct lru *l);
struct lru_node *lru_older(const struct lru_node *e);
/* A linked node under hash for which eq(node, key) holds, NULL when none. Does not touch it. */
struct lru_node *lru_find(const struct lru *l, uint64_t hash,
                          bool (*eq)(const struct lru_node *e, const void *key), const void *key);

static inline size_t lru_count(const struct lru *l)
{
        return l->n;
}

#endif
