/* SPDX-License-Identifier: MIT */
/*
 * The one escaping of untrusted bytes (util/esc.c): every byte alone, well-formed and ill-formed
 * UTF-8 (overlong, surrogates, past U+10FFFF, cut short), the unprintable characters (C1, bidi,
 * separators), round trips of every byte value and of random bytes, and cuts that must never
 * fall inside a character or an escape (at every output size).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util/esc.h"
#include "tests/unit/testutil.h"

/* The inverse of the escaping; the length of the bytes, or -1 when s is not an escaping. */
static long unescape(const char *s, unsigned char *out, size_t max)
{
        size_t o = 0;

        while (*s) {
                unsigned v;

                if (o == max)
                        return -1;
                if (*s != '\\') {
                        out[o++] = (unsigned char)*s++;
                        continue;
                }
                if (s[1] == '\\') {
                        out[o++] = '\\';
                        s += 2;
                        continue;
                }
                if (s[1] != 'x' || !s[2] || !s[3] || sscanf(s + 2, "%2x", &v) != 1)
                        return -1;
                out[o++] = (unsigned char)v;
                s += 4;
        }
        return (long)o;
}

static const char *esc(const void *p, size_t n)
{
        static char out[4096];

        esc_bytes(out, sizeof(out), p, n, NULL);
        return out;
}

START_TEST(test_every_byte_alone)
{
        for (unsigned b = 0; b < 256; b++) {
                unsigned char c = (unsigned char)b;
                char want[8];
                const char *got = esc(&c, 1);

                if (b == '\\')
                        snprintf(want, sizeof(want), "\\\\");
                else if (b >= 0x20 && b < 0x7f)
                        snprintf(want, sizeof(want), "%c", b);
                else
                        snprintf(want, sizeof(want), "\\x%02x", b);
                ck_assert_str_eq(got, want);
                ck_assert(esc_is_text(got, strlen(got)));
                ck_assert(esc_is_plain(&c, 1) == (b >= 0x20 && b < 0x7f && b != '\\'));
        }
}
END_TEST

START_TEST(test_utf8_kept_and_ill_formed_escaped)
{
        /* printable characters of 2, 3 and 4 bytes pass */
        ck_assert_str_eq(esc(LIT("/tmp/\xc3\xa9")), "/tmp/\xc3\xa9");
        ck_assert_str_eq(esc(LIT("\xe6\x97\xa5")), "\xe6\x97\xa5");
        ck_assert_str_eq(esc(LIT("\xf0\x9f\x94\x92")), "\xf0\x9f\x94\x92");
        ck_assert(esc_is_plain(LIT("/tmp/\xc3\xa9\xe6\x97\xa5\xf0\x9f\x94\x92")));
        /* ill-formed: every byte escaped on its own */
        ck_assert_str_eq(esc(LIT("x\xff")), "x\\xff");
        ck_assert_str_eq(esc(LIT("\xc0\x80")), "\\xc0\\x80");          /* overlong NUL */
        ck_assert_str_eq(esc(LIT("\xe0\x80\xaf")), "\\xe0\\x80\\xaf"); /* overlong '/' */
        ck_assert_str_eq(esc(LIT("\xed\xa0\x80")), "\\xed\\xa0\\x80"); /* surrogate */
        ck_assert_str_eq(esc(LIT("\xf4\x90\x80\x80")), "\\xf4\\x90\\x80\\x80");
        ck_assert_str_eq(esc(LIT("a\xc3")), "a\\xc3"); /* cut short at the end */
        ck_assert_str_eq(esc(LIT("\xc3z")), "\\xc3z"); /* cut short by an ASCII byte */
        ck_assert_str_eq(esc(LIT("\xa9\xc3\xa9")), "\\xa9\xc3\xa9"); /* stray continuation */
        /* unprintable characters: C1, line separator, bidi controls */
        ck_assert_str_eq(esc(LIT("\xc2\x85")), "\\xc2\\x85");
        ck_assert_str_eq(esc(LIT("\xc2\x9b"
                                 "2J")),
                         "\\xc2\\x9b2J");
        ck_assert_str_eq(esc(LIT("\xe2\x80\xa8")), "\\xe2\\x80\\xa8");
        ck_assert_str_eq(esc(LIT("a\xe2\x80\xae"
                                 "b")),
                         "a\\xe2\\x80\\xaeb");
        ck_assert_str_eq(esc(LIT("\xe2\x81\xa6")), "\\xe2\\x81\\xa6");
        ck_assert_str_eq(esc(LIT("\xd8\x9c")), "\\xd8\\x9c");
        ck_assert_str_eq(esc(LIT("\xe2\x80\x8b")), "\\xe2\\x80\\x8b");          /* zero width */
        ck_assert_str_eq(esc(LIT("\xef\xbb\xbf")), "\\xef\\xbb\\xbf");          /* BOM */
        ck_assert_str_eq(esc(LIT("\xf3\xa0\x80\x81")), "\\xf3\\xa0\\x80\\x81"); /* tag */
        ck_assert_str_eq(esc(LIT("\xe2\x81\xaf")), "\\xe2\\x81\\xaf");          /* U+206F */
        ck_assert_str_eq(esc(LIT("\xe2\x81\xb0")), "\xe2\x81\xb0"); /* U+2070 is printable */
        ck_assert_str_eq(esc(LIT("\xc2\xa0")), "\xc2\xa0");         /* NBSP is printable */
        /* a terminal escape */
        ck_assert_str_eq(esc(LIT("\x1b]0;t\x07\x1b[2J")), "\\x1b]0;t\\x07\\x1b[2J");
        ck_assert(!esc_is_text(LIT("\x1b")));
        ck_assert(esc_is_text(LIT("a\\b")));
        ck_assert(!esc_is_plain(LIT("a\\b")));
}
END_TEST

