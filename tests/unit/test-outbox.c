/* SPDX-License-Identifier: MIT */
/*
 * The webhook outbox on real SQLite files, both write modes (Check): an event exists exactly when
 * its change was committed (a refused verdict writes none), the transition rules (readmit and
 * delete included), the stale scan records a staleness once, the cap drops the oldest and counts
 * only undelivered ones, cursors; the event body and its signature against OpenSSL's HMAC.
 */
#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon/store/store.h"
#include "store-target.h"
#include "daemon/webhook.h"
#include "util/hex.h"

struct seen {
        int n;
        int64_t id[16];
        char type[16][32], prev[16][16], claims[16][128], agent[16][16];
};

static int collect(const struct store_event *ev, void *arg)
{
        struct seen *s = arg;

        if (s->n >= 16)
                return -E2BIG;
        s->id[s->n] = ev->id;
        snprintf(s->type[s->n], sizeof(s->type[0]), "%s", ev->type);
        snprintf(s->prev[s->n], sizeof(s->prev[0]), "%s", ev->previous ? ev->previous : "-");
        snprintf(s->claims[s->n], sizeof(s->claims[0]), "%s", ev->claims ? ev->claims : "-");
        snprintf(s->agent[s->n], sizeof(s->agent[0]), "%s", ev->agent);
        s->n++;
        return 0;
}

static struct seen events(struct store *s)
{
        struct seen v = {0};

        ck_assert_int_eq(store_outbox_next(s, 0, 16, collect, &v), 0);
        return v;
}

static struct store *open_tmp(enum store_mode mode, char *dir)
{
        struct attest_err err = {0};
        struct store *s;
        char db[64];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        store_target(dir, "t.db", db, sizeof(db));
        ck_assert_int_eq(store_open(db, mode, 2, &s, &err), 0);
        return s;
}

static void rm_tmp(const char *dir)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

static void add_agent(struct store *s, const char *id, enum agent_state state, uint8_t tag)
{
        uint8_t ak[4] = {1, 2, 3, tag}, name[4] = {5, 6, 7, tag};
        struct store_agent a = {0};

        snprintf(a.id, sizeof(a.id), "%s", id);
        a.state = state;
        a.ak_public = ak;
        a.ak_public_len = sizeof(ak);
        a.ak_name = name;
        a.ak_name_len = sizeof(name);
        a.created = 1000;
        ck_assert_int_eq(store_agent_add(s, &a), 0);
}

/*
 * A result as api-attest.c stores it: the failing claims come rendered from the typed verdict
 * (fail and missing alike). The verdict text says something else on purpose ("{}", or a claim
 * the event must not show): the store must take what failed from the caller, never re-read it.
 */
static int verdict(struct store *s, const char *agent, const char *status, uint64_t seq,
                   int64_t time, int64_t next_due)
{
        static const char *const text = "{\"status\":\"fail\",\"claims\":[{\"name\":\"cfi."
                                        "enabled\",\"result\":\"fail\"}]}";
        bool fail = !strcmp(status, "fail");
        struct store_result r = {.agent = agent,
                                 .time = time,
                                 .status = status,
                                 .verdict = fail ? text : "{}",
                                 .failing =
                                         fail ? "[\"kernel.version\",\"boot.secureboot\"]" : NULL,
                                 .reason = fail ? "quote_signature" : NULL,
                                 .next_due = next_due};

        return store_result_add(s, &r, seq, 10, NULL);
}

