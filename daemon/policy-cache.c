/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/policy-cache.h"
#include "policy/runtime.h"
#include "util/hash.h"
#include "util/lru.h"

#define POLICY_CACHE_BUCKETS 1024 /* names; every version of a name shares its chain */

struct policy_cached {
        char name[POLICY_NAME_MAX + 1];
        int64_t version;
        uint64_t bytes;             /* policy_cached_bytes() */
        struct policy *policy;      /* immutable once added */
        atomic_uint refs;           /* the cache's (while listed) and every holder's */
        struct lru_node node;       /* listed: by name (every version under one hash) */
        struct policy_cached *gone; /* unlisted, to unref outside the lock */
};

struct policy_cache {
        pthread_mutex_t lock;
        pthread_mutex_t fill_lock; /* held by the one miss reading and parsing the store */
        size_t max;
        uint64_t max_bytes, bytes; /* bytes: of the listed entries */
        struct lru lru;
        uint64_t gen; /* bumped by every drop */
        atomic_uint_fast64_t hits, misses, parses, evictions;
};

int policy_cache_new(size_t max, struct policy_cache **ret)
{
        struct policy_cache *c;

        if (max == 0)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if (lru_init(&c->lru, max < POLICY_CACHE_BUCKETS ? max : POLICY_CACHE_BUCKETS) < 0) {
                free(c);
                return -ENOMEM;
        }
        c->max = max;
        c->max_bytes = POLICY_CACHE_BYTES_DEFAULT;
        pthread_mutex_init(&c->lock, NULL);
        pthread_mutex_init(&c->fill_lock, NULL);
        *ret = c;
        return 0;
}

int policy_cache_set_max_bytes(struct policy_cache *c, uint64_t max_bytes)
{
        if (max_bytes == 0)
                return -EINVAL;
        pthread_mutex_lock(&c->lock);
        c->max_bytes = max_bytes;
        pthread_mutex_unlock(&c->lock);
        return 0;
}

struct policy_cached *policy_cached_unref(struct policy_cached *e)
{
        if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
                policy_free(e->policy);
                free(e);
        }
        return NULL;
}

const struct policy *policy_cached_policy(const struct policy_cached *e)
{
        return e->policy;
}

int64_t policy_cached_version(const struct policy_cached *e)
{
        return e->version;
}

uint64_t policy_cached_bytes(const struct policy_cached *e)
{
        return e->bytes;
}

/* Under the lock. */
static void unlink_entry(struct policy_cache *c, struct policy_cached *e)
{
        lru_remove(&c->lru, &e->node);
        c->bytes -= e->bytes;
}

/* Under the lock. */
static void push_front(struct policy_cache *c, struct policy_cached *e)
{
        lru_add(&c->lru, &e->node, hash_fnv1a_str(e->name));
        c->bytes += e->bytes;
}

struct name_version {
        const char *name;
        int64_t version; /* < 0: any */
};

static bool entry_eq(const struct lru_node *n, const void *key)
{
        const struct policy_cached *e = LRU_ENTRY(n, const struct policy_cached, node);
        const struct name_version *k = key;

        return (k->version < 0 || e->version == k->version) && strcmp(e->name, k->name) == 0;
}

/* Under the lock: a listed entry of name (version < 0: any version), or NULL. */
static struct policy_cached *lookup_locked(struct policy_cache *c, const char *name,
                                           int64_t version)
{
        const struct name_version k = {name, version};
        struct lru_node *n = lru_find(&c->lru, hash_fnv1a_str(name), entry_eq, &k);

        return n ? LRU_ENTRY(n, struct policy_cached, node) : NULL;
}

/* Under the lock: the listed entry name@version, moved to the front, or NULL. */
static struct policy_cached *find(struct policy_cache *c, const char *name, int64_t version)
{
        struct policy_cached *e = lookup_locked(c, name, version);

        if (e)
                lru_touch(&c->lru, &e->node);
        return e;
}

static struct policy_cached *oldest(struct policy_cache *c)
{
        struct lru_node *n = lru_oldest(&c->lru);

        return n ? LRU_ENTRY(n, struct policy_cached, node) : NULL;
}

