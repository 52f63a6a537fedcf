/* SPDX-License-Identifier: MIT */
/*
 * attest-agent: proves its AK to the verifier once (enrolment by credential activation, enrol.c),
 * then attests on the verifier's schedule (round.c). Here: options and the config file, signals,
 * systemd notification and the loop with its back-off. See attest-agent(8).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <systemd/sd-daemon.h>

#include "agent/agent.h"
#include "util/clock.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attest-agent [OPTIONS]\n"
                "\n"
                "Attest this host to an attestd verifier: enrol the TPM's attestation key once\n"
                "(credential activation), then answer the verifier's challenges with the IMA log,\n"
                "a TPM quote over the PCRs with the verifier's nonce, and host facts.\n"
                "\n"
                "Options (each also a 'key = value' line of the config file, without '--'):\n"
                "  --config FILE        config file (default /etc/attest-agent/agent.conf if "
                "present)\n"
                "  --verifier URL       https://host:port of attestd (required unless\n"
                "                       --dump-evidence without a verifier); repeatable, up to "
                "8,\n"
                "                       in order of preference: the agent fails over to the "
                "next\n"
                "                       (the flags replace the config file's verifier lines)\n"
                "  --retry-max SEC      cap of the back-off when no verifier answers (default "
                "300)\n"
                "  --failback SEC       seconds on a later verifier before the first is tried\n"
                "                       again (default 600)\n"
                "  --ca FILE            CA bundle the verifier's certificate must chain to "
                "(pinned)\n"
                "  --cert FILE, --key FILE  client certificate for mutual TLS (optional)\n"
                "  --token-file FILE    enrolment bearer token (role enroll), read once; never "
                "logged\n"
                "  --tcti CONF          TPM access: device:/dev/tpmrm0 (default), "
                "swtpm:host=H,port=P\n"
                "  --state-dir DIR      AK blobs and agent id (default /var/lib/attest-agent)\n"
                "  --ak-alg rsa|ecc     attestation key algorithm (default rsa)\n"
                "  --ima-log PATH       IMA log (default the binary securityfs log)\n"
                "  --ima-format binary|ascii  format of --ima-log (default binary)\n"
                "  --boot-log PATH|none firmware event log (default the securityfs TCG log)\n"
                "  --pcrs SEL           PCR selection when the verifier names none (sha256:0-10)\n"
                "  --interval SEC       seconds between rounds without a next_due (default 300)\n"
                "  --timeout SEC        seconds one request to the verifier may take (default 60)\n"
                "  --once               one round, then exit 0 on pass, 1 on fail, 2 on error\n"
                "                       (3: decommissioned, see EXIT STATUS in attest-agent(8))\n"
                "  --dump-evidence FILE also write the evidence JSON to FILE and the AK public "
                "area\n"
                "                       to FILE.ak.pub (for 'attestctl policy from-host'); "
                "without\n"
                "                       --verifier, quote a local random nonce and exit\n"
                "  --insecure-http      allow an http:// verifier (labs on loopback only)\n"
                "  --proc-root DIR      read /proc facts below DIR (tests)\n"
                "  --label KEY=VALUE    an operator label of this host (repeatable)\n"
                "  --machine-id-file F  the machine id (default /etc/machine-id)\n"
                "  -h, --help           this text\n"
                "  --version            show the version\n"
                "\n"
                "Signals: SIGTERM/SIGINT finish the round in flight and exit. Under systemd\n"
                "(Type=notify) READY=1 follows enrolment, STATUS= carries the last verdict, and "
                "the\n"
                "watchdog is pinged when WatchdogSec= is set.\n"
                "\n"
                "Logs go to stderr: <N> priority prefixes when it is the journal, an ISO 8601 "
                "UTC\n"
                "time and the level on a file or pipe, 'error: ' on a terminal;\n"
                "ATTEST_LOG_FORMAT=journal|time|terminal forces one.\n"
                "\n"
                "Exit status: 0 stopped (--once: pass), 1 --once: fail, 2 error, 3 the verifier\n"
                "decommissioned this agent or its EK (not retried; RestartPreventExitStatus=3).\n");
}

/* ---- options and config file ---- */

#ifndef ATTEST_VERSION
#define ATTEST_VERSION "0"
#endif

