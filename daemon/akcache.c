/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "daemon/akcache.h"
#include "util/hash.h"
#include "util/lru.h"

#define AKCACHE_BUCKETS_MAX 65536 /* chains of max / 65536 at most */
#define AKCACHE_ID_MAX 64

struct akcache_ref {
        char id[AKCACHE_ID_MAX + 1];
        uint8_t hash[SHA256_DIGEST_LENGTH];
        struct quote_ak *ak;
        unsigned refs;
        bool cached; /* in the table (holds one reference) */
        struct lru_node node;
};

struct akcache {
        pthread_mutex_t lock;
        size_t max;
        struct lru lru; /* the cached entries by id, the least recently used evicted first */
};

int akcache_new(size_t max, struct akcache **ret)
{
        struct akcache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        if (lru_init(&c->lru, max < AKCACHE_BUCKETS_MAX ? max : AKCACHE_BUCKETS_MAX) < 0) {
                free(c);
                return -ENOMEM;
        }
        c->max = max;
        pthread_mutex_init(&c->lock, NULL);
        *ret = c;
        return 0;
}

static void ref_free(struct akcache_ref *r)
{
        quote_ak_free(r->ak);
        free(r);
}

struct akcache *akcache_free(struct akcache *c)
{
        if (!c)
                return NULL;
        for (struct lru_node *n; (n = lru_oldest(&c->lru));) {
                lru_remove(&c->lru, n);
                ref_free(LRU_ENTRY(n, struct akcache_ref, node));
        }
        lru_done(&c->lru);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

const struct quote_ak *akcache_ak(const struct akcache_ref *r)
{
        return r->ak;
}

static bool id_eq(const struct lru_node *n, const void *id)
{
        return strcmp(LRU_ENTRY(n, const struct akcache_ref, node)->id, id) == 0;
}

/* id's cached entry or NULL. Lock held. */
static struct akcache_ref *find_locked(struct akcache *c, const char *id)
{
        struct lru_node *n = lru_find(&c->lru, hash_fnv1a_str(id), id_eq, id);

        return n ? LRU_ENTRY(n, struct akcache_ref, node) : NULL;
}

/* Take r out of the table; drops the table's reference. Lock held. */
static void evict_locked(struct akcache *c, struct akcache_ref *r)
{
        lru_remove(&c->lru, &r->node);
        r->cached = false;
        if (--r->refs == 0)
                ref_free(r);
}

/* Take id's entry out of the table, if there is one. Lock held. */
static void unlink_locked(struct akcache *c, const char *id)
{
        struct akcache_ref *r = find_locked(c, id);

        if (r)
                evict_locked(c, r);
}

int akcache_get(struct akcache *c, const char *id, const uint8_t *pub, size_t len,
                struct akcache_ref **ret, struct attest_err *err)
{
        uint8_t h[SHA256_DIGEST_LENGTH];
        struct akcache_ref *r;
        int e;

        if (strlen(id) > AKCACHE_ID_MAX)
                return -EINVAL;
        SHA256(pub, len, h);
        pthread_mutex_lock(&c->lock);
        r = find_locked(c, id);
        if (r && !memcmp(r->hash, h, sizeof(h))) {
                lru_touch(&c->lru, &r->node);
                r->refs++;
                pthread_mutex_unlock(&c->lock);
                *ret = r;
                return 0;
        }
        pthread_mutex_unlock(&c->lock);

        /* parse outside the lock */
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        if ((e = quote_ak_parse(pub, len, &r->ak, err)) < 0) {
                free(r);
                return e;
        }
        memcpy(r->id, id, strlen(id) + 1);
        memcpy(r->hash, h, sizeof(h));
        r->refs = 1;
        pthread_mutex_lock(&c->lock);
        unlink_locked(c, id);
        if (c->max > 0) {
                /* room for one more: the least recently used go */
                while (lru_count(&c->lru) >= c->max)
                        evict_locked(c, LRU_ENTRY(lru_oldest(&c->lru), struct akcache_ref, node));
                r->cached = true;
                r->refs++;
                lru_add(&c->lru, &r->node, hash_fnv1a_str(id));
        }
        pthread_mutex_unlock(&c->lock);
        *ret = r;
        return 0;
}

void akcache_put(struct akcache *c, struct akcache_ref *r)
{
        bool gone;

        if (!r)
                return;
        pthread_mutex_lock(&c->lock);
        gone = --r->refs == 0;
        pthread_mutex_unlock(&c->lock);
        if (gone)
                ref_free(r);
}

void akcache_drop(struct akcache *c, const char *id)
{
        pthread_mutex_lock(&c->lock);
        unlink_locked(c, id);
        pthread_mutex_unlock(&c->lock);
}
