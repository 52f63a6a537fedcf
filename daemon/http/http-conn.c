/* SPDX-License-Identifier: MIT */
/*
 * The connection table: each connection from accept to close, its deadlines, eviction at the
 * connection cap and the reaper thread that closes what is overdue.
 */
#include <malloc.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "daemon/http/http-internal.h"
#include "daemon/log.h"
#include "util/clock.h"

struct http_conn *http_conn_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return ci ? ci->socket_context : NULL;
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

/*
 * The connection's TLS session may issue and take session tickets (before its handshake: the
 * library calls this as it adds the connection). Without them the session is only slower.
 */
static void tickets_on(struct http_server *s, struct MHD_Connection *c)
{
        gnutls_session_t session;
        int e;

        if (!s->ticket_key.data || !(session = http_tls_session(c)))
                return;
        if ((e = gnutls_session_ticket_enable_server(session, &s->ticket_key)) < 0)
                log_debug("TLS session tickets not enabled: %s", gnutls_strerror(e));
}

void http_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
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
                tickets_on(s, c);
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
        /*
         * Closed by the library, not the reaper, while the client may still be sending: answered
         * before its body was read, bytes unread, or more than a TLS close_notify received since
         * the last answered request (the library's own 414/431 come in the middle of a head still
         * arriving). A close now would reset its answer away (http-linger.c).
         */
        if (!hc->reaped && (hc->linger || http_unread(hc->fd) ||
                            http_rx_bytes(hc->fd) > hc->rx_mark + HTTP_LINGER_QUIET))
                http_linger(&s->linger, hc->fd);
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
 * a body arriving slower than --min-body-rate (http_body_due()).
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

void *http_reaper_main(void *arg)
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

void http_conn_request_started(struct http_server *s, struct http_conn *hc)
{
        pthread_mutex_lock(&s->lock);
        hc->in_request = true;
        hc->deadline_ms = mono_ms() + s->body_ms;
        pthread_mutex_unlock(&s->lock);
}

void http_conn_request_done(struct http_server *s, struct http_conn *hc)
{
        pthread_mutex_lock(&s->lock);
        hc->in_request = false;
        hc->url_nul = false;
        atomic_store(&hc->body_due_ms, 0);
        hc->since_ms = mono_ms();
        hc->deadline_ms = hc->since_ms + s->head_ms;
        pthread_mutex_unlock(&s->lock);
}
