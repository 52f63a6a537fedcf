/* SPDX-License-Identifier: MIT */
/* The ima.runtime section (policy/runtime.c): parsing, caps, evaluation on real logs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "evidence/bank.h"
#include "evidence/ima.h"
#include "policy/policy.h"
#include "policy/runtime.h"
#include "testutil.h"
#include "util/hex.h"

/* ---- helpers ---- */

static struct rt_policy *parse_ok(json_t *o)
{
        struct rt_policy *p = NULL;
        struct attest_err err = {0};
        int x = rt_policy_from_json(o, "$.ima.runtime", &p, &err);

        ck_assert_msg(x == 0, "parse: %d %s", x, err.msg);
        json_decref(o);
        return p;
}

/* Parse o (taken): expect -EBADMSG whose message starts with the JSON path want. */
static void parse_bad(json_t *o, const char *want)
{
        struct rt_policy *p = NULL;
        struct attest_err err = {0};
        int x = rt_policy_from_json(o, "$.ima.runtime", &p, &err);

        ck_assert_msg(x == -EBADMSG, "want -EBADMSG, got %d (%s)", x, err.msg);
        ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "message '%s', want '%s...'",
                      err.msg, want);
        ck_assert_ptr_null(p);
        json_decref(o);
}

static json_t *load(const char *s)
{
        json_error_t e;
        json_t *o = json_loads(s, JSON_REJECT_DUPLICATES, &e);

        ck_assert_msg(o != NULL, "%s", e.text);
        return o;
}

struct log {
        char *buf;
        size_t len;
};

static struct log read_log(const char *boot)
{
        char rel[256];
        struct log l;

        snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boot);
        l.buf = tu_read(rel, &l.len);
        ck_assert_msg(l.buf != NULL, "no %s", rel);
        return l;
}

static bool is_buf(const struct ima_entry *e)
{
        return e->buf && e->buf_len && !e->sig;
}

/* A policy that allows every file and ima-buf event of the boot, violations allow n. */
static json_t *allow_all(const char *boot, int violations)
{
        struct log l = read_log(boot);
        struct ima_reader rd;
        struct ima_entry e;
        json_t *o = json_object(), *d = json_object(), *b = json_object();
        int x;

        ck_assert_int_eq(ima_reader_init_auto(&rd, (const uint8_t *)l.buf, l.len, NULL), 0);
        while ((x = ima_reader_next(&rd, &e, NULL)) > 0) {
                char name[IMA_NAME_MAX + 1], hex[2 * 64 + 1], val[160];
                json_t *tgt, *a;

                if (e.violation || !e.name)
                        continue;
                tgt = is_buf(&e) ? b : d;
                memcpy(name, e.name, e.name_len);
                name[e.name_len] = '\0';
                hex_encode(e.digest, e.digest_len, hex);
                snprintf(val, sizeof(val), "%.*s:%s", (int)e.algo_len, e.algo, hex);
                if (!(a = json_object_get(tgt, name))) {
                        a = json_array();
                        json_object_set_new(tgt, name, a);
                }
                json_array_append_new(a, json_string(val));
        }
        ck_assert_int_eq(x, 0);
        ima_reader_done(&rd);
        free(l.buf);
        json_object_set_new(o, "digests", d);
        json_object_set_new(o, "ima_buf", b);
        if (violations < 0)
                json_object_set_new(o, "violations", json_string("fail"));
        else
                json_object_set_new(o, "violations", json_pack("{s:i}", "allow", violations));
        return o;
}

/* Evaluate every entry of the boot's log with p into st. */
static void eval_log(const struct rt_policy *p, const char *boot, struct rt_state *st)
{
        struct log l = read_log(boot);
        struct ima_reader rd;
        struct ima_entry e;
        struct rt_ctx *c = NULL;
        uint64_t i = 0;
        int x;

        rt_state_init(st);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert_int_eq(ima_reader_init_auto(&rd, (const uint8_t *)l.buf, l.len, NULL), 0);
        while ((x = ima_reader_next(&rd, &e, NULL)) > 0)
                ck_assert_int_ge(rt_eval_entry(c, &e, i++, st, NULL), 0);
        ck_assert_int_eq(x, 0);
        ima_reader_done(&rd);
        rt_ctx_free(c);
        free(l.buf);
}

