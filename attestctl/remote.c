/* SPDX-License-Identifier: MIT */
/* The HTTPS client, connection options, error answers and tables of attestctl's remote commands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "attestctl/tty.h"
#include "attestctl/remote.h"
#include "util/file.h"
#include "util/sink.h"
#include "util/num.h"
#include "util/tls.h"

const char remote_options_help[] =
        "Connection (every remote command):\n"
        "  --url URL         attestd's base URL, https://HOST:PORT (default $ATTESTD_URL)\n"
        "  --ca FILE         the CA bundle attestd's certificate must chain to; no other CA\n"
        "                    is trusted (default $ATTESTD_CA)\n"
        "  --token-file FILE the bearer token, in a file not readable by group or others\n"
        "                    (default $ATTESTD_TOKEN_FILE, else the token in $ATTESTD_TOKEN);\n"
        "                    never on the command line\n"
        "  --json            print the server's JSON (or a stable JSON form) instead of tables\n"
        "  --timeout SEC     for the whole request (default 30)\n"
        "  --full            tables with every cell whole and digests in full (default: fitted\n"
        "                    to the terminal, digests shortened)\n"
        "  -h, --help        this text\n";

bool remote_color(void)
{
        const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

        return isatty(STDOUT_FILENO) && !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
}

size_t remote_width(void)
{
        const char *c = getenv("COLUMNS");
        struct winsize ws;
        uint64_t v;

        if (c && *c && num_u64(c, strlen(c), 20, 10000, &v) == 0)
                return (size_t)v;
        if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
                return ws.ws_col;
        return 0;
}

void remote_init(struct remote *r)
{
        *r = (struct remote){.timeout = 30, .color = remote_color(), .width = remote_width()};
}

int remote_exit(int x)
{
        if (x >= 0)
                return x;
        switch (-x) {
        case CTL_E_NOT_FOUND:
                return CTL_EXIT_NOT_FOUND;
        case CTL_E_DENIED:
                return CTL_EXIT_DENIED;
        case CTL_E_CONFLICT:
                return CTL_EXIT_CONFLICT;
        case CTL_E_SERVER:
        case EBADMSG:
        case EPROTO:
        case ELOOP:
                return CTL_EXIT_SERVER;
        case CTL_E_CONNECT:
                return CTL_EXIT_CONNECT;
        default:
                return CTL_EXIT_USAGE;
        }
}

void remote_done(struct remote *r)
{
        if (r->curl)
                curl_easy_cleanup(r->curl);
        if (r->auth) {
                OPENSSL_cleanse(r->auth, strlen(r->auth));
                free(r->auth);
        }
        r->curl = NULL;
        r->auth = NULL;
}

int remote_opt(struct remote *r, int c, const char *arg)
{
        uint64_t v;

        switch (c) {
        case OPT_URL:
                r->url = arg;
                return 1;
        case OPT_CA:
                r->ca = arg;
                return 1;
        case OPT_TOKEN_FILE:
                r->token_file = arg;
                return 1;
        case OPT_JSON:
                r->json = true;
                return 1;
        case OPT_FULL:
                r->full = true;
                return 1;
        case OPT_TIMEOUT:
                if (num_u64(arg, strlen(arg), 1, 3600, &v) < 0) {
                        fprintf(stderr, "attestctl: --timeout: seconds, 1 to 3600\n");
                        return -EINVAL;
                }
                r->timeout = (long)v;
                return 1;
        case OPT_TOKEN:
                /* never echo what followed: it may be the token */
                fprintf(stderr, "attestctl: --token: a token is never taken on the command line "
                                "(other users see it in ps); use --token-file FILE, "
                                "ATTESTD_TOKEN_FILE or ATTESTD_TOKEN\n");
                return -EINVAL;
        default:
                return 0;
        }
}

/* A token is one line of printable ASCII without spaces; a trailing "\n" or "\r\n" is dropped. */
static int token_check(char *t, size_t *len, const char *from)
{
        if (*len && t[*len - 1] == '\n')
                t[--*len] = '\0';
        if (*len && t[*len - 1] == '\r')
                t[--*len] = '\0';
        if (*len == 0) {
                fprintf(stderr, "attestctl: %s: the token is empty\n", from);
                return -EINVAL;
        }
        for (size_t i = 0; i < *len; i++)
                if (t[i] <= 0x20 || t[i] >= 0x7f) {
                        fprintf(stderr,
                                "attestctl: %s: the token must be one line of printable "
                                "characters without spaces (byte %zu is not)\n",
                                from, i);
                        return -EINVAL;
                }
        return 0;
}

static int set_auth(struct remote *r, const char *tok, size_t len)
{
        size_t n = len + sizeof("Authorization: Bearer ");

        if (!(r->auth = malloc(n)))
                return -ENOMEM;
        snprintf(r->auth, n, "Authorization: Bearer %.*s", (int)len, tok);
        return 0;
}

