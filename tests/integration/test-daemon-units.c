/* SPDX-License-Identifier: MIT */
/*
 * attestd's modules in-process (Check): nonce store (TTL, single use, binding, distinct errors,
 * forgetting), tokens file parser and lookup, the config table (file + flags, errors naming
 * file:line), the metrics text and the store (migrations, versions, retention, optimistic seq).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "metrics.h"
#include "nonce.h"
#include "store.h"

START_TEST(test_nonce_single_use_ttl_and_binding)
{
        struct nonce_store *s;
        struct attest_err err = {0};
        uint8_t n[NONCE_LEN], m[NONCE_LEN];
        uint64_t exp;

        ck_assert_int_eq(nonce_store_new(1000, 16, &s), 0);
        ck_assert_int_eq(nonce_issue(s, "a", 5000, n, &exp), 0);
        ck_assert_uint_eq(exp, 6000);
        ck_assert_int_eq(nonce_consume(s, "b", n, NONCE_LEN, 5001, &err), -ESTALE);
        ck_assert_str_eq(err.code, "nonce_wrong_agent");
        ck_assert_int_eq(nonce_consume(s, "a", n, NONCE_LEN, 5002, &err), 0);
        ck_assert_int_eq(nonce_consume(s, "a", n, NONCE_LEN, 5003, &err), -ESTALE);
        ck_assert_str_eq(err.code, "nonce_reused");
        ck_assert_int_eq(nonce_issue(s, "a", 5000, m, &exp), 0);
        ck_assert_int_eq(nonce_consume(s, "a", m, NONCE_LEN, 6000, &err), -ESTALE);
        ck_assert_str_eq(err.code, "nonce_expired");
        ck_assert_int_eq(nonce_consume(s, "a", m, NONCE_LEN, 6000 + NONCE_KEEP_MIN_MS - 1, &err),
                         -ESTALE);
        ck_assert_str_eq(err.code, "nonce_expired");
        /* forgotten NONCE_KEEP_MIN_MS (more than one TTL) after expiry */
        ck_assert_int_eq(nonce_consume(s, "a", m, NONCE_LEN, 6000 + NONCE_KEEP_MIN_MS, &err),
                         -ESTALE);
        ck_assert_str_eq(err.code, "nonce_unknown");
        ck_assert_int_eq(nonce_consume(s, "a", m, 31, 7001, &err), -ESTALE);
        ck_assert_str_eq(err.code, "nonce_unknown");
        nonce_store_free(s);
}
END_TEST

START_TEST(test_nonce_store_cap_and_forget)
{
        struct nonce_store *s;
        struct attest_err err = {0};
        uint8_t n[NONCE_LEN];
        uint64_t exp;

        ck_assert_int_eq(nonce_store_new(1000, 2, &s), 0);
        ck_assert_int_eq(nonce_issue(s, "a", 0, n, &exp), 0);
        ck_assert_int_eq(nonce_issue(s, "a", 0, n, &exp), 0);
        ck_assert_int_eq(nonce_issue(s, "a", 0, n, &exp), -EBUSY);
        ck_assert_uint_eq(nonce_outstanding(s), 2);
        /* purged after expiry + NONCE_KEEP_MIN_MS: room again */
        ck_assert_int_eq(nonce_issue(s, "a", 1000 + NONCE_KEEP_MIN_MS, n, &exp), 0);
        nonce_forget_agent(s, "a");
        ck_assert_int_eq(nonce_consume(s, "a", n, NONCE_LEN, 1001 + NONCE_KEEP_MIN_MS, &err),
                         -ESTALE);
        nonce_store_free(s);
}
END_TEST

START_TEST(test_tokens_roles_and_errors)
{
        /* sha256("secret") and sha256("other") */
        static const char ok[] =
                "# comment\n\nadmin "
                "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b "
                "ops team\nreader\t"
                "d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa\n";
        struct auth_tokens *t;
        struct attest_err err = {0};

        ck_assert_int_eq(auth_parse(ok, strlen(ok), "tok", &t, &err), 0);
        ck_assert_uint_eq(auth_count(t), 2);
        ck_assert_int_eq(auth_lookup(t, "secret", 6), AUTH_ADMIN);
        ck_assert_int_eq(auth_lookup(t, "other", 5), AUTH_READER);
        ck_assert_int_eq(auth_lookup(t, "secreT", 6), AUTH_NONE);
        ck_assert_int_eq(auth_lookup(t, "", 0), AUTH_NONE);
        ck_assert(auth_allows(AUTH_ADMIN, AUTH_READER));
        ck_assert(!auth_allows(AUTH_READER, AUTH_ADMIN));
        ck_assert(!auth_allows(AUTH_ENROLL, AUTH_READER));
        auth_free(t);
        ck_assert_int_eq(auth_parse("root 00\n", 8, "tok", &t, &err), -EINVAL);
        ck_assert_str_eq(err.code, "tokens_bad_role");
        ck_assert_ptr_nonnull(strstr(err.msg, "tok:1"));
        ck_assert_int_eq(auth_parse("\nadmin abc\n", 11, "tok", &t, &err), -EINVAL);
        ck_assert_str_eq(err.code, "tokens_bad_hash");
        ck_assert_ptr_nonnull(strstr(err.msg, "tok:2"));
}
END_TEST

