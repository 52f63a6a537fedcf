/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/ratelimit.h"
#include "util/hash.h"

struct slot {
        char key[RATELIMIT_KEY_MAX + 1];
        uint64_t window_start; /* ms; 0: unused */
        unsigned failures;     /* in this window */
        uint64_t unlogged;     /* failures not logged since the last logged one */
};

struct ratelimit {
        pthread_mutex_t lock;
        unsigned max;
        uint64_t window;
        struct slot slot[RATELIMIT_SLOTS];
};

int ratelimit_new(unsigned max, uint64_t window_ms, struct ratelimit **ret)
{
        struct ratelimit *r;

        if (max == 0 || window_ms == 0)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        pthread_mutex_init(&r->lock, NULL);
        r->max = max;
        r->window = window_ms;
        *ret = r;
        return 0;
}

struct ratelimit *ratelimit_free(struct ratelimit *r)
{
        if (!r)
                return NULL;
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

/* FNV-1a over the key (ids are not secret; a collision only shares a budget). */
static struct slot *slot_for(struct ratelimit *r, const char *key, uint64_t now, bool claim)
{
        struct slot *s = &r->slot[hash_fnv1a_str(key) % RATELIMIT_SLOTS];

        if (strncmp(s->key, key, RATELIMIT_KEY_MAX) != 0) {
                if (!claim)
                        return NULL;
                memset(s, 0, sizeof(*s));
                strncpy(s->key, key, RATELIMIT_KEY_MAX);
        }
        /* a new window: the count starts again */
        if (s->window_start && (now < s->window_start || now - s->window_start >= r->window)) {
                s->window_start = 0;
                s->failures = 0;
        }
        return s;
}

bool ratelimit_blocked(struct ratelimit *r, const char *key, uint64_t now_ms, unsigned *ret_retry_s)
{
        struct slot *s;
        bool blocked = false;

        pthread_mutex_lock(&r->lock);
        s = slot_for(r, key, now_ms, false);
        if (s && s->window_start && s->failures >= r->max) {
                uint64_t left = s->window_start + r->window - now_ms;

                blocked = true;
                *ret_retry_s = (unsigned)((left + 999) / 1000);
                if (*ret_retry_s == 0)
                        *ret_retry_s = 1;
        }
        if (blocked)
                s->unlogged++;
        pthread_mutex_unlock(&r->lock);
        return blocked;
}

bool ratelimit_fail(struct ratelimit *r, const char *key, uint64_t now_ms, uint64_t *ret_suppressed)
{
        struct slot *s;
        bool log;

        pthread_mutex_lock(&r->lock);
        s = slot_for(r, key, now_ms, true);
        log = s->window_start == 0;
        if (log) {
                s->window_start = now_ms ? now_ms : 1;
                *ret_suppressed = s->unlogged;
                s->unlogged = 0;
        } else {
                s->unlogged++;
        }
        s->failures++;
        pthread_mutex_unlock(&r->lock);
        return log;
}