static int load_token(struct remote *r)
{
        const char *env_file = getenv("ATTESTD_TOKEN_FILE"), *env_tok = getenv("ATTESTD_TOKEN");
        const char *path = r->token_file ? r->token_file : env_file && *env_file ? env_file : NULL;
        struct attest_err err = {0};
        char *buf = NULL;
        size_t len = 0;
        int x;

        if (!path && env_tok && *env_tok) {
                char tmp[CTL_TOKEN_MAX + 1];

                len = strlen(env_tok);
                if (len > CTL_TOKEN_MAX) {
                        fprintf(stderr, "attestctl: ATTESTD_TOKEN: over %d bytes\n", CTL_TOKEN_MAX);
                        return -E2BIG;
                }
                memcpy(tmp, env_tok, len + 1);
                x = token_check(tmp, &len, "ATTESTD_TOKEN");
                if (x == 0)
                        x = set_auth(r, tmp, len);
                OPENSSL_cleanse(tmp, sizeof(tmp));
                return x;
        }
        if (!path) {
                fprintf(stderr, "attestctl: no token: give --token-file FILE (or set "
                                "ATTESTD_TOKEN_FILE or ATTESTD_TOKEN)\n");
                return -EINVAL;
        }
        x = file_read_alloc(path, CTL_TOKEN_MAX + 2, FILE_SECRET, &buf, &len, &err);
        if (x == -EPERM) {
                fprintf(stderr,
                        "attestctl: %s: the token file must not be accessible by group or "
                        "others (chmod 600): %s\n",
                        path, err.msg);
                return x;
        }
        if (x < 0) {
                fprintf(stderr, "attestctl: token file: %s\n", err.msg);
                return x;
        }
        x = token_check(buf, &len, path);
        if (x == 0 && len > CTL_TOKEN_MAX) {
                fprintf(stderr, "attestctl: %s: the token is over %d bytes\n", path, CTL_TOKEN_MAX);
                x = -E2BIG;
        }
        if (x == 0)
                x = set_auth(r, buf, len);
        file_free_secret(buf, len);
        return x;
}

int remote_connect(struct remote *r, bool need_token)
{
        struct tls_client_opts tls;
        const char *refused = "";
        CURL *h;
        int x;

        if (!r->url)
                r->url = getenv("ATTESTD_URL");
        if (!r->ca)
                r->ca = getenv("ATTESTD_CA");
        if (!r->url || !*r->url) {
                fprintf(stderr, "attestctl: no verifier: give --url https://HOST:PORT (or set "
                                "ATTESTD_URL)\n");
                return -EINVAL;
        }
        if (strncmp(r->url, "https://", 8) != 0 || strlen(r->url) > 1024) {
                fprintf(stderr, "attestctl: --url must be https://HOST[:PORT]\n");
                return -EINVAL;
        }
        if (!r->ca || !*r->ca) {
                fprintf(stderr, "attestctl: no CA: give --ca FILE (or set ATTESTD_CA), the CA "
                                "attestd's certificate chains to\n");
                return -EINVAL;
        }
        if (access(r->ca, R_OK) < 0) {
                fprintf(stderr, "attestctl: --ca %s: %s\n", r->ca, strerror(errno));
                return -errno;
        }
        if (need_token && (x = load_token(r)) < 0)
                return x;
        if (!(h = r->curl = curl_easy_init()))
                return -ENOMEM;
        tls = (struct tls_client_opts){
                .ca = r->ca,
                .connect_timeout_ms = 5000L,
                .timeout_ms = r->timeout * 1000L,
                .max_response = CTL_RESPONSE_MAX,
        };
        if (tls_client_setup(h, &tls, &refused) < 0) {
                fprintf(stderr, "attestctl: libcurl refuses %s\n", refused);
                return -ENOTSUP;
        }
        return 0;
}

void reply_done(struct reply *p)
{
        free(p->body);
        *p = (struct reply){0};
}

/* Whether a libcurl failure means attestd was not reached (exit 7) rather than that its answer
 * was broken (exit 6). */
static bool unreached(CURLcode rc)
{
        switch (rc) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_CRL_BADFILE:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SEND_ERROR:
                return true;
        default:
                return false;
        }
}

int remote_request(struct remote *r, const char *method, const char *path, const char *body,
                   struct reply *ret)
{
        struct curl_slist *hdr = NULL;
        struct text_sink s = {.max = CTL_RESPONSE_MAX};
        char url[2048], ebuf[CURL_ERROR_SIZE] = "";
        CURL *h = r->curl;
        CURLcode rc;