START_TEST(test_config_file_then_flags)
{
        char path[] = "/tmp/attestd-conf.XXXXXX";
        int fd = mkstemp(path);
        const char text[] = "# x\nthreads = 3\nretain=7\ninsecure-http = yes\n";
        char *argv[] = {"attestd", "--config", path, "--retain", "9", NULL};
        struct config c;
        struct attest_err err = {0};

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ck_assert_int_eq(config_load(5, argv, &c, &err), 0);
        ck_assert_uint_eq(c.threads, 3);
        ck_assert_uint_eq(c.retain, 9);
        ck_assert(c.insecure_http);
        ck_assert_uint_eq(c.db_connections, 3);
        ck_assert_uint_eq(c.nonce_ttl, 60);
        char *bad[] = {"attestd", "--config", path, "--threads", "0", NULL};
        ck_assert_int_eq(config_load(5, bad, &c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "threads"));
        char *unknown[] = {"attestd", "--config", path, "--colour", NULL};
        ck_assert_int_eq(config_load(4, unknown, &c, &err), -EINVAL);
        unlink(path);
}
END_TEST

START_TEST(test_metrics_text)
{
        struct metrics m;
        struct metrics_agents a = {1, 2, 3, 4};
        char *t;
        size_t n;

        metrics_init(&m);
        metrics_attestation(&m, METRICS_PASS, 300);
        metrics_attestation(&m, METRICS_FAIL, 7000000);
        metrics_rejected(&m, "forbidden");
        metrics_rejected(&m, "forbidden");
        metrics_replayed(&m, 10);
        struct metrics_store st = {3, 9};

        ck_assert_int_eq(metrics_render(&m, &a, &st, 5, &t, &n), 0);
        ck_assert_ptr_nonnull(strstr(t, "attestd_store_writes_total 9\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_attestations_total{result=\"pass\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_verification_seconds_bucket{le=\"0.0005\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_verification_seconds_bucket{le=\"+Inf\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_rejected_requests_total{code=\"forbidden\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_agents{state=\"stale\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_ima_entries_replayed_total 10\n"));
        free(t);
        metrics_done(&m);
}
END_TEST

static void store_checks(enum store_mode mode)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a = {0}, *got = NULL;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        int64_t v, id;
        char *body;
        int ver;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(db, sizeof(db), "%s/t.db", dir);
        ck_assert_int_eq(store_open(db, mode, 2, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        snprintf(a.id, sizeof(a.id), "agent1");
        snprintf(a.state, sizeof(a.state), "active");
        a.ak_public = ak;
        a.ak_public_len = sizeof(ak);
        a.ak_name = name;
        a.ak_name_len = sizeof(name);
        a.created = 1000;
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_agent_add(s, &a), -EEXIST);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\"}", 1, &v), 0);
        ck_assert_int_eq(v, 1);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\",\"x\":1}", 2, &v), 0);
        ck_assert_int_eq(v, 2);
        ck_assert_int_eq(store_policy_get(s, "p", 1, &body, &v, NULL), 0);
        ck_assert_str_eq(body, "{\"name\":\"p\"}");
        free(body);
        ck_assert_int_eq(store_agent_set_policy(s, "agent1", "p"), 0);
        ck_assert_int_eq(store_agent_set_policy(s, "agent1", "q"), -ENODATA);
        ck_assert_int_eq(store_agent_set_policy(s, "nobody", "p"), -ENOENT);
        ck_assert_int_eq(store_policy_delete(s, "p"), -EBUSY);
        for (int i = 0; i < 5; i++) {
                struct store_result r = {.agent = "agent1",
                                         .time = 2000 + i,
                                         .status = "pass",
                                         .policy = "p@2",
                                         .verdict = "{}",
                                         .next_due = 9000,
                                         .ima_offset = (uint64_t)i,
                                         .replay_state = "{}"};

                ck_assert_int_eq(store_result_add(s, &r, (uint64_t)i, 3, &id), 0);
                /* the same seq again: someone else got there first */
                ck_assert_int_eq(store_result_add(s, &r, (uint64_t)i, 3, &id), -ESTALE);
        }
        ck_assert_int_eq(store_agent_get(s, "agent1", &got), 0);
        ck_assert_uint_eq(got->seq, 5);
        ck_assert_uint_eq(got->ima_offset, 4);
        ck_assert_str_eq(got->last_policy, "p@2");
        store_agent_free(got);
        ck_assert_int_eq(store_agent_reset_replay(s, "agent1", 5), 0);
        ck_assert_int_eq(store_agent_get(s, "agent1", &got), 0);
        ck_assert_uint_eq(got->ima_offset, 0);
        ck_assert_ptr_nonnull(got->replay_state);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_delete(s, "agent1"), 0);
        ck_assert_int_eq(store_agent_delete(s, "agent1"), -ENOENT);
        ck_assert_int_eq(store_policy_delete(s, "p"), 0);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\"}", 3, &v), 0);
        ck_assert_int_eq(v, 3);
        store_close(s);
        /* reopening migrates nothing and keeps the data */
        ck_assert_int_eq(store_open(db, mode, 1, &s, &err), 0);
        ck_assert_int_eq(store_policy_get(s, "p", 0, &body, &v, NULL), 0);
        ck_assert_int_eq(v, 3);
        free(body);
        store_close(s);
}

START_TEST(test_store_writer)
{
        store_checks(STORE_WRITER);
}
END_TEST

START_TEST(test_store_pool)
{
        store_checks(STORE_POOL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("daemon");
        TCase *tc = tcase_create("modules");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_nonce_single_use_ttl_and_binding);
        tcase_add_test(tc, test_nonce_store_cap_and_forget);
        tcase_add_test(tc, test_tokens_roles_and_errors);
        tcase_add_test(tc, test_config_file_then_flags);
        tcase_add_test(tc, test_metrics_text);
        tcase_add_test(tc, test_store_writer);
        tcase_add_test(tc, test_store_pool);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
