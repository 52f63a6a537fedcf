/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "agent/http.h"
#include "util/file.h"
#include "util/sink.h"
#include "util/tls.h"

struct http_client {
        CURL *curl;
        char *url;
        char *auth;           /* "Authorization: Bearer ..." */
        uint32_t retry_after; /* of the last answer, seconds */
};

uint32_t http_retry_after(const struct http_client *c)
{
        return c ? c->retry_after : 0;
}

int http_retry_after_parse(const char *line, size_t len, uint32_t *ret)
{
        static const char name[] = "retry-after:";
        uint64_t v = 0;
        size_t i = sizeof(name) - 1, digits = 0;

        if (len < i || strncasecmp(line, name, i) != 0)
                return 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
        for (; i < len && line[i] >= '0' && line[i] <= '9'; i++, digits++)
                if (v <= HTTP_RETRY_AFTER_MAX)
                        v = v * 10 + (uint64_t)(line[i] - '0');
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n'))
                i++;
        if (digits == 0 || i != len)
                return 0; /* an HTTP-date, or garbage: not honoured */
        *ret = v > HTTP_RETRY_AFTER_MAX ? HTTP_RETRY_AFTER_MAX : (uint32_t)v;
        return 1;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
        struct http_client *c = ud;
        uint32_t v;

        if (http_retry_after_parse(p, size * n, &v) > 0)
                c->retry_after = v;
        return size * n;
}

struct http_client *http_free(struct http_client *c)
{
        if (!c)
                return NULL;
        curl_easy_cleanup(c->curl);
        free(c->url);
        if (c->auth) {
                OPENSSL_cleanse(c->auth, strlen(c->auth));
                free(c->auth);
        }
        free(c);
        return NULL;
}

static void key_wipep(uint8_t **p)
{
        if (*p) {
                OPENSSL_cleanse(*p, HTTP_KEY_MAX);
                free(*p);
        }
}

/*
 * Read the client's private key once (util/file.h, FILE_SECRET: refused when group or others may
 * access it, as ssh does; the check and the read on the same open file). The key goes to curl as
 * a blob (copied there), the local copy is wiped.
 */
static int load_key(CURL *h, const char *path, struct attest_err *err)
{
        _cleanup_(key_wipep) uint8_t *buf = NULL;
        struct curl_blob blob;
        size_t len = 0;
        int x;

        if (!(buf = malloc(HTTP_KEY_MAX)))
                return -ENOMEM;
        x = file_read(path, buf, HTTP_KEY_MAX, FILE_SECRET, &len, err);
        if (x == -EPERM)
                return attest_fail(err, -EINVAL, AE_HTTP_KEY_PERMISSIONS,
                                   "%s: the private key must not be accessible by group or others "
                                   "(chmod 600)",
                                   path);
        if (x == -E2BIG)
                return attest_fail(err, -E2BIG, AE_HTTP_KEY_TOO_BIG, "%s: over %d bytes", path,
                                   HTTP_KEY_MAX);
        if (x < 0 && err)
                err->code = AE_HTTP_KEY_UNREADABLE;
        if (x < 0)
                return x;
        blob = (struct curl_blob){.data = buf, .len = len, .flags = CURL_BLOB_COPY};
        if (curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob) != CURLE_OK)
                return attest_fail(err, -EINVAL, AE_HTTP_KEY_UNREADABLE,
                                   "%s: libcurl takes no key blob", path);
        return 0;
}