static const struct rt_failure *find_fail(const struct rt_state *st, const char *path)
{
        for (unsigned i = 0; i < st->nfail; i++)
                if (!strcmp(st->fail[i].path, path))
                        return &st->fail[i];
        return NULL;
}

/* ---- real logs pass a policy made from them ---- */

START_TEST(test_real_logs_pass_their_allowlist)
{
        static const struct {
                const char *boot;
                int violations;
                uint64_t min_passed;
        } b[] = {
                {"qemu61-tcb", 2, 10},     {"custom-fmt", 0, 6}, {"ima-sig-sha512", 2, 10},
                {"ima-buf-runtime", 0, 6}, {"ima-sha1", 2, 9},
        };

        for (size_t i = 0; i < ARRAY_SIZE(b); i++) {
                struct rt_policy *p = parse_ok(allow_all(b[i].boot, b[i].violations));
                struct rt_state st;

                eval_log(p, b[i].boot, &st);
                ck_assert_msg(st.failed == 0, "%s: %" PRIu64 " failed, first %s (%s)", b[i].boot,
                              st.failed, st.nfail ? st.fail[0].path : "-",
                              st.nfail ? rt_reason_name(st.fail[0].reason) : "-");
                ck_assert_msg(st.passed >= b[i].min_passed, "%s: %" PRIu64 " passed", b[i].boot,
                              st.passed);
                ck_assert_uint_eq(st.violations, (uint64_t)b[i].violations);
                rt_policy_free(p);
        }
}
END_TEST

/* ---- each reason ---- */

START_TEST(test_file_outside_allowlist_fails_not_allowed)
{
        json_t *o = allow_all("qemu61-tcb", 2);
        struct rt_policy *p;
        struct rt_state st;
        const struct rt_failure *f;

        json_object_del(json_object_get(o, "digests"), "/bin/hello.sh");
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 1);
        ck_assert_ptr_nonnull(f = find_fail(&st, "/bin/hello.sh"));
        ck_assert_int_eq(f->reason, RT_REASON_NOT_ALLOWED);
        ck_assert_uint_eq(f->entry, 15);
        ck_assert_int_eq(f->algo, RT_ALGO_SHA256);
        ck_assert_uint_eq(f->digest_len, 32);
        ck_assert_uint_eq(f->digest[0], 0xb4);
        rt_policy_free(p);
}
END_TEST

START_TEST(test_other_digest_fails_digest_mismatch)
{
        json_t *o = allow_all("qemu61-tcb", 2);
        struct rt_policy *p;
        struct rt_state st;
        const struct rt_failure *f;

        /* /init listed, with another digest (sha384 of the same length class does not count) */
        json_object_set_new(json_object_get(o, "digests"), "/init",
                            json_pack("[s]", "0000000000000000000000000000000000000000000000000000"
                                             "000000000001"));
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 1);
        ck_assert_ptr_nonnull(f = find_fail(&st, "/init"));
        ck_assert_int_eq(f->reason, RT_REASON_DIGEST_MISMATCH);
        ck_assert_uint_eq(f->entry, 2);
        rt_policy_free(p);
}
END_TEST

START_TEST(test_digest_of_another_algorithm_does_not_match)
{
        json_t *o = allow_all("qemu61-tcb", 2);
        struct rt_policy *p;
        struct rt_state st;
        json_t *a = json_object_get(json_object_get(o, "digests"), "/init");
        char v[160];

        /* the same bytes named sm3 (32 bytes too) are not the sha256 digest */
        snprintf(v, sizeof(v), "sm3:%s", json_string_value(json_array_get(a, 0)) + 7);
        json_object_set_new(json_object_get(o, "digests"), "/init", json_pack("[s]", v));
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 1);
        ck_assert_int_eq(find_fail(&st, "/init")->reason, RT_REASON_DIGEST_MISMATCH);
        rt_policy_free(p);
}
END_TEST