static void transitions(enum store_mode mode)
{
        char dir[] = "/tmp/attestd-outbox.XXXXXX";
        struct store *s = open_tmp(mode, dir);
        struct seen v;

        add_agent(s, "a1", AGENT_STATE_ACTIVE, 1); /* enrolled without activation: active at once */
        add_agent(s, "p1", AGENT_STATE_PENDING, 2);
        ck_assert_int_eq(verdict(s, "a1", "pass", 0, 2000, 9000), 0);
        /* refused: another submission was judged first; nothing of it may be written */
        ck_assert_int_eq(verdict(s, "a1", "fail", 0, 2001, 9000), -ESTALE);
        ck_assert_int_lt(verdict(s, "nobody", "fail", 0, 2001, 9000), 0);
        ck_assert_int_eq(verdict(s, "a1", "pass", 1, 2002, 9000), 0); /* unchanged: no event */
        ck_assert_int_eq(verdict(s, "a1", "fail", 2, 2003, 9000), 0);
        ck_assert_int_eq(verdict(s, "a1", "fail", 3, 2004, 9000), 0); /* unchanged */
        ck_assert_int_eq(verdict(s, "a1", "pass", 4, 2005, 9000), 0);
        ck_assert_int_eq(store_agent_decommission(s, "a1", 3000), 0);
        ck_assert_int_eq(store_agent_decommission(s, "a1", 3001), 0); /* already: no event */
        /* readmit and delete tell the receivers; a refused one (nothing changed) tells nothing */
        ck_assert_int_eq(store_agent_readmit(s, "a1", 3002), 0);
        ck_assert_int_eq(store_agent_readmit(s, "a1", 3003), -EALREADY);
        ck_assert_int_eq(store_agent_delete(s, "a1", 3004), 0);
        ck_assert_int_eq(store_agent_delete(s, "a1", 3005), -ENOENT);
        ck_assert_int_eq(store_agent_readmit(s, "nobody", 3006), -ENOENT);
        v = events(s);
        ck_assert_int_eq(v.n, 7);
        ck_assert_str_eq(v.type[5], "agent.readmitted");
        ck_assert_str_eq(v.prev[5], "decommissioned");
        ck_assert_str_eq(v.type[6], "agent.deleted");
        ck_assert_str_eq(v.prev[6], "pass"); /* readmitting restored its standing */
        ck_assert_str_eq(v.claims[6], "[]");
        ck_assert_str_eq(v.type[0], "agent.enrolled");
        ck_assert_str_eq(v.type[1], "agent.pass");
        ck_assert_str_eq(v.prev[1], "-");
        ck_assert_str_eq(v.type[2], "agent.fail");
        ck_assert_str_eq(v.prev[2], "pass");
        ck_assert_str_eq(v.claims[2], "[\"kernel.version\",\"boot.secureboot\"]");
        ck_assert_str_eq(v.claims[1], "[]");
        ck_assert_str_eq(v.type[3], "agent.pass");
        ck_assert_str_eq(v.prev[3], "fail");
        ck_assert_str_eq(v.type[4], "agent.decommissioned");
        ck_assert_str_eq(v.prev[4], "pass");
        for (int i = 1; i < v.n; i++)
                ck_assert_int_gt(v.id[i], v.id[i - 1]);
        store_close(s);
        rm_tmp(dir);
}

START_TEST(test_outbox_event_only_with_its_change_writer)
{
        transitions(STORE_WRITER);
}
END_TEST

START_TEST(test_outbox_event_only_with_its_change_pool)
{
        transitions(STORE_POOL);
}
END_TEST

START_TEST(test_outbox_stale_recorded_once)
{
        char dir[] = "/tmp/attestd-outbox.XXXXXX";
        struct store *s = open_tmp(STORE_WRITER, dir);
        struct seen v;
        int n = 9;

        add_agent(s, "a1", AGENT_STATE_ACTIVE,
                  1); /* created 1000, interval 100, grace 50: due 1100 */
        add_agent(s, "p1", AGENT_STATE_PENDING, 2);
        n = store_agent_stale_scan(s, 1150, 50, 100, store_stale_quiet, NULL);
        ck_assert_int_ge(n, 0);
        ck_assert_int_eq(n, 0); /* at due + grace, not past it */
        n = store_agent_stale_scan(s, 1151, 50, 100, store_stale_quiet, NULL);
        ck_assert_int_ge(n, 0);
        ck_assert_int_eq(n, 1); /* pending agents are never stale */
        n = store_agent_stale_scan(s, 5000, 50, 100, store_stale_quiet, NULL);
        ck_assert_int_ge(n, 0);
        ck_assert_int_eq(n, 0); /* once */
        ck_assert_int_eq(verdict(s, "a1", "pass", 0, 5001, 6000), 0);
        n = store_agent_stale_scan(s, 6050, 50, 100, store_stale_quiet, NULL);
        ck_assert_int_ge(n, 0);
        ck_assert_int_eq(n, 0);
        n = store_agent_stale_scan(s, 6051, 50, 100, store_stale_quiet, NULL);
        ck_assert_int_ge(n, 0);
        ck_assert_int_eq(n, 1); /* stale again after its next verdict */
        v = events(s);
        ck_assert_int_eq(v.n, 4);
        ck_assert_str_eq(v.type[1], "agent.stale");
        ck_assert_str_eq(v.prev[1], "-");
        ck_assert_str_eq(v.type[2], "agent.pass");
        ck_assert_str_eq(v.prev[2], "stale");
        ck_assert_str_eq(v.type[3], "agent.stale");
        ck_assert_str_eq(v.prev[3], "pass");
        store_close(s);
        rm_tmp(dir);
}
END_TEST

/*
 * Agents that become active without a verdict are watched by the stale scan (schema 10): one
 * activated by its credential that never attests, and one readmitted after its due time passed
 * while it was decommissioned (the scan had gone past its last result then).
 */
