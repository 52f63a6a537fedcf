/* SPDX-License-Identifier: MIT */
/*
 * The ima.runtime section parser (rt_policy_from_json) on arbitrary bytes: the input is parsed as
 * JSON (as the policy document's "ima.runtime" value); an accepted section judges a fixed set of
 * entries (listed and unlisted files, a violation, ima-buf events, a long path) and the results
 * must add up: every entry counted once, failures named up to failures_max, names within bounds;
 * judged again with rt_eval_prefetch() before each entry, they come to the same outcomes.
 * The PUT probe (rt_policy_probe) reads each exclude's text to build its subjects: it runs on every
 * accepted section, and a refusal names an exclude; the round's note stays bounded.
 */
#include <string.h>

#include <jansson.h>

#include "policy/runtime.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_RUNTIME_MAX (2 * 1024 * 1024) /* above the excludes' cap: 1024 x 1024 bytes */

static const uint8_t d32[32] = {0xaa};
static char longpath[RT_PATH_BYTES_MAX];

static void warned(void *arg, const char *msg)
{
        (*(unsigned *)arg)++;
        FUZZ_CHECK(!strncmp(msg, "$.ima.runtime.excludes[", 23));
}

static void judge(const struct rt_policy *p, struct rt_ctx *c, unsigned fmax)
{
        static struct rt_state st, st2;
        struct rt_ctx *c2 = NULL;
        int x, out[16];
        struct ima_entry e[] = {
                /* first, as in every log: entry 0 named boot_aggregate takes its own path */
                {.name = "boot_aggregate", .digest = d32, .digest_len = 32},
                {.name = "/bin/sh", .digest = d32, .digest_len = 32},
                {.name = "/tmp/x", .digest = d32, .digest_len = 32},
                {.name = "/usr/bin/a", .digest = d32, .digest_len = 32, .violation = true},
                {.name = "kernel_version",
                 .digest = d32,
                 .digest_len = 32,
                 .buf = (const uint8_t *)"6.1",
                 .buf_len = 3},
                {.name = ".ima",
                 .digest = d32,
                 .digest_len = 32,
                 .buf = (const uint8_t *)"\x30\x03\x02\x01\x01",
                 .buf_len = 5},
                {.name = longpath, .digest = d32, .digest_len = 32},
        };
        uint64_t n = ARRAY_SIZE(e), allowed = 0;

        rt_state_init(&st);
        for (uint64_t i = 0; i < n; i++) {
                e[i].tmpl.known = true;
                e[i].algo = "sha256";
                e[i].algo_len = 6;
                if (e[i].name != longpath)
                        e[i].name_len = (uint32_t)strlen(e[i].name);
                else
                        e[i].name_len = sizeof(longpath);
                x = rt_eval_entry(c, &e[i], i, &st, NULL);
                FUZZ_CHECK(x >= RT_PASS && x <= RT_FAIL);
                allowed += x == RT_VIOLATION_ALLOWED;
                out[i] = x;
        }
        /* the same entries with rt_eval_prefetch() before each (a hint: the same outcomes, unless
         * an exclude's budget, which counts time, ran out in one round and not the other) */
        FUZZ_CHECK(n <= ARRAY_SIZE(out) && rt_ctx_new(p, &c2) == 0);
        rt_state_init(&st2);
        for (uint64_t i = 0; i < n; i++) {
                rt_eval_prefetch(c2, &e[i], i);
                x = rt_eval_entry(c2, &e[i], i, &st2, NULL);
                FUZZ_CHECK(x == out[i] || rt_ctx_exclude_note(c) || rt_ctx_exclude_note(c2));
        }
        FUZZ_CHECK(st2.failed == st.failed || rt_ctx_exclude_note(c) || rt_ctx_exclude_note(c2));
        rt_ctx_free(c2);
        /* every entry counted once: passed, excluded, failed, or an allowed violation */
        FUZZ_CHECK(st.passed + st.failed + st.excluded + allowed == n);
        FUZZ_CHECK(st.violations == 1 && st.signed_ok == 0);
        FUZZ_CHECK(st.nfail <= fmax && st.nfail <= st.failed);
        for (unsigned i = 0; i < st.nfail; i++) {
                FUZZ_CHECK(st.fail[i].path_len <= RT_FAIL_PATH_MAX);
                FUZZ_CHECK(strlen(st.fail[i].path) == st.fail[i].path_len);
                FUZZ_CHECK(st.fail[i].reason < RT_REASON__COUNT);
                FUZZ_CHECK(i == 0 || st.fail[i].entry > st.fail[i - 1].entry);
        }
        FUZZ_CHECK(!rt_ctx_exclude_note(c) || strlen(rt_ctx_exclude_note(c)) < 512);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_t *o;
        struct rt_policy *p = NULL;
        struct rt_ctx *c = NULL;
        struct attest_err err = {0};
        int x;

        if (size > FUZZ_RUNTIME_MAX)
                return 0;
        memset(longpath, 'l', sizeof(longpath));
        longpath[0] = '/';
        o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
        if (!o)
                return 0;
        x = rt_policy_from_json(o, "$.ima.runtime", &p, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EBADMSG || x == -ENOMEM);
                FUZZ_CHECK(x == -ENOMEM || !strncmp(err.msg, "$.ima.runtime", 13));
        } else {
                FUZZ_CHECK(rt_policy_failures_max(p) <= RT_FAILURES_CAP);
                FUZZ_CHECK(rt_ctx_new(p, &c) == 0);
                judge(p, c, rt_policy_failures_max(p));
                rt_ctx_free(c);
                {
                        unsigned nwarn = 0;

                        memset(&err, 0, sizeof(err));
                        x = rt_policy_probe(p, "$.ima.runtime.excludes", warned, &nwarn, &err);
                        FUZZ_CHECK(x == 0 || x == -EBADMSG || x == -ENOMEM);
                        FUZZ_CHECK(x != -EBADMSG ||
                                   !strncmp(err.msg, "$.ima.runtime.excludes[", 23));
                }
                rt_policy_free(p);
        }
        json_decref(o);
        return 0;
}
