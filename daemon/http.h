/* SPDX-License-Identifier: MIT */
/*
 * The HTTP(S) front: libmicrohttpd with its GnuTLS TLS (TLS >= 1.2), a thread pool, bodies
 * buffered up to the route's cap (413 as soon as a body is known to exceed it, before buffering
 * more), every request handed to api_handle().
 */
#ifndef ATTESTD_HTTP_H
#define ATTESTD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "attestd.h"

#define HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* A chunked body over its cap is read and dropped up to this much, then the connection closed. */
#define HTTP_DISCARD_MAX (32u * 1024 * 1024)

struct http_server;

/* Whether a listening socket is bound to a loopback address (127/8, ::1). */
bool http_socket_is_loopback(int fd);
/* A listening TCP socket for "ADDR:PORT" / "[ADDR]:PORT". -EINVAL with err on a bad address. */
int http_listen(const char *addr, int *ret_fd, struct attest_err *err) _wur_;

/*
 * Serve on fd (owned by the server from now on). cert/key: PEM contents, NULL for plain HTTP.
 * threads: pool size.
 */
int http_start(struct attestd *d, int fd, const char *cert_pem, const char *key_pem,
               unsigned threads, struct http_server **ret, struct attest_err *err) _wur_;
/* Stop accepting, let in-flight requests finish for up to drain_ms, then stop. NULL is fine. */
struct http_server *http_stop(struct http_server *s, uint64_t drain_ms);

#endif
