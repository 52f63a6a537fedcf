/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "daemon/api.h"
#include "daemon/http/http-frame.h"
#include "daemon/http/http.h"
#include "daemon/log.h"
#include "util/clock.h"

/*
 * One accepted connection, from libmicrohttpd's STARTED notification to its CLOSED one (which
 * comes before the fd is closed, so the reaper, holding the lock, never shuts down a reused fd).
 */
struct http_conn {
        struct http_conn *prev, *next;
        int fd;
        int64_t since_ms;    /* accepted, or the last response ended */
        int64_t deadline_ms; /* head (or, in a request, the whole request) due by then */
        bool in_request;     /* head complete, response not yet finished */
        bool reaped;         /* shut down by the reaper; libmicrohttpd closes it next */
        bool url_nul;        /* the unescape callback met %00 in the current request */
        bool cert_ok;        /* mTLS: the client certificate was verified on this connection */
        /* --min-body-rate: the body must have arrived by then (0: no body being read); set by
         * the connection's thread, read by the reaper */
        atomic_int_fast64_t body_due_ms;
};

/*
 * One client address (IPv6: its /64) or one agent id with request bodies in flight: the bytes of
 * the budget its requests hold, and how many requests are attached (it is freed with the last).
 */
struct share {
        struct share *next;
        size_t held, refs;
        uint32_t hash;
        uint8_t len;
        uint8_t key[1 + API_ID_MAX]; /* SHARE_ADDR + 16 address bytes, or SHARE_AGENT + the id */
};

struct http_server {
        struct MHD_Daemon *mhd;
        struct attestd *d;
        int fd;
        pthread_mutex_t lock; /* conns, nconns, every http_conn field but fd */
        pthread_cond_t wake;
        pthread_t reaper;
        bool reaper_started, stop;
        struct http_conn *conns, *conns_tail; /* newest first */
        size_t nconns, max_conns;
        size_t nreaped; /* of nconns, shut down and not yet closed by libmicrohttpd */
        size_t peak;    /* most connections since the last malloc_trim() */
        int64_t head_ms, body_ms;
        int64_t rate_grace_ms;
        uint64_t min_rate; /* bytes per second */
        bool client_ca;
        /* the in-flight body budget: bytes buffered by all requests, and per address and agent */
        pthread_mutex_t budget_lock; /* body_bytes, shares, every share's fields */
        size_t body_budget, share_addr_max, share_agent_max;
        size_t body_bytes;
        uint32_t share_seed;
        struct share *shares[HTTP_SHARE_BUCKETS];
};

enum budget_verdict { BUDGET_OK, BUDGET_ALL, BUDGET_ADDR, BUDGET_AGENT };

/* Per request, from the first call of the access handler to the completion callback. */
struct req_state {
        size_t limit, len, cap, discarded;
        size_t reserved;  /* bytes of the in-flight body budget this request holds (= cap) */
        size_t declared;  /* Content-Length; 0: chunked, or no body */
        uint64_t arrived; /* body bytes read so far, kept or discarded */
        int64_t head_ms;  /* when the head was complete */
        struct share *addr, *agent; /* attached when the request may carry a body */
        char *body;                 /* its own mapping of cap bytes (body_grow()) */
        bool too_large;
        bool over_budget;
        enum budget_verdict busy_why;
        bool responded;
        struct api_req req;
        char *qbuf[API_QUERY_MAX * 2];
};

bool http_socket_is_loopback(int fd)
{
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);

        if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
                return false;
        if (ss.ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

                return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
        }
        if (ss.ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
                static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

                if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
                        return true;
                return !memcmp(in6->sin6_addr.s6_addr, v4mapped, 12) &&
                       in6->sin6_addr.s6_addr[12] == 127;
        }
        return false;
}

