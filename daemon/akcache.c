/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "daemon/akcache.h"

#define AKCACHE_BUCKETS 4096
#define AKCACHE_ID_MAX 64

struct akcache_ref {
        char id[AKCACHE_ID_MAX + 1];
        uint8_t hash[SHA256_DIGEST_LENGTH];
        struct quote_ak *ak;
        unsigned refs;
        bool cached; /* in the table (holds one reference) */
        struct akcache_ref *next;
};

struct akcache {
        pthread_mutex_t lock;
        size_t max, n;
        struct akcache_ref *bucket[AKCACHE_BUCKETS];
};

static size_t bucket_of(const char *id)
{
        /* FNV-1a */
        uint32_t h = 2166136261u;

        for (; *id; id++)
                h = (h ^ (uint8_t)*id) * 16777619u;
        return h % AKCACHE_BUCKETS;
}

int akcache_new(size_t max, struct akcache **ret)
{
        struct akcache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
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
        for (size_t b = 0; b < AKCACHE_BUCKETS; b++)
                for (struct akcache_ref *r = c->bucket[b], *next; r; r = next) {
                        next = r->next;
                        ref_free(r);
                }
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

const struct quote_ak *akcache_ak(const struct akcache_ref *r)
{
        return r->ak;
}

/* Unlink id's entry from its bucket; drops the table's reference. Lock held. */
static void unlink_locked(struct akcache *c, const char *id)
{
        struct akcache_ref **pp = &c->bucket[bucket_of(id)];

        while (*pp && strcmp((*pp)->id, id) != 0)
                pp = &(*pp)->next;
        if (*pp) {
                struct akcache_ref *r = *pp;

                *pp = r->next;
                r->next = NULL;
                r->cached = false;
                c->n--;
                if (--r->refs == 0)
                        ref_free(r);
        }
}

int akcache_get(struct akcache *c, const char *id, const uint8_t *pub, size_t len,
                struct akcache_ref **ret, struct attest_err *err)
{
        uint8_t h[SHA256_DIGEST_LENGTH];
        struct akcache_ref *r;
        size_t b = bucket_of(id);
        int e;

        if (strlen(id) > AKCACHE_ID_MAX)
                return -EINVAL;
        SHA256(pub, len, h);
        pthread_mutex_lock(&c->lock);
        for (r = c->bucket[b]; r; r = r->next)
                if (!strcmp(r->id, id))
                        break;
        if (r && !memcmp(r->hash, h, sizeof(h))) {
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
        if (c->n < c->max) {
                r->cached = true;
                r->refs++;
                r->next = c->bucket[b];
                c->bucket[b] = r;
                c->n++;
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
