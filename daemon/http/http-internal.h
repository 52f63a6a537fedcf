/* SPDX-License-Identifier: MIT */
/*
 * What the files of the HTTP front end share (http.c: set-up, TLS and stop; http-conn.c: the
 * connection table and the reaper; http-linger.c: the lingering close; http-budget.c: the
 * in-flight body budget and the bodies' buffers; http-request.c: the libmicrohttpd callbacks
 * that frame, admit, read and answer a request); not for other modules, which see
 * daemon/http/http.h only.
 */
#ifndef ATTESTD_HTTP_INTERNAL_H
#define ATTESTD_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "daemon/api/api.h"
#include "daemon/http/http.h"

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
        bool tls_counted;    /* its TLS session counted (attestd_tls_sessions_total) */
        bool linger;         /* answered before its body was read: http_linger() at close */
        uint64_t rx_mark;    /* bytes received by the end of the last answered request */
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

/* A socket kept past libmicrohttpd's close (http-linger.c). */
struct linger_slot {
        int fd;         /* a duplicate of the connection's fd, its write side shut */
        int64_t due_ms; /* closed by then, whatever still arrives */
        size_t drained; /* bytes read and dropped */
};

struct http_linger {
        struct metrics *metrics;
        pthread_mutex_t lock; /* pending, npending, held, stop */
        pthread_t thread;
        int wake; /* eventfd: a socket was handed over, or stop */
        bool started, stop;
        size_t held; /* pending and the thread's, at most HTTP_LINGER_MAX */
        size_t npending;
        struct linger_slot pending[HTTP_LINGER_MAX]; /* handed over, not yet taken */
        size_t n;                                    /* the thread's own: */
        struct linger_slot slot[HTTP_LINGER_MAX];
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
        /*
         * TLS session tickets: this process's key (GnuTLS derives and rotates the ticket keys from
         * it), made at start, held only in memory, wiped at stop; size 0 without TLS. A ticket
         * resumes a session on this instance only, and not after a restart.
         */
        gnutls_datum_t ticket_key;
        struct http_linger linger;
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
        char *body;                 /* cap bytes: malloc'd or its own mapping (body_grow()) */
        bool too_large;
        bool over_budget;
        enum budget_verdict busy_why;
        bool responded;
        struct api_req req;
        struct store_agent *row; /* what api_preflight read (req.agent points here) */
        char *qbuf[API_QUERY_MAX * 2];
};

/* The connection's TLS session; NULL without TLS. */
static inline gnutls_session_t http_tls_session(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);

        return ci ? ci->tls_session : NULL;
}

/* http-conn.c */
/* The connection's record (NULL: untracked, out of memory at accept). */
struct http_conn *http_conn_of(struct MHD_Connection *c);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION: track a connection from accept to close. */
void http_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
/* The reaper thread (arg: the server). */
void *http_reaper_main(void *arg);
/* A request's head is complete (its deadline becomes the body timeout), or it was answered. */
void http_conn_request_started(struct http_server *s, struct http_conn *hc);
void http_conn_request_done(struct http_server *s, struct http_conn *hc);

/* http-linger.c */
int http_linger_start(struct http_linger *l, struct metrics *m);
/* Close every socket still kept; a no-op when not started. */
void http_linger_stop(struct http_linger *l);
/* Keep fd's socket past libmicrohttpd's close (called at its CLOSED notification, the fd still
 * open), or count it closed at once when HTTP_LINGER_MAX are kept. */
void http_linger(struct http_linger *l, int fd);
/* Whether bytes wait unread on the socket (closing it now would send a reset). */
bool http_unread(int fd);
/* Bytes the connection's TCP socket has received so far (0 when unknown). */
uint64_t http_rx_bytes(int fd);

/* http-budget.c */
int http_budget_attach(struct http_server *s, struct MHD_Connection *c, struct req_state *st,
                       const char *id);
enum budget_verdict http_budget_check(struct http_server *s, struct req_state *st, size_t n,
                                      bool take);
void http_budget_detach(struct http_server *s, struct req_state *st);
void http_body_due(struct http_server *s, struct MHD_Connection *c, const struct req_state *st,
                   bool armed);
int http_body_grow(struct req_state *st, size_t cap);
/* Free or unmap the body and give back what it held of the budget. */
void http_body_drop(struct http_server *s, struct req_state *st);

/* http-request.c: libmicrohttpd's callbacks for a request */
size_t http_unescape(void *cls, struct MHD_Connection *c, char *str);
enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *upload_data,
                                size_t *upload_data_size, void **con_cls);
void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                       enum MHD_RequestTerminationCode toe);

#endif
