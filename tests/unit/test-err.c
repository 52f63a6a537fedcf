/* SPDX-License-Identifier: MIT */
/*
 * The error code table (util/err.h): every code has a stable, unique name that maps back to it,
 * and exactly one valid class. The classes that decide what a failed evidence round does are
 * pinned against hand-written reference lists here, so that moving a code from one class to
 * another shows up as a failing test and a diff of this file.
 */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "util/err.h"
#include "tests/unit/testutil.h"

/*
 * The codes daemon/api/api-attest.c's unauthenticated() listed before the class existed (minus
 * AE_NONE, now AEC_SERVER, and the four below): evidence not proven to be a fresh quote of the
 * agent's AK, refused with 400/422 and changing nothing.
 */
static const enum attest_code unauthenticated_ref[] = {
        AE_EVIDENCE_NONCE_MISMATCH,
        AE_QUOTE_AK_ALG,
        AE_QUOTE_AK_ATTRIBUTES,
        AE_QUOTE_AK_CURVE,
        AE_QUOTE_AK_KEY,
        AE_QUOTE_AK_MALFORMED,
        AE_QUOTE_AK_NAME_ALG,
        AE_QUOTE_AK_TOO_BIG,
        AE_QUOTE_AK_TRAILING,
        AE_QUOTE_AK_WEAK,
        AE_QUOTE_ATTEST_MALFORMED,
        AE_QUOTE_ATTEST_TOO_BIG,
        AE_QUOTE_ATTEST_TRAILING,
        AE_QUOTE_INVALID,
        AE_QUOTE_MAGIC,
        AE_QUOTE_NONCE,
        AE_QUOTE_SIG_ALG,
        AE_QUOTE_SIG_MALFORMED,
        AE_QUOTE_SIG_SCHEME,
        AE_QUOTE_SIG_TOO_BIG,
        AE_QUOTE_SIG_TRAILING,
        AE_QUOTE_SIGNATURE,
        AE_QUOTE_TYPE,
};

/*
 * unauthenticated() listed these too, but they are the verifier's own failures (OpenSSL or a
 * hash failed, a caller passed no AK): AEC_SERVER, answered 500 instead of 400/422, and still
 * changing nothing.
 */
static const enum attest_code was_unauthenticated_now_server[] = {
        AE_QUOTE_INTERNAL,
        AE_QUOTE_INVALID_ARGUMENT,
        AE_VERIFY_INTERNAL,
        AE_VERIFY_INVALID_ARGUMENT,
};

/* Refused with 409/410 ("ask a new challenge"); stage_verify's two hand lists were the first 5. */
static const enum attest_code stale_ref[] = {
        AE_IMA_OFFSET_REBOOT,  AE_BOOT_OFFSET_REBOOT,   AE_IMA_OFFSET_MISMATCH,
        AE_QUOTE_CLOCK_REWIND, AE_BOOT_OFFSET_MISMATCH, AE_AGENT_BUSY,
        AE_NONCE_EXPIRED,      AE_NONCE_REUSED,         AE_RUNTIME_POLICY_CHANGED,
};

static bool in(const enum attest_code *v, size_t n, enum attest_code c)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == c)
                        return true;
        return false;
}

#define IN(v, c) in(v, sizeof(v) / sizeof((v)[0]), c)

START_TEST(test_every_code_has_a_unique_name_that_maps_back)
{
        for (unsigned i = 1; i < AE__COUNT; i++) {
                const char *name = attest_code_name((enum attest_code)i);
                enum attest_code back = AE_NONE;

                ck_assert_ptr_nonnull(name);
                ck_assert_msg(name[0], "code %u has an empty name", i);
                ck_assert_msg(strcmp(name, "none") && strcmp(name, "unknown"),
                              "code %u is named %s", i, name);
                ck_assert_msg(strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name),
                              "code %u: name %s is not [a-z0-9_]", i, name);
                for (unsigned j = 1; j < i; j++)
                        ck_assert_msg(strcmp(name, attest_code_name((enum attest_code)j)) != 0,
                                      "codes %u and %u are both named %s", j, i, name);
                ck_assert(attest_code_from_name(name, &back));
                ck_assert_int_eq(back, i);
        }
        ck_assert_str_eq(attest_code_name(AE_NONE), "none");
        ck_assert_str_eq(attest_code_name(AE__COUNT), "unknown");
}
END_TEST

START_TEST(test_every_code_has_a_valid_class)
{
        unsigned count[AEC__COUNT] = {0};

        for (unsigned i = 1; i < AE__COUNT; i++) {
                enum attest_class k = attest_code_class((enum attest_code)i);

                ck_assert_msg((unsigned)k < AEC__COUNT, "%s: class %d",
                              attest_code_name((enum attest_code)i), (int)k);
                count[k]++;
        }
        /* every class is used: a class nobody has is a leftover */
        for (unsigned k = 0; k < AEC__COUNT; k++)
                ck_assert_msg(count[k] > 0, "class %s has no code",
                              attest_class_name((enum attest_class)k));
}
END_TEST

START_TEST(test_class_names)
{
        for (unsigned k = 0; k < AEC__COUNT; k++) {
                const char *name = attest_class_name((enum attest_class)k);

                ck_assert_msg(name[0] && strcmp(name, "unknown"), "class %u is named %s", k, name);
                for (unsigned j = 0; j < k; j++)
                        ck_assert_str_ne(name, attest_class_name((enum attest_class)j));
        }
        ck_assert_str_eq(attest_class_name(AEC_CLIENT), "client");
        ck_assert_str_eq(attest_class_name(AEC_UNAUTHENTICATED), "unauthenticated");
        ck_assert_str_eq(attest_class_name(AEC_STALE), "stale");
        ck_assert_str_eq(attest_class_name(AEC_VERDICT), "verdict");
        ck_assert_str_eq(attest_class_name(AEC_SERVER), "server");
        ck_assert_str_eq(attest_class_name(AEC__COUNT), "unknown");
        ck_assert_str_eq(attest_class_name((enum attest_class) - 1), "unknown");
}
END_TEST

