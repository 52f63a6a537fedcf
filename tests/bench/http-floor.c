/* SPDX-License-Identifier: MIT */
/*
 * The HTTP floor: what libmicrohttpd and GnuTLS alone cost per attestation, with attestd's own
 * front-end set-up (poll with an internal thread pool and ITC, TLS with attestd's priority string,
 * the same certificate, a buffer response with attestd's three extra headers) and none of its work:
 * no authentication, no verification, no store. It answers bench-daemon's requests with bodies of
 * attestd's sizes: GET /healthz 200, POST /v1/policies/NAME 201, POST /v1/agents 201 {"id"}, POST
 * /v1/agents/ID/challenges 201 {"nonce","expires","ima_offset","pcr_selection"} (ima_offset =
 * the entries the agent's evidence added so far: --entries per evidence, one more the first time),
 * POST /v1/agents/ID/evidence 200 {"status":"pass",...} after reading the whole body (discarded, at
 * most 1 MiB), anything else 404; at most 65,536 agents (503 past them). Run by
 * tests/bench/run-daemon.sh (FLOOR=1) under the same load as attestd, so the difference of their
 * CPU per attestation is attestd's own work. A bench tool: loopback only, never a test verdict.
 *
 * http-floor --listen PORT --cert PEM --key PEM [--threads N] [--entries E]
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon/http/http.h"
#include "util/file.h"
#include "util/num.h"

#define AGENTS_MAX 65536
#define BODY_MAX (1u << 20)

static _Atomic unsigned long long entries[AGENTS_MAX];
static atomic_uint next_id;
static uint32_t per_round = 10;

enum route { R_NONE, R_HEALTH, R_POLICY, R_ENROL, R_CHALLENGE, R_EVIDENCE };

struct req {
        enum route route;
        unsigned agent;
        size_t got;
};

/* /v1/agents/fNNN/SUFFIX (attestd's id length: f and 31 digits): the route and N, R_NONE when the
 * path is not one of bench-daemon's */
static enum route route_of(const char *method, const char *url, unsigned *agent)
{
        char suffix[16];
        unsigned n;
        int end = 0;

