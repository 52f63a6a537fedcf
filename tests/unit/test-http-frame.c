/* SPDX-License-Identifier: MIT */
/*
 * daemon/http/http-frame.c without a server: the request-target, header fields as libmicrohttpd
 * hands them over (obs-fold joined to the name), the end-of-head rules, every byte value in a
 * name, a value and a target, and the caps at cap - 1, cap and cap + 1.
 */
#include <check.h>
#include <errno.h>

#include "daemon/http/http-frame.h"
#include "tests/unit/testutil.h"

/* the head's verdict: fields as name/value pairs (NULL-terminated list), then the version */
static int head(const char *version, const char *const *kv, struct attest_err *err)
{
        struct http_frame f;

        http_frame_init(&f);
        /* the first error is kept in f and reported by http_frame_end */
        for (size_t i = 0; kv[i]; i += 2)
                if (http_frame_field(&f, kv[i], kv[i + 1], NULL) < 0)
                        ck_assert_int_ne(f.e, 0);
        return http_frame_end(&f, version, err);
}

#define HEAD_OK(...)                                                                               \
        do {                                                                                       \
                const char *const kv_[] = {__VA_ARGS__, NULL};                                     \
                struct attest_err e_ = {0};                                                        \
                ck_assert_msg(head("HTTP/1.1", kv_, &e_) == 0, "refused: %s", e_.msg);             \
        } while (0)

#define HEAD_BAD(detail, ...)                                                                      \
        do {                                                                                       \
                const char *const kv_[] = {__VA_ARGS__, NULL};                                     \
                struct attest_err e_ = {0};                                                        \
                ck_assert_int_eq(head("HTTP/1.1", kv_, &e_), -EBADMSG);                            \
                ck_assert_int_eq(e_.code, AE_BAD_REQUEST);                                         \
                ck_assert_msg(strstr(e_.msg, detail), "detail \"%s\" lacks \"%s\"", e_.msg,        \
                              detail);                                                             \
        } while (0)

START_TEST(test_frame_accepts_well_formed_heads)
{
        HEAD_OK("Host", "a", "Content-Length", "2", "Content-Type", "application/json");
        HEAD_OK("host", "a", "transfer-encoding", "Chunked");
        HEAD_OK("Host", "", "X-Tab", "a\tb", "X-8bit", "caf\xc3\xa9", "Authorization", "Bearer x");
        HEAD_OK("Host", "a", "!#$%&'*+-.^_`|~09azAZ", "v");
        HEAD_OK("Host", "a", "Content-Length", "0");
        HEAD_OK("Host", "a", "Content-Length", "18446744073709551615");
        /* HTTP/1.0 may leave Host out */
        {
                const char *const kv[] = {"Accept", "*/*", NULL};

                ck_assert_int_eq(head("HTTP/1.0", kv, NULL), 0);
        }
}
END_TEST

START_TEST(test_frame_rejects_whitespace_in_field_names)
{
        HEAD_BAD("\"Transfer-Encoding \": whitespace at offset 17", "Host", "a",
                 "Transfer-Encoding ", "chunked", "Content-Length", "5");
        HEAD_BAD("\"Content-Length\\x09\": whitespace at offset 14", "Host", "a",
                 "Content-Length\t", "5");
        HEAD_BAD("\" Host\": whitespace at offset 0", " Host", "a");
        HEAD_BAD("whitespace at offset 3", "Host", "a", "X-A B", "1");
        HEAD_BAD("empty name", "Host", "a", "", "1");
        HEAD_BAD("byte 0x28 at offset 1 is not a token", "Host", "a", "X(A)", "1");
        HEAD_BAD("byte 0xc3 at offset 1", "Host", "a", "X\xc3\xa9", "1");
}
END_TEST

