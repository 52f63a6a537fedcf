/* SPDX-License-Identifier: MIT */
/* The ima.runtime section (policy/runtime.c): parsing, caps, evaluation on real logs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

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

/*
 * Each member is optional: a section of one member alone judges every entry of real logs (files
 * fall through to an allowlist that is not there: not_allowed), never touching a table it lacks.
 */
START_TEST(test_each_member_alone_judges_real_logs)
{
        static const char *const sections[] = {
                "{\"excludes\":[\"/nothing\"]}",
                "{\"keyrings\":{\".ima\":["
                "\"0000000000000000000000000000000000000000000000000000000000000000\"]}}",
                "{\"ima_buf\":{\"x\":["
                "\"0000000000000000000000000000000000000000000000000000000000000000\"]}}",
                "{\"ignored_keyrings\":[\".ima\"]}",
                "{\"violations\":{\"allow\":5}}",
                "{\"failures_max\":3}",
                "{\"digests\":{}}",
        };
        static const char *const boots[] = {"qemu61-tcb", "ima-sig-sha512", "ima-buf-runtime"};

        for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
                for (size_t b = 0; b < ARRAY_SIZE(boots); b++) {
                        json_error_t je;
                        json_t *o = json_loads(sections[i], 0, &je);
                        struct rt_policy *p;
                        struct rt_state st;

                        ck_assert_msg(o != NULL, "%s: %s", sections[i], je.text);
                        p = parse_ok(o);
                        eval_log(p, boots[b], &st);
                        ck_assert_msg(st.failed > 0 && st.passed + st.failed + st.excluded > 0,
                                      "%s on %s: %" PRIu64 " failed", sections[i], boots[b],
                                      st.failed);
                        if (st.nfail && strchr(st.fail[0].path, '/'))
                                ck_assert_int_eq(st.fail[0].reason, RT_REASON_NOT_ALLOWED);
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
        ck_assert_int_eq(f->algo, HASHALG_SHA256);
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

/* ---- ima-modsig: the appended PKCS#7, made here with OpenSSL's CMS API as sign-file does ---- */

struct signer {
        EVP_PKEY *key;
        X509 *cert;
        char *pem; /* the certificate, for the policy */
};

static void signer_make(struct signer *s, long serial)
{
        X509_NAME *n;
        BIO *b = BIO_new(BIO_s_mem());
        char *p = NULL;
        long len;

        s->key = EVP_RSA_gen(2048);
        s->cert = X509_new();
        ck_assert(s->key && s->cert && b);
        ck_assert(X509_set_version(s->cert, 2) == 1);
        ck_assert(ASN1_INTEGER_set(X509_get_serialNumber(s->cert), serial) == 1);
        X509_gmtime_adj(X509_getm_notBefore(s->cert), 0);
        X509_gmtime_adj(X509_getm_notAfter(s->cert), 86400);
        ck_assert(X509_set_pubkey(s->cert, s->key) == 1);
        n = X509_get_subject_name(s->cert);
        ck_assert(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"mod",
                                             -1, -1, 0) == 1);
        ck_assert(X509_set_issuer_name(s->cert, n) == 1);
        ck_assert(X509_sign(s->cert, s->key, EVP_sha256()) > 0);
        ck_assert(PEM_write_bio_X509(b, s->cert) == 1);
        len = BIO_get_mem_data(b, &p);
        s->pem = strndup(p, (size_t)len);
        BIO_free(b);
}

static void signer_done(struct signer *s)
{
        EVP_PKEY_free(s->key);
        X509_free(s->cert);
        free(s->pem);
}

enum { MS_ATTRS = 1, MS_EMBED = 2, MS_TWO = 4, MS_NONE = 8 };

/*
 * A CMS SignedData over content by signers s (two with MS_TWO, none with MS_NONE) with digest md:
 * detached, no certificates, no signed attributes (sign-file's flags) unless MS_ATTRS, the
 * content inside with MS_EMBED; pad > 0 adds an unsigned attribute of pad bytes (not covered by
 * the signature: it grows the DER only). DER in *ret (free), its length returned.
 */
static size_t modsig_make(const struct signer *s, const EVP_MD *md, const void *content, size_t n,
                          unsigned flags, size_t pad, uint8_t **ret)
{
        unsigned f = CMS_NOCERTS | CMS_BINARY | CMS_PARTIAL | (flags & MS_EMBED ? 0 : CMS_DETACHED);
        unsigned af =
                CMS_NOCERTS | CMS_BINARY | CMS_NOSMIMECAP | (flags & MS_ATTRS ? 0 : CMS_NOATTR);
        BIO *in = BIO_new_mem_buf(content, (int)n);
        CMS_ContentInfo *cms = CMS_sign(NULL, NULL, NULL, NULL, f);
        CMS_SignerInfo *si = NULL;
        unsigned char *der = NULL;
        int len;

        ck_assert(in && cms);
        if (!(flags & MS_NONE))
                ck_assert((si = CMS_add1_signer(cms, s->cert, s->key, md, af)) != NULL);
        if (flags & MS_TWO)
                ck_assert(CMS_add1_signer(cms, s->cert, s->key, md, af) != NULL);
        /* no signer: the partial structure as it stands (CMS_final wants one) */
        if (!(flags & MS_NONE) && CMS_final(cms, in, NULL, f & ~CMS_PARTIAL) != 1) {
                ERR_print_errors_fp(stderr);
                ck_abort_msg("CMS_final, flags %u", flags);
        }
        if (pad) {
                uint8_t *z = calloc(1, pad);

                ck_assert(z && si);
                ck_assert(CMS_unsigned_add1_attr_by_NID(si, NID_pkcs9_unstructuredAddress,
                                                        V_ASN1_OCTET_STRING, z, (int)pad) == 1);
                free(z);
        }
        len = i2d_CMS_ContentInfo(cms, &der);
        ck_assert_int_gt(len, 0);
        *ret = malloc((size_t)len);
        memcpy(*ret, der, (size_t)len);
        OPENSSL_free(der);
        CMS_ContentInfo_free(cms);
        BIO_free(in);
        return (size_t)len;
}

static const uint8_t mod_content[] = "module content, without its signature";

static struct ima_entry modsig_entry(const char *algo, const uint8_t *d, size_t dn,
                                     const uint8_t *sig, size_t n)
{
        static const uint8_t dng[32] = {1, 2, 3};

        return (struct ima_entry){.pcr = 10,
                                  .tmpl = {.known = true},
                                  .algo = "sha256",
                                  .algo_len = 6,
                                  .digest = dng,
                                  .digest_len = 32,
                                  .name = "/m.ko",
                                  .name_len = 5,
                                  .modsig_algo = algo,
                                  .modsig_algo_len = algo ? (uint32_t)strlen(algo) : 0,
                                  .modsig_digest = d,
                                  .modsig_digest_len = (uint32_t)dn,
                                  .modsig = sig,
                                  .modsig_len = (uint32_t)n};
}

static struct rt_policy *policy_trusting(const struct signer *s, const char *dng_allowed)
{
        json_t *o = json_pack("{s:[s]}", "keys", s->pem);

        if (dng_allowed)
                json_object_set_new(o, "digests", json_pack("{s:[s]}", "/m.ko", dng_allowed));
        return parse_ok(o);
}

/* rt_modsig_check of (algo d, sig) under p: the reason, and 1/0 agreeing with it */
static enum rt_modsig_why why_of(const struct rt_policy *p, const char *algo, const uint8_t *d,
                                 size_t dn, const uint8_t *sig, size_t n)
{
        struct ima_entry e = modsig_entry(algo, d, dn, sig, n);
        enum rt_modsig_why w = RT_MODSIG__COUNT;
        int r = rt_modsig_check(p, &e, &w);

        ck_assert_int_ge(r, 0);
        ck_assert_int_eq(r, w == RT_MODSIG_OK);
        return w;
}

#define ck_why(got, want)                                                                          \
        ck_assert_msg((got) == (want), "modsig: %s, want %s", rt_modsig_why_name(got),             \
                      rt_modsig_why_name(want))

START_TEST(test_modsig_verdicts)
{
        struct signer s, o;
        uint8_t d[32], d384[48], bad[32], *m, *x;
        size_t n, xn;
        struct rt_policy *p, *q;

        signer_make(&s, 1);
        signer_make(&o, 2);
        p = policy_trusting(&s, NULL);
        q = policy_trusting(&o, NULL);
        SHA256(mod_content, sizeof(mod_content), d);
        SHA384(mod_content, sizeof(mod_content), d384);
        memcpy(bad, d, 32);
        bad[31] ^= 1;

        /* sign-file's form: verifies with the trusted key over d-modsig alone */
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), 0, 0, &m);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_OK);
        ck_why(why_of(p, "sha256", bad, 32, m, n), RT_MODSIG_BAD_SIGNATURE);
        ck_why(why_of(q, "sha256", d, 32, m, n), RT_MODSIG_UNKNOWN_SIGNER);
        /* d-modsig of another algorithm than the signer's, or of the wrong length */
        ck_why(why_of(p, "sha384", d384, 48, m, n), RT_MODSIG_DIGEST_ALGO);
        ck_why(why_of(p, "sha256", d, 20, m, n), RT_MODSIG_DIGEST_LEN);
        ck_why(why_of(p, "sha256", d384, 48, m, n), RT_MODSIG_DIGEST_LEN);
        ck_why(why_of(p, NULL, NULL, 0, m, n), RT_MODSIG_NO_DIGEST);
        ck_why(why_of(p, "md4", d, 16, m, n), RT_MODSIG_NO_DIGEST);
        /* a flipped signature byte (the last byte of the DER is the signature's) */
        m[n - 1] ^= 1;
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_BAD_SIGNATURE);
        m[n - 1] ^= 1;
        /* malformed: every truncation, a byte after the DER, garbage */
        for (size_t k = 0; k < n; k++)
                ck_why(why_of(p, "sha256", d, 32, m, k), RT_MODSIG_MALFORMED);
        x = malloc(n + 1);
        memcpy(x, m, n);
        x[n] = 0;
        ck_why(why_of(p, "sha256", d, 32, x, n + 1), RT_MODSIG_MALFORMED);
        memset(x, 0x30, n);
        ck_why(why_of(p, "sha256", d, 32, x, n), RT_MODSIG_MALFORMED);
        free(x);
        free(m);

        /* sha384 signer with a sha384 d-modsig */
        n = modsig_make(&s, EVP_sha384(), mod_content, sizeof(mod_content), 0, 0, &m);
        ck_why(why_of(p, "sha384", d384, 48, m, n), RT_MODSIG_OK);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_DIGEST_ALGO);
        free(m);
        /* several signers, none, the content inside */
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), MS_TWO, 0, &m);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_SIGNERS);
        free(m);
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), MS_NONE, 0, &m);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_SIGNERS);
        free(m);
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), MS_EMBED, 0, &m);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_NOT_DETACHED);
        free(m);
        /* signed attributes: messageDigest must be d-modsig, the signature covers them */
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), MS_ATTRS, 0, &m);
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_OK);
        ck_why(why_of(p, "sha256", bad, 32, m, n), RT_MODSIG_MESSAGE_DIGEST);
        ck_why(why_of(q, "sha256", d, 32, m, n), RT_MODSIG_UNKNOWN_SIGNER);
        m[n - 1] ^= 1;
        ck_why(why_of(p, "sha256", d, 32, m, n), RT_MODSIG_BAD_SIGNATURE);
        free(m);
        /* not SignedData at all: a certificate's DER */
        xn = (size_t)i2d_X509(s.cert, NULL);
        x = malloc(xn);
        {
                unsigned char *w = x;

                ck_assert_int_eq(i2d_X509(s.cert, &w), (int)xn);
        }
        ck_why(why_of(p, "sha256", d, 32, x, xn), RT_MODSIG_MALFORMED);
        free(x);
        rt_policy_free(p);
        rt_policy_free(q);
        signer_done(&s);
        signer_done(&o);
}
END_TEST