START_TEST(test_outbox_stale_activated_and_readmitted)
{
        char dir[] = "/tmp/attestd-outbox.XXXXXX";
        struct store *s = open_tmp(STORE_WRITER, dir);
        uint8_t ak[4] = {1, 2, 3, 7}, name[4] = {5, 6, 7, 7}, ekpub[8] = {0}, h[32];
        struct store_agent p = {0};
        struct seen v;

        memset(h, 1, sizeof(h));
        snprintf(p.id, sizeof(p.id), "p1");
        p.state = AGENT_STATE_PENDING;
        p.ak_public = ak;
        p.ak_public_len = sizeof(ak);
        p.ak_name = name;
        p.ak_name_len = sizeof(name);
        p.created = 1000; /* interval 100, grace 50: stale after 1150 once active */
        ck_assert_int_eq(store_agent_add_pending(s, &p, ekpub, sizeof(ekpub), h, 100000), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 1500, 50, 100, store_stale_quiet, NULL),
                         0); /* pending */
        ck_assert_int_eq(store_agent_activate(s, "p1", h, 2000, NULL), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 2001, 50, 100, store_stale_quiet, NULL), 1);
        ck_assert_int_eq(store_agent_stale_scan(s, 2002, 50, 100, store_stale_quiet, NULL), 0);

        add_agent(s, "a1", AGENT_STATE_ACTIVE, 1);
        ck_assert_int_eq(verdict(s, "a1", "pass", 0, 5001, 6000), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 5002, 50, 100, store_stale_quiet, NULL), 0);
        ck_assert_int_eq(store_agent_decommission(s, "a1", 5500), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 6051, 50, 100, store_stale_quiet, NULL), 0);
        ck_assert_int_eq(store_agent_readmit(s, "a1", 7000), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 7001, 50, 100, store_stale_quiet, NULL), 1);
        ck_assert_int_eq(store_agent_stale_scan(s, 8000, 50, 100, store_stale_quiet, NULL), 0);
        v = events(s);
        ck_assert_int_eq(v.n, 7); /* enrolled stale enrolled pass decommissioned readmitted stale */
        ck_assert_str_eq(v.type[1], "agent.stale");
        ck_assert_str_eq(v.agent[1], "p1");
        ck_assert_str_eq(v.type[6], "agent.stale");
        ck_assert_str_eq(v.agent[6], "a1");
        store_close(s);
        rm_tmp(dir);
}
END_TEST

START_TEST(test_outbox_cap_drops_oldest_counts_undelivered)
{
        char dir[] = "/tmp/attestd-outbox.XXXXXX";
        struct store *s = open_tmp(STORE_WRITER, dir);
        const char *urls[] = {"https://a.example/", "https://b.example/"};
        struct store_outbox_stats st;
        int64_t cur;
        struct seen v;

        add_agent(s, "a1", AGENT_STATE_ACTIVE, 1); /* event 1, before any receiver */
        ck_assert_int_eq(store_outbox_setup(s, 3, urls, 2), 0);
        ck_assert_int_eq(store_outbox_cursor(s, urls[0], &cur), 0);
        ck_assert_int_eq(cur, 1); /* a new receiver starts after the newest event */
        ck_assert_int_eq(store_outbox_cursor(s, "https://c.example/", &cur), -ENOENT);
        for (int i = 0; i < 4; i++) /* events 2..5 */
                ck_assert_int_eq(
                        verdict(s, "a1", i % 2 ? "pass" : "fail", (uint64_t)i, 2000 + i, 9000), 0);
        ck_assert_int_eq(store_outbox_stats(s, &st), 0);
        ck_assert_uint_eq(st.events, 3);
        ck_assert_uint_eq(st.pending, 3);
        ck_assert_uint_eq(st.dropped,
                          1); /* event 2; event 1 was delivered (before the receivers) */
        v = events(s);
        ck_assert_int_eq(v.id[0], 3);
        ck_assert_int_eq(v.id[2], 5);
        /* delivered to one receiver only: still pending; to both: not, and not counted */
        ck_assert_int_eq(store_outbox_delivered(s, urls[0], 5), 0);
        ck_assert_int_eq(store_outbox_delivered(s, urls[0], 4), 0); /* only forward */
        ck_assert_int_eq(store_outbox_cursor(s, urls[0], &cur), 0);
        ck_assert_int_eq(cur, 5);
        ck_assert_int_eq(store_outbox_stats(s, &st), 0);
        ck_assert_uint_eq(st.pending, 3);
        ck_assert_int_eq(store_outbox_delivered(s, urls[1], 5), 0);
        ck_assert_int_eq(verdict(s, "a1", "fail", 4, 3000, 9000), 0); /* event 6 drops 3 */
        ck_assert_int_eq(store_outbox_stats(s, &st), 0);
        ck_assert_uint_eq(st.pending, 1);
        ck_assert_uint_eq(st.dropped, 1);
        /* pruning: delivered everywhere and older than the bound */
        {
                uint64_t n = 9;

                ck_assert_int_eq(store_outbox_prune(s, 2003, 100, &n), 0);
                ck_assert_int_eq(n, 1); /* event 4 (time 2002); 5 is newer, 6 undelivered */
        }
        /* a receiver no longer configured loses its cursor */
        ck_assert_int_eq(store_outbox_setup(s, 3, urls, 1), 0);
        ck_assert_int_eq(store_outbox_cursor(s, urls[1], &cur), -ENOENT);
        store_close(s);
        rm_tmp(dir);
}
END_TEST