START_TEST(test_frame_rejects_folded_framing_fields)
{
        /* libmicrohttpd 0.9.75 appends the continuation line to the name before it */
        HEAD_BAD("\"Transfer-Encodingchunked\": Transfer-Encoding with more after it", "Host", "a",
                 "Content-Length", "5", "Transfer-Encodingchunked", "");
        HEAD_BAD("\"Content-Length5\": Content-Length with more after it", "Host", "a",
                 "Content-Length5", "");
        HEAD_BAD("obs-fold", "Host", "a", "content-length0", "5");
        HEAD_BAD("obs-fold", "Host", "a", "TRANSFER-ENCODING-X", "chunked");
        /* a continuation with a space in it makes any name invalid */
        HEAD_BAD("whitespace", "Host", "a", "X-Ab c", "1");
        /* the names themselves, and others that merely start alike, are fine */
        HEAD_OK("Host", "a", "Content-Type", "x", "Content-Lengt", "1");
}
END_TEST

START_TEST(test_frame_rejects_controls_in_values)
{
        HEAD_BAD("\"X-A\": control byte 0x0d at offset 1 of its value", "Host", "a", "X-A", "1\r2");
        HEAD_BAD("control byte 0x0a at offset 0", "Host", "a", "X-A", "\nTransfer-Encoding: x");
        HEAD_BAD("control byte 0x7f", "Host", "a\x7f");
        HEAD_BAD("control byte 0x01", "Host", "a", "Authorization", "Bearer \x01");
}
END_TEST

START_TEST(test_frame_content_length_and_transfer_encoding)
{
        HEAD_BAD("more than one Content-Length (2", "Host", "a", "Content-Length", "2",
                 "Content-Length", "2");
        HEAD_BAD("Content-Length together with Transfer-Encoding", "Host", "a", "Content-Length",
                 "5", "Transfer-Encoding", "chunked");
        HEAD_BAD("Content-Length together with Transfer-Encoding", "Host", "a", "Transfer-Encoding",
                 "chunked", "content-length", "0");
        HEAD_BAD("more than one Transfer-Encoding (2", "Host", "a", "Transfer-Encoding", "chunked",
                 "Transfer-Encoding", "chunked");
        HEAD_BAD("exactly \"chunked\"", "Host", "a", "Transfer-Encoding", "gzip, chunked");
        HEAD_BAD("exactly \"chunked\"", "Host", "a", "Transfer-Encoding", "chunked ");
        HEAD_BAD("exactly \"chunked\"", "Host", "a", "Transfer-Encoding", "identity");
        HEAD_BAD("exactly \"chunked\"", "Host", "a", "Transfer-Encoding", "");
        HEAD_BAD("not a decimal number", "Host", "a", "Content-Length", "-1");
        HEAD_BAD("not a decimal number", "Host", "a", "Content-Length", "5, 5");
        HEAD_BAD("not a decimal number", "Host", "a", "Content-Length", "");
        HEAD_BAD("not a decimal number", "Host", "a", "Content-Length", "18446744073709551616");
        {
                struct http_frame f;

                http_frame_init(&f);
                ck_assert_int_eq(http_frame_field(&f, "Content-Length", "1234", NULL), 0);
                ck_assert_uint_eq(f.ncl, 1);
                ck_assert_uint_eq(f.cl, 1234);
        }
}
END_TEST

START_TEST(test_frame_host)
{
        const char *const none[] = {"Accept", "*/*", NULL};
        const char *const two[] = {"Host", "a", "Host", "b", NULL};
        struct attest_err err = {0};

        ck_assert_int_eq(head("HTTP/1.1", none, &err), -EBADMSG);
        ck_assert_str_eq(err.msg, "an HTTP/1.1 request without Host (RFC 9112 3.2)");
        ck_assert_int_eq(head("HTTP/1.2", none, &err), -EBADMSG);
        ck_assert_int_eq(head(NULL, none, &err), -EBADMSG);
        ck_assert_int_eq(head("HTTP/1.0", two, &err), -EBADMSG);
        ck_assert_str_eq(err.msg, "more than one Host (2; RFC 9112 3.2)");
}
END_TEST

