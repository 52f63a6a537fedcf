/* SPDX-License-Identifier: MIT */
/*
 * The runtime results carried between rounds (policy/runtime-state.h): their stored form inside
 * the replay state (bytes written before the move read back the same), every truncation and
 * hostile field refused, the cap; the round's decision on a new policy version; the observer's
 * reset on a reboot.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>

#include "policy/runtime-state.h"
#include "tests/unit/testutil.h"

/* A valid replay state: one bank, one PCR, 40 entries, no claims. */
static void replay(struct replay_state *s)
{
        replay_state_init(s);
        s->valid = true;
        s->reset_count = 3;
        s->restart_count = 1;
        s->clock = 123456;
        s->entries = 40;
        s->banks = BANK_MASK(BANK_SHA256);
        s->used = 1u << 10;
        memset(s->pcr[BANK_SHA256][10], 0x11, 32);
}

static void results(struct rt_state *s)
{
        rt_state_init(s);
        snprintf(s->ref, sizeof(s->ref), "prod@3");
        s->passed = 20;
        s->failed = 3;
        s->excluded = 5;
        s->signed_ok = 4;
        s->violations = 2;
        s->nfail = 2;
        s->fail[0] = (struct rt_failure){.entry = 7,
                                         .reason = RT_REASON_NOT_ALLOWED,
                                         .algo = 4,
                                         .digest_len = 32,
                                         .path_len = 6};
        memset(s->fail[0].digest, 0xab, 32);
        memcpy(s->fail[0].path, "/bin/x", 7);
        s->fail[1] = (struct rt_failure){.entry = 9,
                                         .reason = RT_REASON_VIOLATION,
                                         .algo = 4,
                                         .digest_len = 0,
                                         .path_cut = true,
                                         .path_len = 2};
        memcpy(s->fail[1].path, "/v", 3);
}

/*
 * replay() with results(), as attestd stored it before the runtime results moved out of
 * verify/replay-state.c (written by that encoder): existing databases hold these bytes.
 */
static const uint8_t stored_before[] = {
        0x61, 0x72, 0x73, 0x02, 0x01, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40, 0xe2,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x04, 0x00, 0x00, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x52, 0x72, 0x00, 0x00, 0x00, 0x06, 0x70, 0x72, 0x6f, 0x64, 0x40, 0x33, 0x14, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x04, 0x20, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
        0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
        0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0x00, 0x06, 0x2f, 0x62, 0x69, 0x6e, 0x2f, 0x78,
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x00, 0x01, 0x02, 0x2f, 0x76,
};
/* where the 'R' section starts in it, and its body */
#define R_AT 76
#define BODY_AT (R_AT + 5)

static uint8_t *enc(const struct replay_state *s, const struct rt_state *rt, size_t *n)
{
        uint8_t *b = NULL;

        ck_assert_int_eq(rt_state_stored_encode(s, rt, &b, n), 0);
        return b;
}

START_TEST(test_state_stored_before_the_move_reads_back_the_same)
{
        static struct rt_state want, got;
        struct replay_state s, back;
        struct attest_err err = {0};
        uint8_t *b;
        size_t n;

        ck_assert_uint_eq(stored_before[R_AT], 'R');
        ck_assert_msg(rt_state_stored_decode(stored_before, sizeof(stored_before), &back, &got,
                                             &err) == 0,
                      "%s", err.msg);
        results(&want);
        ck_assert_str_eq(got.ref, "prod@3");
        ck_assert_uint_eq(got.passed, 20);
        ck_assert_uint_eq(got.failed, 3);
        ck_assert_uint_eq(got.excluded, 5);
        ck_assert_uint_eq(got.signed_ok, 4);
        ck_assert_uint_eq(got.violations, 2);
        ck_assert_uint_eq(got.nfail, 2);
        ck_assert_int_eq(memcmp(&got.fail[0], &want.fail[0], sizeof(want.fail[0])), 0);
        ck_assert_int_eq(memcmp(&got.fail[1], &want.fail[1], sizeof(want.fail[1])), 0);
        ck_assert_uint_eq(back.entries, 40);
        /* and the same state is written to the same bytes */
        replay(&s);
        b = enc(&s, &want, &n);
        ck_assert_uint_eq(n, sizeof(stored_before));
        ck_assert_mem_eq(b, stored_before, n);
        free(b);
}
END_TEST