/* getopt's val for a key is 256 + the key (agent_config.h); 'h' is --help. */
#define OPT_KEY(k) (256 + (k))
#define OPT_CONFIG 512
#define OPT_VERSION 513

static const struct option options[] = {
        {"config", required_argument, NULL, OPT_CONFIG},
        {"verifier", required_argument, NULL, OPT_KEY(AGENT_CFG_VERIFIER)},
        {"ca", required_argument, NULL, OPT_KEY(AGENT_CFG_CA)},
        {"cert", required_argument, NULL, OPT_KEY(AGENT_CFG_CERT)},
        {"key", required_argument, NULL, OPT_KEY(AGENT_CFG_KEY)},
        {"token-file", required_argument, NULL, OPT_KEY(AGENT_CFG_TOKEN_FILE)},
        {"tcti", required_argument, NULL, OPT_KEY(AGENT_CFG_TCTI)},
        {"state-dir", required_argument, NULL, OPT_KEY(AGENT_CFG_STATE_DIR)},
        {"ak-alg", required_argument, NULL, OPT_KEY(AGENT_CFG_AK_ALG)},
        {"ima-log", required_argument, NULL, OPT_KEY(AGENT_CFG_IMA_LOG)},
        {"ima-format", required_argument, NULL, OPT_KEY(AGENT_CFG_IMA_FORMAT)},
        {"pcrs", required_argument, NULL, OPT_KEY(AGENT_CFG_PCRS)},
        {"interval", required_argument, NULL, OPT_KEY(AGENT_CFG_INTERVAL)},
        {"once", no_argument, NULL, OPT_KEY(AGENT_CFG_ONCE)},
        {"dump-evidence", required_argument, NULL, OPT_KEY(AGENT_CFG_DUMP_EVIDENCE)},
        {"insecure-http", no_argument, NULL, OPT_KEY(AGENT_CFG_INSECURE_HTTP)},
        {"proc-root", required_argument, NULL, OPT_KEY(AGENT_CFG_PROC_ROOT)},
        {"timeout", required_argument, NULL, OPT_KEY(AGENT_CFG_TIMEOUT)},
        {"label", required_argument, NULL, OPT_KEY(AGENT_CFG_LABEL)},
        {"machine-id-file", required_argument, NULL, OPT_KEY(AGENT_CFG_MACHINE_ID_FILE)},
        {"retry-max", required_argument, NULL, OPT_KEY(AGENT_CFG_RETRY_MAX)},
        {"failback", required_argument, NULL, OPT_KEY(AGENT_CFG_FAILBACK)},
        {"boot-log", required_argument, NULL, OPT_KEY(AGENT_CFG_BOOT_LOG)},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {0},
};

