/* SPDX-License-Identifier: MIT */
/*
 * The strict JSON reader (util/json-rd): a walk over every kind of value, and each rule at its
 * edge — depth at 2048 and 2049, int64 and double range at their last value and one past, UTF-8
 * (overlong, surrogate, above U+10FFFF, truncated), escapes and surrogate pairs, NUL in any form,
 * duplicate keys (plain, escaped, in small and large objects), truncation at every byte, trailing
 * bytes, and a failed reader staying failed.
 */
#include <check.h>
#include <errno.h>

#include "util/json-rd.h"
#include "tests/unit/testutil.h"

/* Read the whole text as one document: 0, or the reader's error. */
static int parse_n(const char *s, size_t n)
{
        struct jrd r;
        int e;

        jrd_init(&r, s, n);
        if ((e = jrd_skip_value(&r)) == 0)
                e = jrd_end(&r);
        jrd_free(&r);
        return e;
}

static int parse(const char *s)
{
        return parse_n(s, strlen(s));
}

/* "[" x depth, inner, "]" x depth */
static char *nested(size_t depth, const char *inner)
{
        size_t n = strlen(inner);
        char *s = malloc(2 * depth + n + 1);

        ck_assert_ptr_nonnull(s);
        memset(s, '[', depth);
        memcpy(s + depth, inner, n);
        memset(s + depth + n, ']', depth);
        s[2 * depth + n] = '\0';
        return s;
}

