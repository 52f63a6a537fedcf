/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "util/lru.h"

#define LRU_BUCKETS_MAX (1u << 24)

int lru_init(struct lru *l, size_t buckets)
{
        size_t n = 1;

        if (buckets > LRU_BUCKETS_MAX)
                return -EINVAL;
        while (n < buckets)
                n <<= 1;
        *l = (struct lru){0};
        if (!(l->bucket = calloc(n, sizeof(*l->bucket))))
                return -ENOMEM;
        l->mask = n - 1;
        return 0;
}

void lru_done(struct lru *l)
{
        free(l->bucket);
        *l = (struct lru){0};
}

static void list_unlink(struct lru *l, struct lru_node *e)
{
        if (e->prev)
                e->prev->next = e->next;
        else
                l->head = e->next;
        if (e->next)
                e->next->prev = e->prev;
        else
                l->tail = e->prev;
        e->prev = e->next = NULL;
}

static void list_push_front(struct lru *l, struct lru_node *e)
{
        e->prev = NULL;
        e->next = l->head;
        if (l->head)
                l->head->prev = e;
        else
                l->tail = e;
        l->head = e;
}

void lru_add(struct lru *l, struct lru_node *e, uint64_t hash)
{
        struct lru_node **b = &l->bucket[hash & l->mask];

        e->hash = hash;
        e->chain = *b;
        *b = e;
        list_push_front(l, e);
        l->n++;
}

void lru_remove(struct lru *l, struct lru_node *e)
{
        struct lru_node **pp = &l->bucket[e->hash & l->mask];

        while (*pp != e)
                pp = &(*pp)->chain;
        *pp = e->chain;
        e->chain = NULL;
        list_unlink(l, e);
        l->n--;
}

void lru_touch(struct lru *l, struct lru_node *e)
{
        if (l->head == e)
                return;
        list_unlink(l, e);
        list_push_front(l, e);
}

struct lru_node *lru_oldest(const struct lru *l)
{
        return l->tail;
}

struct lru_node *lru_newest(const struct lru *l)
{
        return l->head;
}

struct lru_node *lru_older(const struct lru_node *e)
{
        return e->next;
}

struct lru_node *lru_find(const struct lru *l, uint64_t hash,
                          bool (*eq)(const struct lru_node *e, const void *key), const void *key)
{
        for (struct lru_node *e = l->bucket[hash & l->mask]; e; e = e->chain)
                if (e->hash == hash && eq(e, key))
                        return e;
        return NULL;
}
