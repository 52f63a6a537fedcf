/* SPDX-License-Identifier: MIT */
/*
 * The agent's HTTPS client against a real TLS server (openssl s_server on loopback, certificates
 * from tests/lib/mkcerts.sh): pinned CA accepted, another CA refused, plain http refused unless
 * allowed, response cap, server down, timeouts; and the back-off schedule. Mutual TLS against a
 * server that requires a client certificate (s_server -Verify): --cert/--key present one, none is
 * refused, and a key file group or others may read is refused before any connection. Streamed
 * bodies (the evidence upload) against a plain loopback server: framed, cut, aborted.
 */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/http.h"

static char dir[] = "/tmp/test-http.XXXXXX";
static pid_t server;
static int port;
static char url[64];

static int free_port(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
        socklen_t l = sizeof(a);
        int s = socket(AF_INET, SOCK_STREAM, 0), p;

        ck_assert_int_ge(s, 0);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
        p = ntohs(a.sin_port);
        close(s);
        return p;
}

enum server_mode { PLAIN, MTLS, CBC12 };

static void start_server(enum server_mode mode)
{
        char cmd[1024], path[300];
        FILE *f;

        snprintf(cmd, sizeof(cmd), "%s/tests/lib/mkcerts.sh %s", getenv("ATTEST_TOP"), dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/hello.json", dir);
        f = fopen(path, "w");
        fputs("{\"hello\":1}\n", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/nul.json", dir);
        f = fopen(path, "w");
        fwrite("{}\0{\"x\":1}\n", 1, 12, f); /* "{}" then a NUL: JSON would stop at it */
        fclose(f);
        snprintf(path, sizeof(path), "%s/big.json", dir);
        f = fopen(path, "w");
        for (int i = 0; i < HTTP_RESPONSE_MAX / 64 + 10; i++)
                fputs("0123456789012345678901234567890123456789012345678901234567890123", f);
        fclose(f);
        port = free_port();
        snprintf(url, sizeof(url), "https://127.0.0.1:%d", port);
        server = fork();
        ck_assert_int_ge(server, 0);
        if (server == 0) {
                char acc[32];

                ck_assert_int_eq(chdir(dir), 0);
                snprintf(acc, sizeof(acc), "127.0.0.1:%d", port);
                freopen("/dev/null", "w", stdout);
                freopen("/dev/null", "w", stderr);
                if (mode == CBC12) /* TLS 1.2 with CBC suites only: no AEAD to agree on */
                        execlp("openssl", "openssl", "s_server", "-accept", acc, "-cert",
                               "server.pem", "-key", "server.key", "-WWW", "-quiet", "-no_tls1_3",
                               "-cipher", "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA",
                               (char *)NULL);
                else if (mode == MTLS) /* a client certificate chaining to ca.pem, or none */
                        execlp("openssl", "openssl", "s_server", "-accept", acc, "-cert",
                               "server.pem", "-key", "server.key", "-WWW", "-quiet", "-Verify", "1",
                               "-verify_return_error", "-CAfile", "ca.pem", (char *)NULL);
                else
                        execlp("openssl", "openssl", "s_server", "-accept", acc, "-cert",
                               "server.pem", "-key", "server.key", "-WWW", "-quiet", (char *)NULL);
                _exit(127);
        }
        /* wait until it accepts */
        for (int i = 0; i < 100; i++) {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons((uint16_t)port),
                                        .sin_addr.s_addr = htonl(0x7f000001)};
                int s = socket(AF_INET, SOCK_STREAM, 0);
                int ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;

                close(s);
                if (ok)
                        return;
                usleep(50000);
        }
        ck_abort_msg("openssl s_server did not start");
}

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        start_server(PLAIN);
}

static void setup_mtls(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        start_server(MTLS);
}

static void setup_cbc12(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        start_server(CBC12);
}

