/* SPDX-License-Identifier: MIT */
/*
 * delay-proxy: a TCP relay on loopback that holds every byte for a fixed time in each direction,
 * the network between attestd and a remote PostgreSQL for the benches (docs/scaling.md, "A
 * database across the network"). This machine's kernel has no netem qdisc (CONFIG_NET_SCH_NETEM
 * is not set), so the delay is added here: each chunk read from one side is written to the other
 * no earlier than --delay-us after it was read, in order. Bytes in flight per direction are capped
 * (--cap, default 1 MiB): a full direction stops reading its source, as a real link's window does.
 *
 * delay-proxy --to PORT --delay-us N [--listen PORT] [--cap BYTES] [--max-conns N]
 * Listens on 127.0.0.1 (--listen 0, the default: a free port), prints "port N" on stdout once it
 * accepts, and runs until killed. Each accepted connection gets its own connection to
 * 127.0.0.1:--to. One thread, epoll, nanosecond timeouts (epoll_pwait2).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_MAX 65536

struct chunk {
        struct chunk *next;
        uint64_t due; /* ns, CLOCK_MONOTONIC */
        size_t len, off;
        unsigned char data[];
};

/* one direction: bytes read from src, held, written to dst */
struct dir {
        int src, dst;
        struct chunk *head, *tail;
        size_t queued;
        bool eof;   /* src ended: shut dst's write side once the queue is empty */
        bool shut;  /* done */
        bool wwait; /* dst was full: waiting for EPOLLOUT */
};

struct conn {
        struct dir d[2];  /* 0: client -> server, 1: server -> client */
        int fd[2];        /* client, server */
        uint32_t mask[2]; /* the epoll interest of each fd now */
        bool dead;        /* an error: freed after this round of events */
        struct conn *next;
};

static uint64_t delay_ns;
static size_t cap = 1u << 20;
static int ep;

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nonblock(int fd)
{
        int one = 1;

        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* the epoll interest of fd (side s of c): read while its outgoing direction has room, write
 * while its incoming direction waits for it */
static void arm(struct conn *c, int s)
{
        struct dir *out = &c->d[s], *in = &c->d[1 - s];
        struct epoll_event ev = {.data.ptr = c};
        uint32_t want = 0;

        if (!out->eof && out->queued < cap)
                want |= EPOLLIN;
        if (in->wwait)
                want |= EPOLLOUT;
        if (want == c->mask[s])
                return;
        c->mask[s] = ev.events = want;
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd[s], &ev);
}

static void conn_free(struct conn **list, struct conn *c)
{
        for (struct conn **p = list; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        for (int i = 0; i < 2; i++) {
                struct chunk *k = c->d[i].head;

                while (k) {
                        struct chunk *n = k->next;

                        free(k);
                        k = n;
                }
                close(c->fd[i]);
        }
        free(c);
}

/* read what side s has into its outgoing direction; false on an error (close the pair) */
static bool pull(struct conn *c, int s, uint64_t now)
{
        static unsigned char buf[CHUNK_MAX]; /* one thread: read here, then keep what came */
        struct dir *d = &c->d[s];

        while (!d->eof && d->queued < cap) {
                struct chunk *k;
                ssize_t n = read(d->src, buf, sizeof(buf));

                if (n <= 0) {
                        if (n == 0) {
                                d->eof = true;
                                break;
                        }
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        return false;
                }
                /* a chunk of the bytes read, not of the buffer: memory follows --cap */
                if (!(k = malloc(sizeof(*k) + (size_t)n)))
                        return false;
                memcpy(k->data, buf, (size_t)n);
                k->next = NULL;
                k->due = now + delay_ns;
                k->len = (size_t)n;
                k->off = 0;
                if (d->tail)
                        d->tail->next = k;
                else
                        d->head = k;
                d->tail = k;
                d->queued += (size_t)n;
        }
        return true;
}

/* write the chunks of d that are due; false on an error */
static bool push(struct dir *d, uint64_t now)
{
        while (d->head && d->head->due <= now) {
                struct chunk *k = d->head;
                ssize_t n = write(d->dst, k->data + k->off, k->len - k->off);

                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) {
                                d->wwait = true;
                                return true;
                        }
                        return false;
                }
                d->wwait = false;
                k->off += (size_t)n;
                d->queued -= (size_t)n;
                if (k->off < k->len)
                        continue;
                d->head = k->next;
                if (!d->head)
                        d->tail = NULL;
                free(k);
        }
        if (!d->head && d->eof && !d->shut) {
                shutdown(d->dst, SHUT_WR);
                d->shut = true;
        }
        return true;
}

static int listen_on(int port)
{
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof(a);
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

        if (fd < 0)
                return -1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
                close(fd);
                return -1;
        }
        printf("port %u\n", ntohs(a.sin_port));
        fflush(stdout);
        return fd;
}

