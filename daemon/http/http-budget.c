/* SPDX-License-Identifier: MIT */
/*
 * The in-flight body budget (whole, per client address, per agent), the minimum body rate's
 * deadline, and the bodies' buffers (small ones from malloc, large ones their own mappings).
 */
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "daemon/http/http-internal.h"
#include "util/hash.h"

/*
 * ---- the in-flight body budget ----
 * Bytes are taken as a body's buffer grows, never on a declared Content-Length: a request whose
 * body has not arrived holds nothing. The buffer doubles from HTTP_BODY_FIRST up to the declared
 * length or the route's cap, so what a request holds is at most twice what it has sent (plus
 * HTTP_BODY_FIRST). Each take must fit the whole budget, the client address's share and, when
 * the URL names an agent, that agent's share; the shares are kept in a chained hash table whose
 * entries live while a request is attached, so it holds at most two per request in flight.
 */
enum { SHARE_ADDR = 'a', SHARE_AGENT = 'g' };

static uint32_t share_hash(const struct http_server *s, const uint8_t *key, size_t len)
{
        /* seeded at start: keys come from clients, the seed keeps chains unguessable */
        return (uint32_t)hash_fnv1a(key, len, s->share_seed);
}

/* The share of key, attached (refs + 1), created if needed; NULL on ENOMEM. budget_lock held. */
static struct share *share_attach(struct http_server *s, const uint8_t *key, size_t len)
{
        uint32_t h = share_hash(s, key, len);
        struct share **head = &s->shares[h % HTTP_SHARE_BUCKETS], *sh;

        assert(len <= sizeof(sh->key));
        for (sh = *head; sh; sh = sh->next)
                if (sh->hash == h && sh->len == len && !memcmp(sh->key, key, len)) {
                        sh->refs++;
                        return sh;
                }
        sh = calloc(1, sizeof(*sh));
        if (!sh)
                return NULL;
        sh->hash = h;
        sh->len = (uint8_t)len;
        memcpy(sh->key, key, len);
        sh->refs = 1;
        sh->next = *head;
        *head = sh;
        return sh;
}

/* Detach one request from sh (NULL is fine); the last one frees it. budget_lock held. */
static void share_detach(struct http_server *s, struct share *sh)
{
        struct share **pp;

        if (!sh || --sh->refs)
                return;
        assert(sh->held == 0);
        for (pp = &s->shares[sh->hash % HTTP_SHARE_BUCKETS]; *pp != sh; pp = &(*pp)->next)
                ;
        *pp = sh->next;
        free(sh);
}

/* The share key of a client address: IPv4 as ::ffff:a.b.c.d, IPv6 by its /64. */
static size_t addr_key(const struct sockaddr *sa, uint8_t key[static 17])
{
        memset(key, 0, 17);
        key[0] = SHARE_ADDR;
        if (sa && sa->sa_family == AF_INET) {
                key[11] = key[12] = 0xff;
                memcpy(key + 13, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        } else if (sa && sa->sa_family == AF_INET6) {
                const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
                static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

                memcpy(key + 1, a, memcmp(a, v4mapped, 12) ? 8 : 16);
        }
        return 17;
}

/*
 * Attach a request that may carry a body to its address's share and (id non-empty) its agent's.
 * -ENOMEM when the table cannot grow (the request is answered 503).
 */
int http_budget_attach(struct http_server *s, struct MHD_Connection *c, struct req_state *st,
                       const char *id)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        uint8_t key[1 + API_ID_MAX];
        size_t idlen = strnlen(id, API_ID_MAX);
        int r = 0;

        pthread_mutex_lock(&s->budget_lock);
        st->addr = share_attach(s, key, addr_key(ci ? ci->client_addr : NULL, key));
        if (!st->addr)
                r = -ENOMEM;
        if (!r && idlen) {
                key[0] = SHARE_AGENT;
                memcpy(key + 1, id, idlen);
                st->agent = share_attach(s, key, 1 + idlen);
                if (!st->agent)
                        r = -ENOMEM;
        }
        pthread_mutex_unlock(&s->budget_lock);
        return r;
}

