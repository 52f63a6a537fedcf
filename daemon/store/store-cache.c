/* SPDX-License-Identifier: MIT */
/*
 * The store's read cache (no SQLite reads on the attestation's hot path): agent rows by
 * id, and the live version of each policy name. Private to daemon/store/store-*.c, which keep it
 * coherent: every write that changes an agent row forgets that row (or, for a verdict, applies
 * the same change) once its transaction has committed; every policy write forgets the versions.
 *
 * The race it must not lose: a reader misses, reads the database, and a write commits and
 * forgets the row before the reader adds what it read. So every change bumps a generation
 * (per stripe of ids for agents, one for policies) after its commit; a reader takes the
 * generation before it reads the database and its add is refused when the generation moved.
 * An add never replaces an entry already held (that one may be newer).
 */
#include <pthread.h>
#include <time.h>
#include <search.h>

#include "daemon/store/store-internal.h"
#include "util/clock.h"
#include "util/hash.h"

#define AGENT_STRIPES 64
#define POLICY_SLOTS 32

struct agent_entry {
        char id[STORE_ID_MAX + 1]; /* first: the tree compares entries as strings */
        struct store_agent *a;
        struct agent_entry *prev, *next; /* LRU, most recent first */
};

struct policy_slot {
        char name[STORE_ID_MAX + 1];
        int64_t version; /* 0: no live version (-ENOENT) */
        int64_t at;      /* CLOCK_MONOTONIC ms when read from the database */
        bool used;
};

struct store_cache {
        pthread_mutex_t lock;
        void *tree; /* tsearch root of struct agent_entry */
        struct agent_entry *head, *tail;
        size_t n, max;
        uint64_t gen[AGENT_STRIPES];
        struct store_cache_stats stats;
        struct policy_slot policy[POLICY_SLOTS];
        unsigned policy_next;
        uint64_t policy_gen;
        int64_t policy_max_age; /* ms a live version is served (0: until a local write) */
};

void store_cache_set_policy_max_age(struct store_cache *c, int64_t ms)
{
        pthread_mutex_lock(&c->lock);
        c->policy_max_age = ms;
        pthread_mutex_unlock(&c->lock);
}

static int entry_cmp(const void *a, const void *b)
{
        return strcmp(a, b); /* both are struct agent_entry, id first */
}

/* Not a keyed hash: a collision only makes a concurrent miss skip its add. */
static unsigned stripe(const char *id)
{
        return hash_fnv1a_str(id) % AGENT_STRIPES;
}

int store_cache_new(size_t max, struct store_cache **ret)
{
        struct store_cache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        c->max = max;
        *ret = c;
        return 0;
}

static void unlink_entry(struct store_cache *c, struct agent_entry *e)
{
        if (e->prev)
                e->prev->next = e->next;
        else
                c->head = e->next;
        if (e->next)
                e->next->prev = e->prev;
        else
                c->tail = e->prev;
        e->prev = e->next = NULL;
}

static void push_front(struct store_cache *c, struct agent_entry *e)
{
        e->prev = NULL;
        e->next = c->head;
        if (c->head)
                c->head->prev = e;
        c->head = e;
        if (!c->tail)
                c->tail = e;
}

static void drop_entry(struct store_cache *c, struct agent_entry *e)
{
        unlink_entry(c, e);
        tdelete(e, &c->tree, entry_cmp);
        store_agent_free(e->a);
        free(e);
        c->n--;
}