START_TEST(test_violations_fail_or_are_allowed_up_to_n)
{
        struct rt_policy *p = parse_ok(allow_all("qemu61-tcb", -1));
        struct rt_state st;

        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 2);
        ck_assert_uint_eq(st.violations, 2);
        ck_assert_int_eq(st.fail[0].reason, RT_REASON_VIOLATION);
        ck_assert_str_eq(st.fail[0].path, "/data/viol.txt");
        ck_assert_str_eq(st.fail[1].path, "/data/tomtou.txt");
        rt_policy_free(p);

        p = parse_ok(allow_all("qemu61-tcb", 1));
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 1);
        ck_assert_str_eq(st.fail[0].path, "/data/tomtou.txt");
        rt_policy_free(p);
}
END_TEST

START_TEST(test_unlisted_ima_buf_event_fails_buf_not_allowed)
{
        json_t *o = allow_all("qemu61-tcb", 2);
        struct rt_policy *p;
        struct rt_state st;

        json_object_del(json_object_get(o, "ima_buf"), "kernel_version");
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 1);
        ck_assert_int_eq(find_fail(&st, "kernel_version")->reason, RT_REASON_BUF_NOT_ALLOWED);
        rt_policy_free(p);

        /* without an ima_buf list, critical data is left to its own sections */
        o = allow_all("qemu61-tcb", 2);
        json_object_del(o, "ima_buf");
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 0);
        ck_assert_uint_ge(st.excluded, 9);
        rt_policy_free(p);
}
END_TEST

START_TEST(test_excludes_match_the_whole_path)
{
        json_t *o = allow_all("qemu61-tcb", 2);
        struct rt_policy *p;
        struct rt_state st;

        json_object_del(json_object_get(o, "digests"), "/data/sample.txt");
        json_object_del(json_object_get(o, "digests"), "/bin/hello.sh");
        /* "/data" alone must not exclude /data/sample.txt: anchored at the end too */
        json_object_set_new(o, "excludes", json_pack("[s,s]", "/data", "/bin/hel+o\\.sh"));
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 2);
        ck_assert_ptr_nonnull(find_fail(&st, "/data/sample.txt"));
        ck_assert_uint_ge(st.excluded, 1);
        rt_policy_free(p);

        o = allow_all("qemu61-tcb", 2);
        json_object_del(json_object_get(o, "digests"), "/data/sample.txt");
        json_object_set_new(o, "excludes", json_pack("[s]", "/data/.*"));
        p = parse_ok(o);
        eval_log(p, "qemu61-tcb", &st);
        ck_assert_uint_eq(st.failed, 0);
        rt_policy_free(p);
}
END_TEST

START_TEST(test_backtracking_exclude_stops_at_the_match_limit)
{
        struct rt_policy *p;
        struct rt_ctx *c = NULL;
        char *path = filled(4000, 'a');

        /* (a+)+b fails on a run of a's only after exponential backtracking; then a* matches.
         * 10 a's: within RT_MATCH_LIMIT, excluded. 20 a's: past RT_MATCH_LIMIT (but within
         * PCRE2's default of 10,000,000): stopped, not excluded, the entry is judged. 4000: the
         * same, at once. */
        p = parse_ok(json_pack("{s:[s]}", "excludes", "(a+)+b|a*"));
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert(rt_excluded(c, path, 10));
        ck_assert(!rt_excluded(c, path, 20));
        ck_assert(!rt_excluded(c, path, 4000));
        path[29] = 'b';
        ck_assert(rt_excluded(c, path, 30));
        rt_ctx_free(c);
        rt_policy_free(p);
        free(path);
}
END_TEST

START_TEST(test_failures_are_capped_counts_are_not)
{
        json_t *o = json_pack("{s:{s:[s]}, s:i, s:{s:i}}", "digests", "/nothing",
                              "sha256:"
                              "00000000000000000000000000000000"
                              "00000000000000000000000000000000",
                              "failures_max", 3, "violations", "allow", 2);
        struct rt_policy *p = parse_ok(o);
        struct rt_state st;

        eval_log(p, "qemu61-tcb", &st);
        /* 11 ima-ng entries, boot_aggregate left to its own claim, 2 violations allowed */
        ck_assert_uint_eq(st.failed, 8);
        ck_assert_uint_eq(st.nfail, 3);
        ck_assert_str_eq(st.fail[0].path, "/init");
        ck_assert_uint_eq(rt_policy_failures_max(p), 3);
        rt_policy_free(p);
}
END_TEST