        if (!strcmp(method, "GET") && !strcmp(url, "/healthz"))
                return R_HEALTH;
        if (strcmp(method, "POST"))
                return R_NONE;
        if (!strncmp(url, "/v1/policies/", 13))
                return R_POLICY;
        if (!strcmp(url, "/v1/agents"))
                return R_ENROL;
        if (sscanf(url, "/v1/agents/f%u/%15[a-z]%n", &n, suffix, &end) != 2 || url[end] ||
            n >= AGENTS_MAX)
                return R_NONE;
        *agent = n;
        if (!strcmp(suffix, "challenges"))
                return R_CHALLENGE;
        return strcmp(suffix, "evidence") ? R_NONE : R_EVIDENCE;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, int len)
{
        struct MHD_Response *r;
        enum MHD_Result ret;

        if (len < 0)
                return MHD_NO;
        r = MHD_create_response_from_buffer_with_free_callback((size_t)len, body, free);
        if (!r) {
                free(body);
                return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        ret = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *data_size, void **con_cls)
{
        struct req *q = *con_cls;
        char *body = NULL;
        int len = -1;

        (void)cls;
        (void)version;
        (void)data;
        if (!q) {
                if (!(q = calloc(1, sizeof(*q))))
                        return MHD_NO;
                q->route = route_of(method, url, &q->agent);
                *con_cls = q;
                return MHD_YES;
        }
        if (*data_size) {
                if ((q->got += *data_size) > BODY_MAX)
                        return MHD_NO;
                *data_size = 0;
                return MHD_YES;
        }
        switch (q->route) {
        case R_HEALTH:
                len = asprintf(&body, "{\"status\":\"ok\"}");
                return reply(c, 200, body, len);
        case R_POLICY:
                len = asprintf(&body, "{\"name\":\"default\",\"version\":1}");
                return reply(c, 201, body, len);
        case R_ENROL: {
                unsigned id = atomic_fetch_add(&next_id, 1);

                if (id >= AGENTS_MAX) {
                        len = asprintf(&body,
                                       "{\"error\":\"too_many_agents\",\"detail\":"
                                       "\"http-floor counts at most %u agents\"}",
                                       AGENTS_MAX);
                        return reply(c, 503, body, len);
                }
                len = asprintf(&body, "{\"id\":\"f%031u\",\"state\":\"active\"}", id);
                return reply(c, 201, body, len);
        }
        case R_CHALLENGE: {
                /* a counter stands for the nonce: the floor does no cryptography of attestd's */
                unsigned long long k = atomic_load(&entries[q->agent]);

                len = asprintf(&body,
                               "{\"nonce\":\"%064llx\",\"expires\":\"2026-12-04T00:00:00Z\","
                               "\"ima_offset\":%llu,\"boot_offset\":0,\"pcr_selection\":"
                               "{\"sha256\":[0,1,2,3,4,5,6,7,8,9,10]}}",
                               k + 1, k);
                return reply(c, 201, body, len);
        }
        case R_EVIDENCE:
                /* bench-daemon's first evidence adds a selinux-state entry to its --entries */
                if (atomic_fetch_add(&entries[q->agent], per_round) == 0)
                        atomic_fetch_add(&entries[q->agent], 1);
                len = asprintf(&body,
                               "{\"status\":\"pass\",\"result_id\":%u,\"agent\":\"f%u\","
                               "\"verified_at\":\"2026-12-04T00:00:00Z\",\"claims\":{\"selinux\":"
                               "{\"initialized\":true,\"enforcing\":true,\"anchored\":true},"
                               "\"ima\":{\"entries\":%llu,\"replayed\":%u}},\"checks\":[%s]}",
                               q->agent, q->agent,
                               (unsigned long long)atomic_load(&entries[q->agent]), per_round,
                               "{\"name\":\"selinux.enforcing\",\"result\":\"pass\"},"
                               "{\"name\":\"selinux.never_permissive\",\"result\":\"pass\"}");
                return reply(c, 200, body, len);
        default:
                len = asprintf(&body, "{\"error\":\"not_found\",\"detail\":\"%s\"}", "no route");
                return reply(c, 404, body, len);
        }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        (void)cls;
        (void)c;
        (void)toe;
        free(*con_cls);
        *con_cls = NULL;
}

int main(int argc, char **argv)
{
        static const struct option lo[] = {{"listen", 1, NULL, 'l'},  {"cert", 1, NULL, 'c'},
                                           {"key", 1, NULL, 'k'},     {"threads", 1, NULL, 't'},
                                           {"entries", 1, NULL, 'e'}, {NULL, 0, NULL, 0}};
        uint32_t port = 0, threads = 16;
        char *cert = NULL, *key = NULL;
        struct attest_err err = {0};
        size_t len, key_len = 0;
        struct sockaddr_in sa = {.sin_family = AF_INET};
        struct MHD_Daemon *d;
        sigset_t ss;
        int o, sig, fd, one = 1;

        while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
                switch (o) {
                case 'l':
                        if (num_u32(optarg, strlen(optarg), 1, 65535, &port) < 0)
                                goto usage;
                        break;
                case 'c':
                case 'k':
                        if (file_read_alloc(optarg, 1 << 20, o == 'k' ? FILE_SECRET : 0,
                                            o == 'c' ? &cert : &key, o == 'c' ? &len : &key_len,
                                            &err) < 0) {
                                fprintf(stderr, "http-floor: %s\n", err.msg);
                                return 1;
                        }
                        break;
                case 't':
                        if (num_u32(optarg, strlen(optarg), 1, 256, &threads) < 0)
                                goto usage;
                        break;
                case 'e':
                        if (num_u32(optarg, strlen(optarg), 1, 1000000, &per_round) < 0)
                                goto usage;
                        break;
                default:
                        goto usage;
                }
        }
        if (!port || !cert || !key)
                goto usage;
        /* loopback only, attestd's listen backlog */
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(fd, HTTP_LISTEN_BACKLOG) < 0) {
                perror("http-floor: 127.0.0.1");
                return 1;
        }
        sigemptyset(&ss);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &ss, NULL);
        /* attestd's flags and TLS set-up (daemon/http/http.c: http_start) */
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                                     MHD_USE_ERROR_LOG | MHD_USE_TLS,
                             0, NULL, NULL, on_request, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
                             MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                             MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_THREAD_POOL_SIZE,
                             threads, MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY,
                             key, MHD_OPTION_HTTPS_PRIORITIES, HTTP_TLS_PRIORITIES, MHD_OPTION_END);
        if (!d) {
                fprintf(stderr, "http-floor: libmicrohttpd did not start on port %u\n", port);
                return 1;
        }
        sigwait(&ss, &sig);
        MHD_stop_daemon(d);
        free(cert);
        file_free_secret(key, key_len);
        return 0;
usage:
        fprintf(stderr, "usage: http-floor --listen PORT --cert PEM --key PEM [--threads N] "
                        "[--entries E]\n");
        return 2;
}
