/* SPDX-License-Identifier: MIT */
/*
 * attestd: start-up, signals, systemd integration (sd_notify READY/STATUS/STOPPING, watchdog,
 * socket activation), shutdown with draining.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <systemd/sd-daemon.h>

#include "daemon/api/api.h"
#include "daemon/attestd.h"
#include "daemon/ear.h"
#include "daemon/http/http.h"
#include "daemon/webhook.h"
#include "util/file.h"
#include "util/log.h"

#ifndef ATTEST_VERSION
#define ATTEST_VERSION "0"
#endif

#define PEM_MAX (1024 * 1024)

/* Reading path (for --what) failed with e: err's message, and who may not read it (EACCES). */
static void log_file_error(const char *what, const char *path, int e, const struct attest_err *err,
                           bool secret)
{
        char hint[LOG_LINE_MAX / 2];

        if (e == -EACCES)
                log_err("--%s: %s; %s", what, err->msg,
                        log_access_hint(path, secret, hint, sizeof(hint)));
        else
                log_err("--%s: %s", what, err->msg);
}

/* A PEM file for --what: at most PEM_MAX bytes, not empty; logs why not. */
static int read_pem(const char *what, const char *path, unsigned flags, char **ret, size_t *ret_len)
{
        struct attest_err err = {0};
        int e;

        if ((e = file_read_alloc(path, PEM_MAX, flags, ret, ret_len, &err)) < 0) {
                log_file_error(what, path, e, &err, flags & FILE_SECRET);
                return e;
        }
        if (*ret_len == 0) {
                log_err("--%s: %s: empty", what, path);
                free(*ret);
                *ret = NULL;
                return -EINVAL;
        }
        return 0;
}

static int tokens_load(struct attestd *d, bool startup)
{
        struct auth_tokens *t = NULL, *old;
        struct attest_err err = {0};
        int e;

        if (access(d->cfg.tokens, F_OK) < 0 && errno == ENOENT) {
                log_warning("tokens file %s does not exist: only unauthenticated endpoints work",
                            d->cfg.tokens);
                if ((e = auth_parse("", 0, d->cfg.tokens, &t, &err)) < 0)
                        return e;
        } else if ((e = auth_load(d->cfg.tokens, &t, &err)) < 0) {
                char hint[LOG_LINE_MAX / 2] = "";

                if (access(d->cfg.tokens, R_OK) < 0 && errno == EACCES)
                        log_access_hint(d->cfg.tokens, false, hint, sizeof(hint));
                log_err("%s%s%s%s", startup ? "" : "reload: keeping the old tokens: ", err.msg,
                        hint[0] ? "; " : "", hint);
                return e;
        }
        pthread_rwlock_wrlock(&d->tokens_lock);
        old = d->tokens;
        d->tokens = t;
        pthread_rwlock_unlock(&d->tokens_lock);
        auth_free(old);
        log_info("%zu tokens loaded from %s", auth_count(t), d->cfg.tokens);
        return 0;
}

static int listen_socket(struct attestd *d, int *ret_fd)
{
        struct attest_err err = {0};
        int n = sd_listen_fds(1), e;

        if (n < 0) {
                log_err("sd_listen_fds: %s", strerror(-n));
                return n;
        }
        if (n > 0) {
                if (n > 1)
                        log_warning("socket activation passed %d sockets; serving the first", n);
                for (int i = 1; i < n; i++)
                        close(SD_LISTEN_FDS_START + i);
                if (sd_is_socket(SD_LISTEN_FDS_START, 0, SOCK_STREAM, 1) <= 0) {
                        log_err("socket activation: fd %d is not a listening stream socket",
                                SD_LISTEN_FDS_START);
                        return -EINVAL;
                }
                *ret_fd = SD_LISTEN_FDS_START;
                log_info("listening on the socket systemd passed");
                return 0;
        }
        if ((e = http_listen(d->cfg.listen, ret_fd, &err)) < 0) {
                log_err("%s", err.msg);
                return e;
        }
        log_info("listening on %s", d->cfg.listen);
        return 0;
}

/*
 * The store: a SQLite file or a PostgreSQL URL (no password in it: config.c refuses one), the
 * password from --db-password-file (a secret: mode 0600, wiped after use, never logged).
 */