int http_listen(const char *addr, int *ret_fd, struct attest_err *err)
{
        char host[INET6_ADDRSTRLEN + 2];
        const char *colon = strrchr(addr, ':');
        struct sockaddr_storage ss = {0};
        socklen_t sl;
        unsigned long port;
        char *end;
        size_t hl;
        int fd, one = 1;

        if (!colon)
                return attest_fail(err, -EINVAL, AE_LISTEN, "%s: expected ADDR:PORT", addr);
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (errno || *end || colon[1] == '\0' || port > 65535)
                return attest_fail(err, -EINVAL, AE_LISTEN, "%s: bad port", addr);
        hl = (size_t)(colon - addr);
        if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
                addr++;
                hl -= 2;
        }
        if (hl >= sizeof(host))
                return attest_fail(err, -EINVAL, AE_LISTEN, "%s: bad address", addr);
        memcpy(host, addr, hl);
        host[hl] = '\0';
        if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
                struct sockaddr_in *in = (struct sockaddr_in *)&ss;

                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                sl = sizeof(*in);
        } else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                sl = sizeof(*in6);
        } else {
                return attest_fail(err, -EINVAL, AE_LISTEN, "%s: not a numeric IPv4/IPv6 address",
                                   host);
        }
        fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return attest_fail(err, -errno, AE_LISTEN, "socket: %s", strerror(errno));
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, HTTP_LISTEN_BACKLOG) < 0) {
                int e = errno;

                close(fd);
                return attest_fail(err, -e, AE_LISTEN, "%s: %s", addr, strerror(e));
        }
        *ret_fd = fd;
        return 0;
}

_printf_(2, 0) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
        char line[512], esc[600];
        size_t n;

        (void)cls;
        vsnprintf(line, sizeof(line), fmt, ap);
        n = strlen(line);
        while (n && line[n - 1] == '\n')
                line[--n] = '\0';
        log_debug("http: %s", log_escape(line, n, esc, sizeof(esc)));
}

