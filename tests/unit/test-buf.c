/* SPDX-License-Identifier: MIT */
/* The bounded writer (util/buf.h): exact fit, cap-1/cap/cap+1, failed appends change nothing.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "util/hex.h"
#include "tests/unit/testutil.h"

#define CAP 16

/* Storage of CAP bytes plus guard bytes the writer must never touch. */
struct guarded {
        uint8_t b[CAP];
        uint8_t guard[8];
};

static void check_guard(const struct guarded *g)
{
        for (size_t i = 0; i < sizeof(g->guard); i++)
                ck_assert_uint_eq(g->guard[i], 0xee);
}

static void guarded_init(struct guarded *g, struct wb *w)
{
        memset(g, 0xee, sizeof(*g));
        wb_init(w, g->b, CAP);
}

START_TEST(test_put_at_cap_minus_one_cap_and_cap_plus_one)
{
        uint8_t src[CAP + 1];

        memset(src, 'x', sizeof(src));
        for (int d = -1; d <= 1; d++) {
                struct guarded g;
                struct wb w;

                guarded_init(&g, &w);
                ck_assert_int_eq(wb_put(&w, src, (size_t)(CAP + d)), d <= 0 ? 0 : -E2BIG);
                ck_assert_uint_eq(wb_len(&w), d <= 0 ? (size_t)(CAP + d) : 0);
                check_guard(&g);
        }
}
END_TEST

START_TEST(test_failed_put_leaves_writer_unchanged)
{
        struct guarded g;
        struct wb w, before;
        uint8_t snap[CAP], *p = NULL;

        guarded_init(&g, &w);
        ck_assert_int_eq(wb_put(&w, "0123456789abc", 13), 0);
        before = w;
        memcpy(snap, g.b, CAP);
        /* 3 bytes left: every append of 4 fails, whatever its kind */
        ck_assert_int_eq(wb_put(&w, "wxyz", 4), -E2BIG);
        ck_assert_int_eq(wb_put_u32le(&w, 1), -E2BIG);
        ck_assert_int_eq(wb_put_u64le(&w, 1), -E2BIG);
        ck_assert_int_eq(wb_put_u32be(&w, 1), -E2BIG);
        ck_assert_int_eq(wb_put_hex(&w, "00112233", 8), -E2BIG);
        ck_assert_int_eq(wb_put_b64(&w, "AAAAAA==", 8), -E2BIG);
        ck_assert_int_eq(wb_reserve(&w, 4, &p), -E2BIG);
        ck_assert_ptr_null(p);
        /* malformed input that would fit fails too, and undoes its partial decode */
        ck_assert_int_eq(wb_put_hex(&w, "0g", 2), -EBADMSG);
        ck_assert_int_eq(wb_put_hex(&w, "abc", 3), -EBADMSG);
        ck_assert_int_eq(wb_put_b64(&w, "A===", 4), -EBADMSG);
        ck_assert_int_eq(wb_put_b64(&w, "AB=", 3), -EBADMSG);
        ck_assert_mem_eq(&w, &before, sizeof(w));
        ck_assert_mem_eq(g.b, snap, CAP);
        check_guard(&g);
        /* exact fit still works */
        ck_assert_int_eq(wb_put(&w, "xyz", 3), 0);
        ck_assert_uint_eq(wb_avail(&w), 0);
        ck_assert_int_eq(wb_put_u8(&w, 1), -E2BIG);
        ck_assert_int_eq(wb_put(&w, NULL, 0), 0);
        check_guard(&g);
}
END_TEST

START_TEST(test_huge_lengths_cannot_wrap)
{
        struct guarded g;
        struct wb w;
        uint8_t *p = NULL;

        guarded_init(&g, &w);
        ck_assert_int_eq(wb_put(&w, "ab", 2), 0);
        ck_assert_int_eq(wb_reserve(&w, SIZE_MAX, &p), -E2BIG);
        ck_assert_int_eq(wb_reserve(&w, SIZE_MAX - 1, &p), -E2BIG);
        ck_assert_int_eq(wb_reserve(&w, (size_t)CAP - 1, &p), -E2BIG);
        ck_assert_ptr_null(p);
        ck_assert_int_eq(wb_reserve(&w, (size_t)CAP - 2, &p), 0);
        ck_assert_ptr_eq(p, g.b + 2);
        ck_assert_uint_eq(wb_len(&w), CAP);
        check_guard(&g);
}
END_TEST