START_TEST(test_walk_reads_every_kind_of_value)
{
        const char *doc = " {\"a\" : [1, -2, \"x\\u00e9\\n\", true, false, null, {\"b\":{}}],"
                          "\"c\":1.5e3, \"d\":\"plain\"} ";
        struct jrd r;
        struct jrd_val v;
        struct jrd_str k;
        char buf[16];

        jrd_init(&r, doc, strlen(doc));
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(v.type, JRD_OBJECT);
        ck_assert_int_eq(jrd_member(&r, &k), 1);
        ck_assert(jrd_str_eq(&k, "a"));
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(v.type, JRD_ARRAY);
        ck_assert_int_eq(jrd_element(&r), 1);
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert(v.type == JRD_INT && v.i == 1);
        ck_assert_int_eq(jrd_element(&r), 1);
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert(v.type == JRD_INT && v.i == -2);
        ck_assert_int_eq(jrd_element(&r), 1);
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(v.type, JRD_STRING);
        ck_assert(v.s.esc);
        ck_assert_uint_eq(v.s.raw, 9);
        ck_assert_uint_eq(v.s.len, 4);
        ck_assert_int_eq(jrd_str_copy(&v.s, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "x\xc3\xa9\n");
        ck_assert(jrd_str_eq(&v.s, "x\xc3\xa9\n"));
        ck_assert(!jrd_str_eq(&v.s, "x\xc3\xa9"));
        ck_assert_int_eq(jrd_str_copy(&v.s, buf, 4), -E2BIG); /* no room for the NUL */
        for (int t = JRD_TRUE; t <= JRD_NULL; t++) {
                ck_assert_int_eq(jrd_element(&r), 1);
                ck_assert_int_eq(jrd_value(&r, &v), 0);
                ck_assert_int_eq(v.type, t);
        }
        /* the rest of the array, skipped */
        ck_assert_int_eq(jrd_skip(&r), 0);
        ck_assert_int_eq(jrd_member(&r, &k), 1);
        ck_assert(jrd_str_eq(&k, "c"));
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(v.type, JRD_REAL);
        ck_assert_int_eq(jrd_member(&r, &k), 1);
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert(v.type == JRD_STRING && !v.s.esc && v.s.len == 5);
        ck_assert_mem_eq(v.s.p, "plain", 5);
        ck_assert_int_eq(jrd_member(&r, &k), 0);
        ck_assert_int_eq(jrd_end(&r), 0);
        jrd_free(&r);
}
END_TEST

START_TEST(test_calls_out_of_turn_are_refused)
{
        struct jrd r;
        struct jrd_val v;
        struct jrd_str k;

        jrd_init(&r, LIT("[1]"));
        ck_assert_int_eq(jrd_member(&r, &k), -EINVAL); /* a value is due */
        ck_assert_int_eq(jrd_end(&r), -EINVAL);
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(jrd_member(&r, &k), -EINVAL); /* an array, not an object */
        ck_assert_int_eq(jrd_value(&r, &v), -EINVAL);  /* jrd_element first */
        ck_assert_int_eq(jrd_skip(&r), 0);
        ck_assert_int_eq(jrd_skip(&r), -EINVAL); /* nothing open */
        ck_assert_int_eq(jrd_end(&r), 0);
        jrd_free(&r);
}
END_TEST

START_TEST(test_depth_cap_counts_every_value_to_2048)
{
        char *ok = nested(2048, ""), *over = nested(2049, ""), *deep_scalar = nested(2047, "1"),
             *over_scalar = nested(2048, "1");
        struct jrd r;

        /* 2048 arrays: the innermost is the 2048th value down */
        ck_assert_int_eq(parse(ok), 0);
        ck_assert_int_eq(parse(over), -EBADMSG);
        ck_assert_int_eq(parse(deep_scalar), 0);
        ck_assert_int_eq(parse(over_scalar), -EBADMSG);
        jrd_init(&r, over, strlen(over));
        ck_assert_int_eq(jrd_skip_value(&r), -EBADMSG);
        ck_assert_str_eq(jrd_error(&r, NULL), "nested deeper than 2048 values");
        jrd_free(&r);
        /* objects count the same: 2047 {"a": then {} */
        free(ok);
        ok = malloc(6 * 2048 + 1);
        ck_assert_ptr_nonnull(ok);
        for (size_t i = 0; i < 2047; i++)
                memcpy(ok + 5 * i, "{\"a\":", 5);
        memcpy(ok + 5 * 2047, "{}", 2);
        memset(ok + 5 * 2047 + 2, '}', 2047);
        ok[5 * 2047 + 2 + 2047] = '\0';
        ck_assert_int_eq(parse(ok), 0);
        free(ok);
        free(over);
        free(deep_scalar);
        free(over_scalar);
}
END_TEST

START_TEST(test_integers_hold_int64_exactly)
{
        static const struct {
                const char *text;
                int64_t v;
        } ok[] = {
                {"9223372036854775807", INT64_MAX},
                {"-9223372036854775808", INT64_MIN},
                {"0", 0},
                {"-0", 0},
                {"1234567890123456789", 1234567890123456789LL},
        };
        static const char *const bad[] = {"9223372036854775808", "-9223372036854775809",
                                          "10000000000000000000", "99999999999999999999999"};

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
                struct jrd r;
                struct jrd_val v;

                jrd_init(&r, ok[i].text, strlen(ok[i].text));
                ck_assert_int_eq(jrd_value(&r, &v), 0);
                ck_assert_int_eq(v.type, JRD_INT);
                ck_assert_msg(v.i == ok[i].v, "%s", ok[i].text);
                ck_assert_int_eq(jrd_end(&r), 0);
                jrd_free(&r);
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "%s accepted", bad[i]);
}
END_TEST

/* 2^1024 - 2^970: halfway between DBL_MAX and the next power of two; strtod rounds it up. */
#define DBL_HALFWAY                                                                                \
        "1797693134862315807937289714053034150799341327100378269361737789804449682927647509466490" \
        "1797758720709633028641669288791094655554785194040263065748867150582068190890200070838367" \
        "6273854845817711531764475730270069855571366959622842914819860834936475292719074168444365" \
        "510704342711559699508093042880177904174497792"