static void teardown(void)
{
        char cmd[300];

        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static const char *in_dir(const char *name)
{
        static char p[4][300];
        static int i;
        char *r = p[i++ % 4];

        snprintf(r, 300, "%s/%s", dir, name);
        return r;
}

/* GET /hello.json through c: 200 and the file's text */
static void get_hello(struct http_client *c)
{
        struct attest_err err = {0};
        long status = 0;
        char *body = NULL;

        ck_assert_msg(http_request(c, "GET", "/hello.json", NULL, 0, &status, &body, &err) == 0,
                      "%s", err.msg);
        ck_assert_int_eq(status, 200);
        ck_assert_str_eq(body, "{\"hello\":1}\n");
        free(body);
}

START_TEST(test_pinned_ca_is_accepted_and_keepalive_reused)
{
        struct http_opts o = {.url = url, .ca = in_dir("ca.pem"), .token = "s3cret"};
        struct http_client *c;
        struct attest_err err = {0};

        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        for (int i = 0; i < 2; i++) /* the second on the kept-alive connection */
                get_hello(c);
        http_free(c);
}
END_TEST

/* A server that offers only CBC suites over TLS 1.2 gets no handshake: AEAD suites only. */
START_TEST(test_tls12_without_aead_is_refused)
{
        struct http_opts o = {.url = url, .ca = in_dir("ca.pem"), .token = "s3cret"};
        struct http_client *c;
        struct attest_err err = {0};
        long status = 0;
        char *body = NULL;

        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_lt(http_request(c, "GET", "/hello.json", NULL, 0, &status, &body, &err), 0);
        ck_assert_ptr_null(body);
        ck_assert_int_eq(status, 0);
        http_free(c);
}
END_TEST

START_TEST(test_other_ca_and_plain_http_are_refused)
{
        struct http_opts o = {.url = url, .ca = in_dir("other-ca.pem")};
        struct http_client *c;
        struct attest_err err = {0};
        long status = 0;
        char *body = NULL;

        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_eq(http_request(c, "GET", "/hello.json", NULL, 0, &status, &body, &err),
                         -EIO);
        ck_assert_int_eq(err.code, AE_HTTP_TLS_VERIFY);
        ck_assert_ptr_null(body);
        http_free(c);

        o.url = "http://127.0.0.1:1";
        ck_assert_int_eq(http_new(&o, &c, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_HTTP_BAD_URL);
        o.url = url;
        o.ca = NULL;
        ck_assert_int_eq(http_new(&o, &c, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_HTTP_NO_CA);
}
END_TEST

START_TEST(test_response_cap_down_server_and_timeout)
{
        struct http_opts o = {.url = url, .ca = in_dir("ca.pem"), .timeout_ms = 1500};
        struct http_client *c;
        struct attest_err err = {0};
        long status;
        char *body;
        char down[64];
        int s;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
        socklen_t l = sizeof(a);

        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_eq(http_request(c, "GET", "/big.json", NULL, 0, &status, &body, &err),
                         -E2BIG);
        ck_assert_int_eq(err.code, AE_HTTP_RESPONSE_TOO_BIG);
        /* a NUL byte in a response is refused, not read as the text before it */
        ck_assert_int_eq(http_request(c, "GET", "/nul.json", NULL, 0, &status, &body, &err),
                         -EBADMSG);
        ck_assert_int_eq(err.code, AE_HTTP_RESPONSE_NUL);
        get_hello(c);
        http_free(c);

        snprintf(down, sizeof(down), "https://127.0.0.1:%d", free_port());
        o.url = down;
        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_eq(http_request(c, "GET", "/", NULL, 0, &status, &body, &err), -EIO);
        ck_assert_int_eq(err.code, AE_HTTP_TRANSPORT);
        http_free(c);

        /* a listener that never answers: the request times out instead of hanging */
        s = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(s, 4), 0);
        ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
        snprintf(down, sizeof(down), "https://127.0.0.1:%d", ntohs(a.sin_port));
        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_eq(http_request(c, "GET", "/", NULL, 0, &status, &body, &err), -EIO);
        ck_assert_int_eq(err.code, AE_HTTP_TIMEOUT);
        http_free(c);
        close(s);
}
END_TEST

START_TEST(test_mtls_client_certificate_is_presented)
{
        char ca[300], cert[300], key[300], scert[300], skey[300];
        struct http_opts o = {.url = url, .ca = ca};
        struct http_client *c;
        struct attest_err err = {0};
        long status = 0;
        char *body = NULL;

        /* in_dir() recycles its buffers: copies that stay put */
        snprintf(ca, sizeof(ca), "%s", in_dir("ca.pem"));
        snprintf(cert, sizeof(cert), "%s", in_dir("client.pem"));
        snprintf(key, sizeof(key), "%s", in_dir("client.key"));
        snprintf(scert, sizeof(scert), "%s", in_dir("server.pem"));
        snprintf(skey, sizeof(skey), "%s", in_dir("server.key"));

        /* no client certificate: the server ends the handshake */
        ck_assert_int_eq(http_new(&o, &c, &err), 0);
        ck_assert_int_eq(http_request(c, "GET", "/hello.json", NULL, 0, &status, &body, &err),
                         -EIO);
        ck_assert_ptr_null(body);
        http_free(c);

        /* --cert/--key: presented, verified by the server against ca.pem, request served; the
         * key is read once in http_new() */
        o.cert = cert;
        o.key = key;
        ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
        for (int i = 0; i < 2; i++) /* the second on the kept-alive connection */
                get_hello(c);
        http_free(c);

        /* certificate and key in one file (mode 0600), no --key: the key is read from it */
        {
                char both[300], cmd[1000];

                snprintf(both, sizeof(both), "%s", in_dir("both.pem"));
                snprintf(cmd, sizeof(cmd), "umask 077 && cat %s %s >%s", cert, key, both);
                ck_assert_int_eq(system(cmd), 0);
                o.cert = both;
                o.key = NULL;
                ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
                get_hello(c);
                http_free(c);
        }

        /* the server's own certificate is no client certificate (serverAuth only): refused */
        o.cert = scert;
        o.key = skey;
        ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
        body = NULL;
        ck_assert_int_eq(http_request(c, "GET", "/hello.json", NULL, 0, &status, &body, &err),
                         -EIO);
        ck_assert_ptr_null(body);
        http_free(c);
}
END_TEST

START_TEST(test_mtls_key_readable_by_others_is_refused)
{
        static const mode_t bad[] = {0640, 0604, 0644, 0660, 0601, 0610};
        char ca[300], cert[300], key[300], nokey[300];
        struct http_opts o = {.url = url, .ca = ca, .cert = cert, .key = key};
        struct http_client *c = NULL;
        struct attest_err err = {0};

        /* in_dir() recycles its buffers: copies that stay put */
        snprintf(ca, sizeof(ca), "%s", in_dir("ca.pem"));
        snprintf(cert, sizeof(cert), "%s", in_dir("client.pem"));
        snprintf(key, sizeof(key), "%s", in_dir("client.key"));
        snprintf(nokey, sizeof(nokey), "%s", in_dir("nope.key"));

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_int_eq(chmod(key, bad[i]), 0);
                err = (struct attest_err){0};
                ck_assert_int_eq(http_new(&o, &c, &err), -EINVAL);
                ck_assert_ptr_null(c);
                ck_assert_int_eq(err.code, AE_HTTP_KEY_PERMISSIONS);
                ck_assert_msg(strstr(err.msg, "client.key"), "%s", err.msg);
        }
        /* 0600 and 0400 are fine */
        ck_assert_int_eq(chmod(key, 0400), 0);
        ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
        http_free(c);
        ck_assert_int_eq(chmod(key, 0600), 0);
        ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
        http_free(c);
        /* no key file given: the key is read from the certificate file, with the same check */
        o.key = NULL;
        ck_assert_int_eq(chmod(cert, 0644), 0);
        ck_assert_int_eq(http_new(&o, &c, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_HTTP_KEY_PERMISSIONS);
        /* a missing key file names it */
        o.key = nokey;
        ck_assert_int_eq(http_new(&o, &c, &err), -ENOENT);
        ck_assert_int_eq(err.code, AE_HTTP_KEY_UNREADABLE);
}
END_TEST

START_TEST(test_backoff_grows_with_jitter_and_caps)
{
        struct backoff b = {.base_ms = 100, .max_ms = 2000};
        uint32_t prev_hi = 0, seen[8];

        for (int i = 0; i < 8; i++) {
                uint32_t d = backoff_next(&b), hi = 100u << i;

                if (hi > 2000)
                        hi = 2000;
                ck_assert_uint_ge(d, hi / 2);
                ck_assert_uint_lt(d, hi);
                ck_assert_uint_ge(hi, prev_hi);
                prev_hi = hi;
                seen[i] = d;
        }
        /* the capped tail is jittered, not constant */
        bool differ = false;
        for (int k = 0; k < 20 && !differ; k++)
                differ = backoff_next(&b) != seen[7];
        ck_assert(differ);
        backoff_reset(&b);
        ck_assert_uint_lt(backoff_next(&b), 100);
}
END_TEST

/* ---- streamed request bodies (http_request_stream) against a plain loopback server ---- */

enum raw_mode {
        RAW_VANISH, /* read the headers and some of the body, then close: the verifier gone */
        RAW_ANSWER, /* read the headers and exactly Content-Length bytes, then answer 200 */
        RAW_SINK,   /* read everything until the client closes */
};

struct raw_server {
        pid_t pid;
        int port;
        int report; /* the child writes the body byte count it read here (RAW_ANSWER) */
};

/* One connection, bounded by alarm(): the child exits after it. */
static void raw_start(struct raw_server *r, enum raw_mode mode)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
        socklen_t l = sizeof(a);
        int s = socket(AF_INET, SOCK_STREAM, 0), pfd[2];

        ck_assert_int_ge(s, 0);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(s, 1), 0);
        ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
        ck_assert_int_eq(pipe(pfd), 0);
        r->port = ntohs(a.sin_port);
        r->pid = fork();
        ck_assert_int_ge(r->pid, 0);
        if (r->pid == 0) {
                static char buf[65536];
                size_t hdr = 0, body = 0, want = 0;
                int c;
                ssize_t n;

                alarm(20);
                close(pfd[0]);
                c = accept(s, NULL, NULL);
                if (c < 0)
                        _exit(1);
                /* headers: until CRLFCRLF (they fit one buffer) */
                while (hdr < sizeof(buf) - 1 &&
                       (n = read(c, buf + hdr, sizeof(buf) - 1 - hdr)) > 0) {
                        char *end;

                        hdr += (size_t)n;
                        buf[hdr] = '\0';
                        if ((end = strstr(buf, "\r\n\r\n"))) {
                                const char *cl = strcasestr(buf, "Content-Length: ");

                                body = hdr - (size_t)(end + 4 - buf);
                                want = cl ? strtoul(cl + 16, NULL, 10) : 0;
                                break;
                        }
                }
                while ((mode == RAW_SINK || (mode == RAW_VANISH && body < 100000) ||
                        (mode == RAW_ANSWER && body < want)) &&
                       (n = read(c, buf, sizeof(buf))) > 0)
                        body += (size_t)n;
                if (mode == RAW_ANSWER) {
                        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: "
                                                 "application/json\r\nContent-Length: 11\r\n\r\n"
                                                 "{\"ok\":true}";

                        if (write(c, ok, sizeof(ok) - 1) < 0)
                                _exit(1);
                }
                if (write(pfd[1], &body, sizeof(body)) < 0)
                        _exit(1);
                close(c);
                _exit(0);
        }
        close(s);
        close(pfd[1]);
        r->report = pfd[0];
}

