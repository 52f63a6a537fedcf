/* SPDX-License-Identifier: MIT */
/*
 * attestd configuration: /etc/attestd/attestd.conf (`key = value`, `#` comments) and command-line
 * flags with the same names; flags win. One table drives both and `--help`.
 */
#ifndef ATTESTD_CONFIG_H
#define ATTESTD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

#define CONFIG_DEFAULT_FILE "/etc/attestd/attestd.conf"
#define CONFIG_STR_MAX 4096                    /* a value, with its NUL */
#define CONFIG_LINE_MAX (CONFIG_STR_MAX + 128) /* a line of the file, without its newline */
#define CONFIG_FILE_MAX (1024 * 1024)          /* the whole file */
#define CONFIG_KEY_MAX 64                      /* a key (the longest flag name is 27) */
#define CONFIG_LINES_MAX 65536                 /* lines, blank and comment lines included */

#define CONFIG_WEBHOOKS_MAX 8 /* --webhook receivers */
#define CONFIG_URL_MAX 2048   /* a webhook URL, with its NUL */

enum config_db_mode {
        CONFIG_DB_WRITER, /* one writer thread, group commit; readers from a pool */
        CONFIG_DB_POOL,   /* one connection per worker, a transaction per request */
};

struct config {
        char config_file[CONFIG_STR_MAX];
        char listen[CONFIG_STR_MAX]; /* ADDR:PORT, [v6]:PORT */
        char tls_cert[CONFIG_STR_MAX];
        char tls_key[CONFIG_STR_MAX];
        bool insecure_http;
        uint64_t threads;
        char db[CONFIG_STR_MAX];
        enum config_db_mode db_mode;
        uint64_t db_connections;
        char db_password_file[CONFIG_STR_MAX]; /* PostgreSQL password (FILE_SECRET); "": none */
        uint64_t db_wait_ms; /* a request waits this long for a pooled connection, then 503 */
        uint64_t retain;
        char tokens[CONFIG_STR_MAX];
        uint64_t nonce_ttl;               /* seconds */
        char nonce_key[CONFIG_STR_MAX];   /* "": <db directory>/nonce.key, created */
        uint64_t activation_failures_max; /* per agent per minute, then 429 */
        uint64_t interval;                /* seconds between attestations (next_due) */
        uint64_t grace;                   /* seconds past next_due before an agent is stale */
        char pcr_selection[CONFIG_STR_MAX];
        uint64_t max_evidence;      /* bytes */
        uint64_t max_body;          /* bytes */
        uint64_t max_entries;       /* IMA entries per submission */
        uint64_t drain_timeout;     /* seconds */
        char ek_ca[CONFIG_STR_MAX]; /* EK certificate CA bundle; "" : none configured */
        bool insecure_trust_ak;     /* enrol without EK proof (labs) */
        uint64_t credential_ttl;    /* seconds to activate an enrolment */
        /* HTTP front (docs/SECURITY.md): connection caps, deadlines, in-flight body budget, mTLS */
        char tls_client_ca[CONFIG_STR_MAX]; /* "" : no client certificates asked for */
        uint64_t max_connections;
        uint64_t max_connections_per_ip;
        uint64_t header_timeout;    /* seconds from accept (or the last response) to a full head */
        uint64_t body_timeout;      /* seconds from the head to the end of the response */
        uint64_t idle_timeout;      /* seconds without any byte moving */
        uint64_t max_inflight_body; /* bytes of request bodies buffered at once, all requests */
        uint64_t max_inflight_body_per_ip;    /* ... of one client address (IPv6: its /64) */
        uint64_t max_inflight_body_per_agent; /* ... naming one agent id in the URL */
        uint64_t min_body_rate;               /* bytes/s a body must average after the grace */
        uint64_t body_rate_grace;             /* seconds from the head before the rate counts */
        char ear_key[CONFIG_STR_MAX]; /* EAR signing key (PEM, P-256); "" : EAR endpoints 503 */
        /* webhooks (docs/webhooks.md): https:// URLs only; flags replace the file's */
        char webhooks[CONFIG_WEBHOOKS_MAX][CONFIG_URL_MAX];
        unsigned n_webhooks;
        char webhook_ca[CONFIG_STR_MAX];          /* "": the system's trust store */
        char webhook_secret_file[CONFIG_STR_MAX]; /* HMAC key, FILE_SECRET; needed with a URL */
        uint64_t webhook_timeout;                 /* seconds per delivery attempt */
        uint64_t webhook_backoff_max;             /* seconds between retries at most */
        uint64_t webhook_outbox_max;              /* events kept at most (the oldest dropped) */
        uint64_t webhook_retention;               /* seconds delivered events are kept */
        uint64_t policy_cache_bytes; /* parsed policies kept, bytes (daemon/policy-cache.h) */
        bool help, version;
};

/*
 * Defaults, then the config file (the one --config names, or CONFIG_DEFAULT_FILE when it exists),
 * then the flags. -EINVAL with err naming the flag or file:line; -EACCES when the file may not
 * be read (ret->config_file then names it; nothing else of ret is set).
 */
int config_load(int argc, char **argv, struct config *ret, struct attest_err *err) _wur_;
/*
 * Apply a configuration file's text (name for messages) over c: `key = value` lines, `#`
 * comments, blank lines, the syntax and caps of util/kv.h (the caps above). -EINVAL with err
 * naming name:line: key. A key given twice: the later line wins.
 */
int config_parse(const char *text, size_t len, const char *name, struct config *c,
                 struct attest_err *err) _wur_;
void config_help(FILE *f, const char *prog);

#endif
