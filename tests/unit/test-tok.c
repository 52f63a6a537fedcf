/* SPDX-License-Identifier: MIT */
/* The text cursor (util/tok.h): caps at cap-1/cap/cap+1, failed calls change nothing. */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "tests/unit/testutil.h"
#include "util/tok.h"

#define SAME(a, b) ck_assert_mem_eq(&(a), &(b), sizeof(a))

static struct span S(const char *s) {
        return (struct span){s, strlen(s)};
}

START_TEST(test_lines_at_cap_minus_one_cap_and_cap_plus_one)
{
        /* lines of 4, 5 and 6 bytes against a cap of 5 */
        static const char *const text[] = {"abcd\nx", "abcde\nx", "abcdef\nx"};

        for (int d = -1; d <= 1; d++) {
                struct tok t, before, ln;

                tok_init(&t, text[d + 1], strlen(text[d + 1]));
                before = t;
                if (d <= 0) {
                        ck_assert_int_eq(tok_line(&t, 5, 0, &ln), 1);
                        ck_assert_uint_eq(tok_left(&ln), (size_t)(5 + d));
                        ck_assert_uint_eq(tok_left(&t), 1);
                } else {
                        ck_assert_int_eq(tok_line(&t, 5, 0, &ln), -E2BIG);
                        SAME(t, before);
                }
        }
        /* the last line, without a newline: the same caps */
        for (int d = -1; d <= 1; d++) {
                static const char *const last[] = {"abcd", "abcde", "abcdef"};
                struct tok t, before, ln;

                tok_init(&t, last[d + 1], strlen(last[d + 1]));
                before = t;
                ck_assert_int_eq(tok_line(&t, 5, 0, &ln), d <= 0 ? 1 : -E2BIG);
                if (d > 0)
                        SAME(t, before);
                else
                        ck_assert(tok_empty(&t));
        }
}
END_TEST

START_TEST(test_line_errors_leave_cursor_unchanged)
{
        struct tok t, before, ln;

        tok_init(&t, "ab\0c\nd", 6);
        before = t;
        ck_assert_int_eq(tok_line(&t, 100, 0, &ln), -EBADMSG); /* NUL */
        SAME(t, before);
        tok_init(&t, "ab", 2);
        before = t;
        ck_assert_int_eq(tok_line(&t, 100, TOK_NL_REQUIRED, &ln), -EBADMSG);
        SAME(t, before);
        ck_assert_int_eq(tok_line(&t, 100, 0, &ln), 1);
        ck_assert_int_eq(tok_line(&t, 100, 0, &ln), 0);
        tok_init(&t, "a\r\n\r\n", 5);
        ck_assert_int_eq(tok_line(&t, 1, TOK_STRIP_CR, &ln), -E2BIG); /* the CR counts */
        ck_assert_int_eq(tok_line(&t, 2, TOK_STRIP_CR, &ln), 1);
        ck_assert_uint_eq(tok_left(&ln), 1);
        ck_assert_int_eq(tok_line(&t, 2, TOK_STRIP_CR, &ln), 1);
        ck_assert_uint_eq(tok_left(&ln), 0);
        ck_assert_int_eq(tok_line(&t, 2, TOK_STRIP_CR, &ln), 0);
}
END_TEST

/* The newline and the NUL are found in one pass (16 bytes at a time, then byte by byte): a NUL at
 * every position of lines shorter and longer than 16 bytes, before and after the '\n', and the
 * precedence of "over the cap" over "holds a NUL" when no '\n' is in reach. */
START_TEST(test_line_nul_at_every_position)
{
        char buf[80];

        for (size_t len = 1; len < 48; len++)
                for (size_t z = 0; z <= len + 4 && z < sizeof(buf) - 1; z++) {
                        struct tok t, ln;
                        /* z == len: the NUL takes the '\n''s place, no '\n' left in 80 > 64 */
                        int want = z < len ? -EBADMSG : z == len ? -E2BIG : 1;

                        memset(buf, 'a', sizeof(buf));
                        buf[len] = '\n';
                        buf[z] = '\0';
                        tok_init(&t, buf, sizeof(buf));
                        ck_assert_msg(tok_line(&t, 64, 0, &ln) == want, "len %zu, NUL at %zu", len,
                                      z);
                        if (want == 1)
                                ck_assert_uint_eq(ln.left, len);
                        else
                                ck_assert_ptr_eq(t.p, buf); /* unchanged */
                }
        /* no '\n' within max + 1 bytes and a NUL: the line is over its cap */
        memset(buf, 'a', sizeof(buf));
        buf[3] = '\0';
        {
                struct tok t, ln;

                tok_init(&t, buf, sizeof(buf));
                ck_assert_int_eq(tok_line(&t, 20, 0, &ln), -E2BIG);
                tok_init(&t, buf, 20);
                ck_assert_int_eq(tok_line(&t, 20, 0, &ln), -EBADMSG);
        }
}
END_TEST

START_TEST(test_fields_and_empty_fields)
{
        struct tok t = TOK_INIT("a  b ", 5);
        struct span f;

        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), 0);
        ck_assert(span_eq(f, "a"));
        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), 0);
        ck_assert(span_eq(f, ""));
        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), 0);
        ck_assert(span_eq(f, "b"));
        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), 0); /* after the trailing space */
        ck_assert(span_eq(f, ""));
        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), -ENOENT);
        tok_init(&t, "", 0);
        ck_assert_int_eq(tok_field(&t, ' ', 8, &f), -ENOENT);
        ck_assert_int_eq(tok_rfield(&t, ' ', 8, &f), -ENOENT);
        ck_assert_int_eq(tok_rest(&t, 8, &f), -ENOENT);
}
END_TEST

