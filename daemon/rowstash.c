/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/rowstash.h"
#include "util/hash.h"
#include "util/lru.h"

#define ROWSTASH_BUCKETS_MAX 16384

struct kept {
        struct store_agent *a;
        uint8_t nonce[NONCE_LEN];
        uint64_t expires_ms;
        size_t bytes;
        struct lru_node node;
};

struct rowstash {
        pthread_mutex_t lock;
        size_t max_rows, max_bytes, bytes;
        struct lru lru; /* by agent id; the oldest pushed out first */
        uint64_t kept, taken, missed, pushed_out;
};

static size_t strsz(const char *s)
{
        return s ? strlen(s) + 1 : 0;
}

/* What a row holds in memory, about (the struct and its variable-length fields). */
static size_t row_bytes(const struct store_agent *a)
{
        return sizeof(struct kept) + sizeof(*a) + a->ak_public_len + a->ak_name_len +
               a->ek_cert_len + a->replay_state_len + strsz(a->policy) + strsz(a->last_status) +
               strsz(a->last_policy) + strsz(a->labels);
}

int rowstash_new(size_t max_rows, size_t max_bytes, struct rowstash **ret)
{
        struct rowstash *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        if (lru_init(&s->lru, max_rows < ROWSTASH_BUCKETS_MAX ? max_rows : ROWSTASH_BUCKETS_MAX) <
            0) {
                free(s);
                return -ENOMEM;
        }
        s->max_rows = max_rows;
        s->max_bytes = max_bytes;
        pthread_mutex_init(&s->lock, NULL);
        *ret = s;
        return 0;
}

/* Take k out and free it. Lock held. */
static void drop_locked(struct rowstash *s, struct kept *k)
{
        lru_remove(&s->lru, &k->node);
        s->bytes -= k->bytes;
        store_agent_free(k->a);
        free(k);
}

struct rowstash *rowstash_free(struct rowstash *s)
{
        if (!s)
                return NULL;
        for (struct lru_node *n; (n = lru_oldest(&s->lru));)
                drop_locked(s, LRU_ENTRY(n, struct kept, node));
        lru_done(&s->lru);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
}

static bool id_eq(const struct lru_node *n, const void *id)
{
        return strcmp(LRU_ENTRY(n, const struct kept, node)->a->id, id) == 0;
}

static struct kept *find_locked(struct rowstash *s, const char *id)
{
        struct lru_node *n = lru_find(&s->lru, hash_fnv1a_str(id), id_eq, id);

        return n ? LRU_ENTRY(n, struct kept, node) : NULL;
}

void rowstash_put(struct rowstash *s, struct store_agent *a, const uint8_t nonce[NONCE_LEN],
                  uint64_t expires_ms)
{
        struct kept *k, *old;
        size_t bytes;

        if (!a)
                return;
        bytes = row_bytes(a);
        if (s->max_rows == 0 || bytes > s->max_bytes || !(k = calloc(1, sizeof(*k)))) {
                store_agent_free(a);
                return;
        }
        k->a = a;
        memcpy(k->nonce, nonce, NONCE_LEN);
        k->expires_ms = expires_ms;
        k->bytes = bytes;
        pthread_mutex_lock(&s->lock);
        if ((old = find_locked(s, a->id)))
                drop_locked(s, old);
        while (lru_count(&s->lru) >= s->max_rows || s->bytes + bytes > s->max_bytes) {
                drop_locked(s, LRU_ENTRY(lru_oldest(&s->lru), struct kept, node));
                s->pushed_out++;
        }
        lru_add(&s->lru, &k->node, hash_fnv1a_str(a->id));
        s->bytes += bytes;
        s->kept++;
        pthread_mutex_unlock(&s->lock);
}

struct store_agent *rowstash_take(struct rowstash *s, const char *id, const uint8_t *nonce,
                                  size_t len, uint64_t now_ms)
{
        struct store_agent *a = NULL;
        struct kept *k;

        pthread_mutex_lock(&s->lock);
        k = find_locked(s, id);
        if (k && k->expires_ms <= now_ms) {
                drop_locked(s, k);
                k = NULL;
        }
        /* the nonce is the agent's to know: no secret compared here */
        if (k && len == NONCE_LEN && memcmp(k->nonce, nonce, NONCE_LEN) == 0) {
                a = k->a;
                k->a = NULL;
                lru_remove(&s->lru, &k->node);
                s->bytes -= k->bytes;
                free(k);
                s->taken++;
        } else {
                s->missed++;
        }
        pthread_mutex_unlock(&s->lock);
        return a;
}

bool rowstash_state(struct rowstash *s, const char *id, uint64_t now_ms,
                    enum agent_state *ret_state)
{
        struct kept *k;
        bool found = false;

        pthread_mutex_lock(&s->lock);
        k = find_locked(s, id);
        if (k && k->expires_ms > now_ms) {
                *ret_state = k->a->state;
                found = true;
        }
        pthread_mutex_unlock(&s->lock);
        return found;
}

void rowstash_stats(struct rowstash *s, struct rowstash_stats *ret)
{
        pthread_mutex_lock(&s->lock);
        *ret = (struct rowstash_stats){
                .kept = s->kept,
                .taken = s->taken,
                .missed = s->missed,
                .pushed_out = s->pushed_out,
                .rows = lru_count(&s->lru),
                .bytes = s->bytes,
        };
        pthread_mutex_unlock(&s->lock);
}