/* Point the agent at the settings in a->cfg (file first, flags over it); defaults stay. */
static int apply_config(struct agent *a)
{
        const struct agent_config *c = &a->cfg;
        static const char *const sub[5] = {"sys/kernel/osrelease", "sys/kernel/random/boot_id",
                                           "cmdline", "config.gz", "sys/kernel/hostname"};

#define STR(k, f, dst)                                                                             \
        do {                                                                                       \
                if (agent_config_has(c, k))                                                        \
                        (dst) = c->f;                                                              \
        } while (0)
        STR(AGENT_CFG_CA, ca, a->ca);
        STR(AGENT_CFG_CERT, cert, a->cert);
        STR(AGENT_CFG_KEY, key, a->key);
        STR(AGENT_CFG_TOKEN_FILE, token_file, a->token_file);
        STR(AGENT_CFG_TCTI, tcti, a->tcti);
        STR(AGENT_CFG_STATE_DIR, state_dir, a->state_dir);
        STR(AGENT_CFG_IMA_LOG, ima_log, a->ima_path);
        STR(AGENT_CFG_PCRS, pcrs, a->pcr_sel_text);
        STR(AGENT_CFG_DUMP_EVIDENCE, dump_evidence, a->dump);
        STR(AGENT_CFG_BOOT_LOG, boot_log, a->boot_log_path);
#undef STR
        if (a->boot_log_path && strcmp(a->boot_log_path, "none") == 0)
                a->boot_log_path = NULL;
        if (agent_config_has(c, AGENT_CFG_AK_ALG))
                a->ak_alg = c->ak_alg;
        if (agent_config_has(c, AGENT_CFG_IMA_FORMAT))
                a->ima_format = c->ima_ascii ? IMA_FORMAT_ASCII : IMA_FORMAT_BINARY;
        if (agent_config_has(c, AGENT_CFG_INTERVAL))
                a->interval = c->interval;
        if (agent_config_has(c, AGENT_CFG_TIMEOUT))
                a->timeout = c->timeout;
        if (agent_config_has(c, AGENT_CFG_RETRY_MAX))
                a->retry_max = c->retry_max;
        if (agent_config_has(c, AGENT_CFG_FAILBACK))
                a->failback = c->failback;
        a->n_verifiers = c->n_verifiers;
        for (unsigned i = 0; i < c->n_verifiers; i++)
                a->verifiers[i] = c->verifiers[i];
        a->once = c->once;
        a->insecure_http = c->insecure_http;
        if (agent_config_has(c, AGENT_CFG_PROC_ROOT)) {
                for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
                        if ((size_t)snprintf(a->proc_paths[i], sizeof(a->proc_paths[i]), "%s/%s",
                                             c->proc_root, sub[i]) >= sizeof(a->proc_paths[i])) {
                                log_err("--proc-root: path too long");
                                return -EINVAL;
                        }
                a->facts_paths.osrelease = a->proc_paths[0];
                a->facts_paths.boot_id = a->proc_paths[1];
                a->facts_paths.cmdline = a->proc_paths[2];
                a->facts_paths.config_gz = a->proc_paths[3];
                a->facts_paths.hostname = a->proc_paths[4];
        }
        if (agent_config_has(c, AGENT_CFG_MACHINE_ID_FILE))
                a->facts_paths.machine_id = c->machine_id_file;
        return 0;
}

static int parse_args(struct agent *a, int argc, char **argv)
{
        struct attest_err err = {0};
        const char *config = NULL;
        bool verifier_flag = false;
        int c, x;

        /* the config file first, so flags override it */
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        break;
                if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
                        config = argv[++i];
                else if (strncmp(argv[i], "--config=", 9) == 0)
                        config = argv[i] + 9;
        }
        if ((x = agent_config_load(config ? config : AGENT_CONFIG_DEFAULT_FILE, config != NULL,
                                   &a->cfg, &err)) < 0) {
                char hint[LOG_LINE_MAX / 2] = "";

                /* a file it may not read: the user it runs as and what the file needs */
                if (x == -EACCES)
                        log_access_hint(config ? config : AGENT_CONFIG_DEFAULT_FILE, false, hint,
                                        sizeof(hint));
                log_err("%s%s%s", err.msg, hint[0] ? "; " : "", hint);
                return x;
        }
        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                if (c == 'h') {
                        usage(stdout);
                        return 1;
                }
                if (c == OPT_VERSION) {
                        printf("attest-agent %s\n", ATTEST_VERSION);
                        return 1;
                }
                if (c == OPT_CONFIG)
                        continue;
                /* --verifier flags replace the file's list rather than add to it */
                if (c == OPT_KEY(AGENT_CFG_VERIFIER) && !verifier_flag) {
                        verifier_flag = true;
                        a->cfg.n_verifiers = 0;
                }
                if (c == '?' || c < OPT_KEY(0) || c >= OPT_KEY(AGENT_CFG_KEY_COUNT)) {
                        usage(stderr);
                        return -EINVAL;
                }
                if ((x = agent_config_set(&a->cfg, (enum agent_config_key)(c - OPT_KEY(0)), optarg,
                                          optarg ? strlen(optarg) : 0, &err)) < 0) {
                        log_err("--%s", err.msg);
                        usage(stderr);
                        return x;
                }
        }
        if (optind != argc) {
                log_err("unexpected argument '%s'", argv[optind]);
                return -EINVAL;
        }
        if ((x = apply_config(a)) < 0)
                return x;
        if (!a->n_verifiers && !a->dump) {
                log_err("--verifier is required (or --dump-evidence for an offline quote)");
                return -EINVAL;
        }
        return 0;
}