/* the first field error is the one reported; fields after it are still counted */
START_TEST(test_frame_keeps_the_first_error)
{
        struct http_frame f;
        struct attest_err err = {0};

        http_frame_init(&f);
        ck_assert_int_eq(http_frame_field(&f, "Host", "a", &err), 0);
        ck_assert_int_eq(http_frame_field(&f, "X A", "1", &err), -EBADMSG);
        ck_assert_int_eq(http_frame_field(&f, "X-B", "\r", &err), -EBADMSG);
        ck_assert_int_eq(http_frame_field(&f, "Content-Length", "2", &err), -EBADMSG);
        ck_assert_uint_eq(f.ncl, 1);
        ck_assert_int_eq(http_frame_end(&f, "HTTP/1.1", &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err.msg, "\"X A\": whitespace at offset 1"));
        /* NULL name and value (never from libmicrohttpd): an empty name */
        http_frame_init(&f);
        ck_assert_int_eq(http_frame_field(&f, NULL, NULL, NULL), -EBADMSG);
}
END_TEST

/* every byte value in a field name and a field value */
START_TEST(test_frame_every_byte)
{
        for (unsigned b = 1; b < 256; b++) {
                char name[4] = {'X', (char)b, 'A', 0}, value[4] = {'v', (char)b, 'w', 0};
                bool tchar = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') ||
                             (b >= 'A' && b <= 'Z') || (b && strchr("!#$%&'*+-.^_`|~", (int)b));
                bool vok = b >= 0x20 ? b != 0x7f : b == '\t';
                struct http_frame f;

                http_frame_init(&f);
                ck_assert_int_eq(http_frame_field(&f, name, "v", NULL), tchar ? 0 : -EBADMSG);
                http_frame_init(&f);
                ck_assert_int_eq(http_frame_field(&f, "X-A", value, NULL), vok ? 0 : -EBADMSG);
        }
}
END_TEST

/* HTTP_FRAME_FIELDS_MAX fields are looked at, one more is refused; names and values at
 * HTTP_FRAME_LEN_MAX - 1, HTTP_FRAME_LEN_MAX and one more */
START_TEST(test_frame_caps)
{
        struct http_frame f;
        struct attest_err err = {0};

        for (int d = -1; d <= 1; d++) {
                unsigned n = HTTP_FRAME_FIELDS_MAX + d;
                int e = 0;

                http_frame_init(&f);
                for (unsigned i = 0; i < n; i++)
                        e = http_frame_field(&f, i ? "X-A" : "Host", "1", &err);
                ck_assert_int_eq(e, d <= 0 ? 0 : -E2BIG);
                ck_assert_int_eq(http_frame_end(&f, "HTTP/1.1", &err), d <= 0 ? 0 : -EBADMSG);
                if (d > 0)
                        ck_assert_str_eq(err.msg, "more than 8192 header fields");
        }
        for (int d = -1; d <= 1; d++) {
                size_t n = HTTP_FRAME_LEN_MAX + d;
                char *v = filled(n, 'v'), *nm = filled(n, 'n');

                http_frame_init(&f);
                ck_assert_int_eq(http_frame_field(&f, "X-A", v, &err), d <= 0 ? 0 : -E2BIG);
                http_frame_init(&f);
                ck_assert_int_eq(http_frame_field(&f, nm, "1", &err), d <= 0 ? 0 : -E2BIG);
                v[0] = '/';
                ck_assert_int_eq(http_frame_target(v, n, &err),
                                 d <= 0 ? HTTP_FRAME_TARGET_OK : HTTP_FRAME_TARGET_TOO_LONG);
                free(v);
                free(nm);
        }
}
END_TEST

static int target(const char *t, struct attest_err *err)
{
        return http_frame_target(t, strlen(t), err);
}

