/* SPDX-License-Identifier: MIT */
/*
 * attestd's two text files, the config file (daemon/config.c) and the tokens file
 * (daemon/auth.c), through the text cursor: every cap at cap - 1, cap and cap + 1.
 */
#include <check.h>
#include <errno.h>

#include "daemon/auth.h"
#include "daemon/config.h"
#include "tests/unit/testutil.h"

/* a string literal and its length without the NUL */
#define LIT(s) s, sizeof(s) - 1

#define HASH "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

static char *filled(size_t n, char c)
{
        char *b = malloc(n + 1);

        ck_assert_ptr_nonnull(b);
        memset(b, c, n);
        b[n] = '\0';
        return b;
}

START_TEST(test_config_value_line_and_file_caps)
{
        struct config c;
        struct attest_err err = {0};
        char *b;
        size_t pre = strlen("db = ");

        /* a value of CONFIG_STR_MAX - 1 bytes fits (with its NUL), one more does not */
        for (int d = -1; d <= 1; d++) {
                size_t v = (size_t)(CONFIG_STR_MAX - 1 + d);

                b = filled(pre + v + 1, 'x');
                memcpy(b, "db = ", pre);
                b[pre + v] = '\n';
                memset(&c, 0, sizeof(c));
                err = (struct attest_err){0};
                ck_assert_int_eq(config_parse(b, pre + v + 1, "f", &c, &err), d <= 0 ? 0 : -EINVAL);
                if (d <= 0)
                        ck_assert_uint_eq(strlen(c.db), v);
                else
                        ck_assert_ptr_nonnull(strstr(err.msg, "value too long"));
                free(b);
        }
        /* lines of CONFIG_LINE_MAX - 1, cap, cap + 1 bytes (a comment) */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(CONFIG_LINE_MAX + d);

                b = filled(n + 1, ' ');
                b[0] = '#';
                b[n] = '\n';
                err = (struct attest_err){0};
                ck_assert_int_eq(config_parse(b, n + 1, "f", &c, &err), d <= 0 ? 0 : -EINVAL);
                if (d > 0)
                        ck_assert_ptr_nonnull(strstr(err.msg, "f:1: line too long"));
                free(b);
        }
        /* the file: newlines only */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(CONFIG_FILE_MAX + d);

                b = filled(n, '\n');
                err = (struct attest_err){0};
                ck_assert_int_eq(config_parse(b, n, "f", &c, &err), d <= 0 ? 0 : -EINVAL);
                free(b);
        }
}
END_TEST

START_TEST(test_config_lines)
{
        static const char ok[] =
                "  # comment\r\n\nretain=7\r\nthreads \t=  3  \ninsecure-http = yes";
        struct config c;
        struct attest_err err = {0};

        memset(&c, 0, sizeof(c));
        ck_assert_int_eq(config_parse(ok, strlen(ok), "f", &c, &err), 0);
        ck_assert_uint_eq(c.retain, 7);
        ck_assert_uint_eq(c.threads, 3);
        ck_assert(c.insecure_http);
        ck_assert_int_eq(config_parse("retain\n", 7, "f", &c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "f:1: expected key = value"));
        ck_assert_int_eq(config_parse("\nretain = 0\n", 12, "f", &c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "f:2"));
        ck_assert_int_eq(config_parse("retain = 1000001\n", 17, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("retain = 18446744073709551616\n", 30, "f", &c, &err),
                         -EINVAL);
        ck_assert_int_eq(config_parse("retain = -1\n", 12, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("retain = 1 2\n", 13, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("nope = 1\n", 9, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("config = x\n", 11, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("db = a\0b\n", 9, "f", &c, &err), -EINVAL);
        ck_assert_uint_eq(c.retain, 7);
}
END_TEST

static void tokens_ok(const char *t, size_t len, size_t want)
{
        struct auth_tokens *a = NULL;
        struct attest_err err = {0};

        ck_assert_msg(auth_parse(t, len, "tok", &a, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(auth_count(a), want);
        auth_free(a);
}

static void tokens_bad(const char *t, size_t len, int want, enum attest_code code)
{
        struct auth_tokens *a = NULL;
        struct attest_err err = {0};

        ck_assert_int_eq(auth_parse(t, len, "tok", &a, &err), want);
        ck_assert_int_eq(err.code, code);
        ck_assert_ptr_null(a);
}

START_TEST(test_tokens_caps)
{
        char line[200], *b;
        size_t n, ll;

        /* tokens: AUTH_TOKENS_MAX - 1, cap, cap + 1 */
        ll = (size_t)snprintf(line, sizeof(line), "reader %s\n", HASH);
        for (int d = -1; d <= 1; d++) {
                size_t k = (size_t)(AUTH_TOKENS_MAX + d);

                b = malloc(k * ll);
                ck_assert_ptr_nonnull(b);
                for (size_t i = 0; i < k; i++)
                        memcpy(b + i * ll, line, ll);
                if (d <= 0)
                        tokens_ok(b, k * ll, k);
                else
                        tokens_bad(b, k * ll, -E2BIG, AE_TOKENS_TOO_MANY);
                free(b);
        }
        /* the file: AUTH_FILE_MAX - 1, cap, cap + 1 bytes of blank lines and one token */
        for (int d = -1; d <= 1; d++) {
                n = (size_t)(AUTH_FILE_MAX + d);
                b = filled(n, '\n');
                memcpy(b, line, ll);
                if (d <= 0)
                        tokens_ok(b, n, 1);
                else
                        tokens_bad(b, n, -E2BIG, AE_TOKENS_TOO_BIG);
                free(b);
        }
        /* a line of 4095, 4096, 4097 bytes: the token and a long comment */
        for (int d = -1; d <= 1; d++) {
                n = (size_t)(4096 + d);
                b = filled(n + 1, 'c');
                memcpy(b, line, ll - 1);
                b[ll - 1] = ' ';
                b[n] = '\n';
                if (d <= 0)
                        tokens_ok(b, n + 1, 1);
                else
                        tokens_bad(b, n + 1, -E2BIG, AE_TOKENS_LINE_TOO_LONG);
                free(b);
        }
        /* hashes of 63, 64, 65 hex digits */
        for (int d = -1; d <= 1; d++) {
                n = (size_t)snprintf(line, sizeof(line), "admin %.*s%s\n", 64 + d, HASH HASH,
                                     d > 0 ? "" : "");
                if (d == 0)
                        tokens_ok(line, n, 1);
                else
                        tokens_bad(line, n, -EINVAL, AE_TOKENS_BAD_HASH);
        }
        tokens_ok(LIT("\r\n  # c\n\tenroll " HASH " c\r\n"), 1);
        tokens_bad(LIT("enrollx " HASH "\n"), -EINVAL, AE_TOKENS_BAD_ROLE);
        tokens_bad(LIT("admin " HASH "\0\n"), -EINVAL, AE_TOKENS_BAD_LINE);
}
END_TEST

static Suite *files_suite(void)
{
        Suite *s = suite_create("daemon-files");
        TCase *tc = tcase_create("files");

        tcase_add_test(tc, test_config_value_line_and_file_caps);
        tcase_add_test(tc, test_config_lines);
        tcase_add_test(tc, test_tokens_caps);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(files_suite());
}