        if ((size_t)snprintf(url, sizeof(url), "%s%s", r->url, path) >= sizeof(url)) {
                fprintf(stderr, "attestctl: %s: URL too long\n", path);
                return -EINVAL;
        }
        hdr = curl_slist_append(hdr, "Accept: application/json");
        if (hdr && body)
                hdr = curl_slist_append(hdr, "Content-Type: application/json");
        if (hdr)
                hdr = curl_slist_append(hdr, "Expect:");
        if (hdr && r->auth)
                hdr = curl_slist_append(hdr, r->auth);
        if (!hdr)
                return -ENOMEM;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, text_sink_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
        if (body) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        } else if (strcmp(method, "GET") == 0) {
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        } else if (strcmp(method, "DELETE") == 0) {
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L); /* no body at all */
        } else {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        }
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        rc = curl_easy_perform(h);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(hdr);
        if (rc != CURLE_OK) {
                free(s.buf);
                if (s.nul) {
                        fprintf(stderr, "attestctl: %s %s: the answer holds a NUL byte: refused\n",
                                method, path);
                        return -EBADMSG;
                }
                if (s.overflow || rc == CURLE_FILESIZE_EXCEEDED) {
                        fprintf(stderr, "attestctl: %s %s: the answer is over %u bytes: refused\n",
                                method, path, CTL_RESPONSE_MAX);
                        return -EBADMSG;
                }
                /* libcurl's text may quote the server (a certificate's name) */
                fprintf(stderr, "attestctl: %s %s: ", method, path);
                tty_fputs(ebuf[0] ? ebuf : curl_easy_strerror(rc), ERR_TEXT_COLS, stderr);
                fprintf(stderr, "%s\n",
                        rc == CURLE_PEER_FAILED_VERIFICATION
                                ? " (is --ca the CA of attestd's certificate?)"
                                : "");
                if (rc == CURLE_OUT_OF_MEMORY)
                        return -ENOMEM;
                /* attestd not reached (no connection, TLS refused, no answer in time), or
                 * reached and its answer broken (cut off, not HTTP) */
                return unreached(rc) ? -CTL_E_CONNECT : -CTL_E_SERVER;
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ret->status);
        if (!s.buf && !(s.buf = calloc(1, 1)))
                return -ENOMEM;
        ret->body = s.buf;
        ret->len = s.len;
        return 0;
}

void remote_print_error(const char *method, const char *path, const struct reply *p)
{
        json_auto_t *j = json_loadb(p->body, p->len, JSON_REJECT_DUPLICATES, NULL);
        const char *code = json_string_value(json_object_get(j, "error"));
        const char *detail = json_string_value(json_object_get(j, "detail"));

        if (code) {
                /* the server's words, escaped: they may hold anything (attestctl/tty.h) */
                fprintf(stderr, "attestctl: %s %s: %ld ", method, path, p->status);
                tty_fputs(code, ERR_TEXT_COLS, stderr);
                fputs(": ", stderr);
                tty_fputs(detail ? detail : "", ERR_TEXT_COLS, stderr);
                fputc('\n', stderr);
        } else
                fprintf(stderr, "attestctl: %s %s: HTTP %ld without a JSON error body\n", method,
                        path, p->status);
}

int remote_json(struct remote *r, const char *method, const char *path, const char *body,
                json_t **ret)
{
        struct reply p = {0};
        int x;

        *ret = NULL;
        if ((x = remote_request(r, method, path, body, &p)) < 0)
                return x;
        return reply_json(method, path, &p, ret);
}

int reply_errno(long status)
{
        if (status == 404)
                return -CTL_E_NOT_FOUND;
        if (status == 401 || status == 403)
                return -CTL_E_DENIED;
        if (status == 409)
                return -CTL_E_CONFLICT;
        if (status >= 400 && status <= 499)
                return -EINVAL;
        if (status >= 500 && status <= 599)
                return -CTL_E_SERVER;
        return -EPROTO;
}

int reply_json(const char *method, const char *path, struct reply *p, json_t **ret)
{
        json_error_t je;
        json_t *j;

        *ret = NULL;
        if (p->status < 200 || p->status > 299) {
                int x = reply_errno(p->status);

                remote_print_error(method, path, p);
                reply_done(p);
                return x;
        }
        if (p->status == 204) {
                reply_done(p);
                return 0;
        }
        j = json_loadb(p->body, p->len, JSON_REJECT_DUPLICATES, &je);
        reply_done(p);
        if (!j || !json_is_object(j)) {
                /* jansson's text quotes the token it stopped at */
                fprintf(stderr, "attestctl: %s %s: the answer is not a JSON object%s", method, path,
                        j ? "" : ": ");
                tty_fputs(j ? "" : je.text, ERR_TEXT_COLS, stderr);
                fputc('\n', stderr);
                json_decref(j);
                return -EBADMSG;
        }
        *ret = j;
        return 0;
}

int print_json(const json_t *j)
{
        _cleanup_free_ char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

        if (!s)
                return -ENOMEM;
        printf("%s\n", s);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

bool remote_id_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-'))
                        return false;
        }
        return true;
}
