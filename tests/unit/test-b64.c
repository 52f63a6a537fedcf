/* SPDX-License-Identifier: MIT */
/*
 * The table-driven base64 decoders (util/buf.c): wb_put_b64 (checked, then written) and its
 * one-pass twin behind b64_decode. Every length from 0 to 300 round-trips; a bad byte at any
 * position of any quartet fails both, the checked writer unchanged; the order of the errors (length
 * not a multiple of 4, then the cap, then a bad character) is the same in both.
 */
#include <check.h>
#include <errno.h>

#include "util/buf.h"
#include "util/hex.h"
#include "tests/unit/testutil.h"

START_TEST(test_every_length_round_trips)
{
        for (size_t n = 0; n <= 300; n++) {
                uint8_t in[300], out[300 + 4], wout[300];
                char enc[401];
                size_t got = 0;
                struct wb w = WB_INIT(wout, n);

                for (size_t i = 0; i < n; i++)
                        in[i] = (uint8_t)(i * 37 + n);
                b64_encode(in, n, enc);
                ck_assert_int_eq(b64_decode(enc, strlen(enc), out, n, &got), 0);
                ck_assert_uint_eq(got, n);
                ck_assert(n == 0 || memcmp(in, out, n) == 0);
                ck_assert_int_eq(wb_put_b64(&w, enc, strlen(enc)), 0);
                ck_assert_uint_eq(wb_len(&w), n);
                ck_assert(n == 0 || memcmp(in, wout, n) == 0);
                /* one byte less room: -E2BIG from both */
                if (n > 0) {
                        struct wb s = WB_INIT(wout, n - 1);

                        ck_assert_int_eq(b64_decode(enc, strlen(enc), out, n - 1, &got), -E2BIG);
                        ck_assert_int_eq(wb_put_b64(&s, enc, strlen(enc)), -E2BIG);
                }
        }
}
END_TEST

START_TEST(test_a_bad_byte_anywhere_fails)
{
        static const char bad[] = {'*', '=', '-', '_', ' ', '\n', '\0', (char)0x80, (char)0xff};
        uint8_t in[30], out[30], storage[32];
        char enc[41];

        for (size_t i = 0; i < sizeof(in); i++)
                in[i] = (uint8_t)(i * 11);
        b64_encode(in, sizeof(in), enc); /* 40 characters, no padding */
        for (size_t at = 0; at < 40; at++) {
                for (size_t k = 0; k < sizeof(bad); k++) {
                        char s[41];
                        size_t got = 0;
                        struct wb w = WB_INIT(storage, sizeof(storage));

                        memcpy(s, enc, sizeof(s));
                        s[at] = bad[k];
                        /* '=' is padding only in the last two places of the last quartet */
                        if (bad[k] == '=' && at >= 38)
                                continue;
                        memset(storage, 0x5a, sizeof(storage));
                        ck_assert_msg(b64_decode(s, 40, out, sizeof(out), &got) == -EBADMSG,
                                      "byte 0x%02x at %zu accepted", (unsigned char)bad[k], at);
                        ck_assert_int_eq(wb_put_b64(&w, s, 40), -EBADMSG);
                        ck_assert_uint_eq(wb_len(&w), 0);
                        for (size_t i = 0; i < sizeof(storage); i++)
                                ck_assert_uint_eq(storage[i], 0x5a);
                }
        }
}
END_TEST

START_TEST(test_errors_come_in_one_order)
{
        uint8_t out[8];
        size_t got;
        struct wb w = WB_INIT(out, 2);

        /* a length that is not a multiple of 4 beats the cap */
        ck_assert_int_eq(b64_decode("AAAAA", 5, out, 2, &got), -EBADMSG);
        ck_assert_int_eq(wb_put_b64(&w, "AAAAA", 5), -EBADMSG);
        /* the cap beats a bad character */
        ck_assert_int_eq(b64_decode("AA*A", 4, out, 2, &got), -E2BIG);
        ck_assert_int_eq(wb_put_b64(&w, "AA*A", 4), -E2BIG);
        /* padding: canonical trailing bits only, '=' only at the end */
        ck_assert_int_eq(b64_decode("AB==", 4, out, 8, &got), -EBADMSG);
        ck_assert_int_eq(b64_decode("AQ==", 4, out, 8, &got), 0);
        ck_assert_uint_eq(got, 1);
        ck_assert_int_eq(b64_decode("AAB=", 4, out, 8, &got), -EBADMSG);
        ck_assert_int_eq(b64_decode("AAE=", 4, out, 8, &got), 0);
        ck_assert_uint_eq(got, 2);
        ck_assert_int_eq(b64_decode("A=A=", 4, out, 8, &got), -EBADMSG);
        ck_assert_int_eq(b64_decode("AA==AAAA", 8, out, 8, &got), -EBADMSG);
        ck_assert_int_eq(b64_decode("", 0, out, 0, &got), 0);
        ck_assert_uint_eq(got, 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("b64");
        TCase *tc = tcase_create("b64");

        tcase_add_test(tc, test_every_length_round_trips);
        tcase_add_test(tc, test_a_bad_byte_anywhere_fails);
        tcase_add_test(tc, test_errors_come_in_one_order);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
