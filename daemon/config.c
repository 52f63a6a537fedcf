/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "daemon/config.h"
#include "util/file.h"
#include "util/kv.h"
#include "util/num.h"

enum opt_type { OPT_STR, OPT_U64, OPT_BOOL, OPT_DBMODE, OPT_URL };

struct opt {
        const char *name;
        enum opt_type type;
        size_t off;
        uint64_t min, max; /* OPT_U64 */
        const char *arg, *help;
};

#define O(f) offsetof(struct config, f)
static const struct opt opts[] = {
        {"config", OPT_STR, O(config_file), 0, 0, "FILE",
         "configuration file (default " CONFIG_DEFAULT_FILE ")"},
        {"listen", OPT_STR, O(listen), 0, 0, "ADDR:PORT",
         "address to listen on when not socket-activated (default 0.0.0.0:8443)"},
        {"tls-cert", OPT_STR, O(tls_cert), 0, 0, "FILE", "server certificate chain (PEM)"},
        {"tls-key", OPT_STR, O(tls_key), 0, 0, "FILE", "server private key (PEM)"},
        {"insecure-http", OPT_BOOL, O(insecure_http), 0, 0, NULL,
         "serve plain HTTP; refused unless every listening address is loopback"},
        {"threads", OPT_U64, O(threads), 1, 1024, "N", "HTTP worker threads (default: cores)"},
        {"db", OPT_STR, O(db), 0, 0, "FILE|URL",
         "SQLite database (default $STATE_DIRECTORY/attestd.db or /var/lib/attestd/attestd.db), "
         "or PostgreSQL: postgresql://USER@HOST:PORT/DBNAME (no password in the URL)"},
        {"db-password-file", OPT_STR, O(db_password_file), 0, 0, "FILE",
         "PostgreSQL password (mode 0600, at most 1024 bytes, a trailing newline dropped)"},
        {"db-wait-ms", OPT_U64, O(db_wait_ms), 1, 600000, "MS",
         "how long a request waits for a database connection before 503 store_busy "
         "(default 5000)"},
        {"db-mode", OPT_DBMODE, O(db_mode), 0, 0, "writer|pool",
         "writer: one writer thread with group commit (default); pool: one connection per worker"},
        {"db-connections", OPT_U64, O(db_connections), 1, 1024, "N",
         "database connections in the pool of this instance (default: threads)"},
        {"retain", OPT_U64, O(retain), 1, 1000000, "N", "results kept per agent (default 100)"},
        {"tokens", OPT_STR, O(tokens), 0, 0, "FILE",
         "bearer tokens, lines `ROLE SHA256HEX [comment]` (default /etc/attestd/tokens)"},
        /* api: stateless nonces, activation rate limit (docs/architecture.md §3.2) */
        {"nonce-ttl", OPT_U64, O(nonce_ttl), 1, 3600, "SECONDS", "nonce lifetime (default 60)"},
        {"nonce-key", OPT_STR, O(nonce_key), 0, 0, "FILE",
         "nonce MAC key, 32-64 bytes (default: nonce.key beside the database, created 0600)"},
        {"activation-failures-max", OPT_U64, O(activation_failures_max), 1, 1000000, "N",
         "failed activation proofs per agent per minute before 429 (default 5)"},
        {"interval", OPT_U64, O(interval), 1, 31536000, "SECONDS",
         "expected time between attestations, gives next_due (default 300)"},
        {"grace", OPT_U64, O(grace), 0, 31536000, "SECONDS",
         "time past next_due before an agent is stale (default 60)"},
        {"pcr-selection", OPT_STR, O(pcr_selection), 0, 0, "SEL",
         "PCRs agents quote, e.g. sha256:0-10+sha1:10 (default sha256:0-10)"},
        {"max-evidence", OPT_U64, O(max_evidence), 1024, 1073741824, "BYTES",
         "largest evidence body (default 16777216)"},
        {"max-body", OPT_U64, O(max_body), 1024, 16777216, "BYTES",
         "largest other request body (default 65536)"},
        {"max-entries", OPT_U64, O(max_entries), 1, 100000000, "N",
         "IMA entries per submission at most (default 1000000)"},
        {"drain-timeout", OPT_U64, O(drain_timeout), 0, 3600, "SECONDS",
         "on SIGTERM, how long in-flight requests may take (default 10)"},
        {"ek-ca", OPT_STR, O(ek_ca), 0, 0, "PATH",
         "CA bundle (PEM file or directory of *.pem/*.crt) EK certificates must chain to; read "
         "at every enrolment (a change counts at once)"},
        {"insecure-trust-ak", OPT_BOOL, O(insecure_trust_ak), 0, 0, NULL,
         "labs only: enrol AKs without EK certificate or credential activation (warned)"},
        {"credential-ttl", OPT_U64, O(credential_ttl), 10, 86400, "SECONDS",
         "time an agent has to activate its enrolment credential (default 300)"},
        /* HTTP front (docs/SECURITY.md) */
        {"tls-client-ca", OPT_STR, O(tls_client_ca), 0, 0, "FILE",
         "require client certificates chaining to this CA bundle (PEM); mTLS"},
        {"max-connections", OPT_U64, O(max_connections), 16, 1000000, "N",
         "open connections at most (default 10000; lowered to fit RLIMIT_NOFILE)"},
        {"max-connections-per-ip", OPT_U64, O(max_connections_per_ip), 1, 1000000, "N",
         "open connections per client address at most (default 32)"},
        {"header-timeout", OPT_U64, O(header_timeout), 1, 3600, "SECONDS",
         "a request head must be complete this long after accept or the last response "
         "(TLS handshake included; default 10)"},
        {"body-timeout", OPT_U64, O(body_timeout), 1, 3600, "SECONDS",
         "a request must be read and answered this long after its head (default 60)"},
        {"idle-timeout", OPT_U64, O(idle_timeout), 1, 3600, "SECONDS",
         "close a connection on which no byte moved for this long (default 30)"},
        {"max-inflight-body", OPT_U64, O(max_inflight_body), 65536, 68719476736ULL, "BYTES",
         "request bodies buffered at once, all clients together, counted as they arrive; "
         "beyond: 503 (default 268435456)"},
        {"max-inflight-body-per-ip", OPT_U64, O(max_inflight_body_per_ip), 4096, 68719476736ULL,
         "BYTES",
         "of those, from one client address (IPv6: one /64) at most; beyond: 503 "
         "(default 33554432)"},
        {"max-inflight-body-per-agent", OPT_U64, O(max_inflight_body_per_agent), 4096,
         68719476736ULL, "BYTES",
         "of those, to one agent id in the URL at most; beyond: 503 (default 33554432)"},
        {"min-body-rate", OPT_U64, O(min_body_rate), 1, 1073741824, "BYTES",
         "after --body-rate-grace, a request body must arrive at this many bytes a second on "
         "average, else the connection is closed (default 1024)"},
        {"body-rate-grace", OPT_U64, O(body_rate_grace), 0, 3600, "SECONDS",
         "time from a request head before --min-body-rate applies (default 5)"},
        {"ear-key", OPT_STR, O(ear_key), 0, 0, "FILE",
         "EC P-256 private key (PEM, mode 0600) signing EAR results (GET /v1/agents/ID/ear)"},
        /* webhooks (docs/webhooks.md) */
        {"webhook", OPT_URL, O(webhooks), 0, 0, "URL",
         "send agent events to this https:// URL (repeatable, up to 8; flags replace the file's)"},
        {"webhook-ca", OPT_STR, O(webhook_ca), 0, 0, "FILE",
         "CA bundle (PEM) webhook receivers must chain to (default: the system's)"},
        {"webhook-secret-file", OPT_STR, O(webhook_secret_file), 0, 0, "FILE",
         "HMAC-SHA256 key signing webhook events (16-1024 bytes, mode 0600; needed with "
         "--webhook)"},
        {"webhook-timeout", OPT_U64, O(webhook_timeout), 1, 300, "SECONDS",
         "a delivery attempt may take this long, connect to response (default 10)"},
        {"webhook-backoff-max", OPT_U64, O(webhook_backoff_max), 1, 86400, "SECONDS",
         "longest wait between delivery retries (exponential from 1 s, jittered; default 300)"},
        {"webhook-outbox-max", OPT_U64, O(webhook_outbox_max), 1, 100000000, "N",
         "events kept for delivery at most; beyond, the oldest are dropped (default 100000)"},
        {"webhook-retention", OPT_U64, O(webhook_retention), 0, 31536000, "SECONDS",
         "how long events delivered to every receiver are kept (default 86400)"},
        /* policy cost bounds (daemon/policy-cache.h) */
        {"policy-cache-bytes", OPT_U64, O(policy_cache_bytes), 1048576, 1099511627776ULL, "BYTES",
         "parsed policies kept in memory, about (default 536870912; at most 256 versions)"},
        {"help", OPT_BOOL, O(help), 0, 0, NULL, "show this help"},
        {"version", OPT_BOOL, O(version), 0, 0, NULL, "show the version"},
};
#undef O

