/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "daemon/http/http-frame.h"
#include "util/hex.h"
#include "util/log.h"
#include "util/tok.h"

/* the key of the target's verdict among the request's MHD_POSTDATA_KIND values */
#define TARGET_KEY "attestd-request-target"
#define TARGET_OK "ok"

/* room for an escaped field name in a detail (log_escape: 4 bytes a hostile byte, then "...") */
#define NAME_SHOWN 64

void http_frame_init(struct http_frame *f)
{
        memset(f, 0, sizeof(*f));
}

/* tchar (RFC 9110 5.6.2) */
static bool is_tchar(unsigned char ch)
{
        if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
                return true;
        return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* a control byte that may not appear in a field value: NUL..US except HTAB, and DEL */
static bool is_value_ctl(unsigned char ch)
{
        return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

/* Keep the first field error in f; every later call returns it. */
_printf_(4, 5) static int field_fail(struct http_frame *f, struct attest_err *err, int e,
                                     const char *fmt, ...)
{
        va_list ap;

        if (!f->e) {
                f->e = e;
                f->err.code = AE_BAD_REQUEST;
                va_start(ap, fmt);
                vsnprintf(f->err.msg, sizeof(f->err.msg), fmt, ap);
                va_end(ap);
        }
        if (err)
                *err = f->err;
        return f->e;
}

/* the framing field names that libmicrohttpd's obs-fold handling can hide (see the header) */
static const char *const framing_names[] = {"Content-Length", "Transfer-Encoding"};

static int check_name(struct http_frame *f, const char *name, size_t n, struct attest_err *err)
{
        char shown[NAME_SHOWN];

        log_escape(name, n, shown, sizeof(shown));
        if (n == 0)
                return field_fail(f, err, -EBADMSG, "a header field with an empty name");
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)name[i];

                if (ch == ' ' || ch == '\t')
                        return field_fail(f, err, -EBADMSG,
                                          "header field name \"%s\": whitespace at offset %zu "
                                          "(none is allowed in a name or before its colon, "
                                          "RFC 9112 5.1)",
                                          shown, i);
                if (!is_tchar(ch))
                        return field_fail(f, err, -EBADMSG,
                                          "header field name \"%s\": byte 0x%02x at offset %zu "
                                          "is not a token character (RFC 9110 5.1)",
                                          shown, ch, i);
        }
        /* libmicrohttpd joins an obs-fold continuation to the name of the field before it */
        for (size_t k = 0; k < ARRAY_SIZE(framing_names); k++) {
                size_t pl = strlen(framing_names[k]);

                if (n > pl && !strncasecmp(name, framing_names[k], pl))
                        return field_fail(f, err, -EBADMSG,
                                          "header field name \"%s\": %s with more after it (a "
                                          "folded line, obs-fold, RFC 9112 5.2, or a misspelt "
                                          "framing field)",
                                          shown, framing_names[k]);
        }
        return 0;
}

int http_frame_field(struct http_frame *f, const char *name, const char *value,
                     struct attest_err *err)
{
        char shown[NAME_SHOWN];
        size_t nlen, vlen;
        int e;

        if (f->nfields >= HTTP_FRAME_FIELDS_MAX)
                return field_fail(f, err, -E2BIG, "more than %u header fields",
                                  HTTP_FRAME_FIELDS_MAX);
        f->nfields++;
        if (!name)
                name = "";
        if (!value)
                value = "";
        nlen = strnlen(name, HTTP_FRAME_LEN_MAX + 1);
        vlen = strnlen(value, HTTP_FRAME_LEN_MAX + 1);
        log_escape(name, nlen, shown, sizeof(shown));
        if (nlen > HTTP_FRAME_LEN_MAX || vlen > HTTP_FRAME_LEN_MAX)
                return field_fail(f, err, -E2BIG, "header field \"%s\" longer than %u bytes", shown,
                                  HTTP_FRAME_LEN_MAX);
        if ((e = check_name(f, name, nlen, err)) < 0)
                return e;
        for (size_t i = 0; i < vlen; i++) {
                unsigned char ch = (unsigned char)value[i];

                if (is_value_ctl(ch))
                        return field_fail(f, err, -EBADMSG,
                                          "header field \"%s\": control byte 0x%02x at offset "
                                          "%zu of its value (RFC 9110 5.5)",
                                          shown, ch, i);
        }
        if (!strcasecmp(name, "Content-Length")) {
                uint64_t v = 0;

                if (span_u64((struct span){value, vlen}, UINT64_MAX, &v) < 0)
                        return field_fail(f, err, -EBADMSG,
                                          "Content-Length is not a decimal number of at most "
                                          "2^64-1 (1*DIGIT, RFC 9110 8.6)");
                if (++f->ncl == 1)
                        f->cl = v;
        } else if (!strcasecmp(name, "Transfer-Encoding")) {
                f->nte++;
                if (strcasecmp(value, "chunked") != 0)
                        return field_fail(f, err, -EBADMSG,
                                          "Transfer-Encoding other than exactly \"chunked\" "
                                          "(RFC 9112 6.1)");
        } else if (!strcasecmp(name, "Host")) {
                f->nhost++;
        }
        if (f->e && err)
                *err = f->err;
        return f->e;
}

