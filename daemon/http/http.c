/* SPDX-License-Identifier: MIT */
/*
 * The HTTP front's set-up: the listening socket, RLIMIT_NOFILE, libmicrohttpd's options and TLS
 * (http_start), and the drain at stop (http_stop).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon/http/http-frame.h"
#include "daemon/http/http-internal.h"
#include "daemon/http/http.h"
#include "daemon/log.h"
#include "util/clock.h"

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

/* fds that connections may not use */
#define FDS_KEPT (HTTP_FD_RESERVE + HTTP_LINGER_MAX)

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
        /* each connection is one fd; keep HTTP_FD_RESERVE for the database, logs and TLS files,
         * and HTTP_LINGER_MAX for lingering closes */
        if ((e = http_raise_nofile(&nofile)) < 0)
                log_warning("raising RLIMIT_NOFILE: %s", strerror(-e));
        else if (nofile < s->max_conns + HTTP_ACCEPT_HEADROOM(s->max_conns) + FDS_KEPT) {
                /* the largest n with n + n / 8 + 16 + FDS_KEPT <= nofile (at least 16) */
                size_t fit = nofile > 34 + FDS_KEPT ? (size_t)(nofile - 16 - FDS_KEPT) * 8 / 9 : 16;

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
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)http_on_completed,
                                         s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)http_on_connection,
                                         s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)http_unescape, s};
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
                /* resumption skips the certificate and its signature (docs/SECURITY.md,
                 * "Secrets") */
                if ((e = gnutls_session_ticket_key_generate(&s->ticket_key)) < 0) {
                        e = attest_fail(err, -EIO, AE_HTTP_START, "no TLS session ticket key: %s",
                                        gnutls_strerror(e));
                        goto fail;
                }
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
        if (pthread_create(&s->reaper, NULL, http_reaper_main, s) != 0) {
                e = attest_fail(err, -EAGAIN, AE_HTTP_START, "cannot start the reaper thread");
                goto fail;
        }
        s->reaper_started = true;
        if ((e = http_linger_start(&s->linger, &d->metrics)) < 0) {
                e = attest_fail(err, e, AE_HTTP_START,
                                "cannot start the lingering-close thread: %s", strerror(-e));
                goto fail;
        }
        s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, http_on_request, s, MHD_OPTION_ARRAY, o,
                                  MHD_OPTION_END);
        if (!s->mhd) {
                e = attest_fail(err, -EINVAL, AE_HTTP_START,
                                "libmicrohttpd did not start (bad certificate, key or CA?)");
                goto fail;
        }
        *ret = s;
        return 0;

fail:
        /* http_stop() undoes what was started, wipes the ticket key and frees s */
        close(fd);
        http_stop(s, 0);
        return e;
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
        http_linger_stop(&s->linger); /* after the library: its last closes may linger */
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
        if (s->ticket_key.data) {
                gnutls_memset(s->ticket_key.data, 0, s->ticket_key.size);
                gnutls_free(s->ticket_key.data);
        }
        free(s);
        return NULL;
}
