/* SPDX-License-Identifier: MIT */
/*
 * The HTTP(S) front: libmicrohttpd with its GnuTLS TLS (TLS >= 1.2, AEAD suites only), a thread
 * pool, every request handed to api_handle().
 *
 * Defences against an anonymous network (docs/SECURITY.md):
 * - poll() mode without MHD_USE_TURBO. libmicrohttpd 0.9.75 with MHD_USE_EPOLL | MHD_USE_TURBO
 *   and TLS (a) spins: a new connection goes straight to the "ready" list with READ_READY set,
 *   and the TLS handshake reads through GnuTLS's own recv, whose EAGAIN never clears READ_READY,
 *   so the connection never leaves the list and epoll_wait runs with timeout 0 (one silent TCP
 *   connection: 456 of 500 ticks in 5 s); (b) leaks: with TURBO, MHD_connection_close_ skips the
 *   TLS shutdown, tls_state stays HANDSHAKING, and MHD_connection_handle_idle breaks out of its
 *   state loop for that tls_state before reaching the CLOSED case that would free the
 *   connection: after the idle timeout the fd stays in CLOSE-WAIT for good. Plain epoll (no
 *   TURBO) does not leak but still spins for a half-sent handshake (the same READ_READY).
 *   poll() neither spins nor leaks in the same probes.
 * - a reaper thread closes (shutdown()) connections whose request head is not complete
 *   --header-timeout after accept or after their last response (slowloris, silent TLS), and
 *   requests not answered --body-timeout after their head; near --max-connections it closes
 *   connections waiting for a head first, so a full table does not keep agents out.
 * - --max-connections-per-ip; RLIMIT_NOFILE raised to the hard limit.
 * - a connection refused while the client may still be sending (in the head, or before its
 *   body) closes lingering: its answer is not lost to a reset (http-linger.c).
 * - before a body byte is read: what RFC 9112 refuses in a request head (daemon/http/http-frame.h,
 *   on the raw target and each header line as libmicrohttpd split it: names that are not tokens,
 *   obs-fold, control bytes in values, Content-Length and Transfer-Encoding together or twice,
 *   HTTP/1.1 without Host, %2F / %5C / %00 in the path; 400 and close), mTLS, the body cap (413),
 * api_preflight() (401/403/404), and whether the declared length fits what is free of the
 * --max-inflight-body budget (503 with Retry-After).
 * - the budget counts bytes that arrived (the buffer grows with them), never a declared length,
 *   and each client address (IPv6: /64) and each agent id in the URL gets a bounded share
 *   (--max-inflight-body-per-ip, --max-inflight-body-per-agent): a body crossing one is dropped
 *   and answered 503 at its end. Bodies slower than --min-body-rate after --body-rate-grace are
 *   closed by the reaper (issue "hostile round three", item 2: 17 bodies declared 16 MiB from one
 *   address, a byte every 10 s, held the whole budget for --body-timeout).
 */
#ifndef ATTESTD_HTTP_H
#define ATTESTD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/attestd.h"

/* TLS 1.3 and 1.2, AEAD ciphers and ephemeral key exchange only (no CBC, no RSA key transport) */
#define HTTP_TLS_PRIORITIES                                                                        \
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:"        \
        "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"
/* fds kept free of connections under RLIMIT_NOFILE (database, logs, files) */
#define HTTP_FD_RESERVE 256
/* after this many connections at once, memory is trimmed once they are down to a quarter */
#define HTTP_TRIM_PEAK 64
/* The reaper's period, and under pressure (above 90 % of --max-connections) its period and how long
 * a connection may wait for a request head before it is evicted for newcomers. */
#define HTTP_REAP_MS 200
#define HTTP_REAP_FAST_MS 50
#define HTTP_EVICT_IDLE_MS 500
/*
 * libmicrohttpd's own connection cap is --max-connections plus this: room for connections evicted
 * at the cap and not yet closed by the library, so it never stops accepting (a full listen queue
 * drops newcomers' SYNs; their connect then waits for the kernel's 1 s, 3 s retransmissions).
 */
#define HTTP_ACCEPT_HEADROOM(n) ((n) / 8 + 16)
/*
 * listen()'s backlog (the kernel caps it at net.core.somaxconn, 4096 on Debian 12): connections
 * past --max-connections wait there while attestd accepts and evicts; a full queue drops new SYNs.
 */
#define HTTP_LISTEN_BACKLOG 4096
/*
 * libmicrohttpd's per-connection memory (request line, headers, read buffer); a bigger head is
 * refused by the library (431/414). Half the library's default: held connections cost less.
 */
#define HTTP_CONN_MEMORY 16384
/* A body's first buffer; it doubles as bytes arrive, up to the declared length and the cap. */
#define HTTP_BODY_FIRST 4096
/*
 * A body buffer up to this size comes from malloc() (pages the threads' arenas keep: no page
 * faults per request); a larger one is its own mapping (http-budget.c says why).
 */
#define HTTP_BODY_HEAP_MAX (64u * 1024)
/* Buckets of the table of per-address and per-agent shares (chained: entries only while a request
 * with a body is attached, at most two per request). */
#define HTTP_SHARE_BUCKETS 1024
/*
 * The lingering close (http-linger.c): sockets kept past libmicrohttpd's close when it closes a
 * connection answered before its body was read, at most this many at once (their fds come out of
 * what --max-connections may use), for at most this long and this many bytes read and dropped.
 */
#define HTTP_LINGER_MAX 256
#define HTTP_LINGER_MS 2000
#define HTTP_LINGER_BYTES (1024u * 1024)
/* Received after a response, this much is a client's goodbye (a TLS 1.3 or 1.2 close_notify is 24
 * or 31 bytes), more is a request: closed in its head by the library, it lingers. */
#define HTTP_LINGER_QUIET 64
/* A chunked body over its cap is read and dropped up to this much, then the connection closed. */
#define HTTP_DISCARD_MAX (32u * 1024 * 1024)

struct http_server;

/* Whether a listening socket is bound to a loopback address (127/8, ::1). */
bool http_socket_is_loopback(int fd);
/* A listening TCP socket for "ADDR:PORT" / "[ADDR]:PORT". -EINVAL with err on a bad address. */
int http_listen(const char *addr, int *ret_fd, struct attest_err *err) _wur_;

/* Raise the soft RLIMIT_NOFILE to the hard one; the limit now in force. */
int http_raise_nofile(uint64_t *ret_limit) _wur_;
/*
 * Serve on fd (owned by the server from now on). cert/key: PEM contents, NULL for plain HTTP.
 * client_ca: PEM CA bundle client certificates must chain to (mTLS), NULL for none. Pool size,
 * limits and timeouts come from d->cfg.
 */
int http_start(struct attestd *d, int fd, const char *cert_pem, const char *key_pem,
               const char *client_ca_pem, struct http_server **ret, struct attest_err *err) _wur_;
/* Stop accepting, let in-flight requests finish for up to drain_ms, then stop. NULL is fine. */
struct http_server *http_stop(struct http_server *s, uint64_t drain_ms);

#endif