START_TEST(test_unset_and_out_of_range_codes_are_server)
{
        /* a failure nobody explained must change nothing: never a verdict */
        ck_assert_int_eq(attest_code_class(AE_NONE), AEC_SERVER);
        ck_assert_int_eq(attest_code_class(AE__COUNT), AEC_SERVER);
        ck_assert_int_eq(attest_code_class((enum attest_code) - 1), AEC_SERVER);
}
END_TEST

START_TEST(test_unauthenticated_codes_are_exactly_the_reference)
{
        unsigned n = 0;

        for (unsigned i = 1; i < AE__COUNT; i++) {
                enum attest_code c = (enum attest_code)i;
                bool want = IN(unauthenticated_ref, c);

                ck_assert_msg((attest_code_class(c) == AEC_UNAUTHENTICATED) == want,
                              "%s is %s, the reference says %s", attest_code_name(c),
                              attest_class_name(attest_code_class(c)),
                              want ? "unauthenticated" : "not unauthenticated");
                n += want;
        }
        ck_assert_uint_eq(n, sizeof(unauthenticated_ref) / sizeof(unauthenticated_ref[0]));
        for (size_t i = 0;
             i < sizeof(was_unauthenticated_now_server) / sizeof(was_unauthenticated_now_server[0]);
             i++)
                ck_assert_int_eq(attest_code_class(was_unauthenticated_now_server[i]), AEC_SERVER);
}
END_TEST

START_TEST(test_stale_codes_are_exactly_the_reference)
{
        for (unsigned i = 1; i < AE__COUNT; i++) {
                enum attest_code c = (enum attest_code)i;

                ck_assert_msg((attest_code_class(c) == AEC_STALE) == IN(stale_ref, c), "%s is %s",
                              attest_code_name(c), attest_class_name(attest_code_class(c)));
        }
}
END_TEST

/* The quote checks after the signature: the agent's own TPM said so, a verdict. */
START_TEST(test_authenticated_quote_failures_are_verdicts)
{
        static const enum attest_code v[] = {
                AE_QUOTE_PCR_BANK,
                AE_QUOTE_PCR_DIGEST,
                AE_QUOTE_PCR_MISSING,
                AE_QUOTE_PCR_SELECTION,
                AE_QUOTE_PCR_SELECTION_MALFORMED,
                AE_VERIFY_PCR10_NOT_QUOTED,
                AE_IMA_REPLAY_MISMATCH,
                AE_IMA_BANK_UNTRACKED,
                AE_BOOT_REPLAY_MISMATCH,
                AE_IMA_BOOT_AGGREGATE_MISMATCH,
        };

        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                ck_assert_msg(attest_code_class(v[i]) == AEC_VERDICT, "%s is %s",
                              attest_code_name(v[i]), attest_class_name(attest_code_class(v[i])));
}
END_TEST

/* What the API answers 4xx and 5xx today (daemon/api/api-*.c) agrees with the class. */
START_TEST(test_api_answers_agree_with_the_class)
{
        static const enum attest_code client[] = {
                AE_BAD_JSON,       AE_BAD_FIELD,         AE_UNAUTHORIZED,
                AE_FORBIDDEN,      AE_AGENT_NOT_FOUND,   AE_POLICY_INVALID,
                AE_NONCE_UNKNOWN,  AE_EVIDENCE_JSON,     AE_UNSUPPORTED_MEDIA_TYPE,
                AE_BODY_TOO_LARGE, AE_EK_CERT_UNTRUSTED, AE_CRED_BAD_EK,
        };
        static const enum attest_code server[] = {
                AE_INTERNAL,         AE_STORE_FAILED, AE_STORE_BUSY,       AE_STORE_UNAVAILABLE,
                AE_STORE_CORRUPT,    AE_DRAINING,     AE_EAR_UNCONFIGURED, AE_SERVER_BUSY,
                AE_EK_CA_UNREADABLE, AE_CRED_CRYPTO,
        };

        for (size_t i = 0; i < sizeof(client) / sizeof(client[0]); i++)
                ck_assert_msg(attest_code_class(client[i]) == AEC_CLIENT, "%s",
                              attest_code_name(client[i]));
        for (size_t i = 0; i < sizeof(server) / sizeof(server[0]); i++)
                ck_assert_msg(attest_code_class(server[i]) == AEC_SERVER, "%s",
                              attest_code_name(server[i]));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("err");
        TCase *tc = tcase_create("err");

        tcase_add_test(tc, test_every_code_has_a_unique_name_that_maps_back);
        tcase_add_test(tc, test_every_code_has_a_valid_class);
        tcase_add_test(tc, test_class_names);
        tcase_add_test(tc, test_unset_and_out_of_range_codes_are_server);
        tcase_add_test(tc, test_unauthenticated_codes_are_exactly_the_reference);
        tcase_add_test(tc, test_stale_codes_are_exactly_the_reference);
        tcase_add_test(tc, test_authenticated_quote_failures_are_verdicts);
        tcase_add_test(tc, test_api_answers_agree_with_the_class);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
