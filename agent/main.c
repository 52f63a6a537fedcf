/* SPDX-License-Identifier: MIT */
/*
 * attest-agent: proves its AK to the verifier once (enrolment by credential activation), then
 * attests on the verifier's schedule: challenge -> collect (IMA log from the asked offset, host
 * facts) -> quote with the nonce -> submit -> verdict, next_due. See attest-agent(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <systemd/sd-daemon.h>

#include "agent/config.h"
#include "evidence/evjson.h"
#include "agent/facts.h"
#include "util/hex.h"
#include "agent/http.h"
#include "agent/imalog.h"
#include "agent/outcome.h"
#include "evidence/pcrsel.h"
#include "agent/tpm.h"

#define TOKEN_MAX AGENT_TOKEN_MAX

struct agent {
        /* configuration */
        const char *verifier, *ca, *cert, *key, *token_file, *tcti, *state_dir, *ima_path;
        const char *dump, *pcr_sel_text;
        enum ima_format ima_format;
        enum tpm_key_alg ak_alg;
        bool once, insecure_http;
        unsigned interval; /* seconds, when the verifier gives no next_due */
        unsigned timeout;  /* seconds per HTTP request */
        struct facts_paths facts_paths;
        struct agent_config cfg;                       /* the file, then the flags */
        char proc_paths[4][AGENT_CONFIG_STR_MAX + 32]; /* --proc-root's facts_paths */
        /* state */
        struct tpm *tpm;
        struct http_client *http;
        struct imalog log;
        char id[AGENT_ID_MAX + 1];
        char token[TOKEN_MAX + 1];
        int sigfd;
        bool stop;
        uint64_t watchdog_usec;
        char last_status[64];
};

static void log_msg(int prio, const char *fmt, ...) _printf_(2, 3);
static void log_msg(int prio, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "<%d>", prio);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}
#define log_err(...) log_msg(3, __VA_ARGS__)
#define log_warn(...) log_msg(4, __VA_ARGS__)
#define log_notice(...) log_msg(5, __VA_ARGS__)
#define log_info(...) log_msg(6, __VA_ARGS__)
#define log_debug(...) log_msg(7, __VA_ARGS__)

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
                "                       --dump-evidence without a verifier)\n"
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
                "  -h, --help           this text\n"
                "\n"
                "Signals: SIGTERM/SIGINT finish the round in flight and exit. Under systemd\n"
                "(Type=notify) READY=1 follows enrolment, STATUS= carries the last verdict, and "
                "the\n"
                "watchdog is pinged when WatchdogSec= is set.\n"
                "\n"
                "Exit status: 0 stopped (--once: pass), 1 --once: fail, 2 error, 3 the verifier\n"
                "decommissioned this agent or its EK (not retried; RestartPreventExitStatus=3).\n");
}

/* ---- options and config file ---- */

/* getopt's val for a key is 256 + the key (agent_config.h); 'h' is --help. */
#define OPT_KEY(k) (256 + (k))
#define OPT_CONFIG 512

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
        {"help", no_argument, NULL, 'h'},
        {0},
};

/* Point the agent at the settings in a->cfg (file first, flags over it); defaults stay. */
static int apply_config(struct agent *a)
{
        const struct agent_config *c = &a->cfg;
        static const char *const sub[4] = {"sys/kernel/osrelease", "sys/kernel/random/boot_id",
                                           "cmdline", "config.gz"};

#define STR(k, f, dst)                                                                             \
        do {                                                                                       \
                if (agent_config_has(c, k))                                                        \
                        (dst) = c->f;                                                              \
        } while (0)
        STR(AGENT_CFG_VERIFIER, verifier, a->verifier);
        STR(AGENT_CFG_CA, ca, a->ca);
        STR(AGENT_CFG_CERT, cert, a->cert);
        STR(AGENT_CFG_KEY, key, a->key);
        STR(AGENT_CFG_TOKEN_FILE, token_file, a->token_file);
        STR(AGENT_CFG_TCTI, tcti, a->tcti);
        STR(AGENT_CFG_STATE_DIR, state_dir, a->state_dir);
        STR(AGENT_CFG_IMA_LOG, ima_log, a->ima_path);
        STR(AGENT_CFG_PCRS, pcrs, a->pcr_sel_text);
        STR(AGENT_CFG_DUMP_EVIDENCE, dump_evidence, a->dump);
#undef STR
        if (agent_config_has(c, AGENT_CFG_AK_ALG))
                a->ak_alg = c->ak_alg;
        if (agent_config_has(c, AGENT_CFG_IMA_FORMAT))
                a->ima_format = c->ima_ascii ? IMA_FORMAT_ASCII : IMA_FORMAT_BINARY;
        if (agent_config_has(c, AGENT_CFG_INTERVAL))
                a->interval = c->interval;
        if (agent_config_has(c, AGENT_CFG_TIMEOUT))
                a->timeout = c->timeout;
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
        }
        return 0;
}