/* A good modsig of exactly want bytes: the unsigned attribute pads it (2-byte DER lengths here,
 * so the size grows with the pad one for one) */
static uint8_t *modsig_of_size(const struct signer *s, size_t want)
{
        uint8_t *m;
        size_t n = modsig_make(s, EVP_sha256(), mod_content, sizeof(mod_content), 0, 1000, &m);

        free(m);
        ck_assert_uint_lt(n, want);
        n = modsig_make(s, EVP_sha256(), mod_content, sizeof(mod_content), 0, 1000 + want - n, &m);
        ck_assert_uint_eq(n, want);
        return m;
}

START_TEST(test_cap_modsig)
{
        struct signer s;
        struct rt_policy *p;
        uint8_t d[32], *m;

        signer_make(&s, 1);
        p = policy_trusting(&s, NULL);
        SHA256(mod_content, sizeof(mod_content), d);
        for (size_t n = RT_MODSIG_MAX - 1; n <= RT_MODSIG_MAX + 1; n++) {
                m = modsig_of_size(&s, n);
                ck_why(why_of(p, "sha256", d, 32, m, n),
                       n <= RT_MODSIG_MAX ? RT_MODSIG_OK : RT_MODSIG_TOO_BIG);
                free(m);
        }
        rt_policy_free(p);
        signer_done(&s);
}
END_TEST