struct policy_cache *policy_cache_free(struct policy_cache *c)
{
        if (!c)
                return NULL;
        for (struct policy_cached *e; (e = oldest(c));) {
                unlink_entry(c, e);
                policy_cached_unref(e);
        }
        lru_done(&c->lru);
        pthread_mutex_destroy(&c->fill_lock);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

int policy_cache_parse(struct policy_cache *c, const json_t *doc, struct policy **ret,
                       struct attest_err *err)
{
        atomic_fetch_add(&c->parses, 1);
        return policy_from_json(doc, ret, err);
}

static int parse_text(struct policy_cache *c, const char *text, struct policy **ret,
                      struct attest_err *err)
{
        atomic_fetch_add(&c->parses, 1);
        return policy_parse(text, strlen(text), ret, err);
}

/* Add p (taken) as name@version unless a drop happened since gen (gen NULL: always). */
static int add(struct policy_cache *c, const char *name, int64_t version, struct policy *p,
               const uint64_t *gen, struct policy_cached **ret)
{
        struct policy_cached *e, *old, *evicted = NULL;
        size_t len = strlen(name);

        if (len > POLICY_NAME_MAX) {
                policy_free(p);
                return -EINVAL;
        }
        e = calloc(1, sizeof(*e));
        if (!e) {
                policy_free(p);
                return -ENOMEM;
        }
        memcpy(e->name, name, len + 1);
        e->version = version;
        e->policy = p;
        e->bytes = sizeof(*e) + POLICY_CACHE_ENTRY_BASE + rt_policy_size(policy_runtime(p));
        atomic_init(&e->refs, ret ? 2 : 1);

        pthread_mutex_lock(&c->lock);
        if ((old = find(c, name, version))) {
                /* a racing lookup added it first: one copy is enough */
                if (ret)
                        atomic_fetch_add(&old->refs, 1);
                pthread_mutex_unlock(&c->lock);
                policy_free(e->policy);
                free(e);
                if (ret)
                        *ret = old;
                return 0;
        }
        if (gen && *gen != c->gen) {
                /* dropped meanwhile: the caller gets its copy, the cache does not keep it */
                pthread_mutex_unlock(&c->lock);
                if (!ret) {
                        policy_free(e->policy);
                        free(e);
                        return 0;
                }
                atomic_store(&e->refs, 1);
                *ret = e;
                return 0;
        }
        push_front(c, e);
        /* the least recently used go while either cap is passed; never e itself */
        while (oldest(c) != e && (lru_count(&c->lru) > c->max || c->bytes > c->max_bytes)) {
                struct policy_cached *t = oldest(c);

                unlink_entry(c, t);
                t->gone = evicted; /* unref'ed outside the lock */
                evicted = t;
                atomic_fetch_add(&c->evictions, 1);
        }
        pthread_mutex_unlock(&c->lock);
        while (evicted) {
                struct policy_cached *next = evicted->gone;

                policy_cached_unref(evicted);
                evicted = next;
        }
        if (ret)
                *ret = e;
        return 0;
}

int policy_cache_add(struct policy_cache *c, const char *name, int64_t version, struct policy *p,
                     struct policy_cached **ret)
{
        return add(c, name, version, p, NULL, ret);
}

/* A new reference to the cached name@version (a hit) or NULL; *ret_gen the drop generation. */
static struct policy_cached *lookup(struct policy_cache *c, const char *name, int64_t version,
                                    uint64_t *ret_gen)
{
        struct policy_cached *e;

        pthread_mutex_lock(&c->lock);
        e = find(c, name, version);
        if (e)
                atomic_fetch_add(&e->refs, 1);
        *ret_gen = c->gen;
        pthread_mutex_unlock(&c->lock);
        if (e)
                atomic_fetch_add(&c->hits, 1);
        return e;
}

int policy_cache_get(struct policy_cache *c, struct store *s, const char *name,
                     struct policy_cached **ret, struct attest_err *err)
{
        _cleanup_free_ char *body = NULL;
        struct policy *p = NULL;
        struct policy_cached *e;
        int64_t version;
        uint64_t gen;
        int r;

        /* the store says which version is live: a deleted policy is never served */
        if ((r = store_policy_version(s, name, &version)) < 0)
                return r;
        if ((e = lookup(c, name, version, &gen))) {
                *ret = e;
                return 0;
        }
        /* one miss at a time, looked up again: rounds that miss together (after a restart, a
         * new version) parse the stored text once, not once each */
        pthread_mutex_lock(&c->fill_lock);
        if ((e = lookup(c, name, version, &gen))) {
                pthread_mutex_unlock(&c->fill_lock);
                *ret = e;
                return 0;
        }
        atomic_fetch_add(&c->misses, 1);
        r = store_policy_get(s, name, version, &body, NULL, NULL);
        if (r == 0)
                r = parse_text(c, body, &p, err);
        if (r == 0)
                r = add(c, name, version, p, &gen, ret);
        pthread_mutex_unlock(&c->fill_lock);
        return r;
}

void policy_cache_drop(struct policy_cache *c, const char *name)
{
        struct policy_cached *gone = NULL;

        pthread_mutex_lock(&c->lock);
        c->gen++;
        for (struct policy_cached *e; (e = lookup_locked(c, name, -1));) {
                unlink_entry(c, e);
                e->gone = gone; /* unref'ed outside the lock */
                gone = e;
        }
        pthread_mutex_unlock(&c->lock);
        while (gone) {
                struct policy_cached *next = gone->gone;

                policy_cached_unref(gone);
                gone = next;
        }
}

void policy_cache_stats(struct policy_cache *c, struct policy_cache_stats *ret)
{
        pthread_mutex_lock(&c->lock);
        ret->entries = lru_count(&c->lru);
        ret->bytes = c->bytes;
        pthread_mutex_unlock(&c->lock);
        ret->hits = atomic_load(&c->hits);
        ret->misses = atomic_load(&c->misses);
        ret->parses = atomic_load(&c->parses);
        ret->evictions = atomic_load(&c->evictions);
}
