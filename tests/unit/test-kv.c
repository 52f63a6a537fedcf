/* SPDX-License-Identifier: MIT */
/*
 * util/kv: the one `key = value` parser. The syntax both former parsers (daemon/config.c,
 * agent/config.c) accepted, errors naming file, line and key, and every cap (file, line, key,
 * value, line count) at cap - 1, cap and cap + 1.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "util/kv.h"

static const struct kv_limits lim = {
        .file_max = 4096, .line_max = 100, .key_max = 16, .value_max = 50, .lines_max = 64};

struct got {
        char key[64], value[128];
        unsigned line;
};

/* All pairs of text (n of them at most) or the error; the count or the negative errno. */
static int parse(const char *text, size_t len, struct got *g, size_t n, struct attest_err *err)
{
        struct kv kv;
        struct kv_pair p;
        size_t i = 0;
        int x;

        *err = (struct attest_err){0};
        if ((x = kv_init(&kv, text, len, "f.conf", &lim, err)) < 0)
                return x;
        while ((x = kv_next(&kv, &p, err)) > 0) {
                ck_assert_uint_lt(i, n);
                ck_assert_int_eq(span_cstr(p.key, g[i].key, sizeof(g[i].key)), 0);
                ck_assert_int_eq(kv_value_cstr(&p, g[i].value, sizeof(g[i].value)), 0);
                g[i].line = p.line;
                i++;
        }
        return x < 0 ? x : (int)i;
}

#define PARSE(lit, g, err) parse(lit, sizeof(lit) - 1, g, sizeof(g) / sizeof(g[0]), err)

