/* SPDX-License-Identifier: MIT */
/*
 * EAR (daemon/ear.c): the status and trustworthiness-vector mapping on hand-built verdicts (every
 * claim id), the appraisal's stored form and back (values never given refused), the claims-set,
 * eat_nonce checks, the key (P-256 only) with its RFC 7638 thumbprint, and ES256 signatures checked
 * with OpenSSL directly.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "daemon/ear.h"
#include "daemon/store/store.h"
#include "tests/unit/testutil.h"
#include "util/hex.h"

/* ---- hand-built verdicts ---- */

struct vc {
        enum claim_id id;
        const char *arg;
        enum claim_result result;
        bool anchored;
};

static void build(struct verdict *v, const struct vc *c, size_t n)
{
        verdict_init(v);
        snprintf(v->policy, sizeof(v->policy), "prod@3");
        if (n) {
                v->claims = calloc(n, sizeof(*v->claims));
                ck_assert_ptr_nonnull(v->claims);
        }
        v->n_claims = v->cap_claims = n;
        for (size_t i = 0; i < n; i++) {
                v->claims[i].id = c[i].id;
                snprintf(v->claims[i].arg, sizeof(v->claims[i].arg), "%s", c[i].arg);
                v->claims[i].result = c[i].result;
                v->claims[i].anchored = c[i].anchored;
                v->claims[i].entry = (int64_t)i + 1;
                if (c[i].result != CLAIM_PASS)
                        v->status = VERDICT_FAIL;
        }
}

static const struct vc all_anchored[] = {
        {CLAIM_SELINUX_ENFORCING, "", CLAIM_PASS, true},
        {CLAIM_SELINUX_POLICYCAP, "open_perms", CLAIM_PASS, true},
        {CLAIM_TPM_PCR, "sha256.0", CLAIM_PASS, true},
        {CLAIM_IMA_BOOT_AGGREGATE, "", CLAIM_PASS, true},
};

static void tv_eq(const struct ear_appraisal *a, int id, int conf, int exec, int hw)
{
        ck_assert_int_eq(a->tv[EAR_TV_INSTANCE_IDENTITY], id);
        ck_assert_int_eq(a->tv[EAR_TV_CONFIGURATION], conf);
        ck_assert_int_eq(a->tv[EAR_TV_EXECUTABLES], exec);
        ck_assert_int_eq(a->tv[EAR_TV_HARDWARE], hw);
}

START_TEST(test_status_affirming_when_every_claim_passes_anchored)
{
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        build(&v, all_anchored, ARRAY_SIZE(all_anchored));
        ear_appraise(&v, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "affirming");
        /* AR4SI: instance 2 recognised, configuration 2 approved, executables 3 approved boot,
         * hardware 2 genuine */
        tv_eq(&a, 2, 2, 3, 2);
}
END_TEST

START_TEST(test_status_warning_when_a_passing_claim_is_unanchored)
{
        struct vc c[ARRAY_SIZE(all_anchored) + 1];
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        memcpy(c, all_anchored, sizeof(all_anchored));
        c[ARRAY_SIZE(all_anchored)] = (struct vc){CLAIM_KERNEL_VERSION, "", CLAIM_PASS, false};
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "warning");
        /* configuration 36: security-relevant configuration not available to the verifier
         * (only the agent's word for it) */
        tv_eq(&a, 2, 36, 3, 2);
}
END_TEST

START_TEST(test_status_contraindicated_on_a_failed_or_missing_claim)
{
        struct vc c[ARRAY_SIZE(all_anchored)];
        _cleanup_(verdict_done) struct verdict v = {0};
        _cleanup_(verdict_done) struct verdict w = {0};
        _cleanup_(verdict_done) struct verdict u = {0};
        struct ear_appraisal a;

        memcpy(c, all_anchored, sizeof(c));
        c[2].result = CLAIM_FAIL; /* a PCR differs */
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "contraindicated");
        tv_eq(&a, 2, 2, 3, 96);

        memcpy(c, all_anchored, sizeof(c));
        c[0].result = CLAIM_MISSING; /* nothing to judge fails too */
        c[3].result = CLAIM_FAIL;
        build(&w, c, ARRAY_SIZE(c));
        ear_appraise(&w, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "contraindicated");
        tv_eq(&a, 2, 96, 96, 2);

        /* a failing verdict whose claims all pass (cannot be made today) is still refused */
        build(&u, all_anchored, ARRAY_SIZE(all_anchored));
        u.status = VERDICT_FAIL;
        ear_appraise(&u, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "contraindicated");
}
END_TEST