static int parse_args(struct agent *a, int argc, char **argv)
{
        struct attest_err err = {0};
        const char *config = NULL;
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
                log_err("%s", err.msg);
                return x;
        }
        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                if (c == 'h') {
                        usage(stdout);
                        return 1;
                }
                if (c == OPT_CONFIG)
                        continue;
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
        if (!a->verifier && !a->dump) {
                log_err("--verifier is required (or --dump-evidence for an offline quote)");
                return -EINVAL;
        }
        return 0;
}

/* ---- small helpers ---- */

static int read_token(struct agent *a)
{
        char buf[AGENT_TOKEN_FILE_MAX];
        size_t n = 0;
        int x;

        if (!a->token_file)
                return 0;
        x = agent_file_read(a->token_file, buf, sizeof(buf), &n);
        if (x == 0 && (x = agent_token_parse(buf, n, a->token)) < 0)
                log_err("%s: not one line of at most %d visible ASCII bytes", a->token_file,
                        TOKEN_MAX);
        else if (x < 0)
                log_err("%s: %s", a->token_file,
                        x == -E2BIG ? "longer than a token" : strerror(-x));
        OPENSSL_cleanse(buf, sizeof(buf));
        return x < 0 ? -EINVAL : 0;
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
        char tmp[AGENT_CONFIG_STR_MAX + 64];
        int fd;

        if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        if (write(fd, data, len) != (ssize_t)len || fsync(fd) < 0) {
                int e = -errno;
                close(fd);
                unlink(tmp);
                return e ? e : -EIO;
        }
        close(fd);
        return rename(tmp, path) < 0 ? -errno : 0;
}

static char *b64_of(const uint8_t *p, size_t n)
{
        char *s = malloc(b64_encoded_size(n));

        if (s)
                b64_encode(p, n, s);
        return s;
}

/* Decode a base64 string member of o into a new buffer (max bytes). */
static int b64_member(json_t *o, const char *key, size_t max, uint8_t **ret, size_t *ret_len)
{
        json_t *v = json_object_get(o, key);
        const char *s;
        uint8_t *buf;
        size_t n;

        if (!json_is_string(v))
                return -EBADMSG;
        s = json_string_value(v);
        if (!(buf = malloc(max ? max : 1)))
                return -ENOMEM;
        if (b64_decode(s, strlen(s), buf, max, &n) < 0) {
                free(buf);
                return -EBADMSG;
        }
        *ret = buf;
        *ret_len = n;
        return 0;
}

/* Record how a step ended; returns error (negative) so callers can `return outcome_set(...)`. */
static int outcome_set(struct agent_outcome *o, enum agent_outcome_kind kind, int error)
{
        *o = (struct agent_outcome){.kind = kind, .error = error};
        return error;
}

/*
 * The verifier answered what with an error status: log it, record the status and the error code.
 * Returns -EREMOTEIO: the caller learns only that the step failed; what to do next follows from
 * *o (agent_outcome_action()), never from an errno.
 */
static int outcome_http(struct agent_outcome *o, const char *what, long status, json_t *j)
{
        const char *code = json_string_value(json_object_get(j, "error"));
        const char *detail = json_string_value(json_object_get(j, "detail"));

        log_warn("%s: HTTP %ld %s: %s", what, status, code ? code : "?", detail ? detail : "");
        *o = (struct agent_outcome){.kind = AGENT_OUTCOME_HTTP,
                                    .status = status,
                                    .code = agent_api_code_from_name(code)};
        return -EREMOTEIO;
}