/* ---- parsing errors name their JSON path ---- */

START_TEST(test_parse_errors_name_the_path)
{
        parse_bad(load("{}"), "$.ima.runtime:");
        parse_bad(load("{\"digest\":{}}"), "$.ima.runtime.digest:");
        parse_bad(load("{\"digests\":[]}"), "$.ima.runtime.digests:");
        parse_bad(load("{\"digests\":{\"rel/path\":[\""
                       "00000000000000000000000000000000000000"
                       "00\"]}}"),
                  "$.ima.runtime.digests[\"rel/path\"]");
        parse_bad(load("{\"digests\":{\"/a\":[]}}"), "$.ima.runtime.digests[\"/a\"]");
        parse_bad(load("{\"digests\":{\"/a\":[\"abc\"]}}"), "$.ima.runtime.digests[\"/a\"][0]:");
        parse_bad(load("{\"digests\":{\"/a\":[\"md4:00\"]}}"), "$.ima.runtime.digests[\"/a\"][0]:");
        parse_bad(load("{\"digests\":{\"/a\":[\"sha256:00\"]}}"),
                  "$.ima.runtime.digests[\"/a\"][0]:");
        parse_bad(load("{\"digests\":{\"/a\":[\""
                       "zz00000000000000000000000000000000000000"
                       "\"]}}"),
                  "$.ima.runtime.digests[\"/a\"][0]:");
        parse_bad(load("{\"excludes\":[\"(\"]}"), "$.ima.runtime.excludes[0]: not a regex");
        parse_bad(load("{\"excludes\":[\"a\",\"b)|(c\"]}"), "$.ima.runtime.excludes[1]");
        parse_bad(load("{\"excludes\":[\"\"]}"), "$.ima.runtime.excludes[0]:");
        parse_bad(load("{\"keys\":[\"-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC "
                       "KEY-----\\n\"]}"),
                  "$.ima.runtime.keys[0]: not a PEM");
        parse_bad(load("{\"violations\":\"ignore\"}"), "$.ima.runtime.violations:");
        parse_bad(load("{\"violations\":{\"allow\":-1}}"), "$.ima.runtime.violations.allow:");
        parse_bad(load("{\"violations\":{\"deny\":1}}"), "$.ima.runtime.violations");
        parse_bad(load("{\"failures_max\":true}"), "$.ima.runtime.failures_max:");
        parse_bad(load("{\"ignored_keyrings\":[1]}"), "$.ima.runtime.ignored_keyrings[0]:");
        parse_bad(load("{\"keyrings\":{\".ima\":\"x\"}}"), "$.ima.runtime.keyrings[\".ima\"]:");
        parse_bad(load("{\"ima_buf\":{\"kernel_version\":[1]}}"),
                  "$.ima.runtime.ima_buf.kernel_version[0]:");
}
END_TEST

START_TEST(test_policy_parses_the_runtime_section)
{
        static const char doc[] =
                "{\"name\":\"rt\",\"ima\":{\"require_boot_aggregate\":true,\"runtime\":{"
                "\"digests\":{\"/bin/sh\":[\"sha256:"
                "00000000000000000000000000000000000000000000000000000000000000aa\"]},"
                "\"excludes\":[\"/tmp/.*\"],\"violations\":{\"allow\":2},\"failures_max\":4}}}";
        static const char bad[] = "{\"name\":\"rt\",\"ima\":{\"runtime\":{\"digests\":{\"/a\":["
                                  "\"xyz\"]}}}}";
        struct policy *p = NULL;
        struct attest_err err = {0};

        ck_assert_msg(policy_parse(doc, strlen(doc), &p, &err) == 0, "%s", err.msg);
        ck_assert_ptr_nonnull(policy_runtime(p));
        ck_assert_uint_eq(rt_policy_failures_max(policy_runtime(p)), 4);
        ck_assert_uint_eq(rt_policy_digest_count(policy_runtime(p)), 1);
        policy_free(p);
        ck_assert_int_eq(policy_parse(bad, strlen(bad), &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "$.ima.runtime.digests[\"/a\"][0]") != NULL, "%s", err.msg);
}
END_TEST

