/* SPDX-License-Identifier: MIT */
/*
 * The agent state codec (daemon/agent-state.c): every state round-trips through its name, the
 * names are the API's and the docs' strings, any other text (case, spaces, prefixes, the derived
 * API words "stale" and "forgotten", NULL) is refused without touching the output, and the
 * store's status filter names its state values with the same strings.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent-state.h"
#include "daemon/store/store.h"
#include "tests/unit/testutil.h"

/* The REST API's "state" strings (docs/api.md): the codec must give exactly these. */
static const struct {
        enum agent_state s;
        const char *name;
} api_names[] = {
        {AGENT_STATE_PENDING, "pending"},
        {AGENT_STATE_ACTIVE, "active"},
        {AGENT_STATE_DECOMMISSIONED, "decommissioned"},
};

START_TEST(test_agent_state_names_are_the_api_strings)
{
        /* a state added to the table without its API string here fails */
        ck_assert_uint_eq(AGENT_STATE__COUNT, ARRAY_SIZE(api_names));
        for (size_t i = 0; i < ARRAY_SIZE(api_names); i++)
                ck_assert_str_eq(agent_state_name(api_names[i].s), api_names[i].name);
        ck_assert_ptr_null(agent_state_name(AGENT_STATE__COUNT));
        ck_assert_ptr_null(agent_state_name((enum agent_state) - 1));
}
END_TEST

START_TEST(test_agent_state_round_trips_every_value)
{
        for (unsigned i = 0; i < AGENT_STATE__COUNT; i++) {
                enum agent_state got = AGENT_STATE__COUNT;
                const char *name = agent_state_name((enum agent_state)i);

                ck_assert_ptr_nonnull(name);
                ck_assert_int_eq(agent_state_parse(name, &got), 0);
                ck_assert_int_eq(got, (enum agent_state)i);
                /* names are distinct */
                for (unsigned j = 0; j < i; j++)
                        ck_assert_str_ne(name, agent_state_name((enum agent_state)j));
        }
}
END_TEST

START_TEST(test_agent_state_refuses_unknown_text)
{
        static const char *const bad[] = {
                "",
                "Active",
                "ACTIVE",
                " active",
                "active ",
                "activ",
                "actives",
                "pending\n",
                "decommissioned\t",
                "decommission",
                "stale",
                "forgotten",
                "enrolled",
                "never",
                "pass",
                "retired",
                "decommissionedX",
                "pendingactive",
        };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                enum agent_state got = AGENT_STATE__COUNT;

                ck_assert_msg(agent_state_parse(bad[i], &got) == -EBADMSG, "'%s' accepted", bad[i]);
                /* the output is written only on success */
                ck_assert_int_eq(got, AGENT_STATE__COUNT);
        }
        {
                enum agent_state got = AGENT_STATE__COUNT;

                ck_assert_int_eq(agent_state_parse(NULL, &got), -EBADMSG);
                ck_assert_int_eq(got, AGENT_STATE__COUNT);
        }
}
END_TEST

/* GET /v1/agents?status=: the state values of the filter are the states, by the same names. */
START_TEST(test_store_status_names_its_states_like_the_codec)
{
        static const struct {
                enum store_status st;
                enum agent_state s;
        } pairs[] = {
                {STORE_STATUS_PENDING, AGENT_STATE_PENDING},
                {STORE_STATUS_ACTIVE, AGENT_STATE_ACTIVE},
                {STORE_STATUS_DECOMMISSIONED, AGENT_STATE_DECOMMISSIONED},
        };

        ck_assert_uint_eq(ARRAY_SIZE(pairs), AGENT_STATE__COUNT);
        for (size_t i = 0; i < ARRAY_SIZE(pairs); i++)
                ck_assert_str_eq(store_status_name(pairs[i].st), agent_state_name(pairs[i].s));
        /* the derived statuses are not states */
        for (unsigned st = STORE_STATUS_PASS; st < STORE_STATUS__COUNT; st++) {
                enum agent_state got;

                ck_assert_int_eq(agent_state_parse(store_status_name((enum store_status)st), &got),
                                 -EBADMSG);
        }
}
END_TEST

/* docs/api.md's status table lists the stored states, in the enum's order, by these names. */
START_TEST(test_agent_state_names_are_documented)
{
        size_t len;
        char *doc = tu_read("docs/api.md", &len), row[256] = "|";
        size_t at = 1;

        ck_assert_ptr_nonnull(doc);
        for (unsigned i = 0; i < AGENT_STATE__COUNT; i++) {
                int w = snprintf(row + at, sizeof(row) - at, "%s`%s`", i ? " / " : " ",
                                 agent_state_name((enum agent_state)i));

                ck_assert(w > 0 && (size_t)w < sizeof(row) - at);
                at += (size_t)w;
        }
        ck_assert_int_lt(snprintf(row + at, sizeof(row) - at, " | in that stored state"),
                         (int)(sizeof(row) - at));
        ck_assert_msg(strstr(doc, row) != NULL, "docs/api.md lacks \"%s\"", row);
        free(doc);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("agent-state");
        TCase *tc = tcase_create("codec");

        tcase_add_test(tc, test_agent_state_names_are_the_api_strings);
        tcase_add_test(tc, test_agent_state_round_trips_every_value);
        tcase_add_test(tc, test_agent_state_refuses_unknown_text);
        tcase_add_test(tc, test_store_status_names_its_states_like_the_codec);
        tcase_add_test(tc, test_agent_state_names_are_documented);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
