/* SPDX-License-Identifier: MIT */
/*
 * One request through libmicrohttpd's callbacks: percent-decoding, framing, mTLS and the checks
 * before any body byte, reading the body into its budget, api_handle(), and the answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "daemon/api/api.h"
#include "daemon/http/http-frame.h"
#include "daemon/http/http-internal.h"
#include "daemon/log.h"
#include "util/clock.h"

/*
 * Percent-decoding of the path and query (RFC 3986 2.1). %00 is left as it is and flagged: the
 * request is refused (400) rather than cut at the NUL.
 */
static int hexval(char ch)
{
        if (ch >= '0' && ch <= '9')
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

size_t http_unescape(void *cls, struct MHD_Connection *c, char *str)
{
        size_t r = 0, w = 0;
        bool nul = false;

        (void)cls;
        while (str[r]) {
                int hi, lo;

                if (str[r] == '%' && (hi = hexval(str[r + 1])) >= 0 &&
                    (lo = hexval(str[r + 2])) >= 0) {
                        if (hi == 0 && lo == 0) {
                                nul = true;
                                str[w++] = str[r++];
                                continue;
                        }
                        str[w++] = (char)(hi * 16 + lo);
                        r += 3;
                        continue;
                }
                str[w++] = str[r++];
        }
        str[w] = '\0';
        if (nul) {
                struct http_conn *hc = http_conn_of(c);

                if (hc)
                        hc->url_nul = true; /* only this connection's thread touches it now */
        }
        return w;
}

/* ---- mTLS ---- */

/* Whether the client presented a certificate that chains to --tls-client-ca, for client use. */
static bool client_cert_ok(struct MHD_Connection *c)
{
        gnutls_session_t session = http_tls_session(c);
        gnutls_typed_vdata_st purpose = {
                .type = GNUTLS_DT_KEY_PURPOSE_OID,
                .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
        };
        unsigned n = 0, status = 0;

        if (!session)
                return false;
        if (gnutls_certificate_type_get(session) != GNUTLS_CRT_X509 ||
            !gnutls_certificate_get_peers(session, &n) || n == 0)
                return false;
        if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0)
                return false;
        return status == 0;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
        struct req_state *st = cls;

        (void)kind;
        if (st->req.nquery >= API_QUERY_MAX) {
                st->req.query_overflow = true;
                return MHD_NO;
        }
        st->req.qkey[st->req.nquery] = key;
        st->req.qval[st->req.nquery] = value;
        st->req.nquery++;
        return MHD_YES;
}

/*
 * close: answered before the body was read; the connection ends after the response. The body
 * moves into the response (no copy): r->body is NULL afterwards, api_resp_done() stays valid.
 */