/* Which pool n more bytes would overflow (BUDGET_OK: none); take them when take. */
enum budget_verdict http_budget_check(struct http_server *s, struct req_state *st, size_t n,
                                      bool take)
{
        enum budget_verdict v = BUDGET_OK;

        pthread_mutex_lock(&s->budget_lock);
        /* every held <= its maximum: the subtractions cannot wrap */
        if (n > s->body_budget - s->body_bytes)
                v = BUDGET_ALL;
        else if (st->addr && n > s->share_addr_max - st->addr->held)
                v = BUDGET_ADDR;
        else if (st->agent && n > s->share_agent_max - st->agent->held)
                v = BUDGET_AGENT;
        if (v == BUDGET_OK && take) {
                s->body_bytes += n;
                if (st->addr)
                        st->addr->held += n;
                if (st->agent)
                        st->agent->held += n;
        }
        pthread_mutex_unlock(&s->budget_lock);
        return v;
}

static void budget_give(struct http_server *s, struct req_state *st, size_t n)
{
        if (!n)
                return;
        pthread_mutex_lock(&s->budget_lock);
        s->body_bytes -= n;
        if (st->addr)
                st->addr->held -= n;
        if (st->agent)
                st->agent->held -= n;
        pthread_mutex_unlock(&s->budget_lock);
}

void http_budget_detach(struct http_server *s, struct req_state *st)
{
        pthread_mutex_lock(&s->budget_lock);
        share_detach(s, st->addr);
        share_detach(s, st->agent);
        st->addr = st->agent = NULL;
        pthread_mutex_unlock(&s->budget_lock);
}

/*
 * --min-body-rate: after --body-rate-grace from the head, every min_rate bytes that arrived buy
 * one more second; the reaper closes a connection whose body is late (libmicrohttpd 0.9.75 cannot
 * queue a response while a body is being read, so no 408 can be sent). 0 disarms.
 */
void http_body_due(struct http_server *s, struct MHD_Connection *c, const struct req_state *st,
                   bool armed)
{
        struct http_conn *hc = http_conn_of(c);

        if (hc)
                atomic_store(&hc->body_due_ms,
                             armed ? st->head_ms + s->rate_grace_ms +
                                             (int64_t)(st->arrived * 1000 / s->min_rate)
                                   : 0);
}

/*
 * A large body's buffer is its own anonymous mapping, grown by mremap(), which moves page tables
 * instead of copying, and unmapped when the request ends or the body is dropped: what a request
 * held is back to the system at once. Buffers from malloc() end up in the threads' arenas once
 * glibc's threshold has risen or an arena holds large free chunks (after a connection flood):
 * there every doubling copied into pages that stayed resident after free, and two admitted
 * 16 MiB bodies cost 145 MB of RSS (tests/hostile/test-http.sh section 5 after section 4).
 * A small body (up to HTTP_BODY_HEAP_MAX, which an attestation's evidence nearly always is)
 * comes from malloc(): a fresh mapping per request faulted its pages in anew every time, and a
 * page fault is dear (on a small VM it cost attestd ~40 % more CPU per attestation); what the
 * arenas keep of small buffers is bounded by the requests in flight. The switch copies at most
 * HTTP_BODY_HEAP_MAX bytes once.
 */
static bool body_mapped(size_t cap)
{
        return cap > HTTP_BODY_HEAP_MAX;
}

int http_body_grow(struct req_state *st, size_t cap)
{
        void *p;

        if (!body_mapped(cap)) {
                p = realloc(st->body, cap);
                if (!p)
                        return -ENOMEM;
        } else if (st->body && body_mapped(st->cap)) {
                p = mremap(st->body, st->cap, cap, MREMAP_MAYMOVE);
                if (p == MAP_FAILED)
                        return -ENOMEM;
        } else {
                p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED)
                        return -ENOMEM;
                if (st->body) {
                        memcpy(p, st->body, st->len);
                        free(st->body);
                }
        }
        st->body = p;
        st->cap = cap;
        return 0;
}

void http_body_drop(struct http_server *s, struct req_state *st)
{
        if (st->body && body_mapped(st->cap))
                (void)munmap(st->body, st->cap);
        else
                free(st->body);
        st->body = NULL;
        st->len = st->cap = 0;
        budget_give(s, st, st->reserved);
        st->reserved = 0;
}