START_TEST(test_status_none_when_nothing_was_checked)
{
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        build(&v, NULL, 0);
        ear_appraise(&v, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "none");
        tv_eq(&a, 2, 0, 0, 0);
}
END_TEST

START_TEST(test_unverified_round_is_contraindicated_crypto_failed)
{
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        build(&v, NULL, 0);
        v.status = VERDICT_FAIL;
        ear_appraise(&v, false, &a);
        ck_assert_str_eq(ear_status_name(a.status), "contraindicated");
        tv_eq(&a, 99, 99, 99, 99);
}
END_TEST

/* ---- categories (AR4SI; docs/ear.md "Categories") ---- */

START_TEST(test_every_claim_id_has_its_category)
{
        static const struct {
                enum claim_id id;
                enum ear_tv t;
        } want[] = {
                {CLAIM_SELINUX_ENFORCING, EAR_TV_CONFIGURATION},
                {CLAIM_SELINUX_POLICYCAP, EAR_TV_CONFIGURATION},
                {CLAIM_TRUSTED_KEYS_SOURCE, EAR_TV_CONFIGURATION},
                {CLAIM_CFI_ENABLED, EAR_TV_CONFIGURATION},
                {CLAIM_KERNEL_VERSION, EAR_TV_CONFIGURATION},
                {CLAIM_TPM_PCR, EAR_TV_HARDWARE},
                {CLAIM_IMA_BOOT_AGGREGATE, EAR_TV_EXECUTABLES},
                {CLAIM_IMA_RUNTIME, EAR_TV_EXECUTABLES},
                {CLAIM_BOOT_PCRS_REPLAY, EAR_TV_HARDWARE},
                {CLAIM_BOOT_SECUREBOOT, EAR_TV_HARDWARE},
                {CLAIM_BOOT_VARIABLE, EAR_TV_HARDWARE},
                {CLAIM_BOOT_BOOTLOADER, EAR_TV_EXECUTABLES},
                {CLAIM_BOOT_KERNEL, EAR_TV_EXECUTABLES},
                {CLAIM_BOOT_SEPARATORS, EAR_TV_HARDWARE},
                {CLAIM_BOOT_STARTUP_LOCALITY, EAR_TV_HARDWARE},
        };

        /* a claim added without a row would land in instance-identity (the table's zero) */
        for (int i = 0; i < CLAIM__COUNT; i++)
                ck_assert_msg(ear_claim_category((enum claim_id)i) != EAR_TV_INSTANCE_IDENTITY,
                              "%s has no category", claim_id_name((enum claim_id)i));
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                ck_assert_msg(ear_claim_category(want[i].id) == want[i].t, "%s: %s",
                              claim_id_name(want[i].id),
                              ear_tv_name(ear_claim_category(want[i].id)));
}
END_TEST

/* One claim added to the all-anchored set, with result r: the vector (id, conf, exec, hw). */
static void one_more(enum claim_id id, const char *arg, enum claim_result r, int conf, int exec,
                     int hw)
{
        struct vc c[ARRAY_SIZE(all_anchored) + 1];
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        memcpy(c, all_anchored, sizeof(all_anchored));
        c[ARRAY_SIZE(all_anchored)] = (struct vc){id, arg, r, true};
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        ck_assert_msg(a.tv[EAR_TV_CONFIGURATION] == conf && a.tv[EAR_TV_EXECUTABLES] == exec &&
                              a.tv[EAR_TV_HARDWARE] == hw,
                      "%s %s: configuration %d executables %d hardware %d", claim_id_name(id),
                      claim_result_name(r), a.tv[EAR_TV_CONFIGURATION], a.tv[EAR_TV_EXECUTABLES],
                      a.tv[EAR_TV_HARDWARE]);
        ck_assert_int_eq(a.tv[EAR_TV_INSTANCE_IDENTITY], 2);
        ck_assert_str_eq(ear_status_name(a.status),
                         r == CLAIM_PASS ? "affirming" : "contraindicated");
}