static int store_setup(struct attestd *d)
{
        struct store_options o = {
                .target = d->cfg.db,
                .mode = d->cfg.db_mode == CONFIG_DB_POOL ? STORE_POOL : STORE_WRITER,
                .connections = (unsigned)d->cfg.db_connections,
                .wait_ms = (int64_t)d->cfg.db_wait_ms,
        };
        struct attest_err err = {0};
        char *pw = NULL;
        size_t pw_len = 0;
        int e;

        if (d->cfg.db_password_file[0]) {
                if ((e = file_read_alloc(d->cfg.db_password_file, 1024, FILE_SECRET, &pw, &pw_len,
                                         &err)) < 0) {
                        log_err("db-password-file: %s", err.msg);
                        return e;
                }
                while (pw_len > 0 && (pw[pw_len - 1] == '\n' || pw[pw_len - 1] == '\r'))
                        pw[--pw_len] = '\0';
                if (pw_len == 0 || memchr(pw, '\0', pw_len)) {
                        log_err("db-password-file %s: empty, or a NUL byte in it",
                                d->cfg.db_password_file);
                        file_free_secret(pw, pw_len);
                        return -EINVAL;
                }
                o.password = pw;
        }
        e = store_open_opts(&o, &d->store, &err);
        file_free_secret(pw, pw_len);
        if (e < 0)
                log_err("database %s: %s", d->cfg.db, err.msg);
        return e;
}

/*
 * The nonce MAC key (docs/architecture.md §3.2): --nonce-key, or nonce.key in the database's
 * directory, created with 32 random bytes (0600) on first start. Never logged.
 */
static int nonce_setup(struct attestd *d)
{
        uint8_t key[NONCE_KEY_MAX];
        char path[CONFIG_STR_MAX + 16];
        struct attest_err err = {0};
        size_t len = 0;
        bool create = !d->cfg.nonce_key[0];
        int e;

        if (create && store_is_url(d->cfg.db)) {
                /* instances on one PostgreSQL answer each other's challenges: one key for all */
                log_err("with a PostgreSQL --db, --nonce-key FILE is needed (the same key on "
                        "every instance)");
                return -EINVAL;
        }
        if (create) {
                const char *slash = strrchr(d->cfg.db, '/');

                if (slash)
                        snprintf(path, sizeof(path), "%.*s/nonce.key", (int)(slash - d->cfg.db),
                                 d->cfg.db);
                else
                        snprintf(path, sizeof(path), "nonce.key");
        } else {
                snprintf(path, sizeof(path), "%s", d->cfg.nonce_key);
        }
        if ((e = nonce_key_load(path, create, key, &len, &err)) < 0) {
                log_err("nonce key: %s", err.msg);
                return e;
        }
        e = nonce_store_new(d->cfg.nonce_ttl * 1000, key, len, &d->nonces);
        OPENSSL_cleanse(key, sizeof(key));
        if (e < 0)
                log_err("nonce key %s: %s", path, strerror(-e));
        return e;
}

/* --ear-key: a P-256 private key (a secret: mode 0600, wiped after use, never logged). */
static int ear_setup(struct attestd *d)
{
        struct attest_err err = {0};
        char *pem = NULL;
        size_t len = 0;
        int e;

        if (!d->cfg.ear_key[0]) {
                log_info("no --ear-key: GET /v1/agents/ID/ear and /v1/ear/keys answer 503");
                return 0;
        }
        if ((e = read_pem("ear-key", d->cfg.ear_key, FILE_SECRET, &pem, &len)) < 0)
                return e;
        e = ear_signer_new(pem, len, &d->ear, &err);
        file_free_secret(pem, len);
        if (e < 0) {
                log_err("--ear-key %s: %s", d->cfg.ear_key, err.msg);
                return e;
        }
        log_info("EAR signing key %s loaded (kid %s)", d->cfg.ear_key, ear_signer_kid(d->ear));
        return 0;
}

