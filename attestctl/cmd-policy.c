/* SPDX-License-Identifier: MIT */
/*
 * attestctl policy validate | check | from-host: policies offline. check and from-host verify the
 * evidence fully (quote with the AK, nonce from the evidence, IMA replay from entry 0) first.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-keylime.h"
#include "attestctl/keylime.h"
#include "evidence/jpath.h"
#include "attestctl/remote.h"
#include "evidence/evjson.h"
#include "policy/policy.h"
#include "evidence/quote.h"
#include "policy/runtime.h"
#include "util/num.h"
#include "verify/verify.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policy validate POLICY [--json]\n"
                "       attestctl policy check POLICY EVIDENCE --ak AK.pub [--sel SELECTION] "
                "[--json]\n"
                "       attestctl policy from-host EVIDENCE --ak AK.pub [--name NAME] "
                "[--sel SELECTION] [--boot]\n"
                "                 [--runtime [RUNTIME OPTIONS]]\n"
                "       attestctl policy from-host --runtime --ima-log LOG [--name NAME] "
                "[RUNTIME OPTIONS]\n"
                "       attestctl policy import-keylime FILE [--name NAME] [-o OUT] "
                "[--violations V]\n"
                "       attestctl policy runtime-check POLICY LOG [--entries] [--time]\n"
                "\n"
                "validate   parse a policy (attestd-policy(5)); errors name the JSON path.\n"
                "check      verify an evidence document (the agent's JSON: quote, PCRs, IMA log\n"
                "           from entry 0, host facts) with the AK public key and the nonce it\n"
                "           carries, then evaluate the policy; prints the verdict (a table of\n"
                "           the claims, failing ones first; --json: the verdict JSON).\n"
                "from-host  verify the evidence of a known-good host the same way and print a\n"
                "           policy that pins its state; --runtime adds the ima.runtime section\n"
                "           (every path in the IMA log with the digests seen for it, key and\n"
                "           ima-buf measurements, as Keylime's create_runtime_policy does).\n"
                "           With --ima-log instead of EVIDENCE: only ima.runtime, from a log\n"
                "           file (binary or ascii; - for standard input) read through a 1 MiB\n"
                "           window as 'attestctl ima' reads it; nothing verified.\n"
                "import-keylime  convert a Keylime runtime policy (see its own --help).\n"
                "runtime-check   judge an IMA log by a policy's ima.runtime, offline (see its\n"
                "           own --help).\n"
                "\n"
                "Options:\n"
                "  --ak FILE        AK public area, TPM2B_PUBLIC (tpm2_createak -u); required by\n"
                "                   check and from-host, since an unverified quote anchors "
                "nothing\n"
                "  --sel SEL        PCR selection the quote must cover (e.g. "
                "sha256:0-10+sha1:10);\n"
                "                   default: whatever it covers\n"
                "  --name NAME      from-host: the policy's name (default: from-host)\n"
                "  --boot           from-host: add the \"boot\" section from the evidence's\n"
                "                   firmware event log (boot_log)\n"
                "  --json           validate, check: JSON on stdout (from-host always writes\n"
                "                   JSON, the policy)\n"
                "Runtime options (from-host --runtime):\n"
                "  --runtime        write the ima.runtime section too\n"
                "  --ima-log LOG    the known-good IMA log file, without evidence (- for\n"
                "                   standard input)\n"
                "  --exclude REGEX  a PCRE2 pattern matched against the whole path: those\n"
                "                   paths are left out and excluded by the policy (repeatable)\n"
                "  --rootfs DIR     add the digest of every regular file below DIR, as the path\n"
                "                   \"/\" + its path below DIR: symbolic links are never\n"
                "                   followed, other file systems not entered\n"
                "  --rootfs-alg ALG the digest for --rootfs: sha1, sha256 (default), sha384,\n"
                "                   sha512 (the log's ima_hash)\n"
                "  --rootfs-max N   hash at most N files, else fail (default 1000000)\n"
                "  --violations V   fail, or allow N violation entries (default: as many as\n"
                "                   the log holds, \"fail\" when it holds none)\n"
                "  -h, --help       this text\n"
                "\n"
                "Exit status: validate 0 valid, 1 invalid; check 0 the verdict passes, 1 it fails\n"
                "(a failed verification is a failed verdict), from-host 0 written, 1 the evidence\n"
                "does not verify; 2 usage, file or malformed-input errors.\n");
}

struct args {
        const char *ak, *sel, *name, *ima_log;
        bool json, runtime;
        bool boot; /* from-host --boot */
        int npos;
        const char *pos[2];
        struct ctl_runtime_opts rt;
};