START_TEST(test_runtime_claim_is_executables_not_configuration)
{
        /* a file outside the allowlist: executables 96 contraindicated run-time objects, the
         * configuration still approved (the old mapping gave configuration 96, executables 3) */
        one_more(CLAIM_IMA_RUNTIME, "", CLAIM_FAIL, 2, 96, 2);
        /* ima.runtime judged and passed: approved during and after boot (2, not 3) */
        one_more(CLAIM_IMA_RUNTIME, "", CLAIM_PASS, 2, 2, 2);
        /* nothing to judge (no log entries for it) fails the category too */
        one_more(CLAIM_IMA_RUNTIME, "", CLAIM_MISSING, 2, 96, 2);
}
END_TEST

START_TEST(test_boot_claims_fall_in_their_categories)
{
        one_more(CLAIM_BOOT_BOOTLOADER, "0", CLAIM_FAIL, 2, 96, 2);
        one_more(CLAIM_BOOT_KERNEL, "", CLAIM_FAIL, 2, 96, 2);
        one_more(CLAIM_BOOT_KERNEL, "", CLAIM_PASS, 2, 3, 2);
        one_more(CLAIM_BOOT_SECUREBOOT, "", CLAIM_FAIL, 2, 3, 96);
        one_more(CLAIM_BOOT_VARIABLE, "PK", CLAIM_MISSING, 2, 3, 96);
        one_more(CLAIM_BOOT_PCRS_REPLAY, "", CLAIM_FAIL, 2, 3, 96);
        one_more(CLAIM_BOOT_SEPARATORS, "", CLAIM_FAIL, 2, 3, 96);
        one_more(CLAIM_BOOT_STARTUP_LOCALITY, "", CLAIM_MISSING, 2, 3, 96);
        one_more(CLAIM_BOOT_SECUREBOOT, "", CLAIM_PASS, 2, 3, 2);
        /* and the kernel's own settings stay configuration */
        one_more(CLAIM_CFI_ENABLED, "", CLAIM_MISSING, 96, 3, 2);
        one_more(CLAIM_TRUSTED_KEYS_SOURCE, "", CLAIM_FAIL, 96, 3, 2);
}
END_TEST

START_TEST(test_boot_claims_with_arguments_fall_in_their_categories)
{
        static const struct vc c[] = {
                {CLAIM_BOOT_VARIABLE, "PK", CLAIM_FAIL, true},
                {CLAIM_BOOT_BOOTLOADER, "1", CLAIM_MISSING, true},
        };
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        ck_assert_str_eq(ear_status_name(a.status), "contraindicated");
        tv_eq(&a, 2, 0, 96, 96);
}
END_TEST

/*
 * Every claim id of the category table, alone in a verdict: its category (written out here, not
 * read from the table) takes the affirming, warning and contraindicated values, the others stay
 * 0 (no claim).
 */
