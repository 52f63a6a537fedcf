/* SPDX-License-Identifier: MIT */
/*
 * The agent's HTTPS client (libcurl): the verifier's CA pinned, optional client certificate,
 * timeouts, bounded responses, one keep-alive connection reused across requests; plus the
 * retry back-off schedule.
 */
#ifndef AGENT_HTTP_H
#define AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define HTTP_RESPONSE_MAX (1024 * 1024)
#define HTTP_KEY_MAX (64 * 1024) /* the client's private key file (PEM) */

struct http_opts {
        const char *url; /* https://verifier:8443 (no trailing path) */
        const char *ca;  /* PEM bundle the verifier's certificate must chain to */
        const char *cert,
                *key;      /* optional client certificate and its key (PEM; default: in cert) */
        const char *token; /* optional bearer token (never logged) */
        long connect_timeout_ms, timeout_ms;
        bool insecure_http; /* allow http:// (loopback labs only) */
};

struct http_client;

/*
 * With a client certificate, the key file (key, or cert when key is NULL) is read here, once:
 * -EINVAL http_key_permissions when group or others may access it (mode & 077), -E2BIG over
 * HTTP_KEY_MAX, http_key_unreadable otherwise.
 */
int http_new(const struct http_opts *o, struct http_client **ret, struct attest_err *err) _wur_;
struct http_client *http_free(struct http_client *c);
DEFINE_CLEANUP_FUNC(struct http_client *, http_free)

/*
 * method path (e.g. "/v1/agents/x/challenges") with an optional JSON body. *ret_status is the
 * HTTP status; *ret_body (owned, NUL terminated) the response. Transport failures (connect, TLS,
 * timeout, certificate) are -EIO with err naming the cause; a non-2xx status is not an error here.
 */
int http_request(struct http_client *c, const char *method, const char *path, const char *body,
                 size_t body_len, long *ret_status, char **ret_body, struct attest_err *err) _wur_;

/*
 * A request body made while it is sent: fill up to n bytes of buf, return the count, 0 at its end,
 * or a negative errno (with err) that aborts the request.
 */
typedef ssize_t (*http_body_fn)(void *ctx, uint8_t *buf, size_t n, struct attest_err *err);

/*
 * As http_request(), with a body of exactly body_len bytes (the Content-Length) pulled from fn
 * while the request is sent; nothing of it is buffered here. When fn fails, its errno and err
 * are returned; a transport failure mid-body (the verifier gone) is -EIO as in http_request().
 */
int http_request_stream(struct http_client *c, const char *method, const char *path,
                        uint64_t body_len, http_body_fn fn, void *ctx, long *ret_status,
                        char **ret_body, struct attest_err *err) _wur_;

/*
 * The Retry-After of the last answer c got, in seconds (0: none, or not delta-seconds; capped at
 * HTTP_RETRY_AFTER_MAX). Reset by every request.
 */
#define HTTP_RETRY_AFTER_MAX 86400
uint32_t http_retry_after(const struct http_client *c);
/*
 * One header line as libcurl hands it over ("Name: value\r\n", untrusted): 1 and *ret the
 * seconds when it is a Retry-After with delta-seconds (1*DIGIT, RFC 9110 10.2.3; over
 * HTTP_RETRY_AFTER_MAX is that cap), 0 when it is another header or an HTTP-date.
 */
int http_retry_after_parse(const char *line, size_t len, uint32_t *ret) _wur_;

/* Exponential back-off with full jitter: base * 2^attempt capped at max, times a random factor
 * in [0.5, 1). */
struct backoff {
        uint32_t base_ms, max_ms, attempt;
};
uint32_t backoff_next(struct backoff *b);
void backoff_reset(struct backoff *b);

#endif