static int run(struct attestd *d)
{
        _cleanup_free_ char *cert = NULL, *client_ca = NULL;
        char *key = NULL;
        size_t cert_len = 0, key_len = 0, client_ca_len = 0;
        struct http_server *srv = NULL;
        struct attest_err err = {0};
        uint64_t wd_usec = 0;
        sigset_t mask;
        int sfd, fd = -1, e;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        /* blocked before any thread starts, so only the signalfd sees them */
        pthread_sigmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        if (sfd < 0) {
                log_err("signalfd: %s", strerror(errno));
                return -errno;
        }

        if (pcr_sel_parse(d->cfg.pcr_selection, &d->pcr_sel) < 0 || pcr_sel_is_empty(&d->pcr_sel) ||
            pcr_sel_format(&d->pcr_sel, d->pcr_sel_text, sizeof(d->pcr_sel_text)) < 0) {
                log_err("--pcr-selection %s: not a PCR selection", d->cfg.pcr_selection);
                close(sfd);
                return -EINVAL;
        }
        if ((e = tokens_load(d, true)) < 0 || (e = ear_setup(d)) < 0) {
                close(sfd);
                return e;
        }
        if (!d->cfg.insecure_http) {
                if (!d->cfg.tls_cert[0] || !d->cfg.tls_key[0]) {
                        log_err("TLS needs --tls-cert and --tls-key (or --insecure-http on "
                                "loopback)");
                        close(sfd);
                        return -EINVAL;
                }
                if ((e = read_pem("tls-cert", d->cfg.tls_cert, 0, &cert, &cert_len)) < 0 ||
                    (e = read_pem("tls-key", d->cfg.tls_key, FILE_SECRET, &key, &key_len)) < 0) {
                        close(sfd);
                        return e;
                }
                if (d->cfg.tls_client_ca[0] && (e = read_pem("tls-client-ca", d->cfg.tls_client_ca,
                                                             0, &client_ca, &client_ca_len)) < 0) {
                        file_free_secret(key, key_len);
                        close(sfd);
                        return e;
                }
        } else if (d->cfg.tls_client_ca[0]) {
                log_err("--tls-client-ca needs TLS (not --insecure-http)");
                close(sfd);
                return -EINVAL;
        }
        if ((e = store_setup(d)) < 0) {
                file_free_secret(key, key_len);
                close(sfd);
                return e;
        }
        if ((e = nonce_setup(d)) < 0 ||
            (e = ratelimit_new((unsigned)d->cfg.activation_failures_max, 60000,
                               &d->activation_rl)) < 0 ||
            (e = ratelimit_new(1, 60000, &d->enrol_log_rl)) < 0 ||
            (e = akcache_new(1000000, &d->aks)) < 0 ||
            (e = rowstash_new(ROWSTASH_ROWS_MAX, ROWSTASH_BYTES_MAX, &d->rows)) < 0 ||
            (e = listen_socket(d, &fd)) < 0) {
                file_free_secret(key, key_len);
                close(sfd);
                return e;
        }
        /* the outbox's threads (webhook delivery, stale scan) before serving */
        if ((e = webhook_start(&d->cfg, d->store, &d->webhooks, &err)) < 0) {
                char hint[LOG_LINE_MAX / 2] = "";
                const char *f = access(d->cfg.webhook_secret_file, R_OK) < 0 && errno == EACCES
                                        ? d->cfg.webhook_secret_file
                                : access(d->cfg.webhook_ca, R_OK) < 0 && errno == EACCES
                                        ? d->cfg.webhook_ca
                                        : NULL;

                if (e == -EACCES && f)
                        log_access_hint(f, f == d->cfg.webhook_secret_file, hint, sizeof(hint));
                log_err("%s%s%s", err.msg[0] ? err.msg : strerror(-e), hint[0] ? "; " : "", hint);
                close(fd);
                file_free_secret(key, key_len);
                close(sfd);
                return e;
        }
        if (d->cfg.insecure_http && !http_socket_is_loopback(fd)) {
                log_err("--insecure-http refused: the listening address is not loopback");
                close(fd);
                file_free_secret(key, key_len);
                close(sfd);
                return -EPERM;
        }
        if (d->cfg.insecure_http)
                log_warning("serving plain HTTP on loopback (--insecure-http)");
        e = http_start(d, fd, cert, key, client_ca, &srv, &err);
        file_free_secret(key, key_len);
        key = NULL;
        if (e < 0) {
                log_err("%s", err.msg);
                close(sfd);
                return e;
        }
        log_info("attestd %s ready: %s%s, %llu threads, database %s (%s mode), PCRs %s",
                 ATTEST_VERSION, d->cfg.insecure_http ? "plain HTTP" : "TLS",
                 client_ca ? " with client certificates" : "", (unsigned long long)d->cfg.threads,
                 d->cfg.db, d->cfg.db_mode == CONFIG_DB_POOL ? "pool" : "writer", d->pcr_sel_text);
        sd_notifyf(0, "READY=1\nSTATUS=serving %s, %llu threads",
                   d->cfg.insecure_http ? "plain HTTP on loopback" : "HTTPS",
                   (unsigned long long)d->cfg.threads);
        if (sd_watchdog_enabled(0, &wd_usec) <= 0)
                wd_usec = 0;

        for (;;) {
                struct pollfd p = {.fd = sfd, .events = POLLIN};
                struct signalfd_siginfo si;
                /* at least once a second: the stale scan (api_stale_scan) */
                int timeout = wd_usec && wd_usec / 2000 < 1000 ? (int)(wd_usec / 2000) : 1000, r;

                r = poll(&p, 1, timeout);
                if (r < 0 && errno != EINTR) {
                        log_err("poll: %s", strerror(errno));
                        break;
                }
                if (wd_usec) {
                        int v;

                        /* ping only while the database answers */
                        if (store_schema_version(d->store, &v) == 0)
                                sd_notify(0, "WATCHDOG=1");
                        else
                                log_warning("database not answering: watchdog not pinged");
                }
                api_stale_scan(d);
                if (r <= 0 || !(p.revents & POLLIN))
                        continue;
                if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
                        continue;
                if (si.ssi_signo == SIGHUP) {
                        sd_notify(0, "RELOADING=1");
                        (void)tokens_load(d, false);
                        sd_notify(0, "READY=1\nSTATUS=reloaded");
                        continue;
                }
                log_info("signal %d: draining in-flight requests (up to %llu s)", si.ssi_signo,
                         (unsigned long long)d->cfg.drain_timeout);
                break;
        }
        sd_notify(0, "STOPPING=1\nSTATUS=draining");
        srv = http_stop(srv, d->cfg.drain_timeout * 1000);
        d->webhooks = webhook_stop(d->webhooks);
        close(sfd);
        log_info("stopped");
        return 0;
}