static void config_defaults(struct config *c)
{
        const char *sd = getenv("STATE_DIRECTORY");
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        memset(c, 0, sizeof(*c));
        snprintf(c->listen, sizeof(c->listen), "0.0.0.0:8443");
        c->threads = n > 0 ? (uint64_t)n : 1;
        /* STATE_DIRECTORY may list several, colon separated: take the first */
        if (sd && *sd && sd[0] == '/')
                snprintf(c->db, sizeof(c->db), "%.*s/attestd.db", (int)strcspn(sd, ":"), sd);
        else
                snprintf(c->db, sizeof(c->db), "/var/lib/attestd/attestd.db");
        c->db_mode = CONFIG_DB_WRITER;
        c->db_wait_ms = 5000;
        c->retain = 100;
        snprintf(c->tokens, sizeof(c->tokens), "/etc/attestd/tokens");
        c->nonce_ttl = 60;
        c->credential_ttl = 300;
        c->activation_failures_max = 5;
        c->interval = 300;
        c->grace = 60;
        snprintf(c->pcr_selection, sizeof(c->pcr_selection), "sha256:0-10");
        c->max_evidence = 16u * 1024 * 1024;
        c->max_body = 64u * 1024;
        c->max_entries = 1000000;
        c->drain_timeout = 10;
        /* HTTP front (docs/SECURITY.md) */
        c->max_connections = 10000;
        c->max_connections_per_ip = 32;
        c->header_timeout = 10;
        c->body_timeout = 60;
        c->idle_timeout = 30;
        c->max_inflight_body = 256u * 1024 * 1024;
        c->max_inflight_body_per_ip = 32u * 1024 * 1024;
        c->max_inflight_body_per_agent = 32u * 1024 * 1024;
        c->min_body_rate = 1024;
        c->body_rate_grace = 5;
        c->webhook_timeout = 10;
        c->webhook_backoff_max = 300;
        c->webhook_outbox_max = 100000;
        c->webhook_retention = 86400;
        c->policy_cache_bytes = 512ull << 20;
}