static int connect_to(int port)
{
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        if (fd < 0)
                return -1;
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static long num(const char *s, const char *what, long max)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < 0 || v > max) {
                fprintf(stderr, "delay-proxy: bad %s '%s' (0 to %ld)\n", what, s, max);
                exit(2);
        }
        return v;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"to", required_argument, NULL, 't'},
                                             {"delay-us", required_argument, NULL, 'd'},
                                             {"listen", required_argument, NULL, 'l'},
                                             {"cap", required_argument, NULL, 'c'},
                                             {"max-conns", required_argument, NULL, 'm'},
                                             {NULL, 0, NULL, 0}};
        struct conn *conns = NULL;
        long to = -1, lport = 0, maxc = 256, nconn = 0;
        int o, lfd;

        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (o) {
                case 't':
                        to = num(optarg, "--to", 65535);
                        break;
                case 'd':
                        delay_ns = (uint64_t)num(optarg, "--delay-us", 10000000) * 1000;
                        break;
                case 'l':
                        lport = num(optarg, "--listen", 65535);
                        break;
                case 'c':
                        cap = (size_t)num(optarg, "--cap", 1L << 30);
                        break;
                case 'm':
                        maxc = num(optarg, "--max-conns", 65536);
                        break;
                default:
                        fprintf(stderr, "usage: delay-proxy --to PORT --delay-us N [--listen PORT] "
                                        "[--cap BYTES] [--max-conns N]\n");
                        return 2;
                }
        }
        if (to <= 0 || cap < CHUNK_MAX) {
                fprintf(stderr, "delay-proxy: --to PORT is required; --cap at least %d\n",
                        CHUNK_MAX);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        if ((ep = epoll_create1(0)) < 0 || (lfd = listen_on((int)lport)) < 0) {
                perror("delay-proxy");
                return 1;
        }
        struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
        for (;;) {
                struct epoll_event evs[64];
                struct timespec ts, *tp = NULL;
                uint64_t now = now_ns(), next = UINT64_MAX;
                int n;

                for (struct conn *c = conns; c; c = c->next)
                        for (int i = 0; i < 2; i++)
                                if (c->d[i].head && !c->d[i].wwait && c->d[i].head->due < next)
                                        next = c->d[i].head->due;
                if (next != UINT64_MAX) {
                        uint64_t w = next > now ? next - now : 0;

                        ts = (struct timespec){.tv_sec = (time_t)(w / 1000000000u),
                                               .tv_nsec = (long)(w % 1000000000u)};
                        tp = &ts;
                }
                n = epoll_pwait2(ep, evs, 64, tp, NULL);
                if (n < 0 && errno != EINTR) {
                        perror("delay-proxy: epoll");
                        return 1;
                }
                now = now_ns();
                for (int i = 0; i < n; i++) {
                        struct conn *c = evs[i].data.ptr;

                        if (!c) { /* the listening socket */
                                int cfd, sfd;

                                while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                                        if (nconn >= maxc || !(c = calloc(1, sizeof(*c)))) {
                                                close(cfd);
                                                continue;
                                        }
                                        if ((sfd = connect_to((int)to)) < 0) {
                                                free(c);
                                                close(cfd);
                                                continue;
                                        }
                                        nonblock(cfd);
                                        nonblock(sfd);
                                        c->fd[0] = cfd;
                                        c->fd[1] = sfd;
                                        c->d[0] = (struct dir){.src = cfd, .dst = sfd};
                                        c->d[1] = (struct dir){.src = sfd, .dst = cfd};
                                        c->next = conns;
                                        conns = c;
                                        nconn++;
                                        for (int s = 0; s < 2; s++) {
                                                struct epoll_event ev = {.events = EPOLLIN,
                                                                         .data.ptr = c};
                                                c->mask[s] = EPOLLIN;
                                                epoll_ctl(ep, EPOLL_CTL_ADD, c->fd[s], &ev);
                                        }
                                }
                                continue;
                        }
                        if (c->dead)
                                continue;
                        /* which side: pull both, cheap (non-blocking) */
                        if (!pull(c, 0, now) || !pull(c, 1, now)) {
                                c->dead = true;
                                continue;
                        }
                        if (evs[i].events & EPOLLOUT)
                                for (int s = 0; s < 2; s++)
                                        c->d[s].wwait = false;
                }
                for (struct conn *c = conns, *nx; c; c = nx) {
                        nx = c->next;
                        if (c->dead || !push(&c->d[0], now) || !push(&c->d[1], now) ||
                            (c->d[0].shut && c->d[1].shut)) {
                                conn_free(&conns, c);
                                nconn--;
                                continue;
                        }
                        arm(c, 0);
                        arm(c, 1);
                }
        }
}