void store_cache_free(struct store_cache *c)
{
        if (!c)
                return;
        while (c->head)
                drop_entry(c, c->head);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

static struct agent_entry *find(struct store_cache *c, const char *id)
{
        struct agent_entry key;
        void *p;

        if (strlen(id) > STORE_ID_MAX)
                return NULL;
        snprintf(key.id, sizeof(key.id), "%s", id);
        p = tfind(&key, &c->tree, entry_cmp);
        return p ? *(struct agent_entry **)p : NULL;
}

/*
 * A copy of an agent in one allocation: the struct, then each variable-length field's bytes
 * (strings with their NUL), so that handing a cached agent to a request costs one malloc() and
 * store_agent_free() one free() (a->packed), not nine of each. ov, when given, replaces the three
 * fields a verdict changes (the cache's copy after a committed verdict). Every field is bounded by
 * the store's caps, far below SIZE_MAX; the sum is still checked.
 */
struct agent_over {
        const char *last_status, *last_policy;
        const uint8_t *replay_state;
        size_t replay_state_len;
};

struct pack {
        uint8_t *at;
        size_t need;
        bool overflow;
};

/* Reserve (at == NULL) or copy n bytes of p (NULL: the field stays NULL). */
static void *pack_put(struct pack *k, const void *p, size_t n)
{
        void *d;

        if (!p)
                return NULL;
        if (!k->at) {
                k->overflow |= n > SIZE_MAX - k->need;
                k->need += n;
                return NULL;
        }
        d = k->at;
        memcpy(d, p, n);
        k->at += n;
        return d;
}

static void agent_pack_fields(struct store_agent *d, const struct store_agent *a,
                              const struct agent_over *ov, struct pack *k)
{
        const char *st = ov ? ov->last_status : a->last_status;
        const char *pol = ov ? ov->last_policy : a->last_policy;

        d->ak_public = pack_put(k, a->ak_public, a->ak_public_len);
        d->ak_name = pack_put(k, a->ak_name, a->ak_name_len);
        d->ek_cert = pack_put(k, a->ek_cert, a->ek_cert_len);
        d->policy = pack_put(k, a->policy, a->policy ? strlen(a->policy) + 1 : 0);
        d->last_status = pack_put(k, st, st ? strlen(st) + 1 : 0);
        d->last_policy = pack_put(k, pol, pol ? strlen(pol) + 1 : 0);
        d->labels = pack_put(k, a->labels, a->labels ? strlen(a->labels) + 1 : 0);
        if (ov) {
                d->replay_state = pack_put(k, ov->replay_state, ov->replay_state_len);
                d->replay_state_len = ov->replay_state ? ov->replay_state_len : 0;
        } else {
                d->replay_state = pack_put(k, a->replay_state, a->replay_state_len);
        }
}

static struct store_agent *agent_pack(const struct store_agent *a, const struct agent_over *ov)
{
        struct pack k = {.need = sizeof(*a)};
        struct store_agent *d, sizing = *a;

        agent_pack_fields(&sizing, a, ov, &k);
        if (k.overflow || !(d = malloc(k.need)))
                return NULL;
        *d = *a;
        d->packed = true;
        k.at = (uint8_t *)(d + 1);
        agent_pack_fields(d, a, ov, &k);
        return d;
}

struct store_agent *store_agent_dup(const struct store_agent *a)
{
        return agent_pack(a, NULL);
}

int store_cache_agent_get(struct store_cache *c, const char *id, struct store_agent **ret,
                          uint64_t *ret_gen)
{
        struct agent_entry *e;
        int r = 0;

        *ret = NULL;
        pthread_mutex_lock(&c->lock);
        *ret_gen = c->gen[stripe(id)];
        e = find(c, id);
        if (e) {
                unlink_entry(c, e);
                push_front(c, e);
                c->stats.hits++;
                *ret = store_agent_dup(e->a);
                r = *ret ? 1 : -ENOMEM;
        } else {
                c->stats.misses++;
        }
        pthread_mutex_unlock(&c->lock);
        return r;
}

void store_cache_agent_add(struct store_cache *c, const struct store_agent *a, uint64_t gen)
{
        struct agent_entry *e;
        void *p;

        if (strlen(a->id) > STORE_ID_MAX)
                return;
        pthread_mutex_lock(&c->lock);
        if (c->max == 0)
                goto out;
        if (c->gen[stripe(a->id)] != gen || find(c, a->id)) {
                c->stats.refused++;
                goto out;
        }
        e = calloc(1, sizeof(*e));
        if (!e)
                goto out;
        snprintf(e->id, sizeof(e->id), "%s", a->id);
        e->a = store_agent_dup(a);
        p = e->a ? tsearch(e, &c->tree, entry_cmp) : NULL;
        if (!p || *(struct agent_entry **)p != e) {
                store_agent_free(e->a);
                free(e);
                goto out;
        }
        push_front(c, e);
        c->n++;
        while (c->n > c->max) {
                drop_entry(c, c->tail);
                c->stats.evictions++;
        }
out:
        pthread_mutex_unlock(&c->lock);
}

void store_cache_agent_forget(struct store_cache *c, const char *id)
{
        struct agent_entry *e;

        if (!id || !id[0])
                return;
        pthread_mutex_lock(&c->lock);
        c->gen[stripe(id)]++;
        if ((e = find(c, id))) {
                drop_entry(c, e);
                c->stats.forgets++;
        }
        pthread_mutex_unlock(&c->lock);
}

void store_cache_agent_verdict(struct store_cache *c, const struct store_result *r,
                               uint64_t expect_seq, int64_t result_id, int64_t kept)
{
        struct agent_entry *e;
        struct store_agent *a = NULL;

        pthread_mutex_lock(&c->lock);
        c->gen[stripe(r->agent)]++;
        e = find(c, r->agent);
        if (!e)
                goto out;
        /* the same change the committed UPDATE made, on the row it made it to */
        if (e->a->seq == expect_seq)
                a = agent_pack(e->a, &(struct agent_over){
                                             .last_status = r->status,
                                             .last_policy = r->policy,
                                             .replay_state = r->replay_state,
                                             .replay_state_len = r->replay_state_len,
                                     });
        if (!a) {
                drop_entry(c, e);
                c->stats.forgets++;
                goto out;
        }
        a->last_seen = r->time;
        a->next_due = r->next_due;
        a->last_result = result_id;
        a->ima_offset = r->ima_offset;
        a->seq = expect_seq + 1;
        a->results_kept = kept;
        store_agent_free(e->a);
        e->a = a;
        c->stats.updates++;
out:
        pthread_mutex_unlock(&c->lock);
}

void store_cache_agent_replay_reset(struct store_cache *c, const char *id, uint64_t expect_seq)
{
        struct agent_entry *e;

        pthread_mutex_lock(&c->lock);
        c->gen[stripe(id)]++;
        e = find(c, id);
        if (e && e->a->seq == expect_seq) {
                e->a->ima_offset = 0;
                e->a->seq = expect_seq + 1;
                c->stats.updates++;
        } else if (e) {
                drop_entry(c, e);
                c->stats.forgets++;
        }
        pthread_mutex_unlock(&c->lock);
}

void store_cache_set_max(struct store_cache *c, size_t max)
{
        pthread_mutex_lock(&c->lock);
        c->max = max;
        while (c->n > c->max) {
                drop_entry(c, c->tail);
                c->stats.evictions++;
        }
        pthread_mutex_unlock(&c->lock);
}

void store_cache_stats_read(struct store_cache *c, struct store_cache_stats *ret)
{
        pthread_mutex_lock(&c->lock);
        *ret = c->stats;
        ret->entries = c->n;
        pthread_mutex_unlock(&c->lock);
}

int store_cache_policy_get(struct store_cache *c, const char *name, int64_t *ret_version,
                           uint64_t *ret_gen)
{
        int r = 0;

        pthread_mutex_lock(&c->lock);
        *ret_gen = c->policy_gen;
        for (unsigned i = 0; i < POLICY_SLOTS; i++) {
                struct policy_slot *p = &c->policy[i];

                if (p->used && !strcmp(p->name, name)) {
                        /* several instances on one database: another one's PUT or DELETE is
                         * seen within the bound (a miss re-reads the version) */
                        if (c->policy_max_age > 0 && mono_ms() - p->at >= c->policy_max_age) {
                                p->used = false;
                                break;
                        }
                        *ret_version = p->version;
                        r = 1;
                        break;
                }
        }
        if (r)
                c->stats.policy_hits++;
        else
                c->stats.policy_misses++;
        pthread_mutex_unlock(&c->lock);
        return r;
}

void store_cache_policy_add(struct store_cache *c, const char *name, int64_t version, uint64_t gen)
{
        struct policy_slot *p;

        if (strlen(name) > STORE_ID_MAX)
                return;
        pthread_mutex_lock(&c->lock);
        if (c->policy_gen == gen) {
                for (unsigned i = 0; i < POLICY_SLOTS; i++)
                        if (c->policy[i].used && !strcmp(c->policy[i].name, name))
                                goto out;
                p = &c->policy[c->policy_next++ % POLICY_SLOTS];
                snprintf(p->name, sizeof(p->name), "%s", name);
                p->version = version;
                p->at = mono_ms();
                p->used = true;
        }
out:
        pthread_mutex_unlock(&c->lock);
}

void store_cache_policy_forget(struct store_cache *c)
{
        pthread_mutex_lock(&c->lock);
        c->policy_gen++;
        for (unsigned i = 0; i < POLICY_SLOTS; i++)
                c->policy[i].used = false;
        pthread_mutex_unlock(&c->lock);
}
