/* SPDX-License-Identifier: MIT */
/*
 * util/tls: the one hardened libcurl client set-up, held to what it promises against a plain
 * HTTP server on loopback (the https side is the integration tests': agent-http, attestctl-api,
 * hostile-attestctl, webhooks): one protocol, no redirect followed, the response cap at cap and
 * cap + 1, the timeout.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/testutil.h"
#include "util/tls.h"

#define CAP 1000

/* A one-connection-at-a-time HTTP server: answers every connection's first bytes with `answer`
 * (NULL: never answers, holds the connection until the client goes). */
struct server {
        int fd;
        unsigned short port;
        const char *answer;
        atomic_uint requests;
        pthread_t thread;
};

static void *serve(void *arg)
{
        struct server *s = arg;
        int c;

        while ((c = accept(s->fd, NULL, NULL)) >= 0) {
                char buf[4096];

                /* one read: curl sends a small request in one piece (and a TLS client its
                 * ClientHello, which gets the same plain answer) */
                if (read(c, buf, sizeof(buf)) > 0)
                        atomic_fetch_add(&s->requests, 1);
                if (s->answer)
                        (void)!write(c, s->answer, strlen(s->answer));
                else
                        while (read(c, buf, sizeof(buf)) > 0)
                                ;
                close(c);
        }
        return NULL;
}

static void server_start(struct server *s, const char *answer)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);

        memset(s, 0, sizeof(*s));
        s->answer = answer;
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(s->fd, 0);
        ck_assert_int_eq(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(s->fd, 4), 0);
        ck_assert_int_eq(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
        s->port = ntohs(a.sin_port);
        ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
        shutdown(s->fd, SHUT_RDWR);
        pthread_join(s->thread, NULL);
        close(s->fd);
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
        (void)p;
        (void)ud;
        return size * n;
}

/* GET path from s through a handle set up with o; the libcurl result, *ret_code the status. */
static CURLcode get(const struct server *s, const struct tls_client_opts *o, const char *scheme,
                    long *ret_code)
{
        CURL *h = curl_easy_init();
        char url[128];
        CURLcode rc;

        ck_assert_ptr_nonnull(h);
        ck_assert_int_eq(tls_client_setup(h, o, NULL), 0);
        snprintf(url, sizeof(url), "%s://127.0.0.1:%u/x", scheme, s->port);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(h, CURLOPT_PROXY, ""); /* the test talks to loopback, whatever the env */
        rc = curl_easy_perform(h);
        *ret_code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, ret_code);
        curl_easy_cleanup(h);
        return rc;
}

static const struct tls_client_opts plain = {
        .connect_timeout_ms = 5000,
        .timeout_ms = 10000,
        .max_response = CAP,
        .plain_http = true,
};

START_TEST(test_tls_https_handle_refuses_http)
{
        struct tls_client_opts o = plain;
        struct server s;
        long code;

        server_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        o.plain_http = false;
        ck_assert_int_eq(get(&s, &o, "http", &code), CURLE_UNSUPPORTED_PROTOCOL);
        ck_assert_uint_eq(atomic_load(&s.requests), 0);
        /* and a plain handle speaks only http */
        ck_assert_int_eq(get(&s, &plain, "https", &code), CURLE_UNSUPPORTED_PROTOCOL);
        ck_assert_int_eq(get(&s, &plain, "http", &code), CURLE_OK);
        ck_assert_int_eq(code, 200);
        server_stop(&s);
}
END_TEST

START_TEST(test_tls_https_speaks_tls_only)
{
        struct tls_client_opts o = plain;
        struct server s;
        long code;

        /* a plain HTTP server behind an https URL: the handshake fails, no answer is taken */
        server_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        o.plain_http = false;
        ck_assert_int_eq(get(&s, &o, "https", &code), CURLE_SSL_CONNECT_ERROR);
        ck_assert_int_eq(code, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_tls_redirect_is_an_answer)
{
        struct server s;
        long code;

        server_start(&s, "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n");
        ck_assert_int_eq(get(&s, &plain, "http", &code), CURLE_OK);
        ck_assert_int_eq(code, 302);
        ck_assert_uint_eq(atomic_load(&s.requests), 1); /* not followed */
        server_stop(&s);
}
END_TEST

/* An answer announcing len bytes (and sending none: the cap is checked on the announcement). */
static CURLcode announced(unsigned len, long *ret_code)
{
        static char answer[128];
        struct server s;
        CURLcode rc;

        snprintf(answer, sizeof(answer), "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n", len);
        server_start(&s, answer);
        rc = get(&s, &plain, "http", ret_code);
        server_stop(&s);
        return rc;
}

START_TEST(test_tls_response_cap_at_cap_and_over)
{
        long code;

        /* cap - 1 and cap pass the cap (the body then falls short: a partial file) */
        ck_assert_int_eq(announced(CAP - 1, &code), CURLE_PARTIAL_FILE);
        ck_assert_int_eq(announced(CAP, &code), CURLE_PARTIAL_FILE);
        ck_assert_int_eq(announced(CAP + 1, &code), CURLE_FILESIZE_EXCEEDED);
}
END_TEST

START_TEST(test_tls_timeout_bounds_a_silent_server)
{
        struct tls_client_opts o = plain;
        struct timespec t0, t1;
        struct server s;
        long code, ms;

        server_start(&s, NULL);
        o.timeout_ms = 300;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(get(&s, &o, "http", &code), CURLE_OPERATION_TIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        ck_assert_int_ge(ms, 250);
        ck_assert_int_lt(ms, 5000); /* a loaded machine is slow, not 15 times slow */
        server_stop(&s);
}
END_TEST

START_TEST(test_tls_refused_option_is_named)
{
        struct tls_client_opts o = plain;
        const char *what = NULL;
        CURL *h = curl_easy_init();

        ck_assert_ptr_nonnull(h);
        o.max_response = UINT64_MAX; /* a negative curl_off_t: libcurl refuses it */
        ck_assert_int_eq(tls_client_setup(h, &o, &what), -EINVAL);
        ck_assert_str_eq(what, "the response cap");
        o = plain;
        o.plain_http = false;
        o.ca = "/etc/ssl/certs/ca-certificates.crt";
        ck_assert_int_eq(tls_client_setup(h, &o, &what), 0);
        curl_easy_cleanup(h);
}
END_TEST

static Suite *tls_suite(void)
{
        Suite *s = suite_create("tls");
        TCase *tc = tcase_create("tls");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_tls_https_handle_refuses_http);
        tcase_add_test(tc, test_tls_https_speaks_tls_only);
        tcase_add_test(tc, test_tls_redirect_is_an_answer);
        tcase_add_test(tc, test_tls_response_cap_at_cap_and_over);
        tcase_add_test(tc, test_tls_timeout_bounds_a_silent_server);
        tcase_add_test(tc, test_tls_refused_option_is_named);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        curl_global_init(CURL_GLOBAL_DEFAULT);
        return tu_run(tls_suite());
}