START_TEST(test_frame_target)
{
        struct attest_err err = {0};

        ck_assert_int_eq(target("/v1/agents/a1/evidence", &err), 0);
        ck_assert_int_eq(target("/v1/agents?label=team%3Da%2Fb&limit=5", &err), 0);
        ck_assert_int_eq(target("/v1/agents/a%2Db", &err), 0);
        ck_assert_int_eq(target("*", &err), 0);
        ck_assert_int_eq(target("", &err), 0);

        ck_assert_int_eq(target("/v1/agents/a%2fb", &err), HTTP_FRAME_TARGET_SLASH);
        ck_assert_int_eq(err.code, AE_BAD_REQUEST);
        ck_assert_str_eq(err.msg, "request-target: an encoded '/' (%2F) in the path: proxies "
                                  "and attestd would split it differently at byte 12");
        ck_assert_int_eq(target("/v1/agents/a%2Fb", &err), HTTP_FRAME_TARGET_SLASH);
        ck_assert_int_eq(target("/v1/agents/a%5cb", &err), HTTP_FRAME_TARGET_BACKSLASH);
        ck_assert_int_eq(target("/v1/agents/a%5Cb", &err), HTTP_FRAME_TARGET_BACKSLASH);
        ck_assert_int_eq(target("/v1/agents/a\\b", &err), HTTP_FRAME_TARGET_BACKSLASH);
        ck_assert_int_eq(target("/v1/agents/a%00", &err), HTTP_FRAME_TARGET_NUL);
        ck_assert_int_eq(target("/a?x=1%00", &err), HTTP_FRAME_TARGET_NUL);
        ck_assert_str_eq(err.msg, "request-target: an encoded NUL byte (%00) at byte 6");
        /* '\' and %2F in the query are data, not path separators */
        ck_assert_int_eq(target("/a?x=%2f%5c\\", &err), 0);
        ck_assert_int_eq(target("/a%", &err), HTTP_FRAME_TARGET_BAD_ESCAPE);
        ck_assert_int_eq(target("/a%2", &err), HTTP_FRAME_TARGET_BAD_ESCAPE);
        ck_assert_int_eq(target("/a%zz", &err), HTTP_FRAME_TARGET_BAD_ESCAPE);
        ck_assert_int_eq(target("/a%%2f", &err), HTTP_FRAME_TARGET_BAD_ESCAPE);
        ck_assert_int_eq(target("/a#b", &err), HTTP_FRAME_TARGET_FRAGMENT);
        ck_assert_int_eq(target("/a b", &err), HTTP_FRAME_TARGET_BYTE);
        ck_assert_str_eq(err.msg, "request-target: a byte that is not visible ASCII (a space, a "
                                  "control or 8-bit byte; RFC 9112 3.2) at byte 2");
        /* the length is the caller's: bytes past it are not read */
        ck_assert_int_eq(http_frame_target("/a%2f", 2, &err), 0);
        ck_assert_int_eq(http_frame_target("/a%2f", 4, &err), HTTP_FRAME_TARGET_BAD_ESCAPE);
        ck_assert_int_eq(http_frame_target("/a\0b", 4, &err), HTTP_FRAME_TARGET_BYTE);
        for (unsigned b = 0; b < 256; b++) {
                char t[4] = {'/', (char)b, 'x', 0};
                bool ok = b > 0x20 && b < 0x7f && b != '#' && b != '\\' && b != '%';

                ck_assert_int_eq(http_frame_target(t, 3, NULL) == 0, ok);
        }
        for (unsigned f = 1; f < HTTP_FRAME_TARGET__COUNT; f++)
                ck_assert_ptr_nonnull(http_frame_target_why(f));
        ck_assert_ptr_null(http_frame_target_why(HTTP_FRAME_TARGET_OK));
        ck_assert_ptr_null(http_frame_target_why(HTTP_FRAME_TARGET__COUNT));
}
END_TEST

static Suite *frame_suite(void)
{
        Suite *s = suite_create("http-frame");
        TCase *tc = tcase_create("frame");

        tcase_add_test(tc, test_frame_accepts_well_formed_heads);
        tcase_add_test(tc, test_frame_rejects_whitespace_in_field_names);
        tcase_add_test(tc, test_frame_rejects_folded_framing_fields);
        tcase_add_test(tc, test_frame_rejects_controls_in_values);
        tcase_add_test(tc, test_frame_content_length_and_transfer_encoding);
        tcase_add_test(tc, test_frame_host);
        tcase_add_test(tc, test_frame_keeps_the_first_error);
        tcase_add_test(tc, test_frame_every_byte);
        tcase_add_test(tc, test_frame_caps);
        tcase_add_test(tc, test_frame_target);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(frame_suite());
}
