/* SPDX-License-Identifier: MIT */
/*
 * The agent's verdict line (agent/outcome.c): it names the claims that did not pass, says what the
 * previous verdict was when it changed (and nothing about a change on the first round), and stays
 * within its cap with a count of what it left out.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "agent/outcome.h"
#include "tests/unit/testutil.h"

START_TEST(test_verdict_line_names_the_failing_claims)
{
        struct agent_verdict_line l;

        agent_verdict_begin(&l, "fail", "");
        agent_verdict_claim(&l, "ima.boot_aggregate", "pass");
        agent_verdict_claim(&l, "selinux.enforcing", "fail");
        agent_verdict_claim(&l, "kernel.version", "unknown");
        ck_assert_str_eq(agent_verdict_end(&l), "verdict: fail; failing: selinux.enforcing (fail), "
                                                "kernel.version (unknown)");
        ck_assert_uint_eq(l.failing, 2);

        agent_verdict_begin(&l, "fail", "pass");
        agent_verdict_claim(&l, "cfi.enabled", "fail");
        ck_assert_str_eq(agent_verdict_end(&l),
                         "verdict: fail (changed from pass); failing: cfi.enabled (fail)");

        /* the first round: no earlier verdict, no "(changed from ...)" */
        agent_verdict_begin(&l, "pass", NULL);
        ck_assert_str_eq(agent_verdict_end(&l), "verdict: pass");
        agent_verdict_begin(&l, "pass", "");
        ck_assert_str_eq(agent_verdict_end(&l), "verdict: pass");

        /* unchanged and all passing: the bare verdict */
        agent_verdict_begin(&l, "pass", "pass");
        agent_verdict_claim(&l, "selinux.enforcing", "pass");
        ck_assert_str_eq(agent_verdict_end(&l), "verdict: pass");
        ck_assert_uint_eq(l.failing, 0);

        /* a claim without a name or result from the verifier */
        agent_verdict_begin(&l, "fail", "fail");
        agent_verdict_claim(&l, NULL, NULL);
        ck_assert_str_eq(agent_verdict_end(&l), "verdict: fail; failing: ? (?)");
}
END_TEST

START_TEST(test_verdict_line_stays_within_its_cap)
{
        struct agent_verdict_line l;
        char name[64];

        agent_verdict_begin(&l, "fail", "pass");
        for (unsigned i = 0; i < 200; i++) {
                snprintf(name, sizeof(name), "claim.number_%03u", i);
                agent_verdict_claim(&l, name, "fail");
        }
        agent_verdict_end(&l);
        ck_assert_uint_lt(strlen(l.text), AGENT_VERDICT_LINE_MAX);
        ck_assert_uint_gt(l.failing, 10);
        ck_assert_uint_eq(l.failing + l.left_out, 200);
        char tail[64];
        snprintf(tail, sizeof(tail), "... and %u more", l.left_out);
        ck_assert_msg(strstr(l.text, tail), "no '%s' in '%s'", tail, l.text);
        /* the claims shown are the first ones, whole */
        ck_assert_ptr_nonnull(strstr(l.text, "failing: claim.number_000 (fail), claim.number_001"));
}
END_TEST

static Suite *verdict_line_suite(void)
{
        Suite *s = suite_create("agent-verdict");
        TCase *tc = tcase_create("line");

        tcase_add_test(tc, test_verdict_line_names_the_failing_claims);
        tcase_add_test(tc, test_verdict_line_stays_within_its_cap);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(verdict_line_suite());
}