static void want_err(const char *text, size_t len, const char *msg)
{
        struct attest_err err;
        struct got g[32];

        ck_assert_int_eq(parse(text, len, g, 32, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_CONFIG);
        ck_assert_msg(strstr(err.msg, msg) != NULL, "'%s' not in '%s'", msg, err.msg);
}

START_TEST(test_kv_syntax_of_both_former_parsers)
{
        static const char text[] = "  # comment\r\n"
                                   "\n"
                                   " \t \r\n"
                                   "retain=7\r\n"
                                   "threads \t=  3  \n"
                                   "url = https://h/x?a=b\n"  /* later '=' belong to the value */
                                   "pcrs = sha256:0-7 # no\n" /* '#' after a value is the value */
                                   "quoted = \"a b\"\n"       /* quotes are bytes like any other */
                                   "empty =\n"                /* the caller decides */
                                   "retain = 8\n"             /* twice: both, in order */
                                   "\t# indented comment\n"
                                   "last.key_9 = end"; /* no final newline */
        struct attest_err err;
        struct got g[16];

        ck_assert_int_eq(PARSE(text, g, &err), 8);
        ck_assert_str_eq(g[0].key, "retain");
        ck_assert_str_eq(g[0].value, "7");
        ck_assert_uint_eq(g[0].line, 4);
        ck_assert_str_eq(g[1].key, "threads");
        ck_assert_str_eq(g[1].value, "3");
        ck_assert_str_eq(g[2].value, "https://h/x?a=b");
        ck_assert_str_eq(g[3].value, "sha256:0-7 # no");
        ck_assert_str_eq(g[4].value, "\"a b\"");
        ck_assert_str_eq(g[5].key, "empty");
        ck_assert_str_eq(g[5].value, "");
        ck_assert_str_eq(g[6].value, "8");
        ck_assert_uint_eq(g[6].line, 10);
        ck_assert_str_eq(g[7].key, "last.key_9");
        ck_assert_str_eq(g[7].value, "end");
        ck_assert_uint_eq(g[7].line, 12);
        ck_assert_int_eq(parse("", 0, g, 16, &err), 0);
        ck_assert_int_eq(parse("\n\n# x", 5, g, 16, &err), 0);
}
END_TEST

START_TEST(test_kv_errors_name_file_line_and_key)
{
        static const char nul[] = "a = 1\nb = x\0y\n";
        struct attest_err err;
        struct got g[4];
        struct kv kv;
        struct kv_pair p;

        want_err("a = 1\nretain\n", 13, "f.conf:2: expected 'key = value'");
        want_err("a = 1\n\n = 3\n", 11, "f.conf:3: expected 'key = value': no key");
        want_err("a b = 1\n", 8, "f.conf:1: key byte 2 is not a letter");
        want_err("k\x01 = 1\n", 7, "f.conf:1: key byte 2");
        want_err(nul, sizeof(nul) - 1, "f.conf:2: NUL byte");
        /* the caller's verdict on a pair names it too */
        ck_assert_int_eq(kv_init(&kv, "\nlisten = x\n", 12, "f.conf", &lim, &err), 0);
        ck_assert_int_eq(kv_next(&kv, &p, &err), 1);
        ck_assert_int_eq(kv_fail(&kv, &err, "wants %s", "ADDR:PORT"), -EINVAL);
        ck_assert_str_eq(err.msg, "f.conf:2: listen: wants ADDR:PORT");
        ck_assert_int_eq(err.code, AE_CONFIG);
        snprintf(err.msg, sizeof(err.msg), "listen: bad");
        kv_err_prefix(&kv, &err);
        ck_assert_str_eq(err.msg, "f.conf:2: listen: bad");
        ck_assert_int_eq(kv_next(&kv, &p, &err), 0);
        (void)g;
}
END_TEST

/* "k = " and a value of n bytes, a newline; the length */
static size_t value_line(char *b, size_t n)
{
        memcpy(b, "k = ", 4);
        memset(b + 4, 'v', n);
        b[4 + n] = '\n';
        return 4 + n + 1;
}

START_TEST(test_kv_caps_at_minus_one_cap_and_plus_one)
{
        char b[8192];
        struct attest_err err;
        struct got g[32];
        size_t n;

        for (int d = -1; d <= 1; d++) {
                bool ok = d <= 0;

                /* value */
                n = value_line(b, lim.value_max + d);
                ck_assert_int_eq(parse(b, n, g, 32, &err), (ok ? 1 : -EINVAL));
                if (ok)
                        ck_assert_uint_eq(strlen(g[0].value), lim.value_max + d);
                else
                        ck_assert_str_eq(err.msg, "f.conf:1: k: value longer than 50 bytes");
                /* key */
                memset(b, 'k', lim.key_max + d);
                memcpy(b + lim.key_max + d, "=1\n", 3);
                n = lim.key_max + d + 3;
                ck_assert_int_eq(parse(b, n, g, 32, &err), (ok ? 1 : -EINVAL));
                if (!ok)
                        ck_assert_str_eq(err.msg, "f.conf:1: key longer than 16 bytes");
                /* line (a comment, so no other cap is in the way), with and without CRLF */
                memset(b, ' ', lim.line_max + d);
                b[0] = '#';
                memcpy(b + lim.line_max + d, "\r\n", 2);
                ck_assert_int_eq(parse(b, lim.line_max + d + 2, g, 32, &err), (ok ? 0 : -EINVAL));
                if (!ok)
                        ck_assert_str_eq(err.msg, "f.conf:1: line longer than 100 bytes");
                b[lim.line_max + d] = '\n';
                ck_assert_int_eq(parse(b, lim.line_max + d + 1, g, 32, &err), (ok ? 0 : -EINVAL));
                /* line count: lines_max + d lines, the last one a pair */
                n = 0;
                for (unsigned i = 0; i + 1 < lim.lines_max + d; i++)
                        b[n++] = '\n';
                memcpy(b + n, "a=1\n", 4);
                n += 4;
                ck_assert_int_eq(parse(b, n, g, 32, &err), (ok ? 1 : -EINVAL));
                if (!ok)
                        ck_assert_str_eq(err.msg, "f.conf: more than 64 lines");
                /* file: file_max + d bytes in few lines */
                memset(b, ' ', lim.file_max + d);
                for (size_t i = 98; i < lim.file_max + d; i += 99)
                        b[i] = '\n';
                n = lim.file_max + d;
                ck_assert_int_eq(parse(b, n, g, 32, &err), (ok ? 0 : -EINVAL));
                if (!ok)
                        ck_assert_str_eq(err.msg, "f.conf: larger than 4096 bytes");
        }
}
END_TEST

START_TEST(test_kv_value_trim_does_not_count_against_the_cap)
{
        char b[256];
        struct attest_err err;
        struct got g[2];
        size_t n;

        /* a value of value_max bytes with blanks around it, in a line under line_max */
        n = (size_t)snprintf(b, sizeof(b), "k =\t  %.*s \t\r\n", (int)lim.value_max,
                             "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
        ck_assert_int_eq(parse(b, n, g, 2, &err), 1);
        ck_assert_uint_eq(strlen(g[0].value), lim.value_max);
}
END_TEST

static Suite *kv_suite(void)
{
        Suite *s = suite_create("kv");
        TCase *tc = tcase_create("kv");

        tcase_add_test(tc, test_kv_syntax_of_both_former_parsers);
        tcase_add_test(tc, test_kv_errors_name_file_line_and_key);
        tcase_add_test(tc, test_kv_caps_at_minus_one_cap_and_plus_one);
        tcase_add_test(tc, test_kv_value_trim_does_not_count_against_the_cap);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(kv_suite());
}
