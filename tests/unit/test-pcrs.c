/* SPDX-License-Identifier: MIT */
/* PCR files: `N HEX` lines, `BANK:N HEX`, tpm2_pcrread YAML; errors name the line. */
#include <check.h>
#include <errno.h>

#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"
#include "tests/unit/testutil.h"

START_TEST(test_real_pcr_files_parse_by_digest_length)
{
        static const char *const banks[] = {"sha1", "sha256", "sha384", "sha512"};

        for (int b = 0; b < BANK_COUNT; b++) {
                char rel[128];
                size_t len;
                struct pcr_set s;
                struct attest_err err = {0};

                snprintf(rel, sizeof(rel), "tests/data/qemu61-good/pcrs-%s.txt", banks[b]);
                char *t = tu_read(rel, &len);
                ck_assert_ptr_nonnull(t);
                ck_assert_msg(pcrs_parse(t, len, &s, &err) == 0, "%s", err.msg);
                ck_assert_uint_eq(s.have[b], 0xffffff);
                for (int o = 0; o < BANK_COUNT; o++)
                        if (o != b)
                                ck_assert_uint_eq(s.have[o], 0);
                /* PCR 17 is all ones on this swtpm, PCR 23 zero */
                ck_assert_uint_eq(s.v[b][17][0], 0xff);
                ck_assert_uint_eq(s.v[b][23][bank_size(b) - 1], 0);
                free(t);
        }
}
END_TEST

START_TEST(test_tpm2_pcrread_yaml_and_named_banks)
{
        static const char yaml[] =
                "  sha1:\n"
                "    10: 0xBEC01A424DB545DC00328BF92A6F071916A77A7C\n"
                "  sha256:\n"
                "    0 : 0xE21B703EE69C77476BCCB43EC0336A9A1B2914B378944F7B00A10214CA8FEA93\n";
        static const char named[] =
                "# comment\n\nsha256:10 "
                "42758292ac5bcea6f030159125614c286a69ec2e36326538a97d161a80a9fe4b\r\n";
        struct pcr_set s;
        struct attest_err err = {0};

        ck_assert_int_eq(pcrs_parse(yaml, strlen(yaml), &s, &err), 0);
        ck_assert_uint_eq(s.have[BANK_SHA1], 1u << 10);
        ck_assert_uint_eq(s.have[BANK_SHA256], 1u << 0);
        ck_assert_uint_eq(s.v[BANK_SHA1][10][0], 0xbe);
        ck_assert_uint_eq(s.v[BANK_SHA256][0][31], 0x93);
        ck_assert_int_eq(pcrs_parse(named, strlen(named), &s, &err), 0);
        ck_assert_uint_eq(s.have[BANK_SHA256], 1u << 10);
}
END_TEST

static void expect_error(const char *t, enum attest_code code, const char *where)
{
        struct pcr_set s;
        struct attest_err err = {0};

        ck_assert_msg(pcrs_parse(t, strlen(t), &s, &err) < 0, "accepted: %s", t);
        ck_assert_int_eq(err.code, code);
        ck_assert_msg(strstr(err.msg, where), "'%s' lacks '%s'", err.msg, where);
}

START_TEST(test_pcr_file_errors_name_the_line)
{
        expect_error("0 00\n", AE_PCRS_BAD_VALUE, "line 1");
        expect_error("0 0000000000000000000000000000000000000000\n24 00\n", AE_PCRS_BAD_INDEX,
                     "line 2");
        expect_error("x 00\n", AE_PCRS_BAD_INDEX, "line 1");
        expect_error("md5:0 00000000000000000000000000000000\n", AE_PCRS_BAD_BANK, "line 1");
        expect_error("sha256:0 0000000000000000000000000000000000000000\n", AE_PCRS_BAD_VALUE,
                     "line 1");
        expect_error("1 000000000000000000000000000000000000000g\n", AE_PCRS_BAD_VALUE, "line 1");
        expect_error("1 0000000000000000000000000000000000000000\n"
                     "1 0000000000000000000000000000000000000000\n",
                     AE_PCRS_DUPLICATE, "line 2");
}
END_TEST