START_TEST(test_every_claim_id_alone_appraises_its_category)
{
        static const enum ear_tv want[CLAIM__COUNT] = {
                [CLAIM_SELINUX_INITIALIZED] = EAR_TV_CONFIGURATION,
                [CLAIM_SELINUX_ENFORCING] = EAR_TV_CONFIGURATION,
                [CLAIM_SELINUX_CHECKREQPROT] = EAR_TV_CONFIGURATION,
                [CLAIM_SELINUX_POLICYCAP] = EAR_TV_CONFIGURATION,
                [CLAIM_SELINUX_NEVER_PERMISSIVE] = EAR_TV_CONFIGURATION,
                [CLAIM_SELINUX_POLICY_SHA256] = EAR_TV_CONFIGURATION,
                [CLAIM_TRUSTED_KEYS_SOURCE] = EAR_TV_CONFIGURATION,
                [CLAIM_TRUSTED_KEYS_RNG] = EAR_TV_CONFIGURATION,
                [CLAIM_TRUSTED_KEYS_REQUESTED] = EAR_TV_CONFIGURATION,
                [CLAIM_TRUSTED_KEYS_ANCHORED] = EAR_TV_CONFIGURATION,
                [CLAIM_CFI_ENABLED] = EAR_TV_CONFIGURATION,
                [CLAIM_CFI_MODE] = EAR_TV_CONFIGURATION,
                [CLAIM_CFI_PERMISSIVE] = EAR_TV_CONFIGURATION,
                [CLAIM_CFI_ANCHORED] = EAR_TV_CONFIGURATION,
                [CLAIM_KERNEL_VERSION] = EAR_TV_CONFIGURATION,
                [CLAIM_KERNEL_ANCHORED] = EAR_TV_CONFIGURATION,
                [CLAIM_TPM_PCR] = EAR_TV_HARDWARE,
                [CLAIM_IMA_BOOT_AGGREGATE] = EAR_TV_EXECUTABLES,
                [CLAIM_IMA_RUNTIME] = EAR_TV_EXECUTABLES,
                [CLAIM_BOOT_PCRS_REPLAY] = EAR_TV_HARDWARE,
                [CLAIM_BOOT_SECUREBOOT] = EAR_TV_HARDWARE,
                [CLAIM_BOOT_VARIABLE] = EAR_TV_HARDWARE,
                [CLAIM_BOOT_BOOTLOADER] = EAR_TV_EXECUTABLES,
                [CLAIM_BOOT_KERNEL] = EAR_TV_EXECUTABLES,
                [CLAIM_BOOT_SEPARATORS] = EAR_TV_HARDWARE,
                [CLAIM_BOOT_STARTUP_LOCALITY] = EAR_TV_HARDWARE,
        };
        /* affirming, warning (unanchored), contraindicated (fail; missing alike) */
        static const int values[EAR_TV__COUNT][3] = {
                [EAR_TV_CONFIGURATION] = {2, 36, 96},
                [EAR_TV_EXECUTABLES] = {3, 33, 96},
                [EAR_TV_HARDWARE] = {2, 32, 96},
        };
        static const struct {
                enum claim_result r;
                bool anchored;
                int col;
                const char *status;
        } cases[] = {
                {CLAIM_PASS, true, 0, "affirming"},
                {CLAIM_PASS, false, 1, "warning"},
                {CLAIM_FAIL, true, 2, "contraindicated"},
                {CLAIM_MISSING, true, 2, "contraindicated"},
        };

        for (int id = 0; id < CLAIM__COUNT; id++) {
                /* every id has a row above (instance-identity is no claim's category) */
                ck_assert_msg(want[id] != EAR_TV_INSTANCE_IDENTITY, "%s: no row",
                              claim_id_name((enum claim_id)id));
                for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                        struct vc c = {(enum claim_id)id, "", cases[k].r, cases[k].anchored};
                        _cleanup_(verdict_done) struct verdict v = {0};
                        struct ear_appraisal a;
                        int expect = values[want[id]][cases[k].col];

                        /* ima.runtime judged and passed: approved during and after boot */
                        if (id == CLAIM_IMA_RUNTIME && cases[k].col == 0)
                                expect = 2;
                        build(&v, &c, 1);
                        ear_appraise(&v, true, &a);
                        ck_assert_str_eq(ear_status_name(a.status), cases[k].status);
                        ck_assert_int_eq(a.tv[EAR_TV_INSTANCE_IDENTITY], 2);
                        for (int t = EAR_TV_INSTANCE_IDENTITY + 1; t < EAR_TV__COUNT; t++)
                                ck_assert_msg(a.tv[t] == (t == (int)want[id] ? expect : 0),
                                              "%s %s anchored %d: %s %d",
                                              claim_id_name((enum claim_id)id),
                                              claim_result_name(cases[k].r), cases[k].anchored,
                                              ear_tv_name((enum ear_tv)t), a.tv[t]);
                }
        }
}
END_TEST

/* ---- the appraisal as the results table keeps it ---- */