START_TEST(test_round_trip_and_no_section_without_a_ref)
{
        static struct rt_state rt, back;
        struct replay_state s, sback;
        struct attest_err err = {0};
        size_t n, plain;
        uint8_t *b;

        replay(&s);
        /* no ref: no section, the results read back empty */
        rt_state_init(&rt);
        free(enc(&s, &rt, &plain));
        ck_assert_int_eq(replay_state_encode(&s, NULL, 0, &b, &n), 0);
        ck_assert_uint_eq(n, plain);
        free(b);
        memset(&back, 0x5a, sizeof(back));
        b = enc(&s, &rt, &n);
        ck_assert_int_eq(rt_state_stored_decode(b, n, &sback, &back, &err), 0);
        ck_assert_str_eq(back.ref, "");
        ck_assert_uint_eq(back.passed + back.failed + back.nfail, 0);
        free(b);
        /* a state with nothing known carries no results */
        results(&rt);
        replay_state_init(&s);
        ck_assert_int_eq(rt_state_stored_encode(&s, &rt, &b, &n), -EINVAL);
        /* fail[] past nfail is neither read nor written */
        replay(&s);
        memset(&rt.fail[2], 0x77, sizeof(rt.fail[2]));
        b = enc(&s, &rt, &n);
        memset(&back, 0x5a, sizeof(back));
        ck_assert_int_eq(rt_state_stored_decode(b, n, &sback, &back, &err), 0);
        ck_assert_uint_eq(((uint8_t *)&back.fail[2])[0], 0x5a);
        free(b);
}
END_TEST

START_TEST(test_every_truncation_is_refused_and_leaves_the_outputs)
{
        static struct rt_state rt, out, canary;
        struct replay_state s, sout, scanary;
        struct attest_err err = {0};
        uint64_t off = 99;
        size_t n;
        uint8_t *b;

        replay(&s);
        results(&rt);
        b = enc(&s, &rt, &n);
        memset(&out, 0x5a, sizeof(out));
        memset(&sout, 0x5a, sizeof(sout));
        canary = out;
        scanary = sout;
        for (size_t k = 0; k < n; k++) {
                if (k == R_AT)
                        continue; /* the replay state without the section: a whole state */
                ck_assert_msg(rt_state_stored_decode(b, k, &sout, &out, &err) < 0,
                              "%zu bytes accepted", k);
                ck_assert(err.code == AE_REPLAY_STATE_TRUNCATED ||
                          err.code == AE_REPLAY_STATE_MAGIC);
                ck_assert_int_eq(memcmp(&out, &canary, sizeof(out)), 0);
                ck_assert_int_eq(memcmp(&sout, &scanary, sizeof(sout)), 0);
                /* the challenge's reader refuses them too */
                ck_assert_int_eq(rt_state_stored_boot_offset(b, k, &off, NULL), -EBADMSG);
                ck_assert_uint_eq(off, 99);
        }
        free(b);
}
END_TEST

/* The body of results() in a section of its own length, patched at body offset i to v. */
static int decode_patched(size_t i, uint8_t v, struct attest_err *err)
{
        static struct rt_state out;
        uint8_t b[sizeof(stored_before)];
        struct replay_state s;

        memcpy(b, stored_before, sizeof(b));
        b[BODY_AT + i] = v;
        return rt_state_stored_decode(b, sizeof(b), &s, &out, err);
}

/* Hostile bytes inside the section: each field out of range refused, naming byte and field. */
START_TEST(test_hostile_fields_are_refused_with_byte_and_field)
{
        static const struct {
                size_t at; /* in the body */
                uint8_t v;
                const char *msg;
        } cases[] = {
                {0, 0, "byte 81 (runtime.ref): length 0 not in 1-95"},
                {0, RT_REF_MAX + 1, "byte 81 (runtime.ref): length 96 not in 1-95"},
                {1, 0x1f, "byte 81 (runtime.ref): byte 0 not printable"},
                {7, 41, "byte 81 (runtime.counts): counts exceed the 40 entries"},
                {7 + 7, 0x80, "byte 88 (runtime.passed): "},
                {15, 41, "byte 81 (runtime.counts)"},
                {7 + 3 * 8, 21, "byte 81 (runtime.counts)"}, /* signed > passed */
                {47, 3 + 1, "byte 128 (runtime.nfail): 4 failures named, 3 counted"},
                {47, RT_FAILURES_CAP + 1, "byte 128 (runtime.nfail): 65 failures named"},
                {48, 40, "byte 129 (runtime.failure.entry): entry 40 not below"},
                {56, RT_REASON__COUNT, "byte 137 (runtime.failure.reason): 10 is no reason"},
                {58, RT_DIGEST_MAX + 1, "byte 139 (runtime.failure.digest): length 65 not in"},
                {91, 2, "byte 172 (runtime.failure.flags): unknown bits 0x2"},
                {92, 0xff, "byte 174 (runtime.failure.path): truncated"},
                {93, 0, "byte 173 (runtime.failure.path): NUL in the path"},
                {99, 7, "byte 180 (runtime.failure.entry): not after the previous failure"},
        };
        struct attest_err err = {0};

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ck_assert_msg(decode_patched(cases[i].at, cases[i].v, &err) == -EBADMSG,
                              "case %zu accepted", i);
                ck_assert_msg(!strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)), "case %zu: %s",
                              i, err.msg);
        }
        /* a section longer than its body: trailing bytes inside it */
        {
                uint8_t b[sizeof(stored_before) + 1];
                static struct rt_state out;
                struct replay_state s;

                memcpy(b, stored_before, sizeof(stored_before));
                b[sizeof(stored_before)] = 0;
                b[R_AT + 1]++;
                ck_assert_int_eq(rt_state_stored_decode(b, sizeof(b), &s, &out, &err), -EBADMSG);
                ck_assert_msg(strstr(err.msg, "byte 76 (section.length)"), "%s", err.msg);
                /* the challenge's reader agrees */
                ck_assert_int_eq(rt_state_stored_boot_offset(b, sizeof(b), NULL, &err), -EBADMSG);
                ck_assert_msg(strstr(err.msg, "byte 76 (section.length)"), "%s", err.msg);
        }
}
END_TEST