static enum MHD_Result send_resp(struct MHD_Connection *c, struct api_resp *r, bool close)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer_with_free_callback(r->body_len, r->body, free);
        if (!resp)
                return MHD_NO;
        r->body = NULL;
        r->body_len = 0;
        if (r->content_type)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
        if (r->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
        if (r->www_authenticate)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                        "Bearer realm=\"attestd\"");
        if (r->retry_after) {
                char ra[16];

                snprintf(ra, sizeof(ra), "%u", r->retry_after);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
        } else if (r->status == 503) {
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        }
        if (close)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        ret = MHD_queue_response(c, r->status, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result send_error(struct attestd *d, struct MHD_Connection *c, unsigned status,
                                  enum attest_code code, const char *detail, bool close)
{
        struct api_resp r = {0};
        enum MHD_Result ret;

        api_error(d, &r, status, code, "%s", detail);
        ret = send_resp(c, &r, close);
        api_resp_done(&r);
        return ret;
}

static enum MHD_Result too_large(struct http_server *s, struct MHD_Connection *c,
                                 struct req_state *st)
{
        char detail[96];

        st->too_large = true;
        st->responded = true;
        http_body_drop(s, st);
        snprintf(detail, sizeof(detail), "body larger than %zu bytes", st->limit);
        return send_error(s->d, c, 413, AE_BODY_TOO_LARGE, detail, true);
}

static enum MHD_Result busy(struct http_server *s, struct MHD_Connection *c, struct req_state *st)
{
        static const char *const why[] = {
                [BUDGET_OK] = "out of memory; retry later",
                [BUDGET_ALL] = "too many request bodies in flight; retry later",
                [BUDGET_ADDR] = "this client address's share of the request bodies in flight "
                                "is in use; retry later",
                [BUDGET_AGENT] = "this agent's share of the request bodies in flight is in use; "
                                 "retry later",
        };

        st->responded = true;
        http_body_drop(s, st);
        return send_error(s->d, c, 503, AE_SERVER_BUSY, why[st->busy_why], true);
}

/* The head is complete: everything decided before a body byte is read. */
static enum MHD_Result on_head(struct http_server *s, struct MHD_Connection *c,
                               struct req_state *st, const char *url, const char *method,
                               const struct http_frame *fr)
{
        struct attestd *d = s->d;
        struct http_conn *hc = http_conn_of(c);
        const char *auth;
        char id[API_ID_MAX + 1];
        struct api_resp r;
        enum MHD_Result ret;

        if (!hc) {
                st->responded = true;
                return send_error(d, c, 503, AE_SERVER_BUSY, "out of memory", true);
        }
        http_conn_request_started(s, hc);
        if (s->ticket_key.data && !hc->tls_counted) {
                gnutls_session_t session = http_tls_session(c);

                hc->tls_counted = true;
                if (session)
                        metrics_tls_session(&d->metrics, gnutls_session_is_resumed(session) != 0);
        }
        st->limit = api_body_limit(d, method, url);
        if (s->client_ca && !hc->cert_ok) {
                if (!client_cert_ok(c)) {
                        st->responded = true;
                        return send_error(d, c, 403, AE_CLIENT_CERTIFICATE_REQUIRED,
                                          "a client certificate from the configured CA is "
                                          "required",
                                          true);
                }
                hc->cert_ok = true;
        }
        if (hc->url_nul) {
                st->responded = true;
                return send_error(d, c, 400, AE_BAD_REQUEST, "a NUL byte (%00) in the URL", true);
        }
        /* refuse before the client sends (or we read) a single byte of it */
        if (fr->ncl && fr->cl > st->limit)
                return too_large(s, c, st);
        auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (api_preflight(d, method, url, auth, &r, id, &st->row) > 0) {
                st->responded = true;
                ret = send_resp(c, &r, true);
                api_resp_done(&r);
                return ret;
        }
        if (!http_frame_has_body(fr))
                return MHD_YES;
        if (http_budget_attach(s, c, st, id) < 0)
                return busy(s, c, st);
        /* nothing is taken before bytes arrive, but a body that cannot fit now is refused now */
        if (fr->ncl &&
            (st->busy_why = http_budget_check(s, st, (size_t)fr->cl, false)) != BUDGET_OK)
                return busy(s, c, st);
        st->declared = (size_t)fr->cl;
        st->head_ms = mono_ms();
        http_body_due(s, c, st, true);
        return MHD_YES;
}

static enum MHD_Result on_upload(struct http_server *s, struct MHD_Connection *c,
                                 struct req_state *st, const char *data, size_t n)
{
        st->arrived += n;
        http_body_due(s, c, st, true);
        if (!st->too_large && !st->over_budget && n > st->limit - st->len) {
                /* libmicrohttpd cannot answer mid-upload: stop buffering, drop the
                 * rest, answer 413 at its end; hang up if it goes on past another cap */
                st->too_large = true;
                http_body_drop(s, st);
        }
        if (st->too_large || st->over_budget || st->responded) {
                st->discarded += n;
                return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        if (n > st->cap - st->len) {
                /* grow with what arrived: doubling, up to the declared length and the cap
                 * (len + n <= limit here, and limit <= 1 GiB: no overflow) */
                size_t cap = st->cap ? st->cap : HTTP_BODY_FIRST;

                while (cap < st->len + n)
                        cap *= 2;
                if (st->declared && cap > st->declared)
                        cap = st->declared;
                if (cap > st->limit)
                        cap = st->limit;
                if (cap < st->len + n) /* more than declared: libmicrohttpd never does that */
                        return MHD_NO;
                st->busy_why = http_budget_check(s, st, cap - st->reserved, true);
                if (st->busy_why != BUDGET_OK) {
                        /* answered 503 at the body's end (or hung up past HTTP_DISCARD_MAX) */
                        st->over_budget = true;
                        http_body_drop(s, st);
                        st->discarded += n;
                        return MHD_YES;
                }
                st->reserved = cap;
                if (http_body_grow(st, cap) < 0)
                        return MHD_NO;
        }
        memcpy(st->body + st->len, data, n);
        st->len += n;
        return MHD_YES;
}

enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *upload_data,
                                size_t *upload_data_size, void **con_cls)
{
        struct http_server *s = cls;
        struct attestd *d = s->d;
        struct req_state *st = *con_cls;
        struct attest_err fe = {0};
        struct http_frame fr;
        struct api_resp r;
        enum MHD_Result ret;

        if (!st) {
                st = calloc(1, sizeof(*st));
                if (!st)
                        return MHD_NO;
                *con_cls = st;
                atomic_fetch_add(&d->in_flight, 1);
                /* RFC 9112 framing (http-frame.h); its Content-Length for the head's checks */
                if (http_frame_check(c, version, &fr, &fe) < 0) {
                        st->responded = true;
                        return send_error(d, c, 400, fe.code, fe.msg, true);
                }
                ret = on_head(s, c, st, url, method, &fr);
                if (st->responded && http_frame_has_body(&fr)) {
                        struct http_conn *hc = http_conn_of(c);

                        if (hc)
                                hc->linger = true; /* the body is still on its way */
                }
                return ret;
        }
        if (*upload_data_size) {
                size_t n = *upload_data_size;

                *upload_data_size = 0;
                return on_upload(s, c, st, upload_data, n);
        }
        http_body_due(s, c, st, false); /* the body is complete */
        if (st->responded)
                return MHD_YES;
        if (st->too_large)
                return too_large(s, c, st);
        if (st->over_budget)
                return busy(s, c, st);

        st->req.method = method;
        st->req.path = url;
        st->req.authorization =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        st->req.content_type =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, st);
        st->req.body = st->body;
        st->req.body_len = st->len;
        st->req.agent = &st->row;
        api_handle(d, &st->req, &r);
        st->responded = true;
        ret = send_resp(c, &r, false);
        api_resp_done(&r);
        return ret;
}

void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                       enum MHD_RequestTerminationCode toe)
{
        struct http_server *s = cls;
        struct req_state *st = *con_cls;
        struct http_conn *hc = http_conn_of(c);

        if (hc) {
                http_conn_request_done(s, hc);
                /* what came before was a request we answered (not one the library refused in
                 * its head: that one's bytes still count toward a lingering close) */
                if (st && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
                        hc->rx_mark = http_rx_bytes(hc->fd);
        }
        if (!st)
                return;
        http_body_drop(s, st);
        http_budget_detach(s, st);
        store_agent_free(st->row);
        free(st);
        *con_cls = NULL;
        atomic_fetch_sub(&s->d->in_flight, 1);
}