/* A webhook URL: https:// (any case), then printable ASCII without spaces, at most
 * CONFIG_URL_MAX - 1 bytes; anything else is refused here (curl parses the rest at start). */
static int url_set(struct config *c, const struct opt *o, const char *val, size_t len,
                   struct attest_err *err)
{
        if (!val || len >= CONFIG_URL_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: URL too long", o->name);
        if (len < 9 || strncasecmp(val, "https://", 8) != 0)
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "%s: only https:// URLs are accepted (events name hosts and "
                                   "their failing claims)",
                                   o->name);
        for (size_t i = 0; i < len; i++)
                if (val[i] <= ' ' || val[i] >= 0x7f)
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "%s: a space or control byte in the URL", o->name);
        for (unsigned i = 0; i < c->n_webhooks; i++)
                if (strlen(c->webhooks[i]) == len && !memcmp(c->webhooks[i], val, len))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: given twice", o->name);
        if (c->n_webhooks >= CONFIG_WEBHOOKS_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: more than %d receivers", o->name,
                                   CONFIG_WEBHOOKS_MAX);
        memcpy(c->webhooks[c->n_webhooks], val, len);
        c->webhooks[c->n_webhooks][len] = '\0';
        c->n_webhooks++;
        return 0;
}

static const struct opt *opt_find(const char *name, size_t len)
{
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
                if (strlen(opts[i].name) == len && memcmp(opts[i].name, name, len) == 0)
                        return &opts[i];
        return NULL;
}