static size_t raw_done(struct raw_server *r)
{
        size_t body = 0;
        int st;

        ck_assert_int_eq(read(r->report, &body, sizeof(body)), (ssize_t)sizeof(body));
        close(r->report);
        ck_assert_int_eq(waitpid(r->pid, &st, 0), r->pid);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        return body;
}

struct gen {
        uint64_t left, made, fail_after;
        int calls;
};

/* 'x' bytes, left of them; -ESTALE (as a log changed under the send) after fail_after. */
static ssize_t gen_read(void *ctx, uint8_t *buf, size_t n, struct attest_err *err)
{
        struct gen *g = ctx;
        size_t k = n < g->left ? n : (size_t)g->left;

        g->calls++;
        if (g->fail_after && g->made >= g->fail_after)
                return attest_fail(err, -ESTALE, AE_IMALOG_READ, "changed under the send");
        memset(buf, 'x', k);
        g->left -= k;
        g->made += k;
        return (ssize_t)k;
}

static struct http_client *raw_client(const struct raw_server *r)
{
        char u[64];
        struct http_opts o = {.url = u, .insecure_http = true, .timeout_ms = 15000};
        struct http_client *c = NULL;
        struct attest_err err = {0};

        snprintf(u, sizeof(u), "http://127.0.0.1:%d", r->port);
        ck_assert_msg(http_new(&o, &c, &err) == 0, "%s", err.msg);
        return c;
}