/* One request with a JSON text body and a JSON object answer (for any status). On failure *o
 * says whether the request got no answer (transport), an unusable one (protocol) or failed here. */
static int call_text(struct agent *a, const char *method, const char *path, const char *text,
                     long *status, json_t **ret_json, struct agent_outcome *o)
{
        _cleanup_free_ char *resp = NULL;
        struct attest_err err = {0};
        json_error_t jerr;
        int x;

        x = http_request(a->http, method, path, text, text ? strlen(text) : 0, status, &resp, &err);
        if (x < 0) {
                log_warn("%s", err.msg); /* names the method and path */
                return outcome_set(o,
                                   x == -EIO                      ? AGENT_OUTCOME_TRANSPORT
                                   : x == -E2BIG || x == -EBADMSG ? AGENT_OUTCOME_PROTOCOL
                                                                  : AGENT_OUTCOME_LOCAL,
                                   x);
        }
        *ret_json = json_loads(resp, 0, &jerr);
        if (!*ret_json || !json_is_object(*ret_json)) {
                json_decref(*ret_json);
                *ret_json = NULL;
                log_warn("%s %s: HTTP %ld without a JSON object", method, path, *status);
                return outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        return 0;
}

static int call(struct agent *a, const char *method, const char *path, json_t *body, long *status,
                json_t **ret_json, struct agent_outcome *o)
{
        _cleanup_free_ char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;

        if (body && !text)
                return outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        return call_text(a, method, path, text, status, ret_json, o);
}

/* ---- enrolment ---- */

/* Enrol the AK (and activate the credential). 0 when enrolled; else negative with *o filled. */
static int enroll(struct agent *a, struct agent_outcome *o)
{
        _cleanup_free_ uint8_t *ak = NULL, *ekpub = NULL, *ekcert = NULL, *blob = NULL,
                               *secret = NULL;
        _cleanup_free_ char *ak64 = NULL, *ekpub64 = NULL, *ekcert64 = NULL, *proof64 = NULL;
        json_t *req, *resp = NULL, *cred;
        struct attest_err err = {0};
        size_t ak_len, ekpub_len, ekcert_len = 0, blob_len, secret_len, plen = TPM_CRED_MAX;
        uint8_t proof[TPM_CRED_MAX];
        char path[AGENT_CONFIG_STR_MAX + 32]; /* state_dir + "/agent-id" always fits */
        long status;
        const char *id;
        int x;

        if ((x = tpm_ak_public(a->tpm, &ak, &ak_len)) < 0 ||
            (x = tpm_ek_public(a->tpm, a->ak_alg, &ekpub, &ekpub_len, &err)) < 0) {
                log_err("TPM: %s", err.msg[0] ? err.msg : "no AK");
                return outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        x = tpm_ek_cert(a->tpm, a->ak_alg, &ekcert, &ekcert_len, &err);
        if (x < 0 && x != -ENOENT) {
                log_err("TPM: EK certificate: %s", err.msg);
                return outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        if (!(ak64 = b64_of(ak, ak_len)) || !(ekpub64 = b64_of(ekpub, ekpub_len)) ||
            (ekcert && !(ekcert64 = b64_of(ekcert, ekcert_len))))
                return outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        req = json_pack("{s:s, s:s}", "ak_public", ak64, "ek_public", ekpub64);
        if (!req || (ekcert64 && json_object_set_new(req, "ek_cert", json_string(ekcert64)))) {
                json_decref(req);
                return outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        }
        x = call(a, "POST", "/v1/agents", req, &status, &resp, o);
        json_decref(req);
        if (x < 0)
                return x;
        if (status != 201 && status != 200) {
                x = outcome_http(o, "enrolment", status, resp);
                json_decref(resp);
                return x;
        }
        /* the same check as the agent-id file: 1..64 lower-case hex digits (a JSON string may
         * hold a NUL: its whole length is checked) */
        id = json_string_value(json_object_get(resp, "id"));
        if (!id || agent_id_parse(id, json_string_length(json_object_get(resp, "id")), a->id) < 0) {
                log_err("enrolment: the verifier sent no valid agent id");
                json_decref(resp);
                return outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        cred = json_object_get(resp, "credential");
        if (cred) {
                if (b64_member(cred, "blob", 512, &blob, &blob_len) < 0 ||
                    b64_member(cred, "secret", 1024, &secret, &secret_len) < 0) {
                        log_err("enrolment: malformed credential");
                        json_decref(resp);
                        a->id[0] = '\0';
                        return outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
                }
                x = tpm_activate_credential(a->tpm, blob, blob_len, secret, secret_len, proof,
                                            &plen, &err);
                if (x < 0) {
                        log_err("enrolment: ActivateCredential: %s", err.msg);
                        json_decref(resp);
                        a->id[0] = '\0';
                        return outcome_set(o, AGENT_OUTCOME_LOCAL, x);
                }
                proof64 = b64_of(proof, plen);
                OPENSSL_cleanse(proof, sizeof(proof));
                json_decref(resp);
                resp = NULL;
                if (!proof64) {
                        a->id[0] = '\0';
                        return outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
                }
                req = json_pack("{s:s}", "proof", proof64);
                snprintf(path, sizeof(path), "/v1/agents/%s/activate", a->id);
                x = req ? call(a, "POST", path, req, &status, &resp, o)
                        : outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
                json_decref(req);
                if (x >= 0 && status != 200)
                        x = outcome_http(o, "activation", status, resp);
                if (x < 0) {
                        json_decref(resp);
                        a->id[0] = '\0';
                        return x;
                }
        }
        json_decref(resp);
        snprintf(path, sizeof(path), "%s/agent-id", a->state_dir);
        if ((x = write_file(path, a->id, strlen(a->id), 0600)) < 0) {
                log_err("%s: %s", path, strerror(-x));
                a->id[0] = '\0';
                return outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        log_info("enrolled as agent %s%s", a->id, cred ? " (credential activated)" : "");
        return outcome_set(o, AGENT_OUTCOME_DONE, 0);
}

static int load_id(struct agent *a)
{
        char path[AGENT_CONFIG_STR_MAX + 32], buf[AGENT_ID_MAX];
        size_t n;
        int x;

        if ((size_t)snprintf(path, sizeof(path), "%s/agent-id", a->state_dir) >= sizeof(path))
                return -ENAMETOOLONG;
        if ((x = agent_file_read(path, buf, AGENT_ID_MAX, &n)) < 0)
                return x == -ENOENT ? 0 : x == -E2BIG ? -EBADMSG : x;
        if (agent_id_parse(buf, n, a->id) < 0)
                return -EBADMSG;
        return 1;
}

/* ---- one attestation round ---- */

struct challenge {
        uint8_t nonce[EVIDENCE_NONCE_MAX];
        size_t nonce_len;
        uint64_t ima_offset;
        struct pcr_sel sel;
};

/*
 * Quote first, then read the IMA log. The kernel appends a measurement to the log before it
 * extends PCR 10, so a log read after the quote holds at least every entry the quoted PCR 10
 * covers, and the verifier replays the shortest prefix that matches. Read before the quote, a
 * measurement landing in between would leave the quoted PCR ahead of the log: a spurious fail.
 * Failures here are local (LOCAL).
 */
static int collect(struct agent *a, const struct challenge *ch, struct evidence *ev)
{
        struct attest_err err = {0};
        struct facts f;
        uint64_t from, count;
        int x;

        memcpy(ev->nonce, ch->nonce, ch->nonce_len);
        ev->nonce_len = ch->nonce_len;
        x = tpm_quote(a->tpm, &ch->sel, ch->nonce, ch->nonce_len, &ev->attest, &ev->attest_len,
                      &ev->sig, &ev->sig_len, &ev->pcrs, &err);
        if (x < 0) {
                log_err("TPM quote: %s", err.msg);
                return x;
        }
        x = imalog_read(&a->log, ch->ima_offset, &ev->ima, &ev->ima_len, &from, &count, &err);
        if (x < 0) {
                log_err("IMA log: %s", err.msg);
                return x;
        }
        ev->ima_offset = from;
        ev->ima_format = a->log.format;
        if (ev->ima_len == 0) {
                free(ev->ima);
                ev->ima = NULL;
        }
        log_debug("IMA log: %" PRIu64 " entries from %" PRIu64, count, from);
        if ((x = facts_collect(a->facts_paths.osrelease ? &a->facts_paths : NULL, &f, &err)) < 0) {
                log_err("host facts: %s", err.msg);
                return x;
        }
        snprintf(ev->host.kernel, sizeof(ev->host.kernel), "%s", f.kernel);
        snprintf(ev->host.boot_id, sizeof(ev->host.boot_id), "%s", f.boot_id);
        if (f.cmdline[0] && !(ev->host.cmdline = strdup(f.cmdline)))
                return -ENOMEM;
        ev->host.cfi_present = f.cfi_present;
        snprintf(ev->host.cfi_source, sizeof(ev->host.cfi_source), "%s", f.cfi_source);
        ev->host.cfi_enabled = f.cfi_enabled;
        ev->host.cfi_permissive = f.cfi_permissive;
        ev->host.tk_present = f.tk_present;
        snprintf(ev->host.tk_source, sizeof(ev->host.tk_source), "%s", f.tk_source);
        snprintf(ev->host.tk_origin, sizeof(ev->host.tk_origin), "%s", f.tk_origin);
        return 0;
}

static int dump_evidence(struct agent *a, const char *json)
{
        _cleanup_free_ uint8_t *ak = NULL;
        char path[AGENT_CONFIG_STR_MAX + 32]; /* dump + ".ak.pub" always fits */
        size_t ak_len;
        int x;

        if ((x = write_file(a->dump, json, strlen(json), 0644)) < 0) {
                log_err("%s: %s", a->dump, strerror(-x));
                return x;
        }
        snprintf(path, sizeof(path), "%s.ak.pub", a->dump);
        if ((x = tpm_ak_public(a->tpm, &ak, &ak_len)) < 0 ||
            (x = write_file(path, ak, ak_len, 0644)) < 0) {
                log_err("%s: %s", path, strerror(-x));
                return x;
        }
        log_info("evidence written to %s, AK public area to %s", a->dump, path);
        return 0;
}

static int get_challenge(struct agent *a, struct challenge *ch, struct agent_outcome *o)
{
        json_t *resp = NULL;
        const char *nonce, *sel;
        char path[256];
        long status;
        json_int_t off;
        int x;

        snprintf(path, sizeof(path), "/v1/agents/%s/challenges", a->id);
        json_t *empty = json_object();
        x = empty ? call(a, "POST", path, empty, &status, &resp, o)
                  : outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        json_decref(empty);
        if (x < 0)
                return x;
        if (status != 200 && status != 201) {
                x = outcome_http(o, "challenge", status, resp);
                json_decref(resp);
                return x;
        }
        nonce = json_string_value(json_object_get(resp, "nonce"));
        sel = json_string_value(json_object_get(resp, "pcr_selection"));
        off = json_integer_value(json_object_get(resp, "ima_offset"));
        if (!nonce ||
            hex_decode(nonce, strlen(nonce), ch->nonce, sizeof(ch->nonce), &ch->nonce_len) < 0 ||
            ch->nonce_len == 0 || off < 0 ||
            pcr_sel_parse(sel ? sel : (a->pcr_sel_text ? a->pcr_sel_text : "sha256:0-10"),
                          &ch->sel) < 0) {
                log_err("challenge: malformed answer from the verifier");
                json_decref(resp);
                return outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        ch->ima_offset = (uint64_t)off;
        json_decref(resp);
        return 0;
}

/*
 * Challenge, collect, submit. Returns 1 pass, 0 fail (a verdict: *o is DONE), negative when the
 * round ended otherwise (*o says how); *next_due_s is the delay the verifier asked for (0: none).
 */
static int round_once(struct agent *a, long *next_due_s, struct agent_outcome *o)
{
        _cleanup_(evidence_freep) struct evidence *ev = calloc(1, sizeof(*ev));
        _cleanup_free_ char *json = NULL;
        struct challenge ch;
        json_t *resp = NULL;
        char path[256];
        long status;
        int x;

        *next_due_s = 0;
        if (!ev)
                return outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        if ((x = get_challenge(a, &ch, o)) < 0)
                return x;
        if ((x = collect(a, &ch, ev)) < 0 || (x = evidence_to_json(ev, &json)) < 0 ||
            (a->dump && (x = dump_evidence(a, json)) < 0))
                return outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        snprintf(path, sizeof(path), "/v1/agents/%s/evidence", a->id);
        if ((x = call_text(a, "POST", path, json, &status, &resp, o)) < 0)
                return x;
        if (status != 200) {
                x = outcome_http(o, "evidence", status, resp);
                json_decref(resp);
                return x;
        }
        const char *st = json_string_value(json_object_get(resp, "status"));
        const char *due = json_string_value(json_object_get(resp, "next_due"));
        json_t *claims = json_object_get(resp, "claims");
        size_t i;
        json_t *c;

        if (!st) {
                log_err("evidence: verdict without a status");
                json_decref(resp);
                return outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        json_array_foreach(claims, i, c)
        {
                const char *res = json_string_value(json_object_get(c, "result"));

                if (res && strcmp(res, "pass") != 0) {
                        const char *nm = json_string_value(json_object_get(c, "name"));

                        log_notice("claim %s: %s", nm ? nm : "?", res);
                }
        }
        if (strcmp(st, a->last_status) != 0)
                log_notice("verdict: %s (was %s)", st, a->last_status[0] ? a->last_status : "none");
        else
                log_info("verdict: %s", st);
        snprintf(a->last_status, sizeof(a->last_status), "%s", st);
        if (due) {
                struct tm tm = {0};
                const char *e = strptime(due, "%Y-%m-%dT%H:%M:%S", &tm);

                if (e) {
                        time_t t = timegm(&tm);
                        long d = (long)(t - time(NULL));

                        *next_due_s = d > 1 ? d : 1;
                }
        }
        /* print the verdict for an operator running --once */
        if (a->once) {
                char *txt = json_dumps(resp, JSON_INDENT(2));

                if (txt)
                        printf("%s\n", txt);
                free(txt);
        }
        x = strcmp(st, "pass") == 0 ? 1 : 0;
        json_decref(resp);
        outcome_set(o, AGENT_OUTCOME_DONE, 0);
        return x;
}

/* Offline: quote a random local nonce and write the evidence (no verifier). */
static int dump_offline(struct agent *a)
{
        _cleanup_(evidence_freep) struct evidence *ev = calloc(1, sizeof(*ev));
        _cleanup_free_ char *json = NULL;
        struct challenge ch = {.nonce_len = 32};
        int x;

        if (!ev)
                return -ENOMEM;
        if (RAND_bytes(ch.nonce, 32) != 1 ||
            pcr_sel_parse(a->pcr_sel_text ? a->pcr_sel_text : "sha256:0-10", &ch.sel) < 0)
                return -EIO;
        if ((x = collect(a, &ch, ev)) < 0 || (x = evidence_to_json(ev, &json)) < 0)
                return x;
        return dump_evidence(a, json);
}

/* Sleep ms milliseconds, woken early by SIGTERM/SIGINT; pings the watchdog meanwhile. */
static void nap(struct agent *a, uint64_t ms)
{
        struct timespec now, end;

        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += (time_t)(ms / 1000);
        end.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (end.tv_nsec >= 1000000000L) {
                end.tv_sec++;
                end.tv_nsec -= 1000000000L;
        }
        while (!a->stop) {
                struct pollfd p = {.fd = a->sigfd, .events = POLLIN};
                long left, slice;

                clock_gettime(CLOCK_MONOTONIC, &now);
                left = (long)(end.tv_sec - now.tv_sec) * 1000 +
                       (end.tv_nsec - now.tv_nsec) / 1000000L;
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
                o->code == AGENT_API_EK_DECOMMISSIONED ? "TPM (EK)" : "agent", o->status,
                agent_api_code_name(o->code));
        sd_notifyf(0, "STATUS=decommissioned by the verifier (%s), not retrying\nSTOPPING=1",
                   agent_api_code_name(o->code));
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

static int run(struct agent *a)
{
        struct backoff bo = {.base_ms = 1000, .max_ms = 300000};
        struct http_opts ho = {
                .url = a->verifier,
                .ca = a->ca,
                .cert = a->cert,
                .key = a->key,
                .insecure_http = a->insecure_http,
                .timeout_ms = (long)a->timeout * 1000,
        };
        struct attest_err err = {0};
        bool ready = false, rechallenged = false;
        int x, result = AGENT_EXIT_ERROR;

        if ((x = read_token(a)) < 0)
                return AGENT_EXIT_ERROR;
        ho.token = a->token[0] ? a->token : NULL;
        if ((x = http_new(&ho, &a->http, &err)) < 0) {
                log_err("%s", err.msg);
                return AGENT_EXIT_ERROR;
        }
        if (sd_watchdog_enabled(0, &a->watchdog_usec) <= 0)
                a->watchdog_usec = 0;
        while (!a->stop) {
                struct agent_outcome o = {0};
                enum agent_action act;
                long due = 0;
                uint32_t d;

                if (!a->id[0]) {
                        x = load_id(a);
                        if (x < 0) {
                                log_err("%s/agent-id: unreadable (%s)", a->state_dir, strerror(-x));
                                return AGENT_EXIT_ERROR;
                        }
                        if (x == 0) {
                                enroll(a, &o);
                                act = agent_outcome_action(AGENT_STEP_ENROL, &o);
                                if (act == AGENT_ACT_EXIT_DECOMMISSIONED)
                                        return decommissioned(&o);
                                if (act == AGENT_ACT_EXIT_REFUSED ||
                                    (act != AGENT_ACT_PROCEED && a->once))
                                        return AGENT_EXIT_ERROR; /* retrying won't help */
                                if (act != AGENT_ACT_PROCEED) {
                                        d = backoff_next(&bo);
                                        sd_notifyf(0,
                                                   "STATUS=enrolment failed (%s), retrying in %u s",
                                                   backoff_reason(&o), d / 1000);
                                        log_info("enrolment: retrying in %u ms", d);
                                        nap(a, d);
                                        continue;
                                }
                        }
                }
                if (!ready) {
                        sd_notify(0, "READY=1\nSTATUS=enrolled, attesting");
                        ready = true;
                }
                x = round_once(a, &due, &o);
                check_signals(a);
                act = agent_outcome_action(AGENT_STEP_ROUND, &o);
                switch (act) {
                case AGENT_ACT_PROCEED:
                        backoff_reset(&bo);
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

                        log_warn("the verifier does not know agent %s: enrolling again", a->id);
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
                        break;
                default:
                        break;
                }
                if (a->once)
                        return AGENT_EXIT_ERROR; /* --once gives up, no loop */
                /* a local failure, no answer, or a refusal: keep the id, back off, retry */
                d = backoff_next(&bo);
                sd_notifyf(0, "STATUS=%s, retrying in %u s", backoff_reason(&o), d / 1000);
                log_info("%s: retrying in %u ms", backoff_reason(&o), d);
                nap(a, d);
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
                .ima_format = IMA_FORMAT_BINARY,
                .ak_alg = TPM_KEY_RSA2048,
                .interval = 300,
                .timeout = 60,
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
        if (tpm_open(a.tcti, &a.tpm, &err) < 0 ||
            tpm_ak_load_or_create(a.tpm, a.state_dir, a.ak_alg, &err) < 0) {
                log_err("TPM: %s", err.msg);
                goto out;
        }
        if (!a.verifier) {
                rc = dump_offline(&a) < 0 ? AGENT_EXIT_ERROR : AGENT_EXIT_PASS;
                goto out;
        }
        rc = run(&a);
out:
        OPENSSL_cleanse(a.token, sizeof(a.token));
        http_free(a.http);
        tpm_close(a.tpm);
        if (a.sigfd >= 0)
                close(a.sigfd);
        return rc;
}
