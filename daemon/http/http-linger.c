/* SPDX-License-Identifier: MIT */
/*
 * The lingering close. A refusal made while the client may still be sending (attestd's own in
 * the head: 413 on a declared length, the pre-flight's 401/403/404, 503 for the body budget; the
 * library's own in the middle of a head: 414, 431) ends with libmicrohttpd closing the socket
 * right after the answer. Closing with bytes unread, or bytes arriving after the close, makes the
 * kernel send a reset; curl stops at the failed write and never reads the answer ("Send failure"
 * for 6-59 of 100 70 KB POSTs refused with 413, 21-24 of 40 100 KB URLs refused with 414).
 *
 * So such a connection's socket is kept past libmicrohttpd's close by a duplicate of its fd: the
 * write side is shut (the client gets a FIN after the answer and the TLS close_notify), and what
 * still arrives is read and dropped until the client closes, for at most HTTP_LINGER_MS and
 * HTTP_LINGER_BYTES; then the socket is closed with nothing unread. HTTP_LINGER_MAX sockets at
 * most: past that a connection is closed at once, as before (a reset at worst). One thread, one
 * poll() over the sockets and an eventfd that wakes it for a newcomer or the stop. Which
 * connections linger is decided at the library's CLOSED notification (http-conn.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h> /* tcpi_bytes_received, which glibc's netinet/tcp.h lacks */
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/http/http-internal.h"
#include "util/clock.h"

/* Close slot i (the thread's own), moving the last one into its place. */
static void linger_end(struct http_linger *l, size_t i, enum metrics_linger how)
{
        (void)close(l->slot[i].fd);
        l->slot[i] = l->slot[--l->n];
        metrics_linger(l->metrics, how);
}

/* Read and drop what arrived; false when the socket is done with (end, error or the cap). */
static bool drain(struct linger_slot *sl, enum metrics_linger *how)
{
        static char sink[16384]; /* the lingering thread's only */

        for (;;) {
                ssize_t r = recv(sl->fd, sink, sizeof(sink), MSG_DONTWAIT);

                if (r > 0) {
                        sl->drained += (size_t)r;
                        if (sl->drained > HTTP_LINGER_BYTES) {
                                *how = METRICS_LINGER_CAP;
                                return false;
                        }
                        continue;
                }
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return true;
                *how = METRICS_LINGER_ENDED; /* the client's end, or its reset */
                return false;
        }
}

/*
 * The thread owns slot[0..n); the connections' threads hand sockets over through pending[] under
 * the lock, so reading and dropping (up to HTTP_LINGER_BYTES a socket) never holds them up.
 */
static void *linger_main(void *arg)
{
        struct http_linger *l = arg;
        struct pollfd pfd[HTTP_LINGER_MAX + 1];
        size_t ended = 0;
        bool stop = false;

        while (!stop) {
                int64_t now, wait = -1;
                uint64_t v;

                pthread_mutex_lock(&l->lock);
                l->held -= ended;
                stop = l->stop;
                for (size_t i = 0; i < l->npending; i++)
                        l->slot[l->n++] = l->pending[i];
                l->npending = 0;
                pthread_mutex_unlock(&l->lock);
                ended = 0;
                if (stop)
                        break;
                now = mono_ms();
                for (size_t i = 0; i < l->n; i++) {
                        int64_t left = l->slot[i].due_ms - now;

                        pfd[i] = (struct pollfd){.fd = l->slot[i].fd, .events = POLLIN};
                        if (wait < 0 || left < wait)
                                wait = left > 0 ? left : 0;
                }
                pfd[l->n] = (struct pollfd){.fd = l->wake, .events = POLLIN};
                (void)poll(pfd, l->n + 1, (int)wait);
                if (pfd[l->n].revents & POLLIN)
                        (void)!read(l->wake, &v, sizeof(v));
                now = mono_ms();
                /* from the top down: an ended slot takes the last one, already looked at */
                for (size_t i = l->n; i-- > 0;) {
                        enum metrics_linger how = METRICS_LINGER_ENDED;

                        if (pfd[i].revents && !drain(&l->slot[i], &how)) {
                                linger_end(l, i, how);
                                ended++;
                        } else if (now >= l->slot[i].due_ms) {
                                linger_end(l, i, METRICS_LINGER_TIMEOUT);
                                ended++;
                        }
                }
        }
        while (l->n)
                linger_end(l, l->n - 1, METRICS_LINGER_TIMEOUT);
        return NULL;
}

int http_linger_start(struct http_linger *l, struct metrics *m)
{
        l->metrics = m;
        l->n = l->npending = l->held = 0;
        l->stop = false;
        l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake < 0)
                return -errno;
        pthread_mutex_init(&l->lock, NULL);
        if (pthread_create(&l->thread, NULL, linger_main, l) != 0) {
                pthread_mutex_destroy(&l->lock);
                close(l->wake);
                l->wake = -1;
                return -EAGAIN;
        }
        l->started = true;
        return 0;
}

static void linger_wake(struct http_linger *l)
{
        uint64_t one = 1;

        (void)!write(l->wake, &one, sizeof(one));
}

void http_linger_stop(struct http_linger *l)
{
        if (!l->started)
                return;
        pthread_mutex_lock(&l->lock);
        l->stop = true;
        pthread_mutex_unlock(&l->lock);
        linger_wake(l);
        pthread_join(l->thread, NULL);
        for (size_t i = 0; i < l->npending; i++) /* handed over after the thread's last look */
                (void)close(l->pending[i].fd);
        l->npending = 0;
        pthread_mutex_destroy(&l->lock);
        close(l->wake);
        l->wake = -1;
        l->started = false;
}

bool http_unread(int fd)
{
        int n = 0;

        return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

uint64_t http_rx_bytes(int fd)
{
        struct tcp_info ti = {0};
        socklen_t n = sizeof(ti);

        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n) < 0 ||
            n < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
                return 0;
        return ti.tcpi_bytes_received;
}

void http_linger(struct http_linger *l, int fd)
{
        int dup_fd;

        if (!l->started)
                return;
        pthread_mutex_lock(&l->lock);
        if (l->held == HTTP_LINGER_MAX || l->stop || (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
                pthread_mutex_unlock(&l->lock);
                metrics_linger(l->metrics, METRICS_LINGER_FULL);
                return;
        }
        (void)shutdown(dup_fd, SHUT_WR);
        l->pending[l->npending++] =
                (struct linger_slot){.fd = dup_fd, .due_ms = mono_ms() + HTTP_LINGER_MS};
        l->held++;
        pthread_mutex_unlock(&l->lock);
        linger_wake(l);
}
