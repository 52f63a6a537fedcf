/* SPDX-License-Identifier: MIT */
/* util/num: one rule for every integer read from text (no sign, blank, leading zero, overflow). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "util/num.h"

#define S(s) s, strlen(s)

START_TEST(test_num_u64_accepts_only_plain_decimal)
{
        uint64_t v = 77;

        ck_assert_int_eq(num_u64(S("0"), 0, 10, &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(num_u64(S("18446744073709551615"), 0, UINT64_MAX, &v), 0);
        ck_assert_uint_eq(v, UINT64_MAX);
        v = 77;
        /* every surprise strtoull would let through */
        static const char *const bad[] = {"",    " 1", "1 ",  "+1",  "-1", "01", "0x10",
                                          "1e3", "1k", "\t1", "1\n", "١",  "00", "-0"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(num_u64(S(bad[i]), 0, UINT64_MAX, &v) == -EBADMSG, "'%s'", bad[i]);
        ck_assert_int_eq(num_u64("1\0", 2, 0, 10, &v), -EBADMSG);
        ck_assert_int_eq(num_u64(NULL, 0, 0, 10, &v), -EBADMSG);
        ck_assert_uint_eq(v, 77); /* untouched on failure */
}
END_TEST

START_TEST(test_num_u64_range_at_both_ends)
{
        uint64_t v = 77;

        /* min - 1, min, max, max + 1 */
        ck_assert_int_eq(num_u64(S("9"), 10, 20, &v), -ERANGE);
        ck_assert_int_eq(num_u64(S("10"), 10, 20, &v), 0);
        ck_assert_int_eq(num_u64(S("20"), 10, 20, &v), 0);
        ck_assert_int_eq(num_u64(S("21"), 10, 20, &v), -ERANGE);
        ck_assert_uint_eq(v, 20);
        /* overflow of the type itself, and far past it */
        ck_assert_int_eq(num_u64(S("18446744073709551616"), 0, UINT64_MAX, &v), -ERANGE);
        ck_assert_int_eq(num_u64(S("99999999999999999999999999"), 0, UINT64_MAX, &v), -ERANGE);
        /* a single digit above a maximum below 9 (max - digit must not wrap) */
        ck_assert_int_eq(num_u64(S("5"), 0, 3, &v), -ERANGE);
        ck_assert_int_eq(num_u64(S("9"), 0, 0, &v), -ERANGE);
        ck_assert_int_eq(num_u64(S("3"), 0, 3, &v), 0);
        ck_assert_uint_eq(v, 3);
}
END_TEST

START_TEST(test_num_u32_and_uint_narrow_safely)
{
        uint32_t u = 5;
        unsigned w = 5;

        ck_assert_int_eq(num_u32(S("4294967295"), 0, UINT32_MAX, &u), 0);
        ck_assert_uint_eq(u, UINT32_MAX);
        ck_assert_int_eq(num_u32(S("4294967296"), 0, UINT32_MAX, &u), -ERANGE);
        ck_assert_int_eq(num_u32(S("0"), 1, 10, &u), -ERANGE);
        ck_assert_uint_eq(u, UINT32_MAX);
        ck_assert_int_eq(num_uint(S("86400"), 1, 86400, &w), 0);
        ck_assert_uint_eq(w, 86400);
        ck_assert_int_eq(num_uint(S("86401"), 1, 86400, &w), -ERANGE);
        ck_assert_int_eq(num_uint(S("8640 "), 1, 86400, &w), -EBADMSG);
        ck_assert_uint_eq(w, 86400);
}
END_TEST

START_TEST(test_num_i64_sign_and_extremes)
{
        int64_t v = 77;

        ck_assert_int_eq(num_i64(S("-9223372036854775808"), INT64_MIN, INT64_MAX, &v), 0);
        ck_assert(v == INT64_MIN);
        ck_assert_int_eq(num_i64(S("9223372036854775807"), INT64_MIN, INT64_MAX, &v), 0);
        ck_assert(v == INT64_MAX);
        ck_assert_int_eq(num_i64(S("-9223372036854775809"), INT64_MIN, INT64_MAX, &v), -ERANGE);
        ck_assert_int_eq(num_i64(S("9223372036854775808"), INT64_MIN, INT64_MAX, &v), -ERANGE);
        ck_assert(v == INT64_MAX);
        ck_assert_int_eq(num_i64(S("-5"), -5, 5, &v), 0);
        ck_assert(v == -5);
        ck_assert_int_eq(num_i64(S("-6"), -5, 5, &v), -ERANGE);
        ck_assert_int_eq(num_i64(S("6"), -5, 5, &v), -ERANGE);
        ck_assert_int_eq(num_i64(S("-0"), -5, 5, &v), -EBADMSG);
        ck_assert_int_eq(num_i64(S("--1"), -5, 5, &v), -EBADMSG);
        ck_assert_int_eq(num_i64(S("+1"), -5, 5, &v), -EBADMSG);
        ck_assert_int_eq(num_i64(S("-"), -5, 5, &v), -EBADMSG);
        ck_assert_int_eq(num_i64(S("- 1"), -5, 5, &v), -EBADMSG);
        ck_assert_int_eq(num_i64(S("-01"), -5, 5, &v), -EBADMSG);
        ck_assert(v == -5);
}
END_TEST

static Suite *num_suite(void)
{
        Suite *s = suite_create("num");
        TCase *tc = tcase_create("num");

        tcase_add_test(tc, test_num_u64_accepts_only_plain_decimal);
        tcase_add_test(tc, test_num_u64_range_at_both_ends);
        tcase_add_test(tc, test_num_u32_and_uint_narrow_safely);
        tcase_add_test(tc, test_num_i64_sign_and_extremes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(num_suite());
}
