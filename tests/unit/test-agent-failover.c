/* SPDX-License-Identifier: MIT */
/*
 * The agent's choice of verifier (agent/failover.c): stay while one answers, the next at once
 * when it does not, a back-off when all failed, Retry-After honoured and capped, back to the
 * first after the failback window; the Retry-After header parser (agent/http.c); URLs in log
 * lines without their userinfo.
 */
#include <check.h>

#include "agent/failover.h"
#include "agent/http.h"
#include "tests/unit/testutil.h"

#define T0 1000000 /* a monotonic time, ms */

/* the back-off's n-th delay (from 0) with base 1 s, cap max: in [d/2, d), d = min(2^n s, max) */
static void ck_backoff(uint32_t got, unsigned n, uint32_t max)
{
        uint64_t d = 1000;

        for (unsigned i = 0; i < n && d < max; i++)
                d *= 2;
        if (d > max)
                d = max;
        ck_assert_msg(got >= d / 2 && got < d, "delay %u, want [%llu, %llu)", got,
                      (unsigned long long)d / 2, (unsigned long long)d);
}

START_TEST(test_failover_one_verifier_backs_off_to_its_cap)
{
        struct failover f;
        uint32_t d;

        failover_init(&f, 1, 8000, 600000);
        ck_assert_int_eq(failover_begin(&f, T0), FAILOVER_STAY);
        for (unsigned i = 0; i < 6; i++) {
                ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_ALL_DOWN);
                ck_assert_uint_eq(f.cur, 0);
                ck_backoff(d, i, 8000); /* 1, 2, 4, 8, 8, 8 s with jitter */
        }
        /* an answer starts the schedule again */
        failover_ok(&f, T0);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_ALL_DOWN);
        ck_backoff(d, 0, 8000);
}
END_TEST