static void round_trip(const struct ear_appraisal *a, int64_t tier)
{
        struct store_appraisal s;
        struct ear_appraisal b;
        struct attest_err err = {0};

        ear_appraisal_to_store(a, &s);
        ck_assert_int_eq(s.status, tier);
        for (int t = 0; t < EAR_TV__COUNT; t++)
                ck_assert_int_eq(s.tv[t], a->tv[t]);
        memset(&b, 0xa5, sizeof(b));
        ck_assert_msg(ear_appraisal_from_store(&s, &b, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(b.status, a->status);
        for (int t = 0; t < EAR_TV__COUNT; t++)
                ck_assert_int_eq(b.tv[t], a->tv[t]);
}

/* Every appraisal ear_appraise() makes is stored as AR4SI tiers and reads back the same. */
START_TEST(test_appraisal_round_trips_through_the_stored_form)
{
        struct vc c[ARRAY_SIZE(all_anchored) + 1];
        _cleanup_(verdict_done) struct verdict v = {0};
        struct ear_appraisal a;

        build(&v, all_anchored, ARRAY_SIZE(all_anchored));
        ear_appraise(&v, true, &a);
        round_trip(&a, 2); /* affirming */
        verdict_done(&v);
        memcpy(c, all_anchored, sizeof(all_anchored));
        c[ARRAY_SIZE(all_anchored)] = (struct vc){CLAIM_IMA_RUNTIME, "", CLAIM_PASS, false};
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        round_trip(&a, 32); /* warning, executables 33 */
        ck_assert_int_eq(a.tv[EAR_TV_EXECUTABLES], 33);
        verdict_done(&v);
        c[ARRAY_SIZE(all_anchored)] = (struct vc){CLAIM_IMA_RUNTIME, "", CLAIM_PASS, true};
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        round_trip(&a, 2); /* executables 2 */
        ck_assert_int_eq(a.tv[EAR_TV_EXECUTABLES], 2);
        verdict_done(&v);
        c[0].result = CLAIM_FAIL;
        build(&v, c, ARRAY_SIZE(c));
        ear_appraise(&v, true, &a);
        round_trip(&a, 96); /* contraindicated */
        verdict_done(&v);
        build(&v, NULL, 0);
        ear_appraise(&v, true, &a);
        round_trip(&a, 0); /* none: nothing checked */
        v.status = VERDICT_FAIL;
        ear_appraise(&v, false, &a);
        round_trip(&a, 96); /* not verified: 99s */
        ck_assert_int_eq(a.tv[EAR_TV_HARDWARE], 99);
        v.status = VERDICT_ERROR;
        ear_appraise(&v, true, &a);
        round_trip(&a, 0); /* not judged: -1s */
        ck_assert_int_eq(a.tv[EAR_TV_CONFIGURATION], -1);
}
END_TEST

/* A stored value ear_appraise() never gives is a corrupt row: refused, never defaulted. */
START_TEST(test_stored_appraisal_refuses_values_out_of_range)
{
        static const int64_t bad_status[] = {1, 3, 31, 33, 95, 97, -1, 99, INT64_MAX, INT64_MIN};
        static const struct {
                enum ear_tv t;
                int64_t v;
        } bad_tv[] = {
                {EAR_TV_INSTANCE_IDENTITY, 3},   {EAR_TV_INSTANCE_IDENTITY, 96},
                {EAR_TV_CONFIGURATION, 3},       {EAR_TV_CONFIGURATION, 33},
                {EAR_TV_CONFIGURATION, 32},      {EAR_TV_EXECUTABLES, 36},
                {EAR_TV_EXECUTABLES, 32},        {EAR_TV_HARDWARE, 3},
                {EAR_TV_HARDWARE, 36},           {EAR_TV_HARDWARE, -2},
                {EAR_TV_HARDWARE, 100},          {EAR_TV_HARDWARE, 128},
                {EAR_TV_EXECUTABLES, 1LL << 32}, {EAR_TV_CONFIGURATION, INT64_MIN},
        };
        const struct store_appraisal good = {2, {2, 2, 3, 2}};
        struct ear_appraisal a = {EAR_WARNING, {1, 1, 1, 1}};

        for (size_t i = 0; i < ARRAY_SIZE(bad_status); i++) {
                struct store_appraisal s = good;
                struct attest_err err = {0};

                s.status = bad_status[i];
                ck_assert_int_eq(ear_appraisal_from_store(&s, &a, &err), -EBADMSG);
                ck_assert_int_eq(err.code, AE_STORE_CORRUPT);
                ck_assert_ptr_nonnull(strstr(err.msg, "ear.status"));
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad_tv); i++) {
                struct store_appraisal s = good;
                struct attest_err err = {0};

                s.tv[bad_tv[i].t] = bad_tv[i].v;
                ck_assert_msg(ear_appraisal_from_store(&s, &a, &err) == -EBADMSG,
                              "%s %" PRId64 " accepted", ear_tv_name(bad_tv[i].t), bad_tv[i].v);
                ck_assert_int_eq(err.code, AE_STORE_CORRUPT);
                ck_assert_ptr_nonnull(strstr(err.msg, ear_tv_name(bad_tv[i].t)));
        }
        /* nothing written on failure */
        ck_assert_int_eq(a.status, EAR_WARNING);
        ck_assert_int_eq(a.tv[0], 1);
        /* and every value a category can have is taken */
        for (int64_t v = -1; v <= 127; v++) {
                struct store_appraisal s = good;
                bool any = v == -1 || v == 0 || v == 99;

                s.tv[EAR_TV_HARDWARE] = v;
                ck_assert_int_eq(ear_appraisal_from_store(&s, &a, NULL) == 0,
                                 any || v == 2 || v == 32 || v == 96);
                s = good;
                s.tv[EAR_TV_EXECUTABLES] = v;
                ck_assert_int_eq(ear_appraisal_from_store(&s, &a, NULL) == 0,
                                 any || v == 2 || v == 3 || v == 33 || v == 96);
        }
}
END_TEST

/* ---- claims-set and nonce ---- */

START_TEST(test_claims_set_has_the_ear_shape)
{
        struct ear_appraisal a = {EAR_WARNING, {2, 36, 3, 2}};
        struct ear_input in = {.agent = "web-1",
                               .policy = "prod@3",
                               .build = "attestd 0.1",
                               .nonce = "AAAAAAAAAAA",
                               .iat = 1764700000,
                               .result_id = 42,
                               .result_time = 1764699999123,
                               .a = &a};
        json_auto_t *o = NULL;
        _cleanup_free_ char *s = NULL;

        ck_assert_int_eq(ear_claims(&in, &o), 0);
        s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        ck_assert_str_eq(
                s, "{\"ear.verifier-id\":{\"build\":\"attestd 0.1\",\"developer\":\"attestd\"},"
                   "\"eat_nonce\":\"AAAAAAAAAAA\","
                   "\"eat_profile\":\"tag:github.com,2023:veraison/ear\",\"iat\":1764700000,"
                   "\"submods\":{\"web-1\":{\"attestd.result\":{\"id\":42,\"time\":1764699999},"
                   "\"ear.appraisal-policy-id\":\"prod@3\",\"ear.status\":\"warning\","
                   "\"ear.trustworthiness-vector\":{\"configuration\":36,\"executables\":3,"
                   "\"hardware\":2,\"instance-identity\":2}}}}");
        json_decref(TAKE_PTR(o));
        free(TAKE_PTR(s));
        in.nonce = NULL;
        in.policy = NULL;
        ck_assert_int_eq(ear_claims(&in, &o), 0);
        ck_assert_ptr_null(json_object_get(o, "eat_nonce"));
        ck_assert_ptr_null(json_object_get(json_object_get(json_object_get(o, "submods"), "web-1"),
                                           "ear.appraisal-policy-id"));
}
END_TEST

START_TEST(test_nonce_is_base64url_of_8_to_64_bytes)
{
        char *s;

        ck_assert(ear_nonce_valid("AAAAAAAAAAA"));  /* 11 characters: 8 bytes */
        ck_assert(!ear_nonce_valid("AAAAAAAAAA"));  /* 10: 7 bytes */
        ck_assert(ear_nonce_valid("AAAAAAAAAAAA")); /* 12: 9 bytes */
        ck_assert(!ear_nonce_valid("AAAAAAAAA"));   /* 9 = 1 mod 4: no byte count */
        ck_assert(!ear_nonce_valid("AAAAAAAAAA=="));
        ck_assert(!ear_nonce_valid("AAAAAAAA+AAA"));
        ck_assert(!ear_nonce_valid("AAAAAAAA/AAA"));
        ck_assert(ear_nonce_valid("AAAA-_AAAAAA"));
        s = filled(86, 'A'); /* 64 bytes */
        ck_assert(ear_nonce_valid(s));
        free(s);
        s = filled(87, 'A'); /* 65 bytes */
        ck_assert(!ear_nonce_valid(s));
        free(s);
        s = filled(88, 'A');
        ck_assert(!ear_nonce_valid(s));
        free(s);
}
END_TEST

/* ---- key and signature ---- */

static char *pem_of(EVP_PKEY *k, size_t *ret_len)
{
        BIO *b = BIO_new(BIO_s_mem());
        char *p, *s;
        long n;

        ck_assert_ptr_nonnull(b);
        ck_assert(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL));
        n = BIO_get_mem_data(b, &p);
        s = malloc((size_t)n + 1);
        ck_assert_ptr_nonnull(s);
        memcpy(s, p, (size_t)n);
        s[n] = '\0';
        *ret_len = (size_t)n;
        BIO_free(b);
        return s;
}