/* The entry's verdict: like ima-sig, a good modsig passes signed; otherwise the allowlist is
 * checked against d-ng (the file as measured), and a failure names the signature's reason */
START_TEST(test_modsig_entry_falls_back_to_the_allowlist_by_d_ng)
{
        struct signer s, o;
        uint8_t d[32], *m;
        size_t n;
        char dng_hex[] = "sha256:0102030000000000000000000000000000000000000000000000000000000000",
             dmod_hex[7 + 65];
        struct rt_policy *p;
        struct rt_ctx *c;
        struct rt_state *st = calloc(1, sizeof(*st));
        enum rt_reason why;
        struct ima_entry e;

        signer_make(&s, 1);
        signer_make(&o, 2);
        SHA256(mod_content, sizeof(mod_content), d);
        memcpy(dmod_hex, "sha256:", 7);
        hex_encode(d, 32, dmod_hex + 7);
        n = modsig_make(&s, EVP_sha256(), mod_content, sizeof(mod_content), 0, 0, &m);
        e = modsig_entry("sha256", d, 32, m, n);

        /* trusted: signed */
        p = policy_trusting(&s, NULL);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        rt_state_init(st);
        ck_assert_int_eq(rt_eval_entry(c, &e, 1, st, &why), RT_PASS_SIGNED);
        ck_assert_uint_eq(st->signed_ok, 1);
        rt_ctx_free(c);
        rt_policy_free(p);
        /* untrusted: unknown_key; the same with d-modsig allowlisted (not what is checked) */
        p = policy_trusting(&o, dmod_hex);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        why = RT_REASON__COUNT;
        ck_assert_int_eq(rt_eval_entry(c, &e, 1, st, &why), RT_FAIL);
        ck_assert_int_eq(why, RT_REASON_UNKNOWN_KEY);
        rt_ctx_free(c);
        rt_policy_free(p);
        /* untrusted but d-ng allowlisted: passes unsigned */
        p = policy_trusting(&o, dng_hex);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert_int_eq(rt_eval_entry(c, &e, 1, st, &why), RT_PASS);
        rt_ctx_free(c);
        rt_policy_free(p);
        /* trusted key, bad signature (d-modsig changed): bad_signature */
        d[0] ^= 1;
        p = policy_trusting(&s, NULL);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert_int_eq(rt_eval_entry(c, &e, 1, st, &why), RT_FAIL);
        ck_assert_int_eq(why, RT_REASON_BAD_SIGNATURE);
        rt_ctx_free(c);
        rt_policy_free(p);
        free(m);
        free(st);
        signer_done(&s);
        signer_done(&o);
}
END_TEST