START_TEST(test_field_caps)
{
        /* fields of 2, 3, 4 bytes against a cap of 3, from the left, the right and the rest */
        static const char *const text[] = {"ab c", "abc d", "abcd e"};

        for (int d = -1; d <= 1; d++) {
                struct tok t, before;
                struct span f;
                const char *s = text[d + 1];
                size_t n = strlen(s);

                tok_init(&t, s, n);
                before = t;
                ck_assert_int_eq(tok_field(&t, ' ', 3, &f), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(f.n, (size_t)(3 + d));
                else
                        SAME(t, before);
                /* the same field as the last one */
                char r[16];
                snprintf(r, sizeof(r), "e %.*s", (int)(3 + d), "abcd");
                tok_init(&t, r, strlen(r));
                before = t;
                ck_assert_int_eq(tok_rfield(&t, ' ', 3, &f), d <= 0 ? 0 : -E2BIG);
                if (d <= 0) {
                        ck_assert_uint_eq(f.n, (size_t)(3 + d));
                        ck_assert_int_eq(tok_rest(&t, 3, &f), 0);
                        ck_assert(span_eq(f, "e"));
                } else {
                        SAME(t, before);
                }
                tok_init(&t, "abcd", (size_t)(3 + d));
                before = t;
                ck_assert_int_eq(tok_rest(&t, 3, &f), d <= 0 ? 0 : -E2BIG);
                if (d > 0)
                        SAME(t, before);
        }
}
END_TEST

START_TEST(test_words_and_blanks)
{
        struct tok t = TOK_INIT(" \tadmin  abc\t# x", 16), before;
        struct span w;

        ck_assert_int_eq(tok_word(&t, 5, &w), 0);
        ck_assert(span_eq(w, "admin"));
        before = t;
        ck_assert_int_eq(tok_word(&t, 2, &w), -E2BIG);
        SAME(t, before);
        ck_assert_int_eq(tok_word(&t, 3, &w), 0);
        ck_assert(span_eq(w, "abc"));
        ck_assert_uint_eq(tok_skip_blank(&t), 1);
        ck_assert(tok_char(&t, '#'));
        ck_assert(!tok_char(&t, '#'));
        ck_assert_int_eq(tok_word(&t, 5, &w), 0);
        ck_assert(span_eq(w, "x"));
        ck_assert_int_eq(tok_word(&t, 5, &w), -ENOENT);
        tok_init(&t, "  \t", 3);
        ck_assert_int_eq(tok_word(&t, 5, &w), -ENOENT);
        ck_assert_uint_eq(tok_left(&t), 3);
        w = span_trim(S(" \t a b\r "));
        ck_assert(span_eq(w, "a b"));
        ck_assert(span_eq(span_trim(S("  ")), ""));
}
END_TEST

START_TEST(test_numbers)
{
        struct tok t, before;
        uint64_t v = 7;
        uint32_t u = 7;

        /* max - 1, max, max + 1 */
        tok_init(&t, "22 ", 3);
        ck_assert_int_eq(tok_u32(&t, 23, &u), 0);
        ck_assert_uint_eq(u, 22);
        tok_init(&t, "23", 2);
        ck_assert_int_eq(tok_u32(&t, 23, &u), 0);
        ck_assert_uint_eq(u, 23);
        tok_init(&t, "24", 2);
        before = t;
        ck_assert_int_eq(tok_u32(&t, 23, &u), -ERANGE);
        SAME(t, before);
        ck_assert_uint_eq(u, 23);
        /* at the type's limit: no wrap */
        ck_assert_int_eq(span_u64(S("18446744073709551615"), UINT64_MAX, &v), 0);
        ck_assert_uint_eq(v, UINT64_MAX);
        ck_assert_int_eq(span_u64(S("18446744073709551616"), UINT64_MAX, &v), -ERANGE);
        ck_assert_int_eq(span_u64(S("99999999999999999999999"), UINT64_MAX, &v), -ERANGE);
        ck_assert_int_eq(span_u64(S("4294967296"), UINT32_MAX, &v), -ERANGE);
        ck_assert_int_eq(span_u64(S("4294967295"), UINT32_MAX, &v), 0);
        /* not numbers */
        ck_assert_int_eq(span_u64(S(""), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S("-1"), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S("+1"), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S("01"), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S("1x"), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S(" 1"), 100, &v), -EBADMSG);
        ck_assert_int_eq(span_u64(S("0"), 100, &v), 0);
        ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(test_span_cstr)
{
        char out[4] = "zzz";

        ck_assert_int_eq(span_cstr(S("abc"), out, 4), 0);
        ck_assert_str_eq(out, "abc");
        ck_assert_int_eq(span_cstr(S("abcd"), out, 4), -E2BIG);
        ck_assert_str_eq(out, "abc");
        ck_assert_int_eq(span_cstr(S(""), out, 4), 0);
        ck_assert_str_eq(out, "");
        ck_assert_int_eq(span_cstr(S(""), out, 0), -E2BIG);
}
END_TEST

static Suite *tok_suite(void)
{
        Suite *s = suite_create("tok");
        TCase *tc = tcase_create("cursor");

        tcase_add_test(tc, test_lines_at_cap_minus_one_cap_and_cap_plus_one);
        tcase_add_test(tc, test_line_errors_leave_cursor_unchanged);
        tcase_add_test(tc, test_line_nul_at_every_position);
        tcase_add_test(tc, test_fields_and_empty_fields);
        tcase_add_test(tc, test_field_caps);
        tcase_add_test(tc, test_words_and_blanks);
        tcase_add_test(tc, test_numbers);
        tcase_add_test(tc, test_span_cstr);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(tok_suite());
}
