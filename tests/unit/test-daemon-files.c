/* SPDX-License-Identifier: MIT */
/*
 * attestd's two text files, the config file (daemon/config.c) and the tokens file
 * (daemon/auth.c), through the text cursor: every cap at cap - 1, cap and cap + 1.
 */
#include <check.h>
#include <errno.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/nonce.h"
#include "tests/unit/testutil.h"

#define HASH "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

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
                        ck_assert_str_eq(err.msg, "f:1: db: value longer than 4095 bytes");
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
                        ck_assert_ptr_nonnull(strstr(err.msg, "f:1: line longer than"));
                free(b);
        }
        /* the file: comment lines of 4000 bytes, then one setting */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(CONFIG_FILE_MAX + d);

                b = filled(n, '#');
                for (size_t i = 4000; i < n; i += 4001)
                        b[i] = '\n';
                memcpy(b + n - 11, "\nretain = 5", 11);
                err = (struct attest_err){0};
                c.retain = 0;
                ck_assert_msg(config_parse(b, n, "f", &c, &err) == (d <= 0 ? 0 : -EINVAL), "%d: %s",
                              d, err.msg);
                if (d <= 0)
                        ck_assert_uint_eq(c.retain, 5);
                else
                        ck_assert_str_eq(err.msg, "f: larger than 1048576 bytes");
                free(b);
        }
        /* the line count: CONFIG_LINES_MAX - 1, cap, cap + 1 lines, the last one a setting */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(CONFIG_LINES_MAX + d);

                b = filled(n + 11, '\n');
                memcpy(b + n - 1, "retain = 6\n", 11);
                err = (struct attest_err){0};
                ck_assert_int_eq(config_parse(b, n + 10, "f", &c, &err), (d <= 0 ? 0 : -EINVAL));
                if (d > 0)
                        ck_assert_str_eq(err.msg, "f: more than 65536 lines");
                free(b);
        }
        /* the key: CONFIG_KEY_MAX - 1, cap, cap + 1 bytes (unknown, but only past the cap is
         * it refused for its length) */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(CONFIG_KEY_MAX + d);

                b = filled(n + 3, 'k');
                memcpy(b + n, "=1\n", 3);
                err = (struct attest_err){0};
                ck_assert_int_eq(config_parse(b, n + 3, "f", &c, &err), -EINVAL);
                ck_assert_ptr_nonnull(
                        strstr(err.msg, d <= 0 ? "unknown key" : "key longer than 64"));
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
        ck_assert_str_eq(err.msg, "f:1: expected 'key = value'");
        ck_assert_int_eq(config_parse("\nretain = 0\n", 12, "f", &c, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "f:2: retain wants a number in 1..1000000");
        ck_assert_int_eq(config_parse("# x\nnope = 1\n", 13, "f", &c, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "f:2: unknown key 'nope'");
        ck_assert_int_eq(config_parse("db-mode = fast\r\n", 17, "f", &c, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "f:1: db-mode wants writer or pool");
        ck_assert_int_eq(config_parse("insecure-http =\n", 16, "f", &c, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "f:1: insecure-http wants yes or no");
        ck_assert_int_eq(config_parse("retain = 010\n", 13, "f", &c, &err), -EINVAL);
        ck_assert_int_eq(config_parse("retain = +1\n", 12, "f", &c, &err), -EINVAL);
        /* what both old parsers accepted: '=' and '#' inside a value, an empty string value */
        ck_assert_int_eq(config_parse("listen = a=b # c\ntls-key =\n", 27, "f", &c, &err), 0);
        ck_assert_str_eq(c.listen, "a=b # c");
        ck_assert_str_eq(c.tls_key, "");
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

/* dir/name holding n bytes of c, mode m */
static void put_file(const char *path, size_t n, char c, mode_t m)
{
        char *b = filled(n, c);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
        ck_assert_int_eq(fchmod(fd, m), 0);
        close(fd);
        free(b);
}

START_TEST(test_files_read_through_util_file)
{
        char dir[] = "/tmp/test-daemon-files.XXXXXX", path[128];
        uint8_t key[NONCE_KEY_MAX];
        struct auth_tokens *t = NULL;
        struct attest_err err = {0};
        size_t len = 0;
        char *argv[] = {"attestd", "--config", path, NULL};
        struct config c;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        /* the nonce key is a secret: a key group or others can read is refused, naming the mode */
        snprintf(path, sizeof(path), "%s/nonce.key", dir);
        put_file(path, NONCE_KEY_MIN, 'k', 0600);
        ck_assert_int_eq(nonce_key_load(path, false, key, &len, &err), 0);
        ck_assert_uint_eq(len, NONCE_KEY_MIN);
        ck_assert_int_eq(chmod(path, 0640), 0);
        ck_assert_int_eq(nonce_key_load(path, false, key, &len, &err), -EPERM);
        ck_assert_int_eq(err.code, AE_NONCE_KEY);
        ck_assert_ptr_nonnull(strstr(err.msg, "mode 0640"));
        /* its size: NONCE_KEY_MAX and one byte more */
        put_file(path, NONCE_KEY_MAX, 'k', 0600);
        ck_assert_int_eq(nonce_key_load(path, false, key, &len, &err), 0);
        ck_assert_uint_eq(len, NONCE_KEY_MAX);
        put_file(path, NONCE_KEY_MAX + 1, 'k', 0600);
        ck_assert_int_eq(nonce_key_load(path, false, key, &len, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "32 to 64 bytes"));

        /* the tokens file: a FIFO is refused (not waited on), an oversized file named */
        snprintf(path, sizeof(path), "%s/tokens", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(auth_load(path, &t, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_TOKENS_OPEN);
        ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
        unlink(path);
        put_file(path, AUTH_FILE_MAX + 1, '\n', 0644);
        ck_assert_int_eq(auth_load(path, &t, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_TOKENS_TOO_BIG);
        ck_assert_ptr_null(t);
        put_file(path, AUTH_FILE_MAX, '\n', 0644);
        ck_assert_int_eq(auth_load(path, &t, &err), 0);
        t = auth_free(t);

        /* the config file: over its cap, and a directory, both named */
        snprintf(path, sizeof(path), "%s/attestd.conf", dir);
        put_file(path, CONFIG_FILE_MAX + 1, '#', 0644);
        ck_assert_int_eq(config_load(3, argv, &c, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_CONFIG);
        ck_assert_ptr_nonnull(strstr(err.msg, "attestd.conf: larger than 1048576 bytes"));
        unlink(path);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        ck_assert_int_eq(config_load(3, argv, &c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "attestd.conf: not a regular file"));
        rmdir(path);
        snprintf(path, sizeof(path), "%s/nonce.key", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/tokens", dir);
        unlink(path);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *files_suite(void)
{
        Suite *s = suite_create("daemon-files");
        TCase *tc = tcase_create("files");

        tcase_add_test(tc, test_config_value_line_and_file_caps);
        tcase_add_test(tc, test_config_lines);
        tcase_add_test(tc, test_tokens_caps);
        tcase_add_test(tc, test_files_read_through_util_file);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(files_suite());
}