/*
 * A body made while it is sent: exactly Content-Length bytes arrive and the answer comes back;
 * the verifier vanishing mid-body is a transport error (-EIO) that stops the producer early; the
 * producer failing aborts the request with its own errno and code. Nothing leaks (LeakSanitizer
 * in the ASan build) and no body is ever held whole.
 */
START_TEST(test_stream_body_sent_cut_and_aborted)
{
        struct attest_err err = {0};
        struct raw_server r;
        struct http_client *c;
        struct gen g;
        char *body = NULL;
        long status = 0;

        /* whole: 5 MiB + 1 in pieces, framed by Content-Length */
        raw_start(&r, RAW_ANSWER);
        c = raw_client(&r);
        g = (struct gen){.left = (5u << 20) + 1};
        ck_assert_msg(http_request_stream(c, "POST", "/v1/x", (5u << 20) + 1, gen_read, &g, &status,
                                          &body, &err) == 0,
                      "%s", err.msg);
        ck_assert_int_eq(status, 200);
        ck_assert_str_eq(body, "{\"ok\":true}");
        ck_assert_uint_eq(raw_done(&r), (5u << 20) + 1);
        ck_assert_uint_eq(g.left, 0);
        free(body);
        body = NULL;
        http_free(c);

        /* the verifier gone after 100 kB of 64 MiB: -EIO, the producer stopped long before */
        raw_start(&r, RAW_VANISH);
        c = raw_client(&r);
        g = (struct gen){.left = 64u << 20};
        ck_assert_int_eq(http_request_stream(c, "POST", "/v1/x", 64u << 20, gen_read, &g, &status,
                                             &body, &err),
                         -EIO);
        ck_assert_int_eq(err.code, AE_HTTP_TRANSPORT);
        ck_assert_ptr_null(body);
        ck_assert_uint_ge(raw_done(&r), 100000);
        ck_assert_uint_lt(g.made, 32u << 20);
        http_free(c);

        /* the producer fails after 1 MiB: its errno and code, not a transport error */
        raw_start(&r, RAW_SINK);
        c = raw_client(&r);
        g = (struct gen){.left = 8u << 20, .fail_after = 1u << 20};
        ck_assert_int_eq(http_request_stream(c, "POST", "/v1/x", 8u << 20, gen_read, &g, &status,
                                             &body, &err),
                         -ESTALE);
        ck_assert_int_eq(err.code, AE_IMALOG_READ);
        ck_assert_ptr_null(body);
        ck_assert_uint_lt(raw_done(&r), 8u << 20);
        http_free(c);
}
END_TEST