/*
 * --ek-ca is read at every enrolment (a certificate added or removed counts at once, no restart);
 * what it cannot read then is skipped. Say at start which of its files this user cannot read.
 */
static void ek_ca_check(const struct config *cfg)
{
        char hint[LOG_LINE_MAX / 2], path[CONFIG_STR_MAX + 300];
        struct dirent *de;
        struct stat st;
        DIR *dir;

        if (!cfg->ek_ca[0] || stat(cfg->ek_ca, &st) < 0)
                return;
        if (!S_ISDIR(st.st_mode)) {
                if (access(cfg->ek_ca, R_OK) < 0 && errno == EACCES)
                        log_warning("--ek-ca %s: %s; %s", cfg->ek_ca, strerror(EACCES),
                                    log_access_hint(cfg->ek_ca, false, hint, sizeof(hint)));
                return;
        }
        if (!(dir = opendir(cfg->ek_ca))) {
                if (errno == EACCES)
                        log_warning("--ek-ca %s: %s; %s", cfg->ek_ca, strerror(EACCES),
                                    log_access_hint(cfg->ek_ca, false, hint, sizeof(hint)));
                return;
        }
        while ((de = readdir(dir))) {
                size_t n = strlen(de->d_name);

                if (n < 5 ||
                    (strcmp(de->d_name + n - 4, ".pem") && strcmp(de->d_name + n - 4, ".crt")))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", cfg->ek_ca, de->d_name);
                if (access(path, R_OK) < 0 && errno == EACCES)
                        log_warning("--ek-ca: %s: %s (skipped at enrolment); %s", path,
                                    strerror(EACCES),
                                    log_access_hint(path, false, hint, sizeof(hint)));
        }
        closedir(dir);
}

int main(int argc, char **argv)
{
        struct attestd d;
        struct attest_err err = {0};
        int e;

        memset(&d, 0, sizeof(d));
        if ((e = config_load(argc, argv, &d.cfg, &err)) < 0) {
                char hint[LOG_LINE_MAX / 2];

                /* a file it may not read is not a usage error: say who needs what */
                if (e == -EACCES)
                        log_err("%s; %s", err.msg,
                                log_access_hint(d.cfg.config_file, false, hint, sizeof(hint)));
                else
                        log_err("%s (see --help)", err.msg);
                return 2;
        }
        if (d.cfg.help) {
                config_help(stdout, "attestd");
                return 0;
        }
        if (d.cfg.version) {
                printf("attestd %s\n", ATTEST_VERSION);
                return 0;
        }
        ek_ca_check(&d.cfg);
        if (!d.cfg.ek_ca[0] && !d.cfg.insecure_trust_ak)
                log_warning("no --ek-ca: enrolment is refused until one is configured "
                            "(--insecure-trust-ak for labs)");
        if (d.cfg.insecure_trust_ak)
                log_warning("--insecure-trust-ak: agents are enrolled without EK certificate or "
                            "credential activation");
        metrics_init(&d.metrics);
        pthread_rwlock_init(&d.tokens_lock, NULL);
        e = policy_cache_new(POLICY_CACHE_MAX, &d.policies);
        if (e == 0)
                e = policy_cache_set_max_bytes(d.policies, d.cfg.policy_cache_bytes);
        if (e == 0)
                e = run(&d);
        d.webhooks = webhook_stop(d.webhooks);
        d.store = store_close(d.store);
        d.nonces = nonce_store_free(d.nonces);
        d.activation_rl = ratelimit_free(d.activation_rl);
        d.enrol_log_rl = ratelimit_free(d.enrol_log_rl);
        d.aks = akcache_free(d.aks);
        d.rows = rowstash_free(d.rows);
        d.policies = policy_cache_free(d.policies);
        d.tokens = auth_free(d.tokens);
        d.ear = ear_signer_free(d.ear);
        pthread_rwlock_destroy(&d.tokens_lock);
        metrics_done(&d.metrics);
        return e < 0 ? 1 : 0;
}