static struct ear_signer *signer_of(EVP_PKEY *k)
{
        struct ear_signer *s = NULL;
        struct attest_err err = {0};
        size_t n;
        char *pem = pem_of(k, &n);

        ck_assert_msg(ear_signer_new(pem, n, &s, &err) == 0, "%s", err.msg);
        free(pem);
        return s;
}

static size_t unb64url(const char *s, size_t n, uint8_t *out, size_t max)
{
        char t[2048];
        size_t k = 0, got = 0;

        ck_assert_uint_lt(n + 4, sizeof(t));
        for (size_t i = 0; i < n; i++)
                t[k++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
        while (k % 4)
                t[k++] = '=';
        ck_assert_int_eq(b64_decode(t, k, out, max, &got), 0);
        return got;
}

/* ES256 over "header.payload" of tok with key k's public half, by OpenSSL (not libjwt). */
static bool es256_ok(const char *tok, EVP_PKEY *k)
{
        const char *d1 = strchr(tok, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        uint8_t rs[64], der[80], *p = der;
        ECDSA_SIG *sig = ECDSA_SIG_new();
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int dlen, ok;

        ck_assert_ptr_nonnull(d2);
        ck_assert_uint_eq(unb64url(d2 + 1, strlen(d2 + 1), rs, sizeof(rs)), 64);
        ck_assert(ECDSA_SIG_set0(sig, BN_bin2bn(rs, 32, NULL), BN_bin2bn(rs + 32, 32, NULL)));
        dlen = i2d_ECDSA_SIG(sig, &p);
        ck_assert_int_gt(dlen, 0);
        ck_assert(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k));
        ok = EVP_DigestVerify(ctx, der, (size_t)dlen, (const uint8_t *)tok, (size_t)(d2 - tok));
        EVP_MD_CTX_free(ctx);
        ECDSA_SIG_free(sig);
        return ok == 1;
}

START_TEST(test_sign_es256_verifies_with_the_key_only)
{
        EVP_PKEY *k = EVP_EC_gen("P-256"), *other = EVP_EC_gen("P-256");
        struct ear_signer *s;
        json_auto_t *claims = json_pack("{s:s, s:i}", "eat_profile", EAR_PROFILE, "iat", 1);
        json_auto_t *hdr = NULL, *payload = NULL;
        _cleanup_free_ char *tok = NULL;
        uint8_t buf[512];
        size_t n;
        const char *d1;

        ck_assert_ptr_nonnull(k);
        ck_assert_ptr_nonnull(other);
        s = signer_of(k);
        ck_assert_int_eq(ear_sign(s, claims, &tok), 0);
        ck_assert(es256_ok(tok, k));
        ck_assert(!es256_ok(tok, other));
        /* the header names ES256 and the kid; the payload is the claims-set */
        d1 = strchr(tok, '.');
        n = unb64url(tok, (size_t)(d1 - tok), buf, sizeof(buf) - 1);
        hdr = json_loadb((const char *)buf, n, 0, NULL);
        ck_assert_ptr_nonnull(hdr);
        ck_assert_str_eq(json_string_value(json_object_get(hdr, "alg")), "ES256");
        ck_assert_str_eq(json_string_value(json_object_get(hdr, "kid")), ear_signer_kid(s));
        n = unb64url(d1 + 1, (size_t)(strchr(d1 + 1, '.') - d1 - 1), buf, sizeof(buf) - 1);
        payload = json_loadb((const char *)buf, n, 0, NULL);
        ck_assert(json_equal(payload, claims));
        /* a flipped payload character: the signature no longer holds */
        tok[d1 - tok + 3] ^= 0x01;
        ck_assert(!es256_ok(tok, k));
        ear_signer_free(s);
        EVP_PKEY_free(k);
        EVP_PKEY_free(other);
}
END_TEST

START_TEST(test_kid_is_the_rfc7638_thumbprint_and_jwks_has_the_point)
{
        EVP_PKEY *k = EVP_EC_gen("P-256");
        struct ear_signer *s = signer_of(k);
        BIGNUM *x = NULL, *y = NULL;
        uint8_t xb[32], yb[32], got[32], md[32];
        char canon[256], want[64], tmp[64];
        json_auto_t *jwks = NULL;
        json_t *key;
        size_t k64 = 0;

        ck_assert(EVP_PKEY_get_bn_param(k, "qx", &x) && EVP_PKEY_get_bn_param(k, "qy", &y));
        ck_assert_int_eq(BN_bn2binpad(x, xb, 32), 32);
        ck_assert_int_eq(BN_bn2binpad(y, yb, 32), 32);
        ck_assert_int_eq(ear_signer_jwks(s, &jwks), 0);
        ck_assert_uint_eq(json_array_size(json_object_get(jwks, "keys")), 1);
        key = json_array_get(json_object_get(jwks, "keys"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(key, "kty")), "EC");
        ck_assert_str_eq(json_string_value(json_object_get(key, "crv")), "P-256");
        ck_assert_str_eq(json_string_value(json_object_get(key, "alg")), "ES256");
        ck_assert_str_eq(json_string_value(json_object_get(key, "kid")), ear_signer_kid(s));
        ck_assert_uint_eq(unb64url(json_string_value(json_object_get(key, "x")),
                                   json_string_length(json_object_get(key, "x")), got, 32),
                          32);
        ck_assert_mem_eq(got, xb, 32);
        ck_assert_uint_eq(unb64url(json_string_value(json_object_get(key, "y")),
                                   json_string_length(json_object_get(key, "y")), got, 32),
                          32);
        ck_assert_mem_eq(got, yb, 32);
        /* RFC 7638 §3.2: {"crv","kty","x","y"} in that order, no white space, SHA-256 */
        snprintf(canon, sizeof(canon),
                 "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}",
                 json_string_value(json_object_get(key, "x")),
                 json_string_value(json_object_get(key, "y")));
        ck_assert(EVP_Digest(canon, strlen(canon), md, NULL, EVP_sha256(), NULL));
        b64_encode(md, 32, tmp);
        for (size_t i = 0; tmp[i] && tmp[i] != '='; i++)
                want[k64++] = tmp[i] == '+' ? '-' : tmp[i] == '/' ? '_' : tmp[i];
        want[k64] = '\0';
        ck_assert_str_eq(ear_signer_kid(s), want);
        ck_assert_uint_eq(strlen(want), 43);
        BN_free(x);
        BN_free(y);
        ear_signer_free(s);
        EVP_PKEY_free(k);
}
END_TEST

START_TEST(test_key_other_than_p256_is_refused)
{
        EVP_PKEY *keys[] = {EVP_EC_gen("P-384"), EVP_RSA_gen(2048),
                            EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")};
        static const char *const why[] = {"secp384r1", "RSA", "ED25519"};
        static const char garbage[] =
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        struct ear_signer *s = NULL;
        struct attest_err err = {0};

        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                size_t n;
                char *pem;

                ck_assert_ptr_nonnull(keys[i]);
                pem = pem_of(keys[i], &n);
                ck_assert_int_eq(ear_signer_new(pem, n, &s, &err), -EINVAL);
                ck_assert_int_eq(err.code, AE_EAR_KEY);
                ck_assert_msg(strstr(err.msg, why[i]), "%s", err.msg);
                ck_assert_ptr_null(s);
                free(pem);
                EVP_PKEY_free(keys[i]);
        }
        ck_assert_int_eq(ear_signer_new(LIT(garbage), &s, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_EAR_KEY);
        ck_assert_ptr_null(s);
        ck_assert_ptr_null(ear_signer_free(NULL));
}
END_TEST

static Suite *ear_suite(void)
{
        Suite *s = suite_create("ear");
        TCase *map = tcase_create("mapping"), *key = tcase_create("key");

        tcase_add_test(map, test_status_affirming_when_every_claim_passes_anchored);
        tcase_add_test(map, test_status_warning_when_a_passing_claim_is_unanchored);
        tcase_add_test(map, test_status_contraindicated_on_a_failed_or_missing_claim);
        tcase_add_test(map, test_status_none_when_nothing_was_checked);
        tcase_add_test(map, test_unverified_round_is_contraindicated_crypto_failed);
        tcase_add_test(map, test_every_claim_id_has_its_category);
        tcase_add_test(map, test_runtime_claim_is_executables_not_configuration);
        tcase_add_test(map, test_boot_claims_fall_in_their_categories);
        tcase_add_test(map, test_boot_claims_with_arguments_fall_in_their_categories);
        tcase_add_test(map, test_every_claim_id_alone_appraises_its_category);
        tcase_add_test(map, test_appraisal_round_trips_through_the_stored_form);
        tcase_add_test(map, test_stored_appraisal_refuses_values_out_of_range);
        tcase_add_test(map, test_claims_set_has_the_ear_shape);
        tcase_add_test(map, test_nonce_is_base64url_of_8_to_64_bytes);
        tcase_add_test(key, test_sign_es256_verifies_with_the_key_only);
        tcase_add_test(key, test_kid_is_the_rfc7638_thumbprint_and_jwks_has_the_point);
        tcase_add_test(key, test_key_other_than_p256_is_refused);
        tcase_set_timeout(key, 30);
        suite_add_tcase(s, map);
        suite_add_tcase(s, key);
        return s;
}

int main(void)
{
        return tu_run(ear_suite());
}