START_TEST(test_reals_overflow_where_strtod_does)
{
        static const char *const ok[] = {
                "1.7976931348623157e308",
                "-1.7976931348623157e308",
                "1.7976931348623158e308",
                DBL_HALFWAY "e-1",
                DBL_HALFWAY ".0e-1",
                "1797693134862315807937e287",
                "1e-400",
                "0e99999999999999999999",
                "0.000e999",
                "4.9e-324",
                "1.5",
                "-0.0",
                "1E+2",
                "1e-0",
                "123.456e-789",
        };
        static const char *const bad[] = {
                DBL_HALFWAY ".0",
                DBL_HALFWAY "e0",
                "1797693134862315807938e287",
                "1e309",
                "-1e309",
                "2e308",
                "0.1e310",
                "1e99999999999999999999",
                "10e308",
        };

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                ck_assert_msg(parse(ok[i]) == 0, "%s refused", ok[i]);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "%s accepted", bad[i]);
        /* the boundary just below: the halfway value less one in the last of 400+ digits */
        char *below = filled(500, '0');
        memcpy(below, DBL_HALFWAY, strlen(DBL_HALFWAY));
        below[strlen(DBL_HALFWAY) - 1] = '1'; /* ...791 */
        memcpy(below + strlen(DBL_HALFWAY), ".99999", 6);
        ck_assert_int_eq(parse(below), 0);
        free(below);
}
END_TEST

START_TEST(test_malformed_numbers_and_literals_fail)
{
        static const char *const bad[] = {
                "01",        "-01",   "-",     "1.",   ".5",      "1e",         "1e+", "+1",
                "1.e5",      "0x10",  "1ee2",  "--1",  "NaN",     "Infinity",   "tru", "nul",
                "True",      "truex", "[1 2]", "[1,]", "{\"a\"}", "{\"a\":1,}", "{,}", "[,1]",
                "{\"a\" 1}", "{1:2}", "",      " ",    "]",       "[}"};

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_strings_are_valid_utf8)
{
        static const char *const ok[] = {
                "\"\xc3\xa9\"",         /* U+00E9 */
                "\"\xe2\x82\xac\"",     /* U+20AC */
                "\"\xef\xbf\xbf\"",     /* U+FFFF */
                "\"\xf0\x90\x80\x80\"", /* U+10000 */
                "\"\xf4\x8f\xbf\xbf\"", /* U+10FFFF */
                "\"\xed\x9f\xbf\"",     /* U+D7FF, below the surrogates */
                "\"\x7f\"",             /* DEL is not a control byte for JSON */
        };
        static const char *const bad[] = {
                "\"\xc0\x80\"",                                 /* overlong NUL */
                "\"\xc1\xbf\"",                                 /* overlong */
                "\"\xe0\x9f\xbf\"",                             /* overlong 3-byte */
                "\"\xf0\x8f\xbf\xbf\"",                         /* overlong 4-byte */
                "\"\xed\xa0\x80\"",                             /* U+D800 */
                "\"\xed\xbf\xbf\"",                             /* U+DFFF */
                "\"\xf4\x90\x80\x80\"",                         /* U+110000 */
                "\"\xf5\x80\x80\x80\"", "\"\xff\"", "\"\x80\"", /* a lone continuation byte */
                "\"\xe2\x82\"",                                 /* cut short by the quote */
                "\"\xc3\x28\"",                                 /* not a continuation */
                "\"\xf0\x90\x80\"",
        };

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                ck_assert_msg(parse(ok[i]) == 0, "ok[%zu] refused", i);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "bad[%zu] accepted", i);
        /* a sequence cut by the end of the input */
        ck_assert_int_eq(parse_n("\"\xe2\x82", 3), -EBADMSG);
        /* the SIMD scan hands over to the byte loop at any position */
        for (size_t at = 1; at < 40; at++) {
                char *s = filled(41, 'a');

                s[0] = '"';
                s[40] = '"';
                s[at] = (char)0xc0;
                ck_assert_msg(parse(s) == -EBADMSG, "0xc0 at %zu accepted", at);
                s[at] = '\x1f';
                ck_assert_msg(parse(s) == -EBADMSG, "0x1f at %zu accepted", at);
                s[at] = 'b';
                ck_assert_int_eq(parse(s), 0);
                free(s);
        }
}
END_TEST