static bool val_is(const char *val, size_t len, const char *lit)
{
        return span_eq((struct span){val, len}, lit);
}

/*
 * Set one option from its text (len bytes; NULL: a flag without argument, true for a boolean).
 * -EINVAL with err "name wants ...", the caller prefixes where it came from.
 */
static int opt_set(struct config *c, const struct opt *o, const char *val, size_t len,
                   struct attest_err *err)
{
        char *base = (char *)c + o->off;
        uint64_t v;

        switch (o->type) {
        case OPT_STR:
                if (!val || len >= CONFIG_STR_MAX || memchr(val, '\0', len))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: value too long", o->name);
                memcpy(base, val, len);
                base[len] = '\0';
                return 0;
        case OPT_U64:
                if (!val || num_u64(val, len, o->min, o->max, &v) < 0)
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "%s wants a number in %llu..%llu", o->name,
                                           (unsigned long long)o->min, (unsigned long long)o->max);
                memcpy(base, &v, sizeof(v));
                return 0;
        case OPT_BOOL: {
                bool b;

                if (!val || val_is(val, len, "yes") || val_is(val, len, "true") ||
                    val_is(val, len, "1"))
                        b = true;
                else if (val_is(val, len, "no") || val_is(val, len, "false") ||
                         val_is(val, len, "0"))
                        b = false;
                else
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s wants yes or no", o->name);
                memcpy(base, &b, sizeof(b));
                return 0;
        }
        case OPT_URL:
                return url_set(c, o, val, len, err);
        case OPT_DBMODE: {
                enum config_db_mode m;

                if (val && val_is(val, len, "writer"))
                        m = CONFIG_DB_WRITER;
                else if (val && val_is(val, len, "pool"))
                        m = CONFIG_DB_POOL;
                else
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s wants writer or pool",
                                           o->name);
                memcpy(base, &m, sizeof(m));
                return 0;
        }
        }
        return -EINVAL;
}

int config_parse(const char *text, size_t len, const char *name, struct config *c,
                 struct attest_err *err)
{
        static const struct kv_limits lim = {.file_max = CONFIG_FILE_MAX,
                                             .line_max = CONFIG_LINE_MAX,
                                             .key_max = CONFIG_KEY_MAX,
                                             .value_max = CONFIG_STR_MAX - 1,
                                             .lines_max = CONFIG_LINES_MAX};
        struct kv_pair p;
        struct kv kv;
        int x;

        if ((x = kv_init(&kv, text, len, name, &lim, err)) < 0)
                return x;
        while ((x = kv_next(&kv, &p, err)) > 0) {
                const struct opt *o = opt_find(p.key.p, p.key.n);

                /* flags that make no sense inside the file */
                if (!o || span_eq(p.key, "config") || span_eq(p.key, "help") ||
                    span_eq(p.key, "version"))
                        return kv_fail_unknown(&kv, err);
                if ((x = opt_set(c, o, p.value.p, p.value.n, err)) < 0) {
                        kv_err_prefix(&kv, err);
                        return x;
                }
        }
        return x;
}

static int config_file_load(struct config *c, const char *path, bool must_exist,
                            struct attest_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int x;

        if ((x = file_read_alloc(path, CONFIG_FILE_MAX, 0, &buf, &len, err)) < 0) {
                if (x == -ENOENT && !must_exist)
                        return 0;
                if (x == -ENOMEM)
                        return x;
                if (err)
                        err->code = AE_CONFIG; /* the message names the path and the cause */
                /* not a usage error: the caller says who may not read it (util/log.h) */
                return x == -EACCES ? x : -EINVAL;
        }
        return config_parse(buf, len, path, c, err);
}

