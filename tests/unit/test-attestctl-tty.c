/* SPDX-License-Identifier: MIT */
/*
 * attestctl's escaping of server text for the terminal (attestctl/tty.h): every byte alone and
 * after a lead byte, every code point, overlong forms, surrogates, truncated sequences, the
 * hidden code points and their neighbours, cuts at columns and bytes, and that escaped text is
 * printable and escapes to itself.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/tty.h"
#include "tests/unit/testutil.h"
#include "util/macro.h"

/* The escaped form of s, whole (a byte takes at most 4 printed bytes, as \xHH). */
static const char *esc(const char *s, char *out, size_t n)
{
        ck_assert_uint_ge(n, strlen(s) * 4 + 1);
        tty_text(s, 0, out, n);
        return out;
}

static size_t utf8(uint32_t cp, char *o)
{
        if (cp < 0x80) {
                o[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                o[0] = (char)(0xc0 | cp >> 6);
                o[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                o[0] = (char)(0xe0 | cp >> 12);
                o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                o[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        o[0] = (char)(0xf0 | cp >> 18);
        o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

/*
 * What the terminal must never get: C0, DEL, C1 (raw or as UTF-8), the bidi overrides. (Check's
 * asserts are slow per call: one per string, the loops below call this a million times.)
 */
static void assert_safe(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        for (size_t i = 0; p[i]; i++) {
                bool bad =
                        p[i] < 0x20 || p[i] == 0x7f ||
                        (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) ||
                        (p[i] == 0xe2 && p[i + 1] == 0x80 && p[i + 2] >= 0xaa &&
                         p[i + 2] <= 0xae) ||
                        (p[i] == 0xe2 && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9);

                if (bad)
                        ck_abort_msg("unsafe byte 0x%02x at %zu in %s", p[i], i, s);
        }
}

START_TEST(test_every_single_byte)
{
        for (unsigned b = 1; b < 256; b++) {
                char in[4] = {'a', (char)b, 'z', 0}, out[64], want[16];

                if (b >= 0x20 && b < 0x7f)
                        snprintf(want, sizeof(want), "a%cz", (char)b);
                else /* C0, DEL, and every byte >= 0x80 alone: not UTF-8 */
                        snprintf(want, sizeof(want), "a\\x%02xz", b);
                ck_assert_str_eq(esc(in, out, sizeof(out)), want);
                ck_assert_uint_eq(tty_width(in), strlen(want));
                assert_safe(out);
        }
}
END_TEST

START_TEST(test_every_byte_after_each_lead_byte)
{
        /* lead bytes c2, df (2 bytes), e0, e1, ed (3), f0, f4 (4) followed by every byte b */
        static const unsigned char leads[] = {0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xf0, 0xf4};

        for (size_t l = 0; l < sizeof(leads); l++)
                for (unsigned b = 1; b < 256; b++) {
                        unsigned char in[8] = {leads[l], (unsigned char)b, 0x80, 0x80, 0};
                        char out[128], again[128];
                        unsigned lo = 0x80, hi = 0xbf;
                        bool valid;

                        if (leads[l] == 0xe0)
                                lo = 0xa0;
                        if (leads[l] == 0xed)
                                hi = 0x9f;
                        if (leads[l] == 0xf0)
                                lo = 0x90;
                        if (leads[l] == 0xf4)
                                hi = 0x8f;
                        valid = b >= lo && b <= hi;
                        if (leads[l] < 0xe0)
                                in[2] = 0; /* two-byte forms: the sequence alone */
                        else if (leads[l] < 0xf0)
                                in[3] = 0;
                        esc((const char *)in, out, sizeof(out));
                        assert_safe(out);
                        if (!valid) {
                                char want[8];

                                /* the lead byte escaped on its own, whatever follows */
                                snprintf(want, sizeof(want), "\\x%02x", leads[l]);
                                ck_assert_msg(strncmp(out, want, 4) == 0, "%02x %02x: %s", leads[l],
                                              b, out);
                        } else if (leads[l] == 0xc2 && b <= 0x9f) {
                                char want[16];

                                snprintf(want, sizeof(want), "\\xc2\\x%02x", b);
                                ck_assert_str_eq(out, want);
                        } else {
                                /* valid and not hidden: printed as it came */
                                ck_assert_msg(strcmp(out, (const char *)in) == 0, "%02x %02x: %s",
                                              leads[l], b, out);
                        }
                        ck_assert_str_eq(esc(out, again, sizeof(again)), out);
                }
}
END_TEST

START_TEST(test_invalid_sequences_byte_by_byte)
{
        static const struct {
                const char *in, *want;
        } cases[] = {
                {"\xc0\x80", "\\xc0\\x80"},                   /* overlong NUL */
                {"\xc1\xbf", "\\xc1\\xbf"},                   /* overlong DEL */
                {"\xe0\x80\x80", "\\xe0\\x80\\x80"},          /* overlong 3-byte */
                {"\xe0\x9f\xbf", "\\xe0\\x9f\\xbf"},          /* overlong U+07FF */
                {"\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"}, /* overlong U+FFFF */
                {"\xed\xa0\x80", "\\xed\\xa0\\x80"},          /* surrogate D800 */
                {"\xed\xbf\xbf", "\\xed\\xbf\\xbf"},          /* surrogate DFFF */
                {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* U+110000 */
                {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},
                {"\xff\xfe", "\\xff\\xfe"},
                {"\xe2\x80", "\\xe2\\x80"}, /* truncated at the end */
                {"\xe2\x80"
                 "A",
                 "\\xe2\\x80A"},                     /* truncated by ASCII */
                {"\xf0\x9f\x98", "\\xf0\\x9f\\x98"}, /* truncated 4-byte */
                {"\x80\xbf", "\\x80\\xbf"},          /* lone continuations */
                {"\xc3", "\\xc3"},
                {"\x9b"
                 "2J",
                 "\\x9b2J"},                                  /* 8-bit CSI as a raw byte */
                {"\xe2\x80\xae", "\\xe2\\x80\\xae"},          /* RLO */
                {"\xc2\x9b", "\\xc2\\x9b"},                   /* CSI as UTF-8 */
                {"\xf3\xa0\x81\x81", "\\xf3\\xa0\\x81\\x81"}, /* tag LATIN CAPITAL A */
                {"\x1b]0;t\x07\x1b[2J\r", "\\x1b]0;t\\x07\\x1b[2J\\x0d"},
                {"\x1b]8;;http://x/\x1b\\\\", "\\x1b]8;;http://x/\\x1b\\\\"},
                {"a\tb\nc", "a\\x09b\\x0ac"},
                {"\x7f", "\\x7f"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char out[128];

                ck_assert_str_eq(esc(cases[i].in, out, sizeof(out)), cases[i].want);
                assert_safe(out);
        }
}
END_TEST

START_TEST(test_valid_utf8_passes_unchanged)
{
        static const char *const ok[] = {
                "caf\xc3\xa9",              /* é */
                "\xe6\xbc\xa2\xe5\xad\x97", /* 漢字 */
                "\xe0\xa0\x80",             /* U+0800 */
                "\xef\xbf\xbf",             /* U+FFFF */
                "\xf0\x90\x80\x80",         /* U+10000 */
                "\xf4\x8f\xbf\xbf",         /* U+10FFFF */
                "\xf0\x9f\x98\x80",         /* emoji */
                "e\xcc\x81",                /* e + combining acute */
                "\xc2\xa0",                 /* U+00A0, right after C1 */
                "\xe2\x80\xaf",             /* U+202F, right after RLO */
                "\xe2\x80\x8a",             /* U+200A, right before ZWSP */
                "\xe2\x81\xb0",             /* U+2070, right after the format block */
                "/tmp/x\\y",                /* a backslash is printed as it is */
        };

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                char out[128];

                ck_assert_str_eq(esc(ok[i], out, sizeof(out)), ok[i]);
        }
}
END_TEST

START_TEST(test_hidden_code_points_and_neighbours)
{
        static const uint32_t hidden[] = {0x80,   0x85,   0x9b,    0x9f,    0x61c,  0x180e,
                                          0x200b, 0x200e, 0x200f,  0x2028,  0x2029, 0x202a,
                                          0x202e, 0x2060, 0x2066,  0x2069,  0x206f, 0xfeff,
                                          0xfff9, 0xfffb, 0xe0000, 0xe0001, 0xe007f};
        static const uint32_t shown[] = {0x7e,   0xa0,   0x61b,  0x61d,  0x180d,  0x180f,
                                         0x200a, 0x2010, 0x2027, 0x202f, 0x205f,  0x2070,
                                         0xfefe, 0xff00, 0xfff8, 0xfffc, 0xdffff, 0xe0080};

        for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
                char in[8] = {0}, out[32], want[20];

                utf8(hidden[i], in);
                /* util/esc.h's form: each byte \xHH */
                for (size_t k = 0; in[k]; k++)
                        snprintf(want + 4 * k, sizeof(want) - 4 * k, "\\x%02x",
                                 (unsigned char)in[k]);
                ck_assert_str_eq(esc(in, out, sizeof(out)), want);
                ck_assert_uint_eq(tty_width(in), strlen(want));
        }
        for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
                char in[8] = {0}, out[64];

                utf8(shown[i], in);
                ck_assert_str_eq(esc(in, out, sizeof(out)), in);
        }
}
END_TEST

/* Every code point: printed as it is or as \xHH bytes, the result safe and its own escape. */
START_TEST(test_every_code_point)
{
        size_t passed = 0, escaped = 0;

        for (uint32_t cp = 1; cp <= 0x10ffff; cp++) {
                char in[8] = {0}, out[32], again[32];

                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue;
                utf8(cp, in);
                tty_text(in, 0, out, sizeof(out));
                if (strcmp(in, out) == 0) {
                        passed++;
                } else {
                        escaped++;
                        if (out[0] != '\\')
                                ck_abort_msg("U+%04x: %s", cp, out);
                }
                assert_safe(out);
                tty_text(out, 0, again, sizeof(again));
                if (strcmp(again, out) != 0)
                        ck_abort_msg("U+%04x: %s escapes to %s", cp, out, again);
        }
        /* 0x01-0x1f, 0x7f, 0x80-0x9f and the hidden ranges (esc.h) */
        ck_assert_uint_eq(escaped, 31 + 1 + 32 + 1 + 1 + 5 + 7 + 16 + 1 + 3 + 128);
        ck_assert_uint_gt(passed, 1000000);
}
END_TEST

START_TEST(test_cut_at_columns_never_splits_an_escape)
{
        char out[64];
        size_t cols;

        /* exact fit, one over, one under */
        ck_assert_uint_eq(tty_text("abcdef", 6, out, sizeof(out)), 6);
        ck_assert_str_eq(out, "abcdef");
        ck_assert_uint_eq(tty_text("abcdef", 7, out, sizeof(out)), 6);
        ck_assert_str_eq(out, "abcdef");
        ck_assert_uint_eq(tty_text("abcdefg", 6, out, sizeof(out)), 6);
        ck_assert_str_eq(out, "abc...");
        /* an escape does not fit whole: it is left out, not cut */
        cols = tty_text("ab\x1b[2J", 6, out, sizeof(out));
        ck_assert_str_eq(out, "ab...");
        ck_assert_uint_eq(cols, 5);
        cols = tty_text("\xe2\x80\xae"
                        "abc",
                        14, out, sizeof(out));
        ck_assert_str_eq(out, "...");
        ck_assert_uint_eq(cols, 3);
        cols = tty_text("\xe2\x80\xae"
                        "abc",
                        15, out, sizeof(out));
        ck_assert_str_eq(out, "\\xe2\\x80\\xaeabc");
        ck_assert_uint_eq(cols, 15);
        /* wide characters count two columns */
        cols = tty_text("\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97", 6, out, sizeof(out));
        ck_assert_str_eq(out, "\xe6\xbc\xa2...");
        ck_assert_uint_eq(cols, 5);
        ck_assert_uint_eq(tty_width("\xe6\xbc\xa2\xe5\xad\x97"), 4);
        ck_assert_uint_eq(tty_width("e\xcc\x81"), 1);
        ck_assert_uint_eq(tty_width("caf\xc3\xa9"), 4);
}
END_TEST

/* tty_cut(): text escaped already, cut again (a table fitted to the terminal) keeps every \xHH
 * whole at every width, and cuts the same places tty_text() would in the raw text. */
START_TEST(test_cut_of_escaped_text_keeps_escapes_whole)
{
        static const char *const raw[] = {
                "ab\x1b[2Jcd",
                "\xe2\x80\xae"
                "abc\x07",
                "x\x9b\x9b\x9b",
                "plain text here",
                "\xe6\xbc\xa2\x1b\xe5\xad\x97",
        };
        char e[128], once[128], cut[128];

        for (size_t i = 0; i < ARRAY_SIZE(raw); i++) {
                tty_text(raw[i], 0, e, sizeof(e));
                for (size_t w = 3; w <= tty_width(e) + 1; w++) {
                        size_t c1 = tty_text(raw[i], w, once, sizeof(once));
                        size_t c2 = tty_cut(e, w, cut, sizeof(cut));

                        /* the same as cutting the raw text */
                        ck_assert_str_eq(cut, once);
                        ck_assert_uint_eq(c1, c2);
                        ck_assert_uint_le(c2, w);
                        /* no dangling "\x" or "\xH" before the "..." */
                        for (const char *p = cut; (p = strstr(p, "\\x")); p += 2)
                                ck_assert_msg(strlen(p) >= 4 && p[2] != '.' && p[3] != '.',
                                              "split escape in '%s' (width %zu)", cut, w);
                }
        }
        /* a backslash of the server's own text before x and two hex digits is one unit too */
        ck_assert_uint_eq(tty_cut("\\xffz", 5, cut, sizeof(cut)), 5);
        ck_assert_str_eq(cut, "\\xffz");
        ck_assert_uint_eq(tty_cut("a\\xffz", 5, cut, sizeof(cut)), 4);
        ck_assert_str_eq(cut, "a...");
}
END_TEST

START_TEST(test_cut_at_bytes_on_a_character_boundary)
{
        char out[6];

        /* 5 bytes of room: "éé" is 4 bytes, "ééé" 6 */
        tty_text("\xc3\xa9\xc3\xa9", 0, out, sizeof(out));
        ck_assert_str_eq(out, "\xc3\xa9\xc3\xa9");
        tty_text("\xc3\xa9\xc3\xa9\xc3\xa9", 0, out, sizeof(out));
        ck_assert_str_eq(out, "\xc3\xa9...");
        tty_text("\x1b\x1b", 0, out, sizeof(out));
        ck_assert_str_eq(out, "...");
        /* combining marks take no column but bytes: the byte cap still holds */
        {
                char *marks = malloc(2 * 10000 + 2), big[64];

                ck_assert_ptr_nonnull(marks);
                marks[0] = 'e';
                for (size_t i = 0; i < 10000; i++)
                        memcpy(marks + 1 + 2 * i, "\xcc\x81", 2);
                marks[1 + 2 * 10000] = 0;
                tty_text(marks, 72, big, sizeof(big));
                ck_assert_uint_le(strlen(big), sizeof(big) - 1);
                ck_assert_str_eq(big + strlen(big) - 3, "...");
                free(marks);
        }
        /* too small a buffer: empty */
        tty_text("abc", 0, out, 3);
        ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_fputs_writes_what_esc_text_gives)
{
        static const char *const in[] = {"plain", "\x1b]0;x\x07", "caf\xc3\xa9\xe2\x80\xae\x9b",
                                         "a\r\nb", ""};

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
                for (size_t cols = 0; cols < 16; cols += (cols ? 1 : 3)) {
                        char *m = NULL, want[128];
                        size_t n = 0;
                        FILE *f = open_memstream(&m, &n);

                        ck_assert_ptr_nonnull(f);
                        tty_fputs(in[i], cols, f);
                        ck_assert_int_eq(fclose(f), 0);
                        tty_text(in[i], cols, want, sizeof(want));
                        ck_assert_str_eq(m, want);
                        free(m);
                }
        {
                char *m = NULL;
                size_t n = 0;
                FILE *f = open_memstream(&m, &n);

                ck_assert_ptr_nonnull(f);
                tty_fputs(NULL, 0, f);
                ck_assert_int_eq(fclose(f), 0);
                ck_assert_str_eq(m, "-");
                free(m);
        }
}
END_TEST

/* Random byte strings (a fixed seed): safe, idempotent, width is the escaped text's length. */
START_TEST(test_random_strings_idempotent)
{
        uint32_t x = 2463534242u;

        for (int round = 0; round < 20000; round++) {
                char in[33], out[33 * TTY_UNIT_MAX + 1], again[sizeof(out)];
                size_t len = 1 + round % 32;

                for (size_t i = 0; i < len; i++) {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        in[i] = (char)(x % 255 + 1);
                }
                in[len] = 0;
                tty_text(in, 0, out, sizeof(out));
                assert_safe(out);
                tty_text(out, 0, again, sizeof(again));
                ck_assert_str_eq(again, out);
                ck_assert_uint_eq(tty_width(in), tty_width(out));
        }
}
END_TEST

static Suite *esc_suite(void)
{
        Suite *s = suite_create("attestctl-tty");
        TCase *tc = tcase_create("esc");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_every_single_byte);
        tcase_add_test(tc, test_every_byte_after_each_lead_byte);
        tcase_add_test(tc, test_invalid_sequences_byte_by_byte);
        tcase_add_test(tc, test_valid_utf8_passes_unchanged);
        tcase_add_test(tc, test_hidden_code_points_and_neighbours);
        tcase_add_test(tc, test_every_code_point);
        tcase_add_test(tc, test_cut_at_columns_never_splits_an_escape);
        tcase_add_test(tc, test_cut_of_escaped_text_keeps_escapes_whole);
        tcase_add_test(tc, test_cut_at_bytes_on_a_character_boundary);
        tcase_add_test(tc, test_fputs_writes_what_esc_text_gives);
        tcase_add_test(tc, test_random_strings_idempotent);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(esc_suite());
}