/* Caps at cap - 1, cap and cap + 1: file size, digest bytes, PCR index, bank name. */
START_TEST(test_pcr_file_caps)
{
        static char b[PCR_FILE_MAX + 2];
        static const char line0[] = "0 0000000000000000000000000000000000000000\n";
        struct pcr_set s;
        struct attest_err err = {0};
        char t[256];

        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(PCR_FILE_MAX + d);

                /* one entry, then a comment filling the file */
                memset(b, ' ', n);
                memcpy(b, line0, sizeof(line0) - 1);
                b[sizeof(line0) - 1] = '#';
                b[n - 1] = '\n';
                err = (struct attest_err){0};
                ck_assert_int_eq(pcrs_parse(b, n, &s, &err), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(s.have[BANK_SHA1], 1);
                else
                        ck_assert_int_eq(err.code, AE_PCRS_TOO_BIG);
        }
        /* digest of 63, 64 (sha512) and 65 bytes */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(2 * (BANK_DIGEST_MAX + d));

                memset(t, 'a', sizeof(t));
                memcpy(t, "5 ", 2);
                memcpy(t + 2 + n, "\n", 2);
                err = (struct attest_err){0};
                ck_assert_int_eq(pcrs_parse(t, strlen(t), &s, &err), d == 0 ? 0 : -EBADMSG);
                if (d == 0)
                        ck_assert_uint_eq(s.have[BANK_SHA512], 1u << 5);
                else
                        ck_assert_int_eq(err.code, AE_PCRS_BAD_VALUE);
        }
        /* index 22, 23, 24 */
        for (int d = -1; d <= 1; d++) {
                snprintf(t, sizeof(t), "%d 0x0000000000000000000000000000000000000000\n",
                         PCR_COUNT - 1 + d);
                err = (struct attest_err){0};
                ck_assert_int_eq(pcrs_parse(t, strlen(t), &s, &err), d <= 0 ? 0 : -EBADMSG);
                if (d > 0)
                        ck_assert_int_eq(err.code, AE_PCRS_BAD_INDEX);
        }
        /* a bank name past the cap, and huge numbers */
        expect_error("sha256sha256sha256sha256:0 00\n", AE_PCRS_BAD_BANK, "line 1");
        expect_error("99999999999999999999999 00\n", AE_PCRS_BAD_INDEX, "line 1");
        expect_error("1 0000000000000000000000000000000000000000 junk\n", AE_PCRS_BAD_VALUE,
                     "line 1");
}
END_TEST

/* PCR selection text (pcrsel.c, also read by the agent from the verifier's challenge). */
START_TEST(test_pcr_selection_text)
{
        static const char *const bad[] = {
                "",          "sha256",     "sha256:",   "sha256:0+", "sha256:0,",
                "sha256:24", "sha256:5-3", "md5:0",     "sha256:0-", "sha256:0-1-2",
                "sha256:1x", ":0",         "+sha256:0", "sha256:-1", "sha256:99999999999",
        };
        struct pcr_sel sel;
        char t[PCR_SEL_TEXT_MAX + 2];

        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha1:10,12", &sel), 0);
        ck_assert_uint_eq(sel.mask[BANK_SHA256], 0x7ff);
        ck_assert_uint_eq(sel.mask[BANK_SHA1], (1u << 10) | (1u << 12));
        ck_assert_int_eq(pcr_sel_parse("sha256:23", &sel), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(pcr_sel_parse(bad[i], &sel) == -EINVAL, "accepted '%s'", bad[i]);
        ck_assert_int_eq(pcr_sel_parse(NULL, &sel), -EINVAL);
        /* text of PCR_SEL_TEXT_MAX - 1, cap, cap + 1 bytes: "sha256:0,1,1,...,1" */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(PCR_SEL_TEXT_MAX + d);

                /* a first item of 1 or 2 digits, so that ",1" pairs end the text exactly */
                size_t pre = n % 2 ? 9 : 8;

                memcpy(t, n % 2 ? "sha256:10" : "sha256:0", pre);
                for (size_t i = pre; i < n; i++)
                        t[i] = (i - pre) % 2 ? '1' : ',';
                t[n] = '\0';
                ck_assert_uint_eq(strlen(t), n);
                ck_assert_int_eq(pcr_sel_parse(t, &sel), d <= 0 ? 0 : -EINVAL);
        }
}
END_TEST

static Suite *pcrs_suite(void)
{
        Suite *s = suite_create("pcrs");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_real_pcr_files_parse_by_digest_length);
        tcase_add_test(tc, test_tpm2_pcrread_yaml_and_named_banks);
        tcase_add_test(tc, test_pcr_file_errors_name_the_line);
        tcase_add_test(tc, test_pcr_file_caps);
        tcase_add_test(tc, test_pcr_selection_text);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(pcrs_suite());
}