int http_raise_nofile(uint64_t *ret_limit)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        if (rl.rlim_cur < rl.rlim_max) {
                rlim_t want = rl.rlim_max;

                rl.rlim_cur = want;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
        }
        *ret_limit = (uint64_t)rl.rlim_cur;
        return 0;
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return ci ? ci->socket_context : NULL;
}

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
        /* FNV-1a seeded at start: keys come from clients, the seed keeps chains unguessable */
        uint32_t h = 2166136261u ^ s->share_seed;

        for (size_t i = 0; i < len; i++)
                h = (h ^ key[i]) * 16777619u;
        return h;
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
static int budget_attach(struct http_server *s, struct MHD_Connection *c, struct req_state *st,
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
static enum budget_verdict budget_check(struct http_server *s, struct req_state *st, size_t n,
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

static void budget_detach(struct http_server *s, struct req_state *st)
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
static void body_due(struct http_server *s, struct MHD_Connection *c, const struct req_state *st,
                     bool armed)
{
        struct http_conn *hc = conn_of(c);

        if (hc)
                atomic_store(&hc->body_due_ms,
                             armed ? st->head_ms + s->rate_grace_ms +
                                             (int64_t)(st->arrived * 1000 / s->min_rate)
                                   : 0);
}

/* ---- connections: deadlines and the reaper ---- */

/* Shut a connection down; libmicrohttpd's next read sees the end of the stream and closes it. */
static void conn_reap(struct http_server *s, struct http_conn *hc)
{
        (void)shutdown(hc->fd, SHUT_RDWR);
        hc->reaped = true;
        s->nreaped++;
}

/*
 * A connection accepted past --max-connections (the newest, hc): the connection that has waited
 * longest for a request head makes room for it, whatever its age, so attestd keeps accepting
 * while an attacker holds the table; a newcomer stays for max_conns accepts after it, time for
 * its handshake and head. Connections in a request are never evicted (their deadline is the body
 * timeout); when every other one is, the newcomer itself is closed. The walk from the oldest is
 * bounded by the table. Called with the lock held.
 */
static void make_room(struct http_server *s, struct http_conn *hc)
{
        for (struct http_conn *o = s->conns_tail; o && o != hc; o = o->prev) {
                if (o->reaped || o->in_request)
                        continue;
                conn_reap(s, o);
                metrics_conn_closed(&s->d->metrics, METRICS_CONN_EVICTED);
                return;
        }
        conn_reap(s, hc);
        metrics_conn_closed(&s->d->metrics, METRICS_CONN_REFUSED);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        struct http_server *s = cls;
        struct http_conn *hc = *socket_context;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci =
                        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

                hc = calloc(1, sizeof(*hc));
                if (!hc || !ci) {
                        /* untracked: the access handler refuses it (503) */
                        free(hc);
                        *socket_context = NULL;
                        return;
                }
                hc->fd = ci->connect_fd;
                atomic_init(&hc->body_due_ms, 0);
                pthread_mutex_lock(&s->lock);
                hc->since_ms = mono_ms();
                hc->deadline_ms = hc->since_ms + s->head_ms;
                hc->next = s->conns;
                if (s->conns)
                        s->conns->prev = hc;
                else
                        s->conns_tail = hc;
                s->conns = hc;
                if (++s->nconns > s->peak)
                        s->peak = s->nconns;
                metrics_conn_open(&s->d->metrics, 1);
                if (s->nconns - s->nreaped > s->max_conns)
                        make_room(s, hc);
                pthread_mutex_unlock(&s->lock);
                *socket_context = hc;
                return;
        }
        if (!hc)
                return;
        pthread_mutex_lock(&s->lock);
        metrics_conn_open(&s->d->metrics, -1);
        if (hc->reaped)
                s->nreaped--;
        if (hc->prev)
                hc->prev->next = hc->next;
        else
                s->conns = hc->next;
        if (hc->next)
                hc->next->prev = hc->prev;
        else
                s->conns_tail = hc->prev;
        s->nconns--;
        pthread_mutex_unlock(&s->lock);
        free(hc);
        *socket_context = NULL;
}

/*
 * Close what is overdue: a head not complete header-timeout after accept or the last response
 * (slowloris, silent or half-handshaken TLS), a request not answered body-timeout after its head,
 * a body arriving slower than --min-body-rate (body_due()).
 * Above 90 % of the connection cap (pressure), the connections waiting longest for a head (over
 * HTTP_EVICT_IDLE_MS) go first, down to 60 %, and the reaper runs every HTTP_REAP_FAST_MS, so
 * newcomers mostly find a free slot; at the cap itself make_room() evicts one per newcomer.
 */
static bool http_pressure(const struct http_server *s)
{
        return s->nconns * 10 >= s->max_conns * 9;
}

static size_t reap(struct http_server *s, int64_t now)
{
        size_t n = 0, evict = 0;

        if (http_pressure(s))
                evict = s->nconns - s->max_conns * 6 / 10;
        /* oldest first: connections are added at the head */
        for (struct http_conn *hc = s->conns_tail; hc; hc = hc->prev) {
                bool overdue = now >= hc->deadline_ms;
                bool waiting = !hc->in_request && now - hc->since_ms >= HTTP_EVICT_IDLE_MS;
                int64_t due = atomic_load(&hc->body_due_ms);
                bool slow = hc->in_request && due && now >= due;

                if (hc->reaped || (!overdue && !slow && !(evict && waiting)))
                        continue;
                conn_reap(s, hc);
                n++;
                metrics_conn_closed(&s->d->metrics, overdue ? METRICS_CONN_OVERDUE
                                                    : slow  ? METRICS_CONN_SLOW_BODY
                                                            : METRICS_CONN_PRESSURE);
                if (evict)
                        evict--;
        }
        return n;
}

static void *reaper_main(void *arg)
{
        struct http_server *s = arg;

        pthread_mutex_lock(&s->lock);
        while (!s->stop) {
                struct timespec ts;
                size_t n;

                n = reap(s, mono_ms());
                if (n)
                        log_debug("http: closed %zu overdue connections (%zu open)", n, s->nconns);
                /* after a flood has gone, hand the connections' memory back to the system */
                if (s->peak >= HTTP_TRIM_PEAK && s->nconns <= s->peak / 4) {
                        s->peak = s->nconns;
                        pthread_mutex_unlock(&s->lock);
                        malloc_trim(0);
                        pthread_mutex_lock(&s->lock);
                }
                ts = mono_deadline_ms(http_pressure(s) ? HTTP_REAP_FAST_MS : HTTP_REAP_MS);
                (void)pthread_cond_timedwait(&s->wake, &s->lock, &ts);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static void conn_request_started(struct http_server *s, struct http_conn *hc)
{
        pthread_mutex_lock(&s->lock);
        hc->in_request = true;
        hc->deadline_ms = mono_ms() + s->body_ms;
        pthread_mutex_unlock(&s->lock);
}

static void conn_request_done(struct http_server *s, struct http_conn *hc)
{
        pthread_mutex_lock(&s->lock);
        hc->in_request = false;
        hc->url_nul = false;
        atomic_store(&hc->body_due_ms, 0);
        hc->since_ms = mono_ms();
        hc->deadline_ms = hc->since_ms + s->head_ms;
        pthread_mutex_unlock(&s->lock);
}

/*
 * Percent-decoding of the path and query (RFC 3986 2.1). %00 is left as it is and flagged: the
 * request is refused (400) rather than cut at the NUL.
 */
static int hexval(char ch)
{
        if (ch >= '0' && ch <= '9')
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

static size_t unescape(void *cls, struct MHD_Connection *c, char *str)
{
        size_t r = 0, w = 0;
        bool nul = false;

        (void)cls;
        while (str[r]) {
                int hi, lo;

                if (str[r] == '%' && (hi = hexval(str[r + 1])) >= 0 &&
                    (lo = hexval(str[r + 2])) >= 0) {
                        if (hi == 0 && lo == 0) {
                                nul = true;
                                str[w++] = str[r++];
                                continue;
                        }
                        str[w++] = (char)(hi * 16 + lo);
                        r += 3;
                        continue;
                }
                str[w++] = str[r++];
        }
        str[w] = '\0';
        if (nul) {
                struct http_conn *hc = conn_of(c);

                if (hc)
                        hc->url_nul = true; /* only this connection's thread touches it now */
        }
        return w;
}

/* ---- mTLS ---- */

/* Whether the client presented a certificate that chains to --tls-client-ca, for client use. */
static bool client_cert_ok(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        gnutls_session_t session;
        gnutls_typed_vdata_st purpose = {
                .type = GNUTLS_DT_KEY_PURPOSE_OID,
                .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
        };
        unsigned n = 0, status = 0;

        if (!ci || !ci->tls_session)
                return false;
        session = ci->tls_session;
        if (gnutls_certificate_type_get(session) != GNUTLS_CRT_X509 ||
            !gnutls_certificate_get_peers(session, &n) || n == 0)
                return false;
        if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0)
                return false;
        return status == 0;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
        struct req_state *st = cls;

        (void)kind;
        if (st->req.nquery >= API_QUERY_MAX) {
                st->req.query_overflow = true;
                return MHD_NO;
        }
        st->req.qkey[st->req.nquery] = key;
        st->req.qval[st->req.nquery] = value;
        st->req.nquery++;
        return MHD_YES;
}

/*
 * close: answered before the body was read; the connection ends after the response. The body
 * moves into the response (no copy): r->body is NULL afterwards, api_resp_done() stays valid.
 */
static enum MHD_Result send_resp(struct MHD_Connection *c, struct api_resp *r, bool close)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer_with_free_callback(r->body_len, r->body, free);
        if (!resp)
                return MHD_NO;
        r->body = NULL;
        r->body_len = 0;
        if (r->content_type)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
        if (r->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
        if (r->www_authenticate)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                        "Bearer realm=\"attestd\"");
        if (r->retry_after) {
                char ra[16];

                snprintf(ra, sizeof(ra), "%u", r->retry_after);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
        } else if (r->status == 503) {
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        }
        if (close)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        ret = MHD_queue_response(c, r->status, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result send_error(struct attestd *d, struct MHD_Connection *c, unsigned status,
                                  enum attest_code code, const char *detail, bool close)
{
        struct api_resp r = {0};
        enum MHD_Result ret;

        api_error(d, &r, status, code, "%s", detail);
        ret = send_resp(c, &r, close);
        api_resp_done(&r);
        return ret;
}

/*
 * A body's buffer is its own anonymous mapping, grown by mremap(), which moves page tables
 * instead of copying, and unmapped when the request ends or the body is dropped: what a request
 * held is back to the system at once. Buffers from malloc() end up in the threads' arenas once
 * glibc's threshold has risen or an arena holds large free chunks (after a connection flood):
 * there every doubling copied into pages that stayed resident after free, and two admitted
 * 16 MiB bodies cost 145 MB of RSS (tests/hostile/test-http.sh section 5 after section 4).
 */
static int body_grow(struct req_state *st, size_t cap)
{
        void *p = st->body ? mremap(st->body, st->cap, cap, MREMAP_MAYMOVE)
                           : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                  -1, 0);

        if (p == MAP_FAILED)
                return -ENOMEM;
        st->body = p;
        st->cap = cap;
        return 0;
}

static void body_drop(struct http_server *s, struct req_state *st)
{
        if (st->body)
                (void)munmap(st->body, st->cap);
        st->body = NULL;
        st->len = st->cap = 0;
        budget_give(s, st, st->reserved);
        st->reserved = 0;
}

static enum MHD_Result too_large(struct http_server *s, struct MHD_Connection *c,
                                 struct req_state *st)
{
        char detail[96];

        st->too_large = true;
        st->responded = true;
        body_drop(s, st);
        snprintf(detail, sizeof(detail), "body larger than %zu bytes", st->limit);
        return send_error(s->d, c, 413, AE_BODY_TOO_LARGE, detail, true);
}

static enum MHD_Result busy(struct http_server *s, struct MHD_Connection *c, struct req_state *st)
{
        static const char *const why[] = {
                [BUDGET_OK] = "out of memory; retry later",
                [BUDGET_ALL] = "too many request bodies in flight; retry later",
                [BUDGET_ADDR] = "this client address's share of the request bodies in flight "
                                "is in use; retry later",
                [BUDGET_AGENT] = "this agent's share of the request bodies in flight is in use; "
                                 "retry later",
        };

        st->responded = true;
        body_drop(s, st);
        return send_error(s->d, c, 503, AE_SERVER_BUSY, why[st->busy_why], true);
}

/* The head is complete: everything decided before a body byte is read. */
static enum MHD_Result on_head(struct http_server *s, struct MHD_Connection *c,
                               struct req_state *st, const char *url, const char *method,
                               const struct http_frame *fr)
{
        struct attestd *d = s->d;
        struct http_conn *hc = conn_of(c);
        const char *auth;
        char id[API_ID_MAX + 1];
        struct api_resp r;
        enum MHD_Result ret;

        if (!hc) {
                st->responded = true;
                return send_error(d, c, 503, AE_SERVER_BUSY, "out of memory", true);
        }
        conn_request_started(s, hc);
        st->limit = api_body_limit(d, method, url);
        if (s->client_ca && !hc->cert_ok) {
                if (!client_cert_ok(c)) {
                        st->responded = true;
                        return send_error(d, c, 403, AE_CLIENT_CERTIFICATE_REQUIRED,
                                          "a client certificate from the configured CA is "
                                          "required",
                                          true);
                }
                hc->cert_ok = true;
        }
        if (hc->url_nul) {
                st->responded = true;
                return send_error(d, c, 400, AE_BAD_REQUEST, "a NUL byte (%00) in the URL", true);
        }
        /* refuse before the client sends (or we read) a single byte of it */
        if (fr->ncl && fr->cl > st->limit)
                return too_large(s, c, st);
        auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (api_preflight(d, method, url, auth, &r, id) > 0) {
                st->responded = true;
                ret = send_resp(c, &r, true);
                api_resp_done(&r);
                return ret;
        }
        if (!fr->nte && !(fr->ncl && fr->cl))
                return MHD_YES; /* no body */
        if (budget_attach(s, c, st, id) < 0)
                return busy(s, c, st);
        /* nothing is taken before bytes arrive, but a body that cannot fit now is refused now */
        if (fr->ncl && (st->busy_why = budget_check(s, st, (size_t)fr->cl, false)) != BUDGET_OK)
                return busy(s, c, st);
        st->declared = (size_t)fr->cl;
        st->head_ms = mono_ms();
        body_due(s, c, st, true);
        return MHD_YES;
}

static enum MHD_Result on_upload(struct http_server *s, struct MHD_Connection *c,
                                 struct req_state *st, const char *data, size_t n)
{
        st->arrived += n;
        body_due(s, c, st, true);
        if (!st->too_large && !st->over_budget && n > st->limit - st->len) {
                /* libmicrohttpd cannot answer mid-upload: stop buffering, drop the
                 * rest, answer 413 at its end; hang up if it goes on past another cap */
                st->too_large = true;
                body_drop(s, st);
        }
        if (st->too_large || st->over_budget || st->responded) {
                st->discarded += n;
                return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        if (n > st->cap - st->len) {
                /* grow with what arrived: doubling, up to the declared length and the cap
                 * (len + n <= limit here, and limit <= 1 GiB: no overflow) */
                size_t cap = st->cap ? st->cap : HTTP_BODY_FIRST;

                while (cap < st->len + n)
                        cap *= 2;
                if (st->declared && cap > st->declared)
                        cap = st->declared;
                if (cap > st->limit)
                        cap = st->limit;
                if (cap < st->len + n) /* more than declared: libmicrohttpd never does that */
                        return MHD_NO;
                st->busy_why = budget_check(s, st, cap - st->reserved, true);
                if (st->busy_why != BUDGET_OK) {
                        /* answered 503 at the body's end (or hung up past HTTP_DISCARD_MAX) */
                        st->over_budget = true;
                        body_drop(s, st);
                        st->discarded += n;
                        return MHD_YES;
                }
                st->reserved = cap;
                if (body_grow(st, cap) < 0)
                        return MHD_NO;
        }
        memcpy(st->body + st->len, data, n);
        st->len += n;
        return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
        struct http_server *s = cls;
        struct attestd *d = s->d;
        struct req_state *st = *con_cls;
        struct attest_err fe = {0};
        struct http_frame fr;
        struct api_resp r;
        enum MHD_Result ret;

        if (!st) {
                st = calloc(1, sizeof(*st));
                if (!st)
                        return MHD_NO;
                *con_cls = st;
                atomic_fetch_add(&d->in_flight, 1);
                /* RFC 9112 framing (http-frame.h); its Content-Length for the head's checks */
                if (http_frame_check(c, version, &fr, &fe) < 0) {
                        st->responded = true;
                        return send_error(d, c, 400, fe.code, fe.msg, true);
                }
                return on_head(s, c, st, url, method, &fr);
        }
        if (*upload_data_size) {
                size_t n = *upload_data_size;

                *upload_data_size = 0;
                return on_upload(s, c, st, upload_data, n);
        }
        body_due(s, c, st, false); /* the body is complete */
        if (st->responded)
                return MHD_YES;
        if (st->too_large)
                return too_large(s, c, st);
        if (st->over_budget)
                return busy(s, c, st);

        st->req.method = method;
        st->req.path = url;
        st->req.authorization =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        st->req.content_type =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, st);
        st->req.body = st->body;
        st->req.body_len = st->len;
        api_handle(d, &st->req, &r);
        st->responded = true;
        ret = send_resp(c, &r, false);
        api_resp_done(&r);
        return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct http_server *s = cls;
        struct req_state *st = *con_cls;
        struct http_conn *hc = conn_of(c);

        (void)toe;
        if (hc)
                conn_request_done(s, hc);
        if (!st)
                return;
        body_drop(s, st);
        budget_detach(s, st);
        free(st);
        *con_cls = NULL;
        atomic_fetch_sub(&s->d->in_flight, 1);
}

int http_start(struct attestd *d, int fd, const char *cert_pem, const char *key_pem,
               const char *client_ca_pem, struct http_server **ret, struct attest_err *err)
{
        struct http_server *s = calloc(1, sizeof(*s));
        /*
         * poll(), not epoll, and no MHD_USE_TURBO: libmicrohttpd 0.9.75 spins and leaks in those
         * modes with TLS (http.h has the why and the measurements).
         */
        unsigned flags =
                MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
        unsigned threads = (unsigned)d->cfg.threads;
        uint64_t nofile = 0;
        struct MHD_OptionItem o[20];
        size_t n = 0;
        int e;

        if (!s) {
                close(fd);
                return -ENOMEM;
        }
        s->d = d;
        s->fd = fd;
        s->head_ms = (int64_t)d->cfg.header_timeout * 1000;
        s->body_ms = (int64_t)d->cfg.body_timeout * 1000;
        s->body_budget = (size_t)d->cfg.max_inflight_body;
        s->share_addr_max = (size_t)d->cfg.max_inflight_body_per_ip;
        s->share_agent_max = (size_t)d->cfg.max_inflight_body_per_agent;
        s->min_rate = d->cfg.min_body_rate;
        s->rate_grace_ms = (int64_t)d->cfg.body_rate_grace * 1000;
        s->max_conns = (size_t)d->cfg.max_connections;
        s->client_ca = client_ca_pem != NULL;
        if (getrandom(&s->share_seed, sizeof(s->share_seed), GRND_NONBLOCK) < 0)
                s->share_seed = (uint32_t)mono_ms();
        /* each connection is one fd; keep HTTP_FD_RESERVE for the database, logs and TLS files */
        if ((e = http_raise_nofile(&nofile)) < 0)
                log_warning("raising RLIMIT_NOFILE: %s", strerror(-e));
        else if (nofile < s->max_conns + HTTP_ACCEPT_HEADROOM(s->max_conns) + HTTP_FD_RESERVE) {
                /* the largest n with n + n / 8 + 16 + HTTP_FD_RESERVE <= nofile (at least 16) */
                size_t fit = nofile > 34 + HTTP_FD_RESERVE
                                     ? (size_t)(nofile - 16 - HTTP_FD_RESERVE) * 8 / 9
                                     : 16;

                log_warning("--max-connections %zu lowered to %zu to fit RLIMIT_NOFILE %llu",
                            s->max_conns, fit, (unsigned long long)nofile);
                s->max_conns = fit;
        }
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->budget_lock, NULL);
        {
                pthread_condattr_t ca;

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&s->wake, &ca);
                pthread_condattr_destroy(&ca);
        }
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)http_frame_uri_log,
                                         NULL}; /* the raw request-target */
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                         (intptr_t)d->cfg.idle_timeout, NULL};
        /* past max_conns make_room() evicts; the library's cap leaves room for those evicted and
         * not yet closed, so it keeps accepting (http.h: when the listen queue still fills) */
        o[n++] = (struct MHD_OptionItem){
                MHD_OPTION_CONNECTION_LIMIT,
                (intptr_t)(s->max_conns + HTTP_ACCEPT_HEADROOM(s->max_conns)), NULL};
        o[n++] =
                (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONN_MEMORY, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                         (intptr_t)d->cfg.max_connections_per_ip, NULL};
        if (threads > 1)
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, threads, NULL};
        if (cert_pem) {
                flags |= MHD_USE_TLS;
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert_pem};
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem};
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                                 (void *)HTTP_TLS_PRIORITIES};
                if (client_ca_pem)
                        o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                                         (void *)client_ca_pem};
        }
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
                close(fd);
                pthread_cond_destroy(&s->wake);
                pthread_mutex_destroy(&s->lock);
                pthread_mutex_destroy(&s->budget_lock);
                free(s);
                return attest_fail(err, -EAGAIN, AE_HTTP_START, "cannot start the reaper thread");
        }
        s->reaper_started = true;
        s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, o,
                                  MHD_OPTION_END);
        if (!s->mhd) {
                close(fd);
                http_stop(s, 0);
                return attest_fail(err, -EINVAL, AE_HTTP_START,
                                   "libmicrohttpd did not start (bad certificate, key or CA?)");
        }
        *ret = s;
        return 0;
}

struct http_server *http_stop(struct http_server *s, uint64_t drain_ms)
{
        struct timespec ts = {0, 20 * 1000 * 1000};
        uint64_t waited = 0;
        int fd = -1;

        if (!s)
                return NULL;
        if (s->mhd) {
                /* no new connections; requests in flight finish (keep-alive ends after them) */
                fd = MHD_quiesce_daemon(s->mhd);
                atomic_store(&s->d->draining, true);
                while (atomic_load(&s->d->in_flight) > 0 && waited < drain_ms) {
                        nanosleep(&ts, NULL);
                        waited += 20;
                }
                MHD_stop_daemon(s->mhd);
        }
        if (fd >= 0)
                close(fd);
        if (s->reaper_started) {
                pthread_mutex_lock(&s->lock);
                s->stop = true;
                pthread_cond_signal(&s->wake);
                pthread_mutex_unlock(&s->lock);
                pthread_join(s->reaper, NULL);
        }
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->budget_lock);
        free(s);
        return NULL;
}