/*
 * A PostgreSQL URL carries no password (it would show in ps, in logs and in errors): that is
 * --db-password-file's; the password file goes only with a URL.
 */
static int config_check_db(const struct config *c, struct attest_err *err)
{
        bool url = !strncmp(c->db, "postgresql://", 13) || !strncmp(c->db, "postgres://", 11);

        if (url) {
                const char *auth = c->db + (c->db[8] == 'q' ? 13 : 11);
                size_t host = strcspn(auth, "/?");
                const char *at = memchr(auth, '@', host);

                if ((at && memchr(auth, ':', (size_t)(at - auth))) || strstr(c->db, "password="))
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "db: a password in the URL is refused (it would show "
                                           "in ps and logs): use --db-password-file");
        } else if (c->db_password_file[0]) {
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "db-password-file: only with a postgresql:// --db");
        }
        return 0;
}

int config_load(int argc, char **argv, struct config *ret, struct attest_err *err)
{
        struct option lo[ARRAY_SIZE(opts) + 1];
        struct config c;
        const char *file = NULL;
        bool cli_webhook = false;
        int e, idx;

        config_defaults(&c);
        /* first pass: only --config, so the file comes before every other flag */
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        file = argv[i + 1];
                else if (!strncmp(argv[i], "--config=", 9))
                        file = argv[i] + 9;
        }
        if ((e = config_file_load(&c, file ? file : CONFIG_DEFAULT_FILE, file != NULL, err)) < 0) {
                if (e == -EACCES)
                        snprintf(ret->config_file, sizeof(ret->config_file), "%s",
                                 file ? file : CONFIG_DEFAULT_FILE);
                return e;
        }
        snprintf(c.config_file, sizeof(c.config_file), "%s", file ? file : CONFIG_DEFAULT_FILE);

        for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
                lo[i] = (struct option){opts[i].name,
                                        opts[i].type == OPT_BOOL ? optional_argument
                                                                 : required_argument,
                                        NULL, (int)i};
        lo[ARRAY_SIZE(opts)] = (struct option){0};
        optind = 1;
        opterr = 0;
        for (;;) {
                int r = getopt_long(argc, argv, "h", lo, &idx);

                if (r == -1)
                        break;
                if (r == 'h') {
                        c.help = true;
                        continue;
                }
                if (r == '?' || r < 0 || (size_t)r >= ARRAY_SIZE(opts))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "unknown or incomplete flag %s",
                                           argv[optind - 1]);
                /* the first --webhook flag replaces the file's list */
                if (opts[r].type == OPT_URL && !cli_webhook) {
                        c.n_webhooks = 0;
                        cli_webhook = true;
                }
                if ((e = opt_set(&c, &opts[r], optarg, optarg ? strlen(optarg) : 0, err)) < 0) {
                        attest_err_prefix(err, "command line");
                        return e;
                }
        }
        if (optind < argc)
                return attest_fail(err, -EINVAL, AE_CONFIG, "unexpected argument '%s'",
                                   argv[optind]);
        if (c.db_connections == 0)
                c.db_connections = c.threads;
        if ((e = config_check_db(&c, err)) < 0)
                return e;
        *ret = c;
        return 0;
}

void config_help(FILE *f, const char *prog)
{
        fprintf(f,
                "Usage: %s [FLAGS]\n\n"
                "attestd: remote-attestation verifier (REST over HTTPS). Every flag can also be\n"
                "set in the configuration file as `name = value`; flags win.\n\n",
                prog);
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
                char left[64];

                snprintf(left, sizeof(left), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                         opts[i].arg ? opts[i].arg : "");
                fprintf(f, "  %-28s %s\n", left, opts[i].help);
        }
        fprintf(f, "\nSignals: SIGTERM/SIGINT drain and stop, SIGHUP reloads the tokens file.\n"
                   "Socket activation (sd_listen_fds) takes precedence over --listen.\n"
                   "Logs go to stderr: <N> priority prefixes when it is the journal, an ISO 8601 "
                   "UTC\ntime and the level on a file or pipe, 'error: ' on a terminal;\n"
                   "ATTEST_LOG_FORMAT=journal|time|terminal forces one.\n");
}
