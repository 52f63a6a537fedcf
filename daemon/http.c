/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api.h"
#include "http.h"
#include "log.h"

struct http_server {
        struct MHD_Daemon *mhd;
        struct attestd *d;
        int fd;
};

/* Per request, from the first call of the access handler to the completion callback. */
struct req_state {
        size_t limit, len, cap, discarded;
        char *body;
        bool too_large;
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
                return attest_fail(err, -EINVAL, "listen", "%s: expected ADDR:PORT", addr);
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (errno || *end || colon[1] == '\0' || port > 65535)
                return attest_fail(err, -EINVAL, "listen", "%s: bad port", addr);
        hl = (size_t)(colon - addr);
        if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
                addr++;
                hl -= 2;
        }
        if (hl >= sizeof(host))
                return attest_fail(err, -EINVAL, "listen", "%s: bad address", addr);
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
                return attest_fail(err, -EINVAL, "listen", "%s: not a numeric IPv4/IPv6 address",
                                   host);
        }
        fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return attest_fail(err, -errno, "listen", "socket: %s", strerror(errno));
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 1024) < 0) {
                int e = errno;

                close(fd);
                return attest_fail(err, -e, "listen", "%s: %s", addr, strerror(e));
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

static enum MHD_Result send_resp(struct MHD_Connection *c, const struct api_resp *r)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        if (r->content_type)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
        if (r->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
        if (r->www_authenticate)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                        "Bearer realm=\"attestd\"");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        ret = MHD_queue_response(c, r->status, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result send_error(struct attestd *d, struct MHD_Connection *c, unsigned status,
                                  const char *code, const char *detail)
{
        struct api_resp r = {0};
        enum MHD_Result ret;

        api_error(d, &r, status, code, "%s", detail);
        ret = send_resp(c, &r);
        api_resp_done(&r);
        return ret;
}

static enum MHD_Result too_large(struct attestd *d, struct MHD_Connection *c, struct req_state *st)
{
        char detail[96];

        st->too_large = true;
        st->responded = true;
        free(st->body);
        st->body = NULL;
        st->len = st->cap = 0;
        snprintf(detail, sizeof(detail), "body larger than %zu bytes", st->limit);
        return send_error(d, c, 413, "body_too_large", detail);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
        struct attestd *d = cls;
        struct req_state *st = *con_cls;
        struct api_resp r;
        enum MHD_Result ret;

        (void)version;
        if (!st) {
                const char *cl;

                st = calloc(1, sizeof(*st));
                if (!st)
                        return MHD_NO;
                *con_cls = st;
                atomic_fetch_add(&d->in_flight, 1);
                st->limit = api_body_limit(d, method, url);
                cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
                if (cl) {
                        char *end;
                        unsigned long long n;

                        errno = 0;
                        n = strtoull(cl, &end, 10);
                        /* refuse before the client sends (or we read) a single byte of it */
                        if (errno || *end || n > st->limit)
                                return too_large(d, c, st);
                }
                return MHD_YES;
        }
        if (*upload_data_size) {
                size_t n = *upload_data_size;

                *upload_data_size = 0;
                if (!st->too_large && n > st->limit - st->len) {
                        /* libmicrohttpd cannot answer mid-upload: stop buffering, drop the
                         * rest, answer 413 at its end; hang up if it goes on past another cap */
                        st->too_large = true;
                        free(st->body);
                        st->body = NULL;
                        st->len = st->cap = 0;
                }
                if (st->too_large) {
                        st->discarded += n;
                        return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
                }
                if (st->len + n > st->cap) {
                        size_t cap = st->cap ? st->cap : 4096;
                        char *nb;

                        while (cap < st->len + n)
                                cap *= 2;
                        if (cap > st->limit)
                                cap = st->limit;
                        nb = realloc(st->body, cap);
                        if (!nb)
                                return MHD_NO;
                        st->body = nb;
                        st->cap = cap;
                }
                memcpy(st->body + st->len, upload_data, n);
                st->len += n;
                return MHD_YES;
        }
        if (st->responded)
                return MHD_YES;
        if (st->too_large)
                return too_large(d, c, st);

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
        ret = send_resp(c, &r);
        api_resp_done(&r);
        return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct attestd *d = cls;
        struct req_state *st = *con_cls;

        (void)c;
        (void)toe;
        if (!st)
                return;
        free(st->body);
        free(st);
        *con_cls = NULL;
        atomic_fetch_sub(&d->in_flight, 1);
}

int http_start(struct attestd *d, int fd, const char *cert_pem, const char *key_pem,
               unsigned threads, struct http_server **ret, struct attest_err *err)
{
        struct http_server *s = calloc(1, sizeof(*s));
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                         MHD_USE_TURBO | MHD_USE_ERROR_LOG;
        struct MHD_OptionItem o[12];
        size_t n = 0;

        if (!s) {
                close(fd);
                return -ENOMEM;
        }
        s->d = d;
        s->fd = fd;
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, d};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, 10000, NULL};
        if (threads > 1)
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, threads, NULL};
        if (cert_pem) {
                flags |= MHD_USE_TLS;
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert_pem};
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem};
                o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                                 (void *)HTTP_TLS_PRIORITIES};
        }
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, d, MHD_OPTION_ARRAY, o,
                                  MHD_OPTION_END);
        if (!s->mhd) {
                close(fd);
                free(s);
                return attest_fail(err, -EINVAL, "http_start",
                                   "libmicrohttpd did not start (bad certificate or key?)");
        }
        *ret = s;
        return 0;
}

struct http_server *http_stop(struct http_server *s, uint64_t drain_ms)
{
        struct timespec ts = {0, 20 * 1000 * 1000};
        uint64_t waited = 0;
        int fd;

        if (!s)
                return NULL;
        /* no new connections; requests in flight finish (keep-alive ends after them) */
        fd = MHD_quiesce_daemon(s->mhd);
        atomic_store(&s->d->draining, true);
        while (atomic_load(&s->d->in_flight) > 0 && waited < drain_ms) {
                nanosleep(&ts, NULL);
                waited += 20;
        }
        MHD_stop_daemon(s->mhd);
        if (fd >= 0)
                close(fd);
        free(s);
        return NULL;
}
