/* SPDX-License-Identifier: MIT */
/* attestctl policy runtime-check: a log against a policy's ima.runtime, offline. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-keylime.h"
#include "attestctl/keylime.h"
#include "evidence/bank.h"
#include "evidence/ima.h"
#include "evidence/jpath.h"
#include "policy/policy.h"
#include "policy/runtime.h"
#include "util/hex.h"

static void rtcheck_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policy runtime-check POLICY LOG [--entries] [--time]\n"
                "\n"
                "Judge every entry of an IMA log (binary or ascii, from entry 0) by the policy's\n"
                "ima.runtime section, offline: the log is parsed, its sha1 template hashes\n"
                "checked and PCR 10 replayed, but no quote anchors it (use 'policy check' with\n"
                "evidence for that). For trying a policy (one imported from Keylime, one from\n"
                "from-host --runtime) on a log before a fleet uses it. LOG may be - (standard\n"
                "input); it is read through a 1 MiB window, as in 'attestctl ima'.\n"
                "\n"
                "Options:\n"
                "  --entries   print every failing entry: INDEX REASON PATH (all of them; the\n"
                "              verdict names at most the policy's failures_max)\n"
                "  --time      print the CPU time of reading, replaying and judging the log\n"
                "              and the entries per second on stderr\n"
                "  -h, --help  this text\n"
                "\n"
                "Exit status: 0 every entry passes, 1 some fail, 2 usage, file or malformed\n"
                "input errors.\n");
}

static void hasher_freep_(struct hasher **h)
{
        hasher_free(*h);
}

/* A path for a terminal: printable ASCII kept, the rest as \xHH. */
static void print_path(const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)p[i];

                if (ch >= 0x20 && ch < 0x7f && ch != '\\')
                        putchar(ch);
                else
                        printf("\\x%02x", ch);
        }
}

static double cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
                return 0;
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ctl_policy_runtime_check(int argc, char **argv)
{
        static const struct option opts[] = {
                {"entries", no_argument, NULL, 'e'},
                {"time", no_argument, NULL, 't'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        _cleanup_free_ uint8_t *pbuf = NULL;
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_(rt_ctx_freep) struct rt_ctx *ctx = NULL;
        _cleanup_(hasher_freep_) struct hasher *h = NULL;
        struct attest_err err = {0};
        json_auto_t *doc = NULL;
        struct ctl_log log;
        struct ima_replay rp;
        struct ima_entry e;
        struct rt_state st;
        const struct rt_policy *rt;
        bool entries = false, timed = false;
        size_t plen;
        double t0, t1;
        uint64_t idx = 0;
        char pcr[41];
        int c, x;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'e':
                        entries = true;
                        break;
                case 't':
                        timed = true;
                        break;
                case 'h':
                        rtcheck_usage(stdout);
                        return 0;
                default:
                        rtcheck_usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 2) {
                rtcheck_usage(stderr);
                return 2;
        }
        if (ctl_read_file(argv[optind], KEYLIME_JSON_MAX, &pbuf, &plen) < 0)
                return 2;
        /* a policy file may hold a whole distribution's allowlist: larger than a REST body */
        if (jpath_load((const char *)pbuf, plen, KEYLIME_JSON_MAX, AE_POLICY_JSON, &doc, &err) <
                    0 ||
            policy_from_json(doc, &pol, &err) < 0) {
                fprintf(stderr, "%s: %s: %s\n", argv[optind], attest_code_name(err.code), err.msg);
                return 2;
        }
        json_decref(TAKE_PTR(doc));
        free(TAKE_PTR(pbuf));
        if (!(rt = policy_runtime(pol))) {
                fprintf(stderr, "%s: no ima.runtime section\n", argv[optind]);
                return 2;
        }
        if (hasher_new(&h) < 0 || rt_ctx_new(rt, &ctx) < 0)
                return 2;
        rt_state_init(&st);
        t0 = cpu_seconds();
        /* streamed like attestctl ima: a file or "-", through a 1 MiB window */
        if (ctl_log_open(argv[optind + 1], IMA_STREAM_AUTO, NULL, &log) < 0)
                return 2;
        ima_replay_init(&rp, h, BANK_MASK(BANK_SHA1), true);
        while ((x = ima_stream_next(&log.s, &e, &err)) == 1) {
                enum rt_reason why;

                /* the policy lookup's first memory read starts now and the replay's hashes
                 * run while it comes in */
                rt_eval_prefetch(ctx, &e, idx);
                if ((x = ima_replay_extend(&rp, &e, idx, &err)) < 0)
                        break;
                x = rt_eval_entry(ctx, &e, idx, &st, &why);
                if (x < 0)
                        break;
                if (x == RT_FAIL && entries) {
                        printf("%" PRIu64 " %s ", idx, rt_reason_name(why));
                        print_path(e.name ? e.name : "", e.name ? e.name_len : 0);
                        putchar('\n');
                }
                idx++;
        }
        t1 = cpu_seconds();
        ctl_log_close(&log);
        if (x < 0) {
                fprintf(stderr, "%s: %s: %s\n", argv[optind + 1], attest_code_name(err.code),
                        err.msg[0] ? err.msg : strerror(-x));
                return 2;
        }
        hex_encode(rp.pcr[BANK_SHA1][IMA_PCR], 20, pcr);
        printf("entries %" PRIu64 " passed %" PRIu64 " failed %" PRIu64 " excluded %" PRIu64
               " signed %" PRIu64 " violations %" PRIu64 " pcr10-sha1 %s\n",
               idx, st.passed, st.failed, st.excluded, st.signed_ok, st.violations, pcr);
        if (timed)
                fprintf(stderr,
                        "runtime-check: %" PRIu64 " entries in %.3f s CPU: %.0f entries/s\n", idx,
                        t1 - t0, t1 > t0 ? (double)idx / (t1 - t0) : 0.0);
        if (fflush(stdout) != 0)
                return 2;
        return st.failed ? 1 : 0;
}