/* ---- caps: at the cap and one past ---- */

static json_t *digests_of(size_t npaths, size_t per_path, size_t path_len)
{
        json_t *d = json_object();
        char *path = filled(path_len, 'p');

        path[0] = '/';
        for (size_t i = 0; i < npaths; i++) {
                json_t *a = json_array();
                char k[32];

                for (size_t j = 0; j < per_path; j++) {
                        char h[65];

                        snprintf(h, sizeof(h), "%064zx", i * 1000 + j);
                        json_array_append_new(a, json_string(h));
                }
                if (npaths > 1) {
                        snprintf(k, sizeof(k), "/%zu", i);
                        json_object_set_new(d, k, a);
                } else {
                        json_object_set_new(d, path, a);
                }
        }
        free(path);
        return json_pack("{s:o}", "digests", d);
}

START_TEST(test_cap_digests_per_path)
{
        struct rt_policy *p = parse_ok(digests_of(1, RT_DIGESTS_PER_PATH_MAX, 5));

        ck_assert_uint_eq(rt_policy_digest_count(p), RT_DIGESTS_PER_PATH_MAX);
        rt_policy_free(p);
        parse_bad(digests_of(1, RT_DIGESTS_PER_PATH_MAX + 1, 5),
                  "$.ima.runtime.digests[\"/pppp\"]");
}
END_TEST

START_TEST(test_cap_path_length)
{
        rt_policy_free(parse_ok(digests_of(1, 1, RT_PATH_BYTES_MAX)));
        parse_bad(digests_of(1, 1, RT_PATH_BYTES_MAX + 1), "$.ima.runtime.digests[\"");
}
END_TEST

START_TEST(test_cap_paths)
{
        struct rt_policy *p = parse_ok(digests_of(RT_PATHS_MAX, 1, 0));
        struct rt_ctx *c = NULL;
        struct ima_entry e = {.tmpl = {.known = true}, .algo = "sha256", .algo_len = 6};
        uint8_t d[32] = {0};
        struct rt_state st;

        ck_assert_uint_eq(rt_policy_digest_count(p), RT_PATHS_MAX);
        /* the last path is found with its digest */
        rt_state_init(&st);
        d[30] = (uint8_t)(((RT_PATHS_MAX - 1) * 1000) >> 8);
        d[31] = (uint8_t)((RT_PATHS_MAX - 1) * 1000);
        d[29] = (uint8_t)(((RT_PATHS_MAX - 1) * 1000) >> 16);
        d[28] = (uint8_t)(((RT_PATHS_MAX - 1) * 1000) >> 24);
        e.digest = d;
        e.digest_len = 32;
        e.name = "/499999";
        e.name_len = 7;
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert_int_eq(rt_eval_entry(c, &e, 1, &st, NULL), RT_PASS);
        rt_ctx_free(c);
        rt_policy_free(p);
        parse_bad(digests_of(RT_PATHS_MAX + 1, 1, 0), "$.ima.runtime.digests:");
}
END_TEST

START_TEST(test_cap_total_digests)
{
        /* RT_DIGESTS_MAX / 64 paths of 64 digests: exactly the cap; one more path is past it */
        struct rt_policy *p = parse_ok(digests_of(RT_DIGESTS_MAX / 64, 64, 0));

        ck_assert_uint_eq(rt_policy_digest_count(p), RT_DIGESTS_MAX);
        rt_policy_free(p);
        parse_bad(digests_of(RT_DIGESTS_MAX / 64 + 1, 64, 0), "$.ima.runtime.digests[\"/15625\"]");
}
END_TEST