/* The section at its largest fills the replay state's observer cap; one byte more is refused. */
START_TEST(test_cap_at_cap_and_over)
{
        static struct rt_state rt, back;
        struct replay_state s, sback;
        struct attest_err err = {0};
        size_t n, plain;
        uint8_t *b, *big;

        replay(&s);
        s.entries = 1000;
        rt_state_init(&rt);
        b = enc(&s, &rt, &plain);
        free(b);
        memset(rt.ref, 'r', RT_REF_MAX);
        rt.failed = rt.nfail = RT_FAILURES_CAP;
        for (unsigned i = 0; i < RT_FAILURES_CAP; i++) {
                rt.fail[i].entry = 100 + i;
                rt.fail[i].digest_len = RT_DIGEST_MAX;
                rt.fail[i].path_len = RT_FAIL_PATH_MAX;
                memset(rt.fail[i].path, 'a', RT_FAIL_PATH_MAX);
                rt.fail[i].path_cut = true;
        }
        b = enc(&s, &rt, &n);
        ck_assert_uint_eq(n - plain - 5, RT_STATE_BODY_MAX);
        ck_assert_uint_eq(RT_STATE_BODY_MAX, REPLAY_STATE_OBSERVER_MAX);
        ck_assert_msg(rt_state_stored_decode(b, n, &sback, &back, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(back.nfail, RT_FAILURES_CAP);
        ck_assert_str_eq(back.fail[63].path + RT_FAIL_PATH_MAX - 1, "a");
        /* more failures than the cap cannot be written */
        rt.nfail = RT_FAILURES_CAP + 1;
        free(b);
        b = NULL;
        ck_assert_int_eq(rt_state_stored_encode(&s, &rt, &b, &n), -EINVAL);
        ck_assert_ptr_null(b);
        /* a path over its cap neither */
        rt.nfail = RT_FAILURES_CAP;
        rt.fail[5].path_len = RT_FAIL_PATH_MAX + 1;
        ck_assert_int_eq(rt_state_stored_encode(&s, &rt, &b, &n), -EINVAL);
        /* a section one byte over the observer's cap: refused by the replay state's walk */
        n = plain + 5 + REPLAY_STATE_OBSERVER_MAX + 1;
        big = calloc(1, n);
        b = enc(&s, &(struct rt_state){0}, &plain);
        memcpy(big, b, plain);
        big[plain] = 'R';
        big[plain + 1] = (uint8_t)((REPLAY_STATE_OBSERVER_MAX + 1) & 0xff);
        big[plain + 2] = (uint8_t)((REPLAY_STATE_OBSERVER_MAX + 1) >> 8);
        ck_assert_int_eq(rt_state_stored_decode(big, n, &sback, &back, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(section.length)"), "%s", err.msg);
        free(b);
        free(big);
}
END_TEST

/* ---- the round ---- */

START_TEST(test_unchanged_version_carries_the_results)
{
        static struct rt_state st;

        results(&st);
        ck_assert_int_eq(rt_state_for_round(&st, true, 40, "prod@3"), RT_ROUND_JUDGE);
        ck_assert_str_eq(st.ref, "prod@3");
        ck_assert_uint_eq(st.passed, 20);
        ck_assert_uint_eq(st.nfail, 2);
        /* the log from entry 0 under the same version (a reboot): carried into verify, whose
         * observer begin empties them */
        ck_assert_int_eq(rt_state_for_round(&st, true, 0, "prod@3"), RT_ROUND_JUDGE);
        ck_assert_uint_eq(st.failed, 3);
}
END_TEST

START_TEST(test_new_version_resets_the_results)
{
        static struct rt_state st;

        /* the log not from entry 0: nothing judged, the stored results left to name the old
         * version; the replay must restart */
        results(&st);
        ck_assert_int_eq(rt_state_for_round(&st, true, 40, "prod@4"), RT_ROUND_RESTART);
        ck_assert_str_eq(st.ref, "prod@3");
        ck_assert_uint_eq(st.passed, 20);
        /* the log from entry 0: judged afresh under the new version */
        ck_assert_int_eq(rt_state_for_round(&st, true, 0, "prod@4"), RT_ROUND_AFRESH);
        ck_assert_str_eq(st.ref, "prod@4");
        ck_assert_uint_eq(st.passed + st.failed + st.excluded + st.signed_ok + st.violations, 0);
        ck_assert_uint_eq(st.nfail, 0);
        /* a runtime policy bound where none judged before: a new version too */
        rt_state_init(&st);
        ck_assert_int_eq(rt_state_for_round(&st, true, 12, "prod@1"), RT_ROUND_RESTART);
        ck_assert_int_eq(rt_state_for_round(&st, true, 0, "prod@1"), RT_ROUND_AFRESH);
        /* no stored replay: nothing to reset, judged from the start */
        results(&st);
        ck_assert_int_eq(rt_state_for_round(&st, false, 0, "prod@4"), RT_ROUND_JUDGE);
        ck_assert_str_eq(st.ref, "prod@4");
        ck_assert_uint_eq(st.passed, 0);
        ck_assert_uint_eq(st.nfail, 0);
}
END_TEST

START_TEST(test_no_runtime_policy_keeps_no_results)
{
        static struct rt_state st;

        results(&st);
        ck_assert_int_eq(rt_state_for_round(&st, true, 40, NULL), RT_ROUND_OFF);
        ck_assert_str_eq(st.ref, "");
        ck_assert_uint_eq(st.passed + st.failed + st.nfail, 0);
}
END_TEST

START_TEST(test_reboot_resets_the_results)
{
        static struct rt_state st;
        struct rt_observer o = {.st = &st};

        results(&st);
        ck_assert_int_eq(rt_state_for_round(&st, true, 0, "prod@3"), RT_ROUND_JUDGE);
        /* verify: the quote shows a reboot, the boot's log starts again at entry 0 */
        ck_assert_int_eq(rt_observer_begin(&o, 0), 0);
        ck_assert_str_eq(st.ref, "prod@3");
        ck_assert_uint_eq(st.passed + st.failed + st.excluded + st.signed_ok + st.violations, 0);
        ck_assert_uint_eq(st.nfail, 0);
        /* a round going on from entry 40 of the same boot keeps them */
        results(&st);
        ck_assert_int_eq(rt_observer_begin(&o, 40), 0);
        ck_assert_uint_eq(st.passed, 20);
        ck_assert_uint_eq(st.nfail, 2);
}
END_TEST

START_TEST(test_reason_names)
{
        ck_assert_str_eq(rt_reason_name(RT_REASON_NOT_ALLOWED), "not_allowed");
        ck_assert_str_eq(rt_reason_name(RT_REASON_EXCLUDE_BUDGET), "exclude_budget_spent");
        ck_assert_str_eq(rt_reason_name(RT_REASON__COUNT), "unknown");
        for (int r = 0; r < RT_REASON__COUNT; r++)
                ck_assert_str_ne(rt_reason_name((enum rt_reason)r), "unknown");
}
END_TEST

static Suite *runtime_state_suite(void)
{
        Suite *s = suite_create("runtime-state");
        TCase *codec = tcase_create("codec");
        TCase *round = tcase_create("round");

        tcase_add_test(codec, test_state_stored_before_the_move_reads_back_the_same);
        tcase_add_test(codec, test_round_trip_and_no_section_without_a_ref);
        tcase_add_test(codec, test_every_truncation_is_refused_and_leaves_the_outputs);
        tcase_add_test(codec, test_hostile_fields_are_refused_with_byte_and_field);
        tcase_add_test(codec, test_cap_at_cap_and_over);
        tcase_add_test(codec, test_reason_names);
        tcase_add_test(round, test_unchanged_version_carries_the_results);
        tcase_add_test(round, test_new_version_resets_the_results);
        tcase_add_test(round, test_no_runtime_policy_keeps_no_results);
        tcase_add_test(round, test_reboot_resets_the_results);
        suite_add_tcase(s, codec);
        suite_add_tcase(s, round);
        return s;
}

int main(void)
{
        return tu_run(runtime_state_suite());
}