START_TEST(test_escapes_and_surrogates)
{
        static const struct {
                const char *text, *value;
        } ok[] = {
                {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t"},
                {"\"\\u0041\\u00e9\\u20ac\"", "A\xc3\xa9\xe2\x82\xac"},
                {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"},
                {"\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf"},
                {"\"a\\u0001b\"", "a\x01"
                                  "b"},
        };
        static const char *const bad[] = {
                "\"\\x41\"",
                "\"\\u12G4\"",
                "\"\\u123\"",
                "\"\\ud83d\"",
                "\"\\ude00\"",
                "\"\\ude00\\ud83d\"",
                "\"\\ud83d\\u0041\"",
                "\"\\ud83dx\"",
                "\"\\u0000\"",
                "\"a\\u0000\"",
                "\"\\\"",
                "\"\\",
                "\"\x01\"",
                "\"\x1f\"",
                "\"a\nb\"",
                "\"abc",
        };

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
                struct jrd r;
                struct jrd_val v;
                char buf[32];

                jrd_init(&r, ok[i].text, strlen(ok[i].text));
                ck_assert_int_eq(jrd_value(&r, &v), 0);
                ck_assert_uint_eq(v.s.len, strlen(ok[i].value));
                ck_assert_int_eq(jrd_str_copy(&v.s, buf, sizeof(buf)), 0);
                ck_assert_str_eq(buf, ok[i].value);
                ck_assert(jrd_str_eq(&v.s, ok[i].value));
                jrd_free(&r);
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "'%s' accepted", bad[i]);
        /* NUL as a key, by escape or raw */
        ck_assert_int_eq(parse("{\"a\\u0000\":1}"), -EBADMSG);
        ck_assert_int_eq(parse_n("{\"a\0\":1}", 7), -EBADMSG);
}
END_TEST

START_TEST(test_nul_bytes_are_refused_everywhere)
{
        /* jansson 2.14 drops the NUL after a number or literal and accepts these: this reader not
         */
        ck_assert_int_eq(parse_n("[1\0]", 4), -EBADMSG);
        ck_assert_int_eq(parse_n("[true\0]", 7), -EBADMSG);
        ck_assert_int_eq(parse_n("{\"a\":1\0}", 8), -EBADMSG);
        ck_assert_int_eq(parse_n("[1]\0", 4), -EBADMSG);
        ck_assert_int_eq(parse_n("\0[1]", 4), -EBADMSG);
        ck_assert_int_eq(parse_n("[\"\0\"]", 5), -EBADMSG);
        ck_assert_int_eq(parse_n("[1]", 3), 0);
}
END_TEST

START_TEST(test_duplicate_keys_fail_however_written)
{
        char big[4096];
        size_t o = 0;

        ck_assert_int_eq(parse("{\"a\":1,\"a\":2}"), -EBADMSG);
        ck_assert_int_eq(parse("{\"a\":1,\"\\u0061\":2}"), -EBADMSG);
        ck_assert_int_eq(parse("{\"\\u00e9\":1,\"\xc3\xa9\":2}"), -EBADMSG);
        ck_assert_int_eq(parse("{\"a\\/\":1,\"a/\":2}"), -EBADMSG);
        ck_assert_int_eq(parse("{\"x\":{\"a\":1,\"b\":[{\"c\":1,\"c\":1}]}}"), -EBADMSG);
        /* the same key in different objects, and keys that only share a prefix, are fine */
        ck_assert_int_eq(parse("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}],\"ab\":1}"),
                         0);
        ck_assert_int_eq(parse("{\"a\":1,\"A\":1,\"a \":1,\"\\u0062\":1}"), 0);
        ck_assert_int_eq(parse("{\"\":1,\"\\u0000x\":1}"), -EBADMSG);
        ck_assert_int_eq(parse("{\"\":1,\"\":2}"), -EBADMSG);
        /* over 32 keys the keys are sorted: a duplicate first and last, escaped */
        o += (size_t)snprintf(big + o, sizeof(big) - o, "{\"k0\":0");
        for (int i = 1; i < 100; i++)
                o += (size_t)snprintf(big + o, sizeof(big) - o, ",\"k%d\":%d", i, i);
        ck_assert_int_eq(parse_n(big, o), -EBADMSG); /* unterminated */
        snprintf(big + o, sizeof(big) - o, "}");
        ck_assert_int_eq(parse(big), 0);
        snprintf(big + o, sizeof(big) - o, ",\"\\u006b0\":1}");
        ck_assert_int_eq(parse(big), -EBADMSG);
}
END_TEST

START_TEST(test_many_keys_grow_the_key_stack)
{
        size_t n = 20000, cap = n * 32 + 16, o = 0;
        char *s = malloc(cap);

        ck_assert_ptr_nonnull(s);
        s[o++] = '{';
        for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(s + o, cap - o, "%s\"%zu\":[{\"x\":1}]", i ? "," : "", i);
        s[o++] = '}';
        ck_assert_int_eq(parse_n(s, o), 0);
        /* the same with the first key again at the end */
        o--;
        o += (size_t)snprintf(s + o, cap - o, ",\"0\":1}");
        ck_assert_int_eq(parse_n(s, o), -EBADMSG);
        free(s);
}
END_TEST

START_TEST(test_every_truncation_fails_and_whitespace_is_ok)
{
        const char *doc = "{\"a\":[1,2.5e1,\"s\\u00e9\",{\"t\":true,\"f\":false}],\"n\":null}";
        size_t len = strlen(doc);

        for (size_t n = 0; n < len; n++)
                ck_assert_msg(parse_n(doc, n) == -EBADMSG, "prefix of %zu bytes accepted", n);
        ck_assert_int_eq(parse(doc), 0);
        ck_assert_int_eq(parse(" \t\r\n[ 1 , \n 2 ] \r\n"), 0);
        ck_assert_int_eq(parse("[1] x"), -EBADMSG);
        ck_assert_int_eq(parse("[1][2]"), -EBADMSG);
        ck_assert_int_eq(parse("\xef\xbb\xbf[1]"), -EBADMSG); /* no BOM */
        ck_assert_int_eq(parse("[1]\f"), -EBADMSG);           /* form feed is not whitespace */
        ck_assert_int_eq(parse("1"), 0);                      /* any value at the top */
}
END_TEST

START_TEST(test_a_failed_reader_stays_failed)
{
        struct jrd r;
        struct jrd_val v;
        struct jrd_str k;
        size_t off = 0;

        jrd_init(&r, LIT("{\"a\":01}"));
        ck_assert_ptr_null(jrd_error(&r, NULL));
        ck_assert_int_eq(jrd_value(&r, &v), 0);
        ck_assert_int_eq(jrd_member(&r, &k), 1);
        ck_assert_int_eq(jrd_value(&r, &v), -EBADMSG);
        ck_assert_str_eq(jrd_error(&r, &off), "number with a leading zero");
        ck_assert_uint_eq(off, 5);
        ck_assert_int_eq(jrd_member(&r, &k), -EBADMSG);
        ck_assert_int_eq(jrd_value(&r, &v), -EBADMSG);
        ck_assert_int_eq(jrd_skip(&r), -EBADMSG);
        ck_assert_int_eq(jrd_end(&r), -EBADMSG);
        ck_assert_uint_eq(off, 5);
        jrd_free(&r);
}
END_TEST

START_TEST(test_input_over_the_cap_is_refused)
{
        static const char s[] = "[1]";
        struct jrd r;
        struct jrd_val v;

        /* the length alone is checked: nothing past s is read */
        jrd_init(&r, s, (size_t)JRD_INPUT_MAX + 1);
        ck_assert_int_eq(jrd_value(&r, &v), -E2BIG);
        jrd_free(&r);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("json-rd");
        TCase *tc = tcase_create("json-rd");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_walk_reads_every_kind_of_value);
        tcase_add_test(tc, test_calls_out_of_turn_are_refused);
        tcase_add_test(tc, test_depth_cap_counts_every_value_to_2048);
        tcase_add_test(tc, test_integers_hold_int64_exactly);
        tcase_add_test(tc, test_reals_overflow_where_strtod_does);
        tcase_add_test(tc, test_malformed_numbers_and_literals_fail);
        tcase_add_test(tc, test_strings_are_valid_utf8);
        tcase_add_test(tc, test_escapes_and_surrogates);
        tcase_add_test(tc, test_nul_bytes_are_refused_everywhere);
        tcase_add_test(tc, test_duplicate_keys_fail_however_written);
        tcase_add_test(tc, test_many_keys_grow_the_key_stack);
        tcase_add_test(tc, test_every_truncation_fails_and_whitespace_is_ok);
        tcase_add_test(tc, test_a_failed_reader_stays_failed);
        tcase_add_test(tc, test_input_over_the_cap_is_refused);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