START_TEST(test_cap_excludes)
{
        json_t *a = json_array(), *b;
        char *long_re = filled(RT_REGEX_MAX, 'x');

        for (int i = 0; i < RT_EXCLUDES_MAX; i++)
                json_array_append_new(a, json_string("/tmp/.*"));
        b = json_deep_copy(a);
        rt_policy_free(parse_ok(json_pack("{s:o}", "excludes", a)));
        json_array_append_new(b, json_string("/x"));
        parse_bad(json_pack("{s:o}", "excludes", b), "$.ima.runtime.excludes:");
        rt_policy_free(parse_ok(json_pack("{s:[s]}", "excludes", long_re)));
        free(long_re);
        long_re = filled(RT_REGEX_MAX + 1, 'x');
        parse_bad(json_pack("{s:[s]}", "excludes", long_re), "$.ima.runtime.excludes[0]:");
        free(long_re);
}
END_TEST

START_TEST(test_cap_failures_max)
{
        rt_policy_free(parse_ok(json_pack("{s:i}", "failures_max", RT_FAILURES_CAP)));
        parse_bad(json_pack("{s:i}", "failures_max", RT_FAILURES_CAP + 1),
                  "$.ima.runtime.failures_max:");
}
END_TEST

START_TEST(test_cap_ignored_keyrings)
{
        json_t *a = json_array(), *b;

        for (int i = 0; i < RT_IGNORED_KEYRINGS_MAX; i++)
                json_array_append_new(a, json_string(".ima"));
        b = json_deep_copy(a);
        rt_policy_free(parse_ok(json_pack("{s:o}", "ignored_keyrings", a)));
        json_array_append_new(b, json_string(".evm"));
        parse_bad(json_pack("{s:o}", "ignored_keyrings", b), "$.ima.runtime.ignored_keyrings:");
}
END_TEST

/* ---- the signature header ---- */

START_TEST(test_sig_header)
{
        uint8_t s[9 + 4] = {3, 2, 4, 0x12, 0x34, 0x56, 0x78, 0, 4, 1, 2, 3, 4};
        struct rt_sig g;

        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), 0);
        ck_assert_uint_eq(g.keyid, 0x12345678);
        ck_assert_uint_eq(g.sig_len, 4);
        ck_assert_uint_eq(g.hash_algo, 4);
        /* every truncation fails; a length that disagrees fails */
        for (size_t n = 0; n < sizeof(s); n++)
                ck_assert_int_eq(rt_sig_parse(s, n, &g), -EBADMSG);
        s[8] = 5; /* longer than what follows */
        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), -EBADMSG);
        s[8] = 3; /* shorter: a byte after the signature */
        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), -EBADMSG);
        s[8] = 4;
        s[1] = 1;
        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), -EOPNOTSUPP);
        s[1] = 2;
        s[0] = 6; /* verity signatures are v3 only */
        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), -EBADMSG);
        s[1] = 3;
        ck_assert_int_eq(rt_sig_parse(s, sizeof(s), &g), 0);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("runtime");
        TCase *t = tcase_create("runtime");

        tcase_set_timeout(t, 300);
        tcase_add_test(t, test_real_logs_pass_their_allowlist);
        tcase_add_test(t, test_file_outside_allowlist_fails_not_allowed);
        tcase_add_test(t, test_other_digest_fails_digest_mismatch);
        tcase_add_test(t, test_digest_of_another_algorithm_does_not_match);
        tcase_add_test(t, test_violations_fail_or_are_allowed_up_to_n);
        tcase_add_test(t, test_unlisted_ima_buf_event_fails_buf_not_allowed);
        tcase_add_test(t, test_excludes_match_the_whole_path);
        tcase_add_test(t, test_backtracking_exclude_stops_at_the_match_limit);
        tcase_add_test(t, test_failures_are_capped_counts_are_not);
        tcase_add_test(t, test_parse_errors_name_the_path);
        tcase_add_test(t, test_policy_parses_the_runtime_section);
        tcase_add_test(t, test_cap_digests_per_path);
        tcase_add_test(t, test_cap_path_length);
        tcase_add_test(t, test_cap_paths);
        tcase_add_test(t, test_cap_total_digests);
        tcase_add_test(t, test_cap_excludes);
        tcase_add_test(t, test_cap_failures_max);
        tcase_add_test(t, test_cap_ignored_keyrings);
        tcase_add_test(t, test_sig_header);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return tu_run(suite());
}