/* ---- cost bounds: the excludes' match budget (attestd-policy(5), COST BOUNDS) ---- */

static const uint8_t plain_digest[32] = {1, 2, 3};

static struct ima_entry plain_entry(const char *path, size_t n)
{
        return (struct ima_entry){.pcr = 10,
                                  .tmpl = {.known = true},
                                  .algo = "sha256",
                                  .algo_len = 6,
                                  .digest = plain_digest,
                                  .digest_len = 32,
                                  .name = path,
                                  .name_len = (uint32_t)n};
}

/* "sha256:" and the hex of plain_digest */
static const char plain_hex[] = "sha256:01020300000000000000000000000000"
                                "00000000000000000000000000000000";

static double cpu_now(void)
{
        struct timespec t;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(test_catastrophic_exclude_fails_entries_within_the_budget)
{
        enum { N = 2000 };
        struct rt_policy *p;
        struct rt_ctx *c = NULL;
        struct rt_state *st = malloc(sizeof(*st));
        char *bad = filled(4001, 'a'), *ok_long = filled(4001, 'a');
        struct ima_entry e;
        enum rt_reason why;
        unsigned limit = 0, spent = 0;
        double t0;
        const char *note;

        /* /(a+)+$ on a's and one other byte backtracks exponentially: every such path stops at
         * the match limit; the round's budget runs out; nothing is excluded by the blow-up */
        bad[0] = ok_long[0] = '/';
        bad[4000] = '!';
        ok_long[4000] = '?';
        p = parse_ok(json_pack("{s:[s,s], s:{s:[s], s:[s]}}", "excludes", "/tmp/.*", "/(a+)+$",
                               "digests", "/usr/bin/ok", plain_hex, ok_long, plain_hex));
        ck_assert_ptr_nonnull(st);
        rt_state_init(st);
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        /* the units alone (the time budget is the next test's) */
        rt_ctx_set_budget(c, RT_EXCL_BUDGET_UNITS, INT64_MAX / 2);
        t0 = cpu_now();
        for (unsigned i = 0; i < N; i++) {
                e = plain_entry(bad, 4001);
                why = RT_REASON__COUNT;
                ck_assert_int_eq(rt_eval_entry(c, &e, i, st, &why), RT_FAIL);
                ck_assert_msg(why == RT_REASON_EXCLUDE_LIMIT || why == RT_REASON_EXCLUDE_BUDGET,
                              "entry %u: %s", i, rt_reason_name(why));
                limit += why == RT_REASON_EXCLUDE_LIMIT;
                spent += why == RT_REASON_EXCLUDE_BUDGET;
                /* once spent, it stays spent: a blow-up costs more than a path brings */
                if (spent)
                        ck_assert_int_eq(why, RT_REASON_EXCLUDE_BUDGET);
        }
        printf("runtime: %d catastrophic entries: %u exclude_match_limit, %u "
               "exclude_budget_spent, %.3f s CPU\n",
               N, limit, spent, cpu_now() - t0);
        ck_assert_uint_eq(st->failed, N);
        ck_assert_uint_eq(st->excluded, 0);
        ck_assert_uint_eq(st->passed, 0);
        /* what the budget allows: RT_EXCL_BUDGET_UNITS and 256 a path, each blow-up costs its
         * three tiers (the first also the search for the pattern that blew up) */
        ck_assert_uint_ge(limit, 50);
        ck_assert_uint_le(limit, (RT_EXCL_BUDGET_UNITS + N * RT_EXCL_UNITS_PER_PATH) /
                                         (RT_MATCH_TIER0 + RT_MATCH_TIER1 + RT_MATCH_LIMIT));
        ck_assert_uint_ge(spent, N / 2);
        ck_assert_str_eq(rt_reason_name(st->fail[0].reason), "exclude_match_limit");
        note = rt_ctx_exclude_note(c);
        ck_assert_ptr_nonnull(note);
        ck_assert_msg(strncmp(note, "exclude pattern 1 exceeded its match budget on entry 0: /aa",
                              59) == 0,
                      "%s", note);
        ck_assert_msg(strstr(note, "...") && strlen(note) < 300, "%s", note);

        /* the budget spent, ordinary paths are still judged as before: excluded, passed */
        e = plain_entry("/tmp/x", 6);
        ck_assert_int_eq(rt_eval_entry(c, &e, N, st, NULL), RT_EXCLUDED);
        e = plain_entry("/usr/bin/ok", 11);
        ck_assert_int_eq(rt_eval_entry(c, &e, N + 1, st, NULL), RT_PASS);
        e = plain_entry("/usr/bin/other", 14);
        why = RT_REASON__COUNT;
        ck_assert_int_eq(rt_eval_entry(c, &e, N + 2, st, &why), RT_FAIL);
        ck_assert_int_eq(why, RT_REASON_NOT_ALLOWED);
        /* a blown-up path whose digest is listed passes on its digest (never on the exclude) */
        e = plain_entry(ok_long, 4001);
        ck_assert_int_eq(rt_exclude_match(c, ok_long, 4001), RT_EXCL_BUDGET);
        ck_assert_int_eq(rt_eval_entry(c, &e, N + 3, st, NULL), RT_PASS);
        rt_ctx_free(c);
        rt_policy_free(p);
        free(st);
        free(bad);
        free(ok_long);
}
END_TEST

START_TEST(test_catastrophic_alternation_exclude_is_named)
{
        struct rt_policy *p;
        struct rt_ctx *c = NULL;
        char *path = filled(40, 'a');

        /* (a|aa)+b: 'b' is required, so the path ends in "\x01b" to get past that check */
        path[38] = '\x01';
        path[39] = 'b';
        p = parse_ok(json_pack("{s:[s,s,s]}", "excludes", "/tmp/.*", "/var/log/.*", "(a|aa)+b"));
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        ck_assert_int_eq(rt_exclude_match(c, path, 40), RT_EXCL_LIMIT);
        ck_assert_ptr_nonnull(rt_ctx_exclude_note(c));
        /* the control byte is not copied into the note (it goes to the journal) */
        ck_assert_str_eq(rt_ctx_exclude_note(c),
                         "exclude pattern 2 exceeded its match budget on entry 0: "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa?b");
        ck_assert_int_eq(rt_exclude_match(c, "/var/log/x", 10), RT_EXCL_YES);
        ck_assert_int_eq(rt_exclude_match(c, "/var/x", 6), RT_EXCL_NO);
        rt_ctx_free(c);
        rt_policy_free(p);
        free(path);
}
END_TEST

/* The round's budget at its cap: one blow-up needs its three tiers, a path brings 256. */
START_TEST(test_exclude_budget_cap)
{
        const uint64_t need = RT_MATCH_TIER0 + RT_MATCH_TIER1 + RT_MATCH_LIMIT;
        const uint64_t cap = need - RT_EXCL_UNITS_PER_PATH;
        struct rt_policy *p = parse_ok(json_pack("{s:[s]}", "excludes", "(a+)+$"));
        char *path = filled(31, 'a');
        struct rt_ctx *c = NULL;

        path[30] = '!';
        for (int d = -1; d <= 1; d++) {
                ck_assert_int_eq(rt_ctx_new(p, &c), 0);
                rt_ctx_set_budget(c, cap + (uint64_t)(int64_t)d, INT64_MAX / 2);
                if (d < 0) {
                        /* the last tier is not affordable: not tried, not excluded */
                        ck_assert_int_eq(rt_exclude_match(c, path, 31), RT_EXCL_BUDGET);
                        ck_assert_uint_eq(rt_ctx_budget(c),
                                          need - 1 - RT_MATCH_TIER0 - RT_MATCH_TIER1);
                        ck_assert_str_eq(rt_ctx_exclude_note(c),
                                         "the excludes' match budget of the round was spent on "
                                         "entry 0: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!");
                } else {
                        ck_assert_int_eq(rt_exclude_match(c, path, 31), RT_EXCL_LIMIT);
                        ck_assert_uint_eq(rt_ctx_budget(c), (uint64_t)d);
                }
                /* a budget of nothing still matches ordinary paths: each brings its allowance */
                rt_ctx_set_budget(c, 0, 0);
                ck_assert_int_eq(rt_exclude_match(c, "aaaa", 4), RT_EXCL_YES);
                ck_assert_int_eq(rt_exclude_match(c, "/x", 2), RT_EXCL_NO);
                c = rt_ctx_free(c);
        }
        rt_policy_free(p);
        free(path);
}
END_TEST

/* PCRE2's JIT does not count the backtracking of ".*": the time budget stops such a pattern. */
START_TEST(test_exclude_time_budget_stops_uncounted_backtracking)
{
        struct rt_policy *p = parse_ok(json_pack("{s:[s]}", "excludes", "/var/.*/.*\\.log"));
        char *path = filled(4096, '/');
        struct rt_ctx *c = NULL;

        /* "/var/" then slashes, then "\x01g" ('g' is required): quadratic, milliseconds (about
         * 8 million steps) however the units count. A nanosecond of budget: a path runs, and the
         * clock (coarse: a match shorter than its tick reads 0 or a tick, in proportion) soon
         * shows the balance overrun; then nothing more runs */
        unsigned ran = 0;

        memcpy(path, "/var/", 5);
        path[4094] = '\x01';
        path[4095] = 'g';
        ck_assert_int_eq(rt_ctx_new(p, &c), 0);
        rt_ctx_set_budget(c, RT_EXCL_BUDGET_UNITS, 1 - RT_EXCL_NS_PER_PATH);
        for (enum rt_excl x; (x = rt_exclude_match(c, path, 4096)) != RT_EXCL_BUDGET; ran++) {
                ck_assert_int_ne(x, RT_EXCL_YES);
                ck_assert_uint_lt(ran, 10000);
        }
        ck_assert_uint_ge(ran, 1);
        /* a balance at or below 0: no path is tried, not even an ordinary one */
        rt_ctx_set_budget(c, RT_EXCL_BUDGET_UNITS, -RT_EXCL_NS_PER_PATH);
        ck_assert_int_eq(rt_exclude_match(c, "/var/a/b.log", 12), RT_EXCL_BUDGET);
        ck_assert_ptr_nonnull(rt_ctx_exclude_note(c));
        /* the balance back above 0, ordinary paths match again */
        rt_ctx_set_budget(c, RT_EXCL_BUDGET_UNITS, 0);
        ck_assert_int_eq(rt_exclude_match(c, "/var/a/b.log", 12), RT_EXCL_YES);
        rt_ctx_free(c);
        rt_policy_free(p);
        free(path);
}
END_TEST

/* Probe p's excludes: the return, and the warnings in w (joined by '\n'). */
static void probe_warn(void *arg, const char *msg)
{
        char *w = arg;

        snprintf(w + strlen(w), 4096 - strlen(w), "%s\n", msg);
}

static int probe(const char *excludes_json, char *w, struct attest_err *err)
{
        json_t *o = json_object();
        struct rt_policy *p;
        int x;

        json_object_set_new(o, "excludes", load(excludes_json));
        p = parse_ok(o);
        w[0] = '\0';
        memset(err, 0, sizeof(*err));
        x = rt_policy_probe(p, "$.ima.runtime.excludes", probe_warn, w, err);
        rt_policy_free(p);
        return x;
}

START_TEST(test_probe_rejects_catastrophic_excludes)
{
        static const char *const bad[] = {
                "[\"/tmp/.*\",\"(a+)+$\"]",      "[\"/tmp/.*\",\"/var/.*\",\"(a|aa)+b\"]",
                "[\"/home/(x+x+)+y\"]",          "[\"/usr/lib/.*\",\"^(\\\\w+\\\\.?)*$\"]",
                "[\"/data/([a-z]+)*\\\\.txt\"]",
        };
        static const char *const want[] = {
                "$.ima.runtime.excludes[1]: exceeds the match limit",
                "$.ima.runtime.excludes[2]: exceeds the match limit",
                "$.ima.runtime.excludes[0]: exceeds the match limit",
                "$.ima.runtime.excludes[1]: exceeds the match limit",
                "$.ima.runtime.excludes[0]: exceeds the match limit",
        };
        struct attest_err err;
        char w[4096];

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                ck_assert_msg(probe(bad[i], w, &err) == -EBADMSG, "%s accepted", bad[i]);
                ck_assert_msg(strncmp(err.msg, want[i], strlen(want[i])) == 0, "%s: %s", bad[i],
                              err.msg);
        }
}
END_TEST

START_TEST(test_probe_accepts_ordinary_excludes_and_warns_polynomial)
{
        struct attest_err err;
        char w[4096];

        /* what policies carry: prefixes, Keylime's translated excludes, suffixes */
        ck_assert_int_eq(
                probe("[\"/tmp/.*\",\"/var/log/.*\",\"boot_aggregate\","
                      "\"(?:/data/.*\\\\.txt$)[\\\\s\\\\S]*\",\"(?:/var/log/)[\\\\s\\\\S]*\","
                      "\"/usr/lib/[^/]*\\\\.so(\\\\.[0-9]+)*\",\".*\\\\.pyc\","
                      "\"/proc/[0-9]+/.*\"]",
                      w, &err),
                0);
        ck_assert_msg(!strcmp(w, ""), "%s", w);
        /* .* twice around a literal: quadratic, over the limit only on long paths: accepted,
         * warned, the path named */
        ck_assert_int_eq(probe("[\"/tmp/.*\",\"/var/.*/.*\\\\.log\"]", w, &err), 0);
        ck_assert_msg(strncmp(w, "$.ima.runtime.excludes[1]: exceeds the match limit", 50) == 0,
                      "%s", w);
        ck_assert_ptr_null(strstr(w, "excludes[0]"));
}
END_TEST

START_TEST(test_policy_size_counts_what_it_holds)
{
        struct rt_policy *a = parse_ok(json_pack("{s:{s:[s]}}", "digests", "/a", plain_hex));
        json_t *d = json_object();
        struct rt_policy *b;
        char path[32];

        for (int i = 0; i < 10000; i++) {
                snprintf(path, sizeof(path), "/usr/bin/f%d", i);
                json_object_set_new(d, path, json_pack("[s]", plain_hex));
        }
        b = parse_ok(json_pack("{s:o, s:[s]}", "digests", d, "excludes", "/tmp/.*"));
        ck_assert_uint_gt(rt_policy_size(a), 0);
        /* 10,000 digests inline (RT_DIGEST_MAX bytes each) and their slots */
        ck_assert_uint_ge(rt_policy_size(b), rt_policy_size(a) + 10000 * RT_DIGEST_MAX);
        ck_assert_uint_le(rt_policy_size(b), 10 * 1024 * 1024);
        ck_assert_uint_eq(rt_policy_size(NULL), 0);
        rt_policy_free(a);
        rt_policy_free(b);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("runtime");
        TCase *t = tcase_create("runtime"), *cost = tcase_create("cost");

        tcase_set_timeout(t, 300);
        tcase_add_test(t, test_real_logs_pass_their_allowlist);
        tcase_add_test(t, test_each_member_alone_judges_real_logs);
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
        tcase_add_test(t, test_modsig_verdicts);
        tcase_add_test(t, test_cap_modsig);
        tcase_add_test(t, test_modsig_entry_falls_back_to_the_allowlist_by_d_ng);
        suite_add_tcase(s, t);
        /* the excludes' cost bounds (attestd-policy(5), COST BOUNDS) */
        tcase_set_timeout(cost, 300);
        tcase_add_test(cost, test_catastrophic_exclude_fails_entries_within_the_budget);
        tcase_add_test(cost, test_catastrophic_alternation_exclude_is_named);
        tcase_add_test(cost, test_exclude_budget_cap);
        tcase_add_test(cost, test_exclude_time_budget_stops_uncounted_backtracking);
        tcase_add_test(cost, test_probe_rejects_catastrophic_excludes);
        tcase_add_test(cost, test_probe_accepts_ordinary_excludes_and_warns_polynomial);
        tcase_add_test(cost, test_policy_size_counts_what_it_holds);
        suite_add_tcase(s, cost);
        return s;
}

int main(void)
{
        return tu_run(suite());
}
