/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "nonce.h"

struct nonce {
        uint8_t v[NONCE_LEN];
        char agent[NONCE_AGENT_MAX + 1];
        uint64_t expires; /* ms */
        bool used;
        struct nonce *next_bucket; /* hash chain */
        struct nonce *next_fifo;   /* issue order == expiry order (one TTL for all) */
};

struct nonce_store {
        pthread_mutex_t lock;
        uint64_t ttl, keep; /* keep: how long past expiry a nonce is still known */
        size_t max, n, nbuckets;
        struct nonce *head, *tail; /* oldest first */
        struct nonce **bucket;
};

static size_t nonce_bucket(const struct nonce_store *s, const uint8_t *v)
{
        uint64_t h;

        /* the nonce is uniformly random: its first bytes are a fine hash */
        memcpy(&h, v, sizeof(h));
        return (size_t)(h & (s->nbuckets - 1));
}

int nonce_store_new(uint64_t ttl_ms, size_t max, struct nonce_store **ret)
{
        struct nonce_store *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->ttl = ttl_ms;
        s->keep = ttl_ms > NONCE_KEEP_MIN_MS ? ttl_ms : NONCE_KEEP_MIN_MS;
        s->max = max;
        s->nbuckets = 1024;
        while (s->nbuckets < max && s->nbuckets < (1u << 22))
                s->nbuckets <<= 1;
        s->bucket = calloc(s->nbuckets, sizeof(*s->bucket));
        if (!s->bucket) {
                free(s);
                return -ENOMEM;
        }
        pthread_mutex_init(&s->lock, NULL);
        *ret = s;
        return 0;
}

static void nonce_unlink(struct nonce_store *s, struct nonce *n)
{
        struct nonce **pp = &s->bucket[nonce_bucket(s, n->v)];

        while (*pp && *pp != n)
                pp = &(*pp)->next_bucket;
        if (*pp)
                *pp = n->next_bucket;
}

struct nonce_store *nonce_store_free(struct nonce_store *s)
{
        if (!s)
                return NULL;
        for (struct nonce *n = s->head, *next; n; n = next) {
                next = n->next_fifo;
                OPENSSL_cleanse(n->v, sizeof(n->v));
                free(n);
        }
        free(s->bucket);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
}

/* Drop nonces past their expiry by s->keep. Called with the lock held. */
static void nonce_purge(struct nonce_store *s, uint64_t now)
{
        while (s->head && s->head->expires + s->keep <= now) {
                struct nonce *n = s->head;

                s->head = n->next_fifo;
                if (!s->head)
                        s->tail = NULL;
                nonce_unlink(s, n);
                OPENSSL_cleanse(n->v, sizeof(n->v));
                free(n);
                s->n--;
        }
}

int nonce_issue(struct nonce_store *s, const char *agent, uint64_t now_ms,
                uint8_t ret_nonce[NONCE_LEN], uint64_t *ret_expires_ms)
{
        struct nonce *n;
        size_t al = strlen(agent), b;

        if (al > NONCE_AGENT_MAX)
                return -EINVAL;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        if (RAND_bytes(n->v, sizeof(n->v)) != 1) {
                free(n);
                return -EIO;
        }
        memcpy(n->agent, agent, al + 1);
        n->expires = now_ms + s->ttl;

        pthread_mutex_lock(&s->lock);
        nonce_purge(s, now_ms);
        if (s->n >= s->max) {
                pthread_mutex_unlock(&s->lock);
                OPENSSL_cleanse(n->v, sizeof(n->v));
                free(n);
                return -EBUSY;
        }
        b = nonce_bucket(s, n->v);
        n->next_bucket = s->bucket[b];
        s->bucket[b] = n;
        if (s->tail)
                s->tail->next_fifo = n;
        else
                s->head = n;
        s->tail = n;
        s->n++;
        memcpy(ret_nonce, n->v, NONCE_LEN);
        *ret_expires_ms = n->expires;
        pthread_mutex_unlock(&s->lock);
        return 0;
}

int nonce_consume(struct nonce_store *s, const char *agent, const uint8_t *nonce, size_t len,
                  uint64_t now_ms, struct attest_err *err)
{
        struct nonce *n;
        int e = 0;

        if (len != NONCE_LEN)
                return attest_fail(err, -ESTALE, "nonce_unknown", "nonce is %zu bytes, not %d", len,
                                   NONCE_LEN);
        pthread_mutex_lock(&s->lock);
        nonce_purge(s, now_ms);
        for (n = s->bucket[nonce_bucket(s, nonce)]; n; n = n->next_bucket)
                if (CRYPTO_memcmp(n->v, nonce, NONCE_LEN) == 0)
                        break;
        if (!n)
                e = attest_fail(err, -ESTALE, "nonce_unknown",
                                "nonce was not issued by this verifier or is long expired");
        else if (strcmp(n->agent, agent) != 0)
                e = attest_fail(err, -ESTALE, "nonce_wrong_agent",
                                "nonce was issued to another agent");
        else if (n->used)
                e = attest_fail(err, -ESTALE, "nonce_reused", "nonce was already used");
        else if (now_ms >= n->expires)
                e = attest_fail(err, -ESTALE, "nonce_expired", "nonce expired %llu ms ago",
                                (unsigned long long)(now_ms - n->expires));
        else
                n->used = true;
        pthread_mutex_unlock(&s->lock);
        return e;
}

void nonce_forget_agent(struct nonce_store *s, const char *agent)
{
        pthread_mutex_lock(&s->lock);
        for (struct nonce *n = s->head; n; n = n->next_fifo)
                if (!strcmp(n->agent, agent))
                        n->used = true;
        pthread_mutex_unlock(&s->lock);
}

size_t nonce_outstanding(struct nonce_store *s)
{
        size_t n;

        pthread_mutex_lock(&s->lock);
        n = s->n;
        pthread_mutex_unlock(&s->lock);
        return n;
}