START_TEST(test_byte_orders_and_sized_fields)
{
        uint8_t b[32];
        struct wb w = WB_INIT(b, sizeof(b));
        size_t mark;

        ck_assert_int_eq(wb_put_u32le(&w, 0x01020304), 0);
        ck_assert_int_eq(wb_put_u32be(&w, 0x01020304), 0);
        ck_assert_int_eq(wb_put_u16be(&w, 0x0506), 0);
        ck_assert_mem_eq(b, "\x04\x03\x02\x01\x01\x02\x03\x04\x05\x06", 10);
        ck_assert_int_eq(wb_sized_begin(&w, false, &mark), 0);
        ck_assert_int_eq(wb_put_hex(&w, "AbCd", 4), 0);
        ck_assert_int_eq(wb_sized_end(&w, false, mark, 2), 0);
        ck_assert_mem_eq(b + 10, "\x02\0\0\0\xab\xcd", 6);
        /* a field over its own limit fails unchanged; the caller rolls back to the mark */
        ck_assert_int_eq(wb_sized_begin(&w, true, &mark), 0);
        ck_assert_int_eq(wb_put(&w, "abc", 3), 0);
        ck_assert_int_eq(wb_sized_end(&w, true, mark, 2), -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 23);
        ck_assert_int_eq(wb_rollback(&w, mark), 0);
        ck_assert_uint_eq(wb_len(&w), 16);
        ck_assert_int_eq(wb_rollback(&w, 17), -EINVAL);
        ck_assert_int_eq(wb_set_u32(&w, 13, true, 1), -EINVAL);
        ck_assert_int_eq(wb_set_u32(&w, SIZE_MAX, true, 1), -EINVAL);
        ck_assert_int_eq(wb_sized_end(&w, true, 14, 100), -EINVAL);
        ck_assert_int_eq(wb_put_u64le(&w, 0x0102030405060708u), 0);
        ck_assert_mem_eq(b + 16, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
}
END_TEST

START_TEST(test_decoders_through_the_writer)
{
        uint8_t out[4];
        size_t n = 99;

        /* hex: cap - 1, cap, cap + 1 bytes into 4 */
        ck_assert_int_eq(hex_decode("001122", 6, out, 4, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(hex_decode("00112233", 8, out, 4, &n), 0);
        ck_assert_uint_eq(n, 4);
        n = 99;
        ck_assert_int_eq(hex_decode("0011223344", 10, out, 4, &n), -E2BIG);
        ck_assert_uint_eq(n, 99);
        ck_assert_int_eq(hex_decode("zz", 2, out, 4, &n), -EBADMSG);
        /* base64: 3, 4, 5 bytes into 4 */
        ck_assert_int_eq(b64_decode("AAEC", 4, out, 4, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(b64_decode("AAECAw==", 8, out, 4, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_mem_eq(out, "\x00\x01\x02\x03", 4);
        ck_assert_int_eq(b64_decode("AAECAwQ=", 8, out, 4, &n), -E2BIG);
        ck_assert_int_eq(b64_decode("AAECAx==", 8, out, 4, &n), -EBADMSG); /* trailing bits */
}
END_TEST

/*
 * wb_put_hex() checks and decodes 16 digits at a time (SSE2), then 8 (little-endian words), then
 * one: every byte value at every position of a 26-digit run (16 + 8 + 2) must be accepted exactly
 * when it is a hex digit, decode to its value, and leave the writer unchanged when refused.
 */
static int hexval_ref(unsigned c)
{
        if (c >= '0' && c <= '9')
                return (int)(c - '0');
        if (c >= 'a' && c <= 'f')
                return (int)(c - 'a' + 10);
        if (c >= 'A' && c <= 'F')
                return (int)(c - 'A' + 10);
        return -1;
}

START_TEST(test_hex_every_byte_at_every_position)
{
        static const char base[] = "0123456789abcDEF9aF0e1D2c3";
        enum { LEN = sizeof(base) - 1 };

        for (unsigned pos = 0; pos < LEN; pos++) {
                for (unsigned c = 0; c < 256; c++) {
                        struct guarded g;
                        struct wb w;
                        char in[LEN];
                        uint8_t out[LEN / 2];
                        size_t n;

                        guarded_init(&g, &w);
                        memcpy(in, base, LEN);
                        in[pos] = (char)c;
                        ck_assert_int_eq(wb_put_u8(&w, 0x55), 0);
                        if (hexval_ref(c) < 0) {
                                ck_assert_int_eq(wb_put_hex(&w, in, LEN), -EBADMSG);
                                ck_assert_uint_eq(wb_len(&w), 1);
                                for (unsigned k = 1; k < CAP; k++)
                                        ck_assert_uint_eq(g.b[k], 0xee);
                                check_guard(&g);
                                continue;
                        }
                        ck_assert_int_eq(hex_decode(in, LEN, out, sizeof(out), &n), 0);
                        ck_assert_uint_eq(n, LEN / 2);
                        for (unsigned k = 0; k < LEN / 2; k++)
                                ck_assert_int_eq(out[k],
                                                 hexval_ref((unsigned char)in[2 * k]) << 4 |
                                                         hexval_ref((unsigned char)in[2 * k + 1]));
                }
        }
}
END_TEST

START_TEST(test_owned_writer)
{
        struct wb w;

        ck_assert_int_eq(wb_new(&w, 3), 0);
        ck_assert_int_eq(wb_put(&w, "abc", 3), 0);
        ck_assert_int_eq(wb_put_u8(&w, 0), -E2BIG);
        wb_free(&w);
        ck_assert_int_eq(wb_new(&w, 0), 0);
        ck_assert_int_eq(wb_put_u8(&w, 0), -E2BIG);
        wb_free(&w);
}
END_TEST

static Suite *buf_suite(void)
{
        Suite *s = suite_create("buf");
        TCase *tc = tcase_create("writer");

        tcase_add_test(tc, test_put_at_cap_minus_one_cap_and_cap_plus_one);
        tcase_add_test(tc, test_failed_put_leaves_writer_unchanged);
        tcase_add_test(tc, test_huge_lengths_cannot_wrap);
        tcase_add_test(tc, test_byte_orders_and_sized_fields);
        tcase_add_test(tc, test_decoders_through_the_writer);
        tcase_add_test(tc, test_owned_writer);
        tcase_add_test(tc, test_hex_every_byte_at_every_position);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(buf_suite());
}