START_TEST(test_round_trips)
{
        unsigned char all[255], back[255];
        char out[255 * ESC_BYTE_MAX + 1];
        size_t used;

        /* every byte 0x01..0xff in one path */
        for (unsigned i = 0; i < 255; i++)
                all[i] = (unsigned char)(i + 1);
        esc_bytes(out, sizeof(out), all, sizeof(all), &used);
        ck_assert_uint_eq(used, sizeof(all));
        ck_assert(esc_is_text(out, strlen(out)));
        ck_assert_int_eq(unescape(out, back, sizeof(back)), 255);
        ck_assert(memcmp(all, back, 255) == 0);
        /* random bytes, biased to UTF-8 lead and continuation bytes */
        srand(7);
        for (int k = 0; k < 2000; k++) {
                unsigned char in[64], dec[64];
                char o[64 * ESC_BYTE_MAX + 1];
                size_t n = (size_t)(rand() % 64);

                for (size_t i = 0; i < n; i++) {
                        int r = rand() % 4;

                        in[i] = r == 0   ? (unsigned char)(0x80 | rand() % 64)
                                : r == 1 ? (unsigned char)(0xc0 | rand() % 64)
                                         : (unsigned char)(rand() % 256);
                }
                esc_bytes(o, sizeof(o), in, n, &used);
                ck_assert_uint_eq(used, n);
                ck_assert(esc_is_text(o, strlen(o)));
                ck_assert_int_eq(unescape(o, dec, sizeof(dec)), (long)n);
                ck_assert(n == 0 || memcmp(in, dec, n) == 0);
                ck_assert(esc_is_plain(in, n) == (strlen(o) == n && memcmp(o, in, n) == 0));
        }
}
END_TEST

/* At every output size, a cut ends on a whole character or escape, and says so with "...". */
START_TEST(test_cuts_never_split)
{
        char in[256], out[512], full[512];
        size_t n = 0, fl;

        n += (size_t)snprintf(in, sizeof(in), "/tmp/");
        memset(in + n, 'a', 194);
        n += 194;
        memcpy(in + n, "\xc3\xa9\xc3\xa9\xc3\xa9\x01\\", 8);
        n += 8;
        fl = esc_bytes(full, sizeof(full), in, n, NULL);
        for (size_t max = 1; max <= fl + 2; max++) {
                size_t used, o = esc_bytes(out, max, in, n, &used);
                unsigned char back[256];

                ck_assert_uint_lt(o, max);
                ck_assert_uint_eq(strlen(out), o);
                ck_assert(esc_is_text(out, o));
                /* a prefix of the whole escaping that decodes to the bytes taken */
                ck_assert(memcmp(out, full, o) == 0);
                ck_assert_int_eq(unescape(out, back, sizeof(back)), (long)used);
                ck_assert_uint_eq(used == n, o == fl);
                o = esc_text(out, max, in, n);
                ck_assert_uint_lt(o, max);
                ck_assert(esc_is_text(out, o));
                if (max > fl)
                        ck_assert_str_eq(out, full);
                else if (max >= 4)
                        ck_assert(o >= 3 && memcmp(out + o - 3, "...", 3) == 0);
        }
}
END_TEST

START_TEST(test_line_keeps_backslashes)
{
        char out[64];

        esc_line(out, sizeof(out), LIT("a\\x01 b\n\xff"));
        ck_assert_str_eq(out, "a\\x01 b\\x0a\\xff");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("esc");
        TCase *tc = tcase_create("esc");

        tcase_add_test(tc, test_every_byte_alone);
        tcase_add_test(tc, test_utf8_kept_and_ill_formed_escaped);
        tcase_add_test(tc, test_round_trips);
        tcase_add_test(tc, test_cuts_never_split);
        tcase_add_test(tc, test_line_keeps_backslashes);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