START_TEST(test_webhook_body_and_signature)
{
        static const uint8_t key[] = "0123456789abcdef0123456789abcdef";
        struct store_event ev = {.id = 42,
                                 .time = 1764777430123,
                                 .type = "agent.fail",
                                 .agent = "a1",
                                 .status = "fail",
                                 .previous = "pass",
                                 .claims = "[\"kernel.version\"]",
                                 .reason = NULL};
        char *body = NULL, sig[7 + WEBHOOK_SIG_HEX], want[7 + WEBHOOK_SIG_HEX];
        uint8_t md[32];
        unsigned mdlen = 0;
        size_t len = 0;

        ck_assert_int_eq(webhook_event_body(&ev, &body, &len), 0);
        ck_assert_str_eq(body, "{\"id\":42,\"type\":\"agent.fail\",\"time\":\"2025-12-03T15:57:10."
                               "123Z\",\"agent\":\"a1\",\"status\":\"fail\",\"previous\":\"pass\","
                               "\"failing_claims\":[\"kernel.version\"]}");
        ck_assert_int_eq(webhook_sign(key, sizeof(key) - 1, body, len, sig), 0);
        ck_assert_ptr_nonnull(
                HMAC(EVP_sha256(), key, sizeof(key) - 1, (uint8_t *)body, len, md, &mdlen));
        memcpy(want, "sha256=", 7);
        hex_encode(md, sizeof(md), want + 7);
        ck_assert_str_eq(sig, want);
        free(body);
        /* a host name when known, null for no previous status, [] for a claims column that is
         * not an array of strings as the renderer writes it (spliced, never parsed) */
        ev.hostname = "web-7";
        ev.previous = NULL;
        ev.claims = "{bad";
        ev.reason = "quote_signature";
        ck_assert_int_eq(webhook_event_body(&ev, &body, &len), 0);
        ck_assert_ptr_nonnull(strstr(body, "\"hostname\":\"web-7\""));
        ck_assert_ptr_nonnull(strstr(body, "\"previous\":null"));
        ck_assert_ptr_nonnull(strstr(body, "\"failing_claims\":[]"));
        ck_assert_ptr_nonnull(strstr(body, "\"reason\":\"quote_signature\""));
        ck_assert_int_eq(body[len - 1], '}');
        free(body);
        /* several names, spliced in order; a cut array or a control byte is not spliced */
        ev.claims = "[\"ima.runtime\",\"boot.kernels\"]";
        ck_assert_int_eq(webhook_event_body(&ev, &body, &len), 0);
        ck_assert_ptr_nonnull(
                strstr(body, "\"failing_claims\":[\"ima.runtime\",\"boot.kernels\"],\"reason\""));
        free(body);
        ev.claims = "[\"ima.runtime\"";
        ck_assert_int_eq(webhook_event_body(&ev, &body, &len), 0);
        ck_assert_ptr_nonnull(strstr(body, "\"failing_claims\":[]"));
        free(body);
        ev.claims = "[\"a\n\"]";
        ck_assert_int_eq(webhook_event_body(&ev, &body, &len), 0);
        ck_assert_ptr_nonnull(strstr(body, "\"failing_claims\":[]"));
        free(body);
}
END_TEST

int main(void)
{
        Suite *su = suite_create("outbox");
        TCase *tc = tcase_create("outbox");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_outbox_event_only_with_its_change_writer);
        tcase_add_test(tc, test_outbox_event_only_with_its_change_pool);
        tcase_add_test(tc, test_outbox_stale_recorded_once);
        tcase_add_test(tc, test_outbox_stale_activated_and_readmitted);
        tcase_add_test(tc, test_outbox_cap_drops_oldest_counts_undelivered);
        tcase_add_test(tc, test_webhook_body_and_signature);
        suite_add_tcase(su, tc);
        sr = srunner_create(su);
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