/* Sleep ms milliseconds, woken early by SIGTERM/SIGINT; pings the watchdog meanwhile. */
static void nap(struct agent *a, uint64_t ms)
{
        int64_t end = mono_ms() + (int64_t)ms;

        while (!a->stop) {
                struct pollfd p = {.fd = a->sigfd, .events = POLLIN};
                long left, slice;

                left = (long)(end - mono_ms());
                if (left <= 0)
                        break;
                slice = left;
                if (a->watchdog_usec && slice > (long)(a->watchdog_usec / 2000))
                        slice = (long)(a->watchdog_usec / 2000);
                if (poll(&p, 1, (int)slice) > 0) {
                        struct signalfd_siginfo si;

                        if (read(a->sigfd, &si, sizeof(si)) == sizeof(si) &&
                            (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)) {
                                log_info("signal %u: stopping", si.ssi_signo);
                                a->stop = true;
                        }
                }
                if (a->watchdog_usec)
                        sd_notify(0, "WATCHDOG=1");
        }
}

static void check_signals(struct agent *a)
{
        struct signalfd_siginfo si;
        struct pollfd p = {.fd = a->sigfd, .events = POLLIN};

        while (poll(&p, 1, 0) > 0 && read(a->sigfd, &si, sizeof(si)) == sizeof(si))
                if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
                        a->stop = true;
}

/* The verifier decommissioned this agent or its EK: say so and stop for good. */
static int decommissioned(const struct agent_outcome *o)
{
        log_err("the verifier decommissioned this %s (HTTP %ld %s): not retrying; an admin must "
                "re-admit it",
                o->code == AE_EK_DECOMMISSIONED ? "TPM (EK)" : "agent", o->status,
                attest_code_name(o->code));
        sd_notifyf(0, "STATUS=decommissioned by the verifier (%s), not retrying\nSTOPPING=1",
                   attest_code_name(o->code));
        return AGENT_EXIT_DECOMMISSIONED;
}

/* Why a back-off, for the log and STATUS=. */
static const char *backoff_reason(const struct agent_outcome *o)
{
        switch (o->kind) {
        case AGENT_OUTCOME_LOCAL:
                return "local error";
        case AGENT_OUTCOME_HTTP:
                return o->status >= 500 ? "verifier unavailable" : "refused by the verifier";
        default:
                return "verifier unavailable";
        }
}

static uint64_t now_ms(void)
{
        return (uint64_t)mono_ms();
}

/* Verifier i as "#N (URL)" for a log line, no userinfo. */
static const char *verifier_name(const struct agent *a, unsigned i, char *out, size_t max)
{
        char url[256];

        snprintf(out, max, "#%u (%s)", i + 1,
                 failover_url_display(a->verifiers[i], url, sizeof(url)));
        return out;
}

/* The step starts on the verifier the failover rule chooses. */
static void choose_verifier(struct agent *a)
{
        unsigned from = a->fo.cur;
        char n1[300], n2[300];

        if (failover_begin(&a->fo, now_ms()) == FAILOVER_BACK)
                log_notice("verifier %s answered for %u s: back to verifier %s",
                           verifier_name(a, from, n1, sizeof(n1)), a->failback,
                           verifier_name(a, 0, n2, sizeof(n2)));
        a->http = a->https[a->fo.cur];
}

/*
 * A step failed (act BACKOFF or FAILOVER): how long to wait before the next, with the verifier
 * for it chosen; -1 when --once should give up. One log line per switch of verifier.
 */