static Suite *http_suite(void)
{
        Suite *s = suite_create("agent-http");
        TCase *tc = tcase_create("tls");
        TCase *bo = tcase_create("backoff");
        TCase *mt = tcase_create("mtls");
        TCase *st = tcase_create("stream");
        TCase *cbc = tcase_create("tls12-cbc");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_pinned_ca_is_accepted_and_keepalive_reused);
        tcase_add_test(tc, test_other_ca_and_plain_http_are_refused);
        tcase_add_test(tc, test_response_cap_down_server_and_timeout);
        tcase_add_checked_fixture(mt, setup_mtls, teardown);
        tcase_set_timeout(mt, 60);
        tcase_add_test(mt, test_mtls_client_certificate_is_presented);
        tcase_add_test(mt, test_mtls_key_readable_by_others_is_refused);
        tcase_add_test(bo, test_backoff_grows_with_jitter_and_caps);
        tcase_add_checked_fixture(cbc, setup_cbc12, teardown);
        tcase_set_timeout(cbc, 60);
        tcase_add_test(cbc, test_tls12_without_aead_is_refused);
        suite_add_tcase(s, cbc);
        tcase_set_timeout(st, 60);
        tcase_add_test(st, test_stream_body_sent_cut_and_aborted);
        suite_add_tcase(s, st);
        suite_add_tcase(s, tc);
        suite_add_tcase(s, mt);
        suite_add_tcase(s, bo);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(http_suite());
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