START_TEST(test_failover_goes_round_the_list_then_backs_off)
{
        struct failover f;
        uint32_t d = 99;

        failover_init(&f, 3, 300000, 600000);
        /* 0 down: 1 at once, 1 down: 2 at once */
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_uint_eq(d, 0);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 2);
        ck_assert_uint_eq(d, 0);
        /* all three down since the last answer: a back-off, then the next one (0) */
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_ALL_DOWN);
        ck_assert_uint_eq(f.cur, 0);
        ck_backoff(d, 0, 300000);
        /* a new pass: 1 at once again, and the back-off grows after the second full pass */
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_ALL_DOWN);
        ck_assert_uint_eq(f.cur, 0);
        ck_backoff(d, 1, 300000);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        /* 1 answers: the agent stays there; its next failure goes on to 2 at once */
        failover_ok(&f, T0);
        ck_assert_int_eq(failover_begin(&f, T0 + 1000), FAILOVER_STAY);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 2);
        ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_failover_honours_retry_after)
{
        struct failover f;
        uint32_t d;

        /* one verifier: 503 with Retry-After 20 waits 20 s, more than the back-off */
        failover_init(&f, 1, 300000, 600000);
        ck_assert_int_eq(failover_down(&f, T0, 20, &d), FAILOVER_ALL_DOWN);
        ck_assert_uint_eq(d, 20000);
        /* capped at FAILOVER_RETRY_AFTER_MAX */
        ck_assert_int_eq(failover_down(&f, T0, HTTP_RETRY_AFTER_MAX, &d), FAILOVER_ALL_DOWN);
        ck_assert_uint_eq(d, FAILOVER_RETRY_AFTER_MAX * 1000u);
        /* two: 0 says Retry-After 30, 1 is down too: back to 0 only after its 30 s */
        failover_init(&f, 2, 300000, 600000);
        ck_assert_int_eq(failover_down(&f, T0, 30, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_uint_eq(d, 0);
        ck_assert_int_eq(failover_down(&f, T0 + 4000, 0, &d), FAILOVER_ALL_DOWN);
        ck_assert_uint_eq(f.cur, 0);
        ck_assert_uint_eq(d, 26000);
        /* a refusal (not the verifier's trouble) stays, and honours its Retry-After */
        failover_init(&f, 2, 300000, 600000);
        d = failover_refused(&f, T0, 7);
        ck_assert_uint_eq(f.cur, 0);
        ck_assert_uint_eq(d, 7000);
        d = failover_refused(&f, T0, 0);
        ck_backoff(d, 1, 300000);
        ck_assert_uint_eq(f.cur, 0);
}
END_TEST

START_TEST(test_failover_back_to_the_first_after_the_window)
{
        struct failover f;
        uint32_t d;

        failover_init(&f, 2, 300000, 60000);
        ck_assert_int_eq(failover_down(&f, T0, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        /* no answer from 1 yet: no window runs */
        ck_assert_int_eq(failover_begin(&f, T0 + 600000), FAILOVER_STAY);
        failover_ok(&f, T0 + 1000);
        failover_ok(&f, T0 + 30000); /* the window runs from the first answer */
        ck_assert_int_eq(failover_begin(&f, T0 + 1000 + 59999), FAILOVER_STAY);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_int_eq(failover_begin(&f, T0 + 1000 + 60000), FAILOVER_BACK);
        ck_assert_uint_eq(f.cur, 0);
        /* the first still down: on to 1 at once (no back-off), and the window starts again */
        ck_assert_int_eq(failover_down(&f, T0 + 61000, 0, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        ck_assert_uint_eq(d, 0);
        failover_ok(&f, T0 + 62000);
        ck_assert_int_eq(failover_begin(&f, T0 + 62000 + 59999), FAILOVER_STAY);
        ck_assert_int_eq(failover_begin(&f, T0 + 62000 + 60000), FAILOVER_BACK);
        /* not before the first's Retry-After has passed */
        ck_assert_int_eq(failover_down(&f, T0 + 130000, 100, &d), FAILOVER_NEXT);
        ck_assert_uint_eq(f.cur, 1);
        failover_ok(&f, T0 + 130000);
        ck_assert_int_eq(failover_begin(&f, T0 + 130000 + 60000), FAILOVER_STAY);
        ck_assert_int_eq(failover_begin(&f, T0 + 130000 + 99999), FAILOVER_STAY);
        ck_assert_int_eq(failover_begin(&f, T0 + 130000 + 100000), FAILOVER_BACK);
        /* on the first, the window means nothing */
        failover_ok(&f, T0 + 200000);
        ck_assert_int_eq(failover_begin(&f, T0 + 9000000), FAILOVER_STAY);
        ck_assert_uint_eq(f.cur, 0);
}
END_TEST

START_TEST(test_retry_after_header)
{
        static const struct {
                const char *line;
                int ok;
                uint32_t v;
        } t[] = {
                {"Retry-After: 5\r\n", 1, 5},
                {"retry-after:7", 1, 7},
                {"RETRY-AFTER: \t 0 \r\n", 1, 0},
                {"Retry-After: 86400\r\n", 1, 86400},
                {"Retry-After: 86401\r\n", 1, HTTP_RETRY_AFTER_MAX},
                {"Retry-After: 99999999999999999999999999\r\n", 1, HTTP_RETRY_AFTER_MAX},
                {"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n", 0, 0},
                {"Retry-After: 5x\r\n", 0, 0},
                {"Retry-After: -1\r\n", 0, 0},
                {"Retry-After: \r\n", 0, 0},
                {"Retry-After-X: 5\r\n", 0, 0},
                {"X-Retry-After: 5\r\n", 0, 0},
                {"Retry-After", 0, 0},
                {"HTTP/1.1 503 Service Unavailable\r\n", 0, 0},
        };

        for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                uint32_t v = 12345;
                int r = http_retry_after_parse(t[i].line, strlen(t[i].line), &v);

                ck_assert_msg(r == t[i].ok, "%s: %d", t[i].line, r);
                ck_assert_uint_eq(v, t[i].ok ? t[i].v : 12345); /* untouched when not */
        }
        ck_assert_uint_eq(http_retry_after(NULL), 0);
}
END_TEST

START_TEST(test_failover_url_display)
{
        char out[128];

        ck_assert_str_eq(failover_url_display("https://10.0.0.1:8443", out, sizeof(out)),
                         "https://10.0.0.1:8443");
        ck_assert_str_eq(failover_url_display("https://u:secret@h:1/x@y", out, sizeof(out)),
                         "https://h:1/x@y");
        ck_assert_str_eq(failover_url_display("https://a@b@h:1", out, sizeof(out)), "https://h:1");
        ck_assert_str_eq(failover_url_display("https://h\n<0>x:1", out, sizeof(out)),
                         "https://h\\x0a<0>x:1");
}
END_TEST

static Suite *failover_suite(void)
{
        Suite *s = suite_create("agent-failover");
        TCase *tc = tcase_create("failover");

        tcase_add_test(tc, test_failover_one_verifier_backs_off_to_its_cap);
        tcase_add_test(tc, test_failover_goes_round_the_list_then_backs_off);
        tcase_add_test(tc, test_failover_honours_retry_after);
        tcase_add_test(tc, test_failover_back_to_the_first_after_the_window);
        tcase_add_test(tc, test_retry_after_header);
        tcase_add_test(tc, test_failover_url_display);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(failover_suite());
}