int http_frame_end(const struct http_frame *f, const char *version, struct attest_err *err)
{
        if (f->e) {
                if (err)
                        *err = f->err;
                return f->e == -E2BIG ? -EBADMSG : f->e;
        }
        if (f->ncl > 1)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST,
                                   "more than one Content-Length (%u; RFC 9112 6.3)", f->ncl);
        if (f->ncl && f->nte)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST,
                                   "Content-Length together with Transfer-Encoding "
                                   "(RFC 9112 6.1)");
        if (f->nte > 1)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST,
                                   "more than one Transfer-Encoding (%u; RFC 9112 6.1)", f->nte);
        if (f->nhost > 1)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST,
                                   "more than one Host (%u; RFC 9112 3.2)", f->nhost);
        /* HTTP/1.0 may leave Host out; HTTP/1.1 (and any later 1.x) may not */
        if (!f->nhost && (!version || strcmp(version, "HTTP/1.0") != 0))
                return attest_fail(
                        err, -EBADMSG, AE_BAD_REQUEST, "%s request without Host (RFC 9112 3.2)",
                        version && !strcmp(version, "HTTP/1.1") ? "an HTTP/1.1"
                                                                : "an HTTP/1.1 or later");
        return 0;
}

/* ---- the request-target ---- */

static const char *const target_why[HTTP_FRAME_TARGET__COUNT] = {
        [HTTP_FRAME_TARGET_OK] = NULL,
        [HTTP_FRAME_TARGET_BYTE] = "request-target: a byte that is not visible ASCII (a space, a "
                                   "control or 8-bit byte; RFC 9112 3.2)",
        [HTTP_FRAME_TARGET_FRAGMENT] = "request-target: a fragment ('#'; RFC 9112 3.2)",
        [HTTP_FRAME_TARGET_BAD_ESCAPE] = "request-target: a '%' not followed by two hex digits "
                                         "(RFC 3986 2.1)",
        [HTTP_FRAME_TARGET_SLASH] = "request-target: an encoded '/' (%2F) in the path: proxies "
                                    "and attestd would split it differently",
        [HTTP_FRAME_TARGET_BACKSLASH] = "request-target: a '\\' or an encoded one (%5C) in the "
                                        "path",
        [HTTP_FRAME_TARGET_NUL] = "request-target: an encoded NUL byte (%00)",
        [HTTP_FRAME_TARGET_TOO_LONG] = "request-target: longer than attestd looks at",
};

const char *http_frame_target_why(enum http_frame_target_fault fault)
{
        return (unsigned)fault < HTTP_FRAME_TARGET__COUNT ? target_why[fault] : NULL;
}

static int target_fail(struct attest_err *err, enum http_frame_target_fault fault, size_t off)
{
        attest_fail(err, -EBADMSG, AE_BAD_REQUEST, "%s at byte %zu", target_why[fault], off);
        return (int)fault;
}

int http_frame_target(const char *target, size_t len, struct attest_err *err)
{
        bool in_path = true;

        if (len > HTTP_FRAME_LEN_MAX)
                return target_fail(err, HTTP_FRAME_TARGET_TOO_LONG, HTTP_FRAME_LEN_MAX);
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)target[i];
                uint8_t byte;
                size_t bl;

                if (ch <= 0x20 || ch >= 0x7f)
                        return target_fail(err, HTTP_FRAME_TARGET_BYTE, i);
                if (ch == '#')
                        return target_fail(err, HTTP_FRAME_TARGET_FRAGMENT, i);
                if (ch == '?')
                        in_path = false;
                if (ch == '\\' && in_path)
                        return target_fail(err, HTTP_FRAME_TARGET_BACKSLASH, i);
                if (ch != '%')
                        continue;
                /* two more bytes are there before anything is read: len - i > 2 */
                if (len - i <= 2 || hex_decode(target + i + 1, 2, &byte, 1, &bl) < 0)
                        return target_fail(err, HTTP_FRAME_TARGET_BAD_ESCAPE, i);
                if (byte == 0)
                        return target_fail(err, HTTP_FRAME_TARGET_NUL, i);
                if (in_path && byte == '/')
                        return target_fail(err, HTTP_FRAME_TARGET_SLASH, i);
                if (in_path && byte == '\\')
                        return target_fail(err, HTTP_FRAME_TARGET_BACKSLASH, i);
                i += 2;
        }
        return HTTP_FRAME_TARGET_OK;
}

/* ---- libmicrohttpd ---- */

void *http_frame_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
        int fault;

        (void)cls;
        if (!uri)
                return NULL;
        fault = http_frame_target(uri, strnlen(uri, HTTP_FRAME_LEN_MAX + 1), NULL);
        /* static strings: they outlive the request, as libmicrohttpd requires; if this fails
         * (the connection's memory pool is full) nothing is recorded and the check fails closed */
        (void)MHD_set_connection_value(c, MHD_POSTDATA_KIND, TARGET_KEY,
                                       fault ? target_why[fault] : TARGET_OK);
        return NULL;
}

static enum MHD_Result field_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
        struct http_frame *f = cls;

        (void)kind;
        /* keep going after an error: the loop is bounded by libmicrohttpd's head and our cap */
        return http_frame_field(f, key, value, NULL) == -E2BIG ? MHD_NO : MHD_YES;
}

int http_frame_check(struct MHD_Connection *c, const char *version, struct http_frame *ret,
                     struct attest_err *err)
{
        const char *t = MHD_lookup_connection_value(c, MHD_POSTDATA_KIND, TARGET_KEY);
        struct http_frame f;
        int e;

        if (!t)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST,
                                   "request-target: not checked (no room to record the check)");
        if (strcmp(t, TARGET_OK) != 0)
                return attest_fail(err, -EBADMSG, AE_BAD_REQUEST, "%s", t);
        http_frame_init(&f);
        (void)MHD_get_connection_values(c, MHD_HEADER_KIND, field_iter, &f);
        if ((e = http_frame_end(&f, version, err)) < 0)
                return e;
        *ret = f;
        return 0;
}