int http_new(const struct http_opts *o, struct http_client **ret, struct attest_err *err)
{
        _cleanup_(http_freep) struct http_client *c = calloc(1, sizeof(*c));
        bool https = strncmp(o->url, "https://", 8) == 0;
        const struct tls_client_opts tls = {
                .ca = o->ca,
                .connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 5000L,
                .timeout_ms = o->timeout_ms ? o->timeout_ms : 30000L,
                .plain_http = !https,
        };
        const char *refused = "";
        CURL *h;

        if (!c)
                return -ENOMEM;
        if (!https && !(o->insecure_http && strncmp(o->url, "http://", 7) == 0))
                return attest_fail(err, -EINVAL, AE_HTTP_BAD_URL,
                                   "verifier URL must be https:// (http:// needs --insecure-http)");
        if (https && !o->ca)
                return attest_fail(err, -EINVAL, AE_HTTP_NO_CA,
                                   "an https verifier needs its CA bundle (--ca)");
        if (!(c->url = strdup(o->url)) || !(h = c->curl = curl_easy_init()))
                return -ENOMEM;
        if (o->token) {
                size_t n = strlen(o->token) + 32;

                if (!(c->auth = malloc(n)))
                        return -ENOMEM;
                snprintf(c->auth, n, "Authorization: Bearer %s", o->token);
        }
        if (tls_client_setup(h, &tls, &refused) < 0)
                return attest_fail(err, -EINVAL, AE_HTTP_START, "libcurl refused %s", refused);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
        if (https && o->cert) {
                int r;

                curl_easy_setopt(h, CURLOPT_SSLCERT, o->cert);
                curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
                if ((r = load_key(h, o->key ? o->key : o->cert, err)) < 0)
                        return r;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

struct source {
        http_body_fn fn;
        void *ctx;
        int error;
        struct attest_err err;
};

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
        struct source *src = ud;
        ssize_t r;

        if (!src)
                return 0;
        r = src->fn(src->ctx, (uint8_t *)p, size * n, &src->err);
        if (r < 0) {
                src->error = (int)r;
                return CURL_READFUNC_ABORT;
        }
        return (size_t)r;
}

/* One request: body (body_len bytes) from memory, or from src when body is NULL and src is not. */
static int perform(struct http_client *c, const char *method, const char *path, const char *body,
                   uint64_t body_len, struct source *src, long *ret_status, char **ret_body,
                   struct attest_err *err)
{
        struct curl_slist *hdr = NULL;
        struct text_sink s = {.max = HTTP_RESPONSE_MAX};
        char url[2048], ebuf[CURL_ERROR_SIZE] = "";
        CURL *h = c->curl;
        CURLcode rc;
        long status = 0;

        if ((size_t)snprintf(url, sizeof(url), "%s%s", c->url, path) >= sizeof(url))
                return attest_fail(err, -EINVAL, AE_HTTP_BAD_URL, "URL too long");
        hdr = curl_slist_append(hdr, "Accept: application/json");
        if (body || src)
                hdr = curl_slist_append(hdr, "Content-Type: application/json");
        /* attestd answers at once, with no 100 Continue: curl would wait a second for one */
        hdr = curl_slist_append(hdr, "Expect:");
        if (c->auth)
                hdr = curl_slist_append(hdr, c->auth);
        if (!hdr)
                return -ENOMEM;
        c->retry_after = 0;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, text_sink_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, src);
        if (body || src) {
                curl_easy_setopt(h, CURLOPT_POST, 1L);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        } else if (strcmp(method, "GET") == 0) {
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        } else { /* an empty body, said so */
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        }
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        rc = curl_easy_perform(h);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_READDATA, NULL); /* src lives on the caller's stack */
        curl_slist_free_all(hdr);
        if (rc != CURLE_OK) {
                free(s.buf);
                if (src && src->error) {
                        if (err)
                                *err = src->err;
                        return src->error;
                }
                if (s.nul)
                        return attest_fail(err, -EBADMSG, AE_HTTP_RESPONSE_NUL,
                                           "%s %s: response holds a NUL byte", method, path);
                if (s.overflow)
                        return attest_fail(err, -E2BIG, AE_HTTP_RESPONSE_TOO_BIG,
                                           "%s %s: response over %d bytes", method, path,
                                           HTTP_RESPONSE_MAX);
                return attest_fail(
                        err, -EIO,
                        rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE
                                ? AE_HTTP_TLS_VERIFY
                        : rc == CURLE_OPERATION_TIMEDOUT ? AE_HTTP_TIMEOUT
                                                         : AE_HTTP_TRANSPORT,
                        "%s %s: %s", method, path, ebuf[0] ? ebuf : curl_easy_strerror(rc));
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (!s.buf && !(s.buf = calloc(1, 1)))
                return -ENOMEM;
        *ret_status = status;
        *ret_body = s.buf;
        return 0;
}

int http_request(struct http_client *c, const char *method, const char *path, const char *body,
                 size_t body_len, long *ret_status, char **ret_body, struct attest_err *err)
{
        return perform(c, method, path, body, body_len, NULL, ret_status, ret_body, err);
}

int http_request_stream(struct http_client *c, const char *method, const char *path,
                        uint64_t body_len, http_body_fn fn, void *ctx, long *ret_status,
                        char **ret_body, struct attest_err *err)
{
        struct source src = {.fn = fn, .ctx = ctx};

        return perform(c, method, path, NULL, body_len, &src, ret_status, ret_body, err);
}

uint32_t backoff_next(struct backoff *b)
{
        uint64_t d = b->base_ms ? b->base_ms : 1000;
        uint32_t max = b->max_ms ? b->max_ms : 300000;
        uint16_t r = 0;

        for (uint32_t i = 0; i < b->attempt && d < max; i++)
                d *= 2;
        if (d > max)
                d = max;
        if (b->attempt < 64)
                b->attempt++;
        if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
                r = 0x8000;
        /* full jitter in [d/2, d) */
        return (uint32_t)(d / 2 + (d / 2) * r / 65536);
}

void backoff_reset(struct backoff *b)
{
        b->attempt = 0;
}
