/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>

#include "util/hex.h"
#include "util/rd.h"

START_TEST(test_rd_reads_both_byte_orders)
{
        const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        struct rd r = RD_INIT(b, sizeof(b));
        uint32_t le, be;
        uint16_t s;
        uint8_t c;

        ck_assert_int_eq(rd_u32le(&r, &le), 0);
        ck_assert_uint_eq(le, 0x04030201);
        ck_assert_int_eq(rd_u32be(&r, &be), 0);
        ck_assert_uint_eq(be, 0x05060708);
        ck_assert_int_eq(rd_u16be(&r, &s), 0);
        ck_assert_uint_eq(s, 0x090a);
        ck_assert_int_eq(rd_u8(&r, &c), 0);
        ck_assert_uint_eq(c, 11);
        ck_assert_uint_eq(rd_offset(&r), 11);
        ck_assert_int_eq(rd_u8(&r, &c), -EBADMSG);
}
END_TEST

START_TEST(test_rd_failed_read_leaves_reader_unchanged)
{
        const uint8_t b[] = {5, 0, 0, 0, 'a', 'b', 'c', 'd'}; /* claims 5 bytes, has 4 */
        struct rd r = RD_INIT(b, sizeof(b));
        const uint8_t *p = NULL;
        uint32_t n = 0, v;

        ck_assert_int_eq(rd_sized(&r, 0, 100, &p, &n), -EBADMSG);
        ck_assert_uint_eq(rd_offset(&r), 0);
        ck_assert_int_eq(rd_sized(&r, 0, 4, &p, &n), -E2BIG);
        ck_assert_uint_eq(rd_offset(&r), 0);
        ck_assert_ptr_null(p);
        ck_assert_int_eq(rd_bytes(&r, 9, &p), -EBADMSG);
        ck_assert_uint_eq(rd_left(&r), 8);
        ck_assert_int_eq(rd_bytes(&r, 6, &p), 0);
        ck_assert_int_eq(rd_u32le(&r, &v), -EBADMSG);
        ck_assert_uint_eq(rd_left(&r), 2);
}
END_TEST

START_TEST(test_rd_sized_exact_fit_and_huge_length)
{
        const uint8_t b[] = {2, 0, 0, 0, 'h', 'i'};
        const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 'x'};
        struct rd r = RD_INIT(b, sizeof(b)), h = RD_INIT(huge, sizeof(huge));
        const uint8_t *p;
        uint32_t n;

        ck_assert_int_eq(rd_sized(&r, 0, 2, &p, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(memcmp(p, "hi", 2), 0);
        ck_assert_uint_eq(rd_left(&r), 0);
        /* a length near SIZE_MAX must not wrap any pointer arithmetic */
        ck_assert_int_eq(rd_sized(&h, 0, UINT32_MAX, &p, &n), -EBADMSG);
        ck_assert_uint_eq(rd_offset(&h), 0);
}
END_TEST

START_TEST(test_hex_and_base64_are_strict)
{
        uint8_t out[8];
        size_t n;
        char enc[16];

        ck_assert_int_eq(hex_decode("00aBff", 6, out, sizeof(out), &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[1], 0xab);
        ck_assert_int_eq(hex_decode("0g", 2, out, sizeof(out), &n), -EBADMSG);
        ck_assert_int_eq(hex_decode("abc", 3, out, sizeof(out), &n), -EBADMSG);
        ck_assert_int_eq(hex_decode("001122334455667788", 18, out, sizeof(out), &n), -E2BIG);
        b64_encode((const uint8_t *)"hello", 5, enc);
        ck_assert_str_eq(enc, "aGVsbG8=");
        ck_assert_int_eq(b64_decode(enc, strlen(enc), out, sizeof(out), &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_int_eq(memcmp(out, "hello", 5), 0);
        ck_assert_int_eq(b64_decode("aGVsbG9=", 8, out, sizeof(out), &n), -EBADMSG);
        ck_assert_int_eq(b64_decode("aGV*", 4, out, sizeof(out), &n), -EBADMSG);
        ck_assert_int_eq(b64_decode("aGVsbG8", 7, out, sizeof(out), &n), -EBADMSG);
}
END_TEST

/* The getters added with the writer: u16le, u64 both orders, skip, done; failures change nothing.
 */
START_TEST(test_rd_wide_getters_skip_and_done)
{
        const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
        struct rd r = RD_INIT(b, sizeof(b)), before;
        uint64_t v = 0;
        uint16_t s = 0;

        ck_assert_int_eq(rd_u64le(&r, &v), 0);
        ck_assert_uint_eq(v, 0x0807060504030201ull);
        ck_assert_int_eq(rd_u64be(&r, &v), 0);
        ck_assert_uint_eq(v, 0x090a0b0c0d0e0f10ull);
        ck_assert_int_eq(rd_done(&r), -EBADMSG);
        before = r;
        ck_assert_int_eq(rd_u64le(&r, &v), -EBADMSG); /* 2 bytes left */
        ck_assert_int_eq(rd_u64be(&r, &v), -EBADMSG);
        ck_assert_int_eq(rd_skip(&r, 3), -EBADMSG);
        ck_assert_int_eq(rd_skip(&r, SIZE_MAX), -EBADMSG);
        ck_assert_mem_eq(&r, &before, sizeof(r));
        ck_assert_uint_eq(v, 0x090a0b0c0d0e0f10ull);
        ck_assert_int_eq(rd_u16le(&r, &s), 0);
        ck_assert_uint_eq(s, 0x1211);
        ck_assert_int_eq(rd_done(&r), 0);
        ck_assert_int_eq(rd_u16le(&r, &s), -EBADMSG);
        ck_assert_int_eq(rd_skip(&r, 0), 0);
}
END_TEST

static Suite *rd_suite(void)
{
        Suite *s = suite_create("rd");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_rd_reads_both_byte_orders);
        tcase_add_test(tc, test_rd_failed_read_leaves_reader_unchanged);
        tcase_add_test(tc, test_rd_sized_exact_fit_and_huge_length);
        tcase_add_test(tc, test_hex_and_base64_are_strict);
        tcase_add_test(tc, test_rd_wide_getters_skip_and_done);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(rd_suite());
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