static int64_t after_failure(struct agent *a, enum agent_action act, const struct agent_outcome *o,
                             const char *step)
{
        uint32_t ra = http_retry_after(a->http), d;
        unsigned from = a->fo.cur;
        char n1[300], n2[300], why[96];

        if (o->kind == AGENT_OUTCOME_HTTP)
                snprintf(why, sizeof(why), "HTTP %ld%s%s, Retry-After %u s", o->status,
                         o->code ? " " : "", o->code ? attest_code_name(o->code) : "", ra);
        else
                snprintf(why, sizeof(why), "%s", agent_outcome_kind_name(o->kind));
        if (act == AGENT_ACT_FAILOVER) {
                enum failover_move m = failover_down(&a->fo, now_ms(), ra, &d);

                if (m == FAILOVER_NEXT) {
                        log_notice("verifier %s unavailable (%s): %s goes to verifier %s",
                                   verifier_name(a, from, n1, sizeof(n1)), why, step,
                                   verifier_name(a, a->fo.cur, n2, sizeof(n2)));
                        if (d)
                                log_info("verifier %s: waiting %u ms for its Retry-After",
                                         verifier_name(a, a->fo.cur, n2, sizeof(n2)), d);
                        return d; /* --once too: every verifier gets its chance */
                }
                if (a->fo.n > 1)
                        log_notice("verifier %s unavailable (%s), and all %u since the last "
                                   "answer: %s goes to verifier %s in %u ms",
                                   verifier_name(a, from, n1, sizeof(n1)), why, a->fo.n, step,
                                   verifier_name(a, a->fo.cur, n2, sizeof(n2)), d);
        } else {
                d = failover_refused(&a->fo, now_ms(), ra);
        }
        if (a->once)
                return -1; /* --once gives up, no loop */
        if (strcmp(step, "enrolment") == 0) {
                sd_notifyf(0, "STATUS=enrolment failed (%s), retrying in %u s", backoff_reason(o),
                           d / 1000);
                log_info("enrolment: retrying in %u ms", d);
        } else {
                sd_notifyf(0, "STATUS=%s, retrying in %u s", backoff_reason(o), d / 1000);
                log_info("%s: retrying in %u ms", backoff_reason(o), d);
        }
        return d;
}

static int run(struct agent *a)
{
        struct http_opts ho = {
                .ca = a->ca,
                .cert = a->cert,
                .key = a->key,
                .insecure_http = a->insecure_http,
                .timeout_ms = (long)a->timeout * 1000,
        };
        struct attest_err err = {0};
        bool ready = false, rechallenged = false;
        int x, result = AGENT_EXIT_ERROR;
        int64_t d;

        if ((x = agent_read_token(a)) < 0)
                return AGENT_EXIT_ERROR;
        ho.token = a->token[0] ? a->token : NULL;
        /* one client (and keep-alive connection) per verifier; every URL checked now */
        for (unsigned i = 0; i < a->n_verifiers; i++) {
                ho.url = a->verifiers[i];
                if ((x = http_new(&ho, &a->https[i], &err)) < 0) {
                        log_err("verifier #%u: %s", i + 1, err.msg);
                        return AGENT_EXIT_ERROR;
                }
        }
        failover_init(&a->fo, a->n_verifiers, a->retry_max * 1000, a->failback * 1000);
        if (sd_watchdog_enabled(0, &a->watchdog_usec) <= 0)
                a->watchdog_usec = 0;
        while (!a->stop) {
                struct agent_outcome o = {0};
                enum agent_action act;
                long due = 0;

                choose_verifier(a);
                if (!a->id[0]) {
                        x = agent_load_id(a);
                        if (x < 0) {
                                log_err("%s/agent-id: unreadable (%s)", a->state_dir, strerror(-x));
                                return AGENT_EXIT_ERROR;
                        }
                        if (x == 0) {
                                agent_enrol(a, &o);
                                act = agent_outcome_action(AGENT_STEP_ENROL, &o);
                                if (act == AGENT_ACT_EXIT_DECOMMISSIONED)
                                        return decommissioned(&o);
                                if (act == AGENT_ACT_EXIT_REFUSED)
                                        return AGENT_EXIT_ERROR; /* retrying won't help */
                                if (act != AGENT_ACT_PROCEED) {
                                        if ((d = after_failure(a, act, &o, "enrolment")) < 0)
                                                return AGENT_EXIT_ERROR;
                                        nap(a, (uint64_t)d);
                                        continue;
                                }
                                failover_ok(&a->fo, now_ms());
                        }
                }
                if (!ready) {
                        sd_notify(0, "READY=1\nSTATUS=enrolled, attesting");
                        ready = true;
                }
                x = agent_round(a, &due, &o);
                check_signals(a);
                act = agent_outcome_action(AGENT_STEP_ROUND, &o);
                switch (act) {
                case AGENT_ACT_PROCEED:
                        failover_ok(&a->fo, now_ms());
                        rechallenged = false;
                        sd_notifyf(0, "STATUS=last verdict: %s", a->last_status);
                        result = x == 1 ? AGENT_EXIT_PASS : AGENT_EXIT_FAIL;
                        if (a->once)
                                goto done;
                        nap(a, (uint64_t)(due ? due : (long)a->interval) * 1000);
                        continue;
                case AGENT_ACT_REENROL: {
                        /* the verifier forgot us (DELETE /v1/agents/ID): enrol again */
                        char path[AGENT_CONFIG_STR_MAX + 32];

                        log_warning("the verifier does not know agent %s: enrolling again", a->id);
                        a->id[0] = '\0';
                        snprintf(path, sizeof(path), "%s/agent-id", a->state_dir);
                        unlink(path);
                        continue;
                }
                case AGENT_ACT_EXIT_DECOMMISSIONED:
                        return decommissioned(&o);
                case AGENT_ACT_RECHALLENGE:
                        /* the nonce expired while we collected: one fresh challenge, no loop */
                        if (!rechallenged) {
                                rechallenged = true;
                                continue;
                        }
                        act = AGENT_ACT_BACKOFF;
                        break;
                default:
                        break;
                }
                /* a local failure, no answer, or a refusal: keep the id; the next verifier or
                 * a back-off (agent/failover.h) */
                if ((d = after_failure(a, act, &o, "round")) < 0)
                        return AGENT_EXIT_ERROR;
                nap(a, (uint64_t)d);
        }
done:
        sd_notify(0, "STOPPING=1");
        /* a requested stop is a clean exit, whatever the last verdict (or none yet) */
        return a->once ? result : AGENT_EXIT_PASS;
}