static int parse_args(int argc, char **argv, struct args *a)
{
        static const struct option opts[] = {
                {"ak", required_argument, NULL, 'k'},
                {"sel", required_argument, NULL, 'l'},
                {"name", required_argument, NULL, 'n'},
                {"json", no_argument, NULL, 'j'},
                {"runtime", no_argument, NULL, 'r'},
                {"ima-log", required_argument, NULL, 'L'},
                {"exclude", required_argument, NULL, 'x'},
                {"rootfs", required_argument, NULL, 'R'},
                {"rootfs-alg", required_argument, NULL, 'A'},
                {"rootfs-max", required_argument, NULL, 'M'},
                {"violations", required_argument, NULL, 'V'},
                {"boot", no_argument, NULL, 'B'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        int c;

        *a = (struct args){.name = "from-host", .rt.rootfs_max = CTL_ROOTFS_MAX_DEFAULT};
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'k':
                        a->ak = optarg;
                        break;
                case 'l':
                        a->sel = optarg;
                        break;
                case 'n':
                        a->name = optarg;
                        break;
                case 'j':
                        a->json = true;
                        break;
                case 'r':
                        a->runtime = true;
                        break;
                case 'L':
                        a->ima_log = optarg;
                        break;
                case 'x':
                        if (a->rt.nexcludes == CTL_EXCLUDES_MAX) {
                                fprintf(stderr, "attestctl policy: more than %d --exclude\n",
                                        CTL_EXCLUDES_MAX);
                                return -EINVAL;
                        }
                        a->rt.excludes[a->rt.nexcludes++] = optarg;
                        break;
                case 'R':
                        a->rt.rootfs = optarg;
                        break;
                case 'A':
                        a->rt.rootfs_alg = optarg;
                        break;
                case 'M':
                        if (num_u64(optarg, strlen(optarg), 1, UINT32_MAX, &a->rt.rootfs_max) < 0) {
                                fprintf(stderr, "attestctl policy: --rootfs-max: 1-%u\n",
                                        UINT32_MAX);
                                return -EINVAL;
                        }
                        break;
                case 'V':
                        if (ctl_parse_violations(optarg, &a->rt.violations_allow) < 0) {
                                fprintf(stderr, "attestctl policy: --violations: 'fail' or "
                                                "a count\n");
                                return -EINVAL;
                        }
                        a->rt.violations_set = true;
                        break;
                case 'B':
                        a->boot = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        }
        for (; optind < argc; optind++) {
                if (a->npos == 2) {
                        fprintf(stderr, "attestctl policy: too many arguments\n");
                        return -EINVAL;
                }
                a->pos[a->npos++] = argv[optind];
        }
        return 0;
}

/* A policy file: up to KEYLIME_JSON_MAX, since ima.runtime may list a distribution's files. */
static int load_policy(const char *path, struct policy **ret)
{
        _cleanup_free_ uint8_t *buf = NULL;
        struct attest_err err = {0};
        json_auto_t *doc = NULL;
        size_t len;
        int x;

        if ((x = ctl_read_file(path, KEYLIME_JSON_MAX, &buf, &len)) < 0)
                return x;
        if ((x = jpath_load((const char *)buf, len, KEYLIME_JSON_MAX, AE_POLICY_JSON, &doc, &err)) <
                    0 ||
            (x = policy_from_json(doc, ret, &err)) < 0) {
                fprintf(stderr, "%s: %s: %s\n", path, attest_code_name(err.code), err.msg);
                return x;
        }
        return 0;
}

/*
 * Load and verify: 0 verified, 1 verification failed (printed), negative on other errors. With
 * rt (the policy's ima.runtime context and the results, or NULL) every accepted entry is judged
 * too, in the replay pass, as attestd does.
 */
static int load_and_verify(const struct args *a, const char *ev_path, struct rt_observer *rt,
                           struct evidence **ret_ev, struct verify_result *ret_vr,
                           struct attest_err *verr)
{
        const struct verify_observer observer = {
                .begin = rt_observer_begin, .entry = rt_observer_entry, .arg = rt};
        _cleanup_free_ uint8_t *evbuf = NULL, *akbuf = NULL;
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        struct pcr_sel sel;
        size_t evlen, aklen;
        int x;

        if (!a->ak) {
                fprintf(stderr, "attestctl policy: --ak AK.pub is required\n");
                return -EINVAL;
        }
        if (a->sel && pcr_sel_parse(a->sel, &sel) < 0) {
                fprintf(stderr, "attestctl policy: --sel: invalid selection '%s'\n", a->sel);
                return -EINVAL;
        }
        if ((x = ctl_read_file(ev_path, EVIDENCE_JSON_MAX, &evbuf, &evlen)) < 0 ||
            (x = ctl_read_file(a->ak, QUOTE_AK_MAX, &akbuf, &aklen)) < 0)
                return x;
        if ((x = evidence_from_json((const char *)evbuf, evlen, EVIDENCE_JSON_MAX, &ev, &err)) <
            0) {
                fprintf(stderr, "%s: %s: %s\n", ev_path, attest_code_name(err.code), err.msg);
                return x;
        }
        if ((x = quote_ak_parse(akbuf, aklen, &ak, &err)) < 0) {
                fprintf(stderr, "%s: %s: %s\n", a->ak, attest_code_name(err.code), err.msg);
                return x;
        }
        struct verify_input in = {
                .ak = ak,
                .nonce = ev->nonce,
                .nonce_len = ev->nonce_len,
                .sel = a->sel ? &sel : NULL,
                .observer = rt ? &observer : NULL,
        };
        if ((x = verify_evidence(&in, ev, ret_vr, verr)) < 0)
                return 1;
        *ret_ev = TAKE_PTR(ev);
        return 0;
}

static int do_check(const struct args *a)
{
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_(rt_ctx_freep) struct rt_ctx *rt = NULL;
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        struct verify_result vr;
        struct rt_state st;
        struct rt_observer obs = {.st = &st};
        struct attest_err verr = {0};
        json_auto_t *verdict = NULL;
        int x;

        if (a->npos != 2) {
                usage(stderr);
                return 2;
        }
        if (load_policy(a->pos[0], &pol) < 0)
                return 2;
        if (policy_runtime(pol) && rt_ctx_new(policy_runtime(pol), &rt) < 0)
                return 2;
        /* offline: no stored results, the log judged from where the evidence starts it */
        rt_state_empty(&st);
        (void)rt_state_for_round(&st, false, 0, rt ? policy_name(pol) : NULL);
        obs.ctx = rt;
        x = load_and_verify(a, a->pos[1], rt ? &obs : NULL, &ev, &vr, &verr);
        if (x < 0)
                return 2;
        if (x == 1) {
                /* the evidence does not verify: a failed verdict, with the failed check */
                verdict = json_pack("{s:s, s:s, s:s, s:s}", "status", "fail", "policy",
                                    policy_name(pol), "error", attest_code_name(verr.code),
                                    "detail", verr.msg);
                if (!verdict)
                        return 2;
                if (!a->json) {
                        printf("verdict: FAIL (policy %s)\nthe evidence does not verify: %s: %s\n",
                               policy_name(pol), attest_code_name(verr.code), verr.msg);
                        return fflush(stdout) == 0 ? 1 : 2;
                }
                if (print_json(verdict) < 0)
                        return 2;
                return 1;
        }
        struct claims c;
        struct verdict v;
        enum verdict_status status = VERDICT_FAIL;

        x = claims_from_verified(&vr, ev, &c);
        if (x == 0)
                c.runtime = st.ref[0] ? &st : NULL;
        if (x == 0 && (x = policy_eval(pol, &c, &v)) == 0) {
                status = v.status;
                x = verdict_to_json(&v, &verdict);
                verdict_done(&v);
        }
        /* what the verification saw, as attestd reports it beside the verdict */
        if (x == 0 && json_object_set_new(verdict, "ima",
                                          json_pack("{s:I, s:I, s:I, s:b, s:b}", "new_entries",
                                                    (json_int_t)vr.new_entries, "after_quote",
                                                    (json_int_t)vr.extra_entries, "entries",
                                                    (json_int_t)vr.next.entries,
                                                    "boot_aggregate_seen", vr.boot_aggregate_seen,
                                                    "boot_aggregate_ok", vr.boot_aggregate_ok)) < 0)
                x = -ENOMEM;
        verify_result_done(&vr);
        if (x < 0) {
                fprintf(stderr, "attestctl policy check: cannot evaluate: %s\n", strerror(-x));
                return 2;
        }
        if (a->json) {
                if (print_json(verdict) < 0)
                        return 2;
        } else {
                json_t *ima = json_object_get(verdict, "ima");
                struct remote out; /* the terminal's colour and width; nothing connected */
                char b[32];

                printf("verdict: %s (policy %s)\n",
                       colored(status == VERDICT_PASS ? "PASS" : "FAIL",
                               status == VERDICT_PASS ? C_GREEN : C_RED, remote_color(), b,
                               sizeof(b)),
                       policy_name(pol));
                printf("ima:        %lld entries replayed (%lld after the quote), boot_aggregate "
                       "%s\n",
                       (long long)json_integer_value(json_object_get(ima, "new_entries")),
                       (long long)json_integer_value(json_object_get(ima, "after_quote")),
                       !json_is_true(json_object_get(ima, "boot_aggregate_seen")) ? "not seen"
                       : json_is_true(json_object_get(ima, "boot_aggregate_ok"))  ? "ok"
                                                                                  : "MISMATCH");
                remote_init(&out);
                print_claims(verdict, &out);
                if (fflush(stdout) != 0)
                        return 2;
        }
        return status == VERDICT_PASS ? 0 : 1;
}

/* A policy that must load with attestd's own parser before it is printed. */
static int print_policy(const json_t *pol)
{
        _cleanup_(policy_freep) struct policy *p = NULL;
        struct attest_err err = {0};

        if (policy_from_json(pol, &p, &err) < 0) {
                fprintf(stderr,
                        "attestctl policy from-host: the policy written does not load: "
                        "%s: %s\n",
                        attest_code_name(err.code), err.msg);
                return -EBADMSG;
        }
        return print_json(pol);
}

/* --ima-log: streamed like attestctl ima (a file or "-", through a 1 MiB window) */
static int from_log(const struct args *a)
{
        json_auto_t *rt = NULL, *pol = NULL;
        struct ctl_log in;
        int x;

        if (a->npos != 0 || a->ak || a->sel) {
                usage(stderr);
                return 2;
        }
        if (ctl_log_open(a->ima_log, IMA_STREAM_AUTO, NULL, &in) < 0)
                return 2;
        x = ctl_runtime_section_stream(&in, &a->rt, &rt);
        ctl_log_close(&in);
        if (x < 0)
                return 2;
        pol = json_pack("{s:s, s:{s:O}}", "name", a->name, "ima", "runtime", rt);
        if (!pol || print_policy(pol) < 0)
                return 2;
        return 0;
}

/* --boot: the "boot" section from the firmware event log (policy/policy-host-boot.c). */
static int from_host_boot(const struct claims *c, json_t *pol)
{
        json_t *s = NULL;
        int x = policy_boot_from_host(c, &s);

        if (x == -ENODATA)
                fprintf(stderr, "attestctl policy from-host: --boot: the evidence has no "
                                "firmware event log (boot_log)\n");
        if (x < 0)
                return x;
        return json_object_set_new(pol, "boot", s) < 0 ? -ENOMEM : 0;
}

static int do_from_host(const struct args *a)
{
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        struct verify_result vr;
        struct attest_err verr = {0};
        json_auto_t *pol = NULL, *rt = NULL;
        int x;

        if ((a->rt.nexcludes || a->rt.rootfs || a->rt.violations_set || a->ima_log) &&
            !a->runtime) {
                fprintf(stderr, "attestctl policy from-host: runtime options need --runtime\n");
                return 2;
        }
        if (a->ima_log)
                return from_log(a);
        if (a->npos != 1) {
                usage(stderr);
                return 2;
        }
        x = load_and_verify(a, a->pos[0], NULL, &ev, &vr, &verr);
        if (x < 0)
                return 2;
        if (x == 1) {
                fprintf(stderr, "%s: does not verify: %s: %s\n", a->pos[0],
                        attest_code_name(verr.code), verr.msg);
                return 1;
        }
        struct claims c;

        x = claims_from_verified(&vr, ev, &c);
        if (x == 0)
                x = policy_from_host(&c, a->name, &pol);
        if (x == 0 && a->boot)
                x = from_host_boot(&c, pol);
        verify_result_done(&vr);
        if (x == -EINVAL) {
                fprintf(stderr,
                        "attestctl policy from-host: --name: '%s' is not [A-Za-z0-9_.+~-]"
                        "{1,64}\n",
                        a->name);
                return 2;
        }
        if (x < 0)
                return 2;
        if (a->runtime) {
                json_t *ima;

                /* the verified log: the evidence carries it from entry 0 */
                if (ev->ima_offset != 0 || !ev->ima) {
                        fprintf(stderr, "attestctl policy from-host: --runtime needs the IMA log "
                                        "from entry 0 in the evidence\n");
                        return 2;
                }
                if (ctl_runtime_section(ev->ima, ev->ima_len, &a->rt, &rt) < 0)
                        return 2;
                ima = json_object_get(pol, "ima");
                if (!ima) {
                        if (json_object_set_new(pol, "ima", json_object()) < 0)
                                return 2;
                        ima = json_object_get(pol, "ima");
                }
                if (json_object_set(ima, "runtime", rt) < 0)
                        return 2;
        }
        if (print_policy(pol) < 0)
                return 2;
        return 0;
}

int cmd_policy(int argc, char **argv)
{
        struct args a;
        int x;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        if (strcmp(argv[1], "import-keylime") == 0)
                return ctl_policy_import_keylime(argc - 1, argv + 1);
        if (strcmp(argv[1], "runtime-check") == 0)
                return ctl_policy_runtime_check(argc - 1, argv + 1);
        x = parse_args(argc - 1, argv + 1, &a);
        if (x)
                return x > 0 ? 0 : 2;
        if (strcmp(argv[1], "validate") == 0) {
                _cleanup_(policy_freep) struct policy *pol = NULL;

                if (a.npos != 1 || a.ak || a.sel || a.runtime || a.ima_log) {
                        usage(stderr);
                        return 2;
                }
                x = load_policy(a.pos[0], &pol);
                if (x == -EBADMSG || x == -E2BIG)
                        return 1;
                if (x < 0)
                        return 2;
                if (a.json) {
                        json_auto_t *o =
                                json_pack("{s:b, s:s}", "valid", 1, "name", policy_name(pol));

                        return o && print_json(o) == 0 ? 0 : 2;
                }
                printf("%s: valid policy '%s'\n", a.pos[0], policy_name(pol));
                return 0;
        }
        if (strcmp(argv[1], "check") == 0)
                return do_check(&a);
        if (strcmp(argv[1], "from-host") == 0)
                return do_from_host(&a);
        fprintf(stderr, "attestctl policy: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
}