int main(int argc, char **argv)
{
        struct agent a = {
                .tcti = NULL,
                .state_dir = "/var/lib/attest-agent",
                .ima_path = IMALOG_BINARY_PATH,
                .boot_log_path = BOOTLOG_PATH,
                .ima_format = IMA_FORMAT_BINARY,
                .ak_alg = TPM_KEY_RSA2048,
                .interval = 300,
                .timeout = 60,
                .retry_max = 300,
                .failback = 600,
                .sigfd = -1,
        };
        struct attest_err err = {0};
        sigset_t mask;
        int x, rc = AGENT_EXIT_ERROR;

        x = parse_args(&a, argc, argv);
        if (x != 0) {
                rc = x > 0 ? AGENT_EXIT_PASS : AGENT_EXIT_ERROR;
                goto out;
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        a.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (a.sigfd < 0) {
                log_err("signalfd: %s", strerror(errno));
                goto out;
        }
        if (mkdir(a.state_dir, 0700) < 0 && errno != EEXIST) {
                log_err("%s: %s", a.state_dir, strerror(errno));
                goto out;
        }
        /* the binary log by default; the ascii one where only it is readable */
        if (strcmp(a.ima_path, IMALOG_BINARY_PATH) == 0 && access(a.ima_path, R_OK) < 0 &&
            access(IMALOG_ASCII_PATH, R_OK) == 0) {
                log_notice("%s unreadable: using the ascii log", a.ima_path);
                a.ima_path = IMALOG_ASCII_PATH;
                a.ima_format = IMA_FORMAT_ASCII;
        }
        imalog_init(&a.log, a.ima_path, a.ima_format, 0);
        if (tpm_open(a.tcti, &a.tpm, &err) < 0) {
                log_err("TPM: %s", err.msg);
                goto out;
        }
        if (tpm_ak_load_or_create(a.tpm, a.state_dir, a.ak_alg, &err) < 0) {
                /* the state directory (its mode, its owner) is this host's set-up, not the TPM */
                if (err.code == AE_TPM_STATE_DIR)
                        log_err("state directory (--state-dir): %s", err.msg);
                else
                        log_err("TPM: attestation key: %s", err.msg);
                goto out;
        }
        if (!a.n_verifiers) {
                rc = agent_dump_offline(&a) < 0 ? AGENT_EXIT_ERROR : AGENT_EXIT_PASS;
                goto out;
        }
        rc = run(&a);
out:
        OPENSSL_cleanse(a.token, sizeof(a.token));
        for (unsigned i = 0; i < AGENT_VERIFIERS_MAX; i++)
                http_free(a.https[i]);
        tpm_close(a.tpm);
        if (a.sigfd >= 0)
                close(a.sigfd);
        return rc;
}
