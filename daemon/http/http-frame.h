/* SPDX-License-Identifier: MIT */
/*
 * Request framing as RFC 9112 wants it, checked on what libmicrohttpd hands attestd: the raw
 * request-target (through its URI log callback, before percent-decoding), the HTTP version and
 * every header field as it parsed them. A request a proxy in front might read differently is
 * refused (400 bad_request, Connection: close) before any handler runs:
 *
 * - a field name that is not a token (RFC 9110 5.1): whitespace in it, before the colon too, an
 *   empty name, a control or non-ASCII byte;
 * - a name beginning "Content-Length" or "Transfer-Encoding" with more after it: libmicrohttpd
 *   0.9.75 appends an obs-fold continuation line (RFC 9112 5.2) to the *name* of the field
 *   before it, so a folded "Content-Length:\r\n 5" arrives as a field "Content-Length5";
 * - a control byte (NUL..US but HTAB, DEL) in a field value (RFC 9110 5.5): CR above all;
 * - more than one Content-Length, a Content-Length that is not 1*DIGIT, Transfer-Encoding with
 *   Content-Length, more than one Transfer-Encoding or one other than "chunked" (RFC 9112 6);
 * - no Host, or more than one, in an HTTP/1.1 request (RFC 9112 3.2);
 * - a request-target byte that is not visible ASCII (SP, CTL, 8-bit), a '#', a '%' not followed
 *   by two hex digits; in the path an encoded '/' (%2F), '\' (%5C) or NUL (%00), or a raw '\';
 *   %00 in the query.
 *
 * What libmicrohttpd decides before attestd sees the request (bare LF ends a line, a NUL byte
 * cuts a value short, the line and head caps) is in docs/SECURITY.md, "HTTP framing and proxies".
 *
 * The checks are pure (http_frame_target, http_frame_field, http_frame_end); http_frame_uri_log
 * and http_frame_check are the glue to libmicrohttpd.
 */
#ifndef ATTESTD_HTTP_FRAME_H
#define ATTESTD_HTTP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "util/err.h"
#include "util/macro.h"

/* longest field name, value or request-target looked at; libmicrohttpd's whole head is 16 KiB */
#define HTTP_FRAME_LEN_MAX (64u * 1024)
/* most header fields looked at (libmicrohttpd's 16 KiB head holds fewer than 4,100) */
#define HTTP_FRAME_FIELDS_MAX 8192u

/* What the header fields said, field by field (http_frame_field), judged at the end. */
struct http_frame {
        unsigned nfields, ncl, nte, nhost;
        uint64_t cl; /* the Content-Length, when ncl == 1 */
        int e;       /* the first field error (0: none); its message in err */
        struct attest_err err;
};

void http_frame_init(struct http_frame *f);

/* Whether the head announces a body (chunked, or a Content-Length above 0). */
static inline bool http_frame_has_body(const struct http_frame *f)
{
        return f->nte || (f->ncl && f->cl);
}

/*
 * One header field, name and value as libmicrohttpd hands them over (NUL-terminated, borrowed).
 * The first error is kept in f (later fields are still counted) and returned: -EBADMSG with err
 * filled (AE_BAD_REQUEST), or -E2BIG past HTTP_FRAME_FIELDS_MAX fields or HTTP_FRAME_LEN_MAX.
 */
int http_frame_field(struct http_frame *f, const char *name, const char *value,
                     struct attest_err *err) _wur_;

/* After the last field: the first field error, then Content-Length / Transfer-Encoding and Host
 * (version is the request line's, e.g. "HTTP/1.1"). 0 or -EBADMSG with err filled. */
int http_frame_end(const struct http_frame *f, const char *version, struct attest_err *err) _wur_;

/* Why a request-target is refused; each has a fixed description (http_frame_target_why). */
enum http_frame_target_fault {
        HTTP_FRAME_TARGET_OK = 0,
        HTTP_FRAME_TARGET_BYTE,       /* not visible ASCII: SP, a control or 8-bit byte */
        HTTP_FRAME_TARGET_FRAGMENT,   /* '#' */
        HTTP_FRAME_TARGET_BAD_ESCAPE, /* '%' not followed by two hex digits */
        HTTP_FRAME_TARGET_SLASH,      /* %2F in the path */
        HTTP_FRAME_TARGET_BACKSLASH,  /* %5C or '\' in the path */
        HTTP_FRAME_TARGET_NUL,        /* %00 */
        HTTP_FRAME_TARGET_TOO_LONG,   /* over HTTP_FRAME_LEN_MAX */
        HTTP_FRAME_TARGET__COUNT,
};

/* The fixed description of a fault (NULL for HTTP_FRAME_TARGET_OK). */
const char *http_frame_target_why(enum http_frame_target_fault fault);

/*
 * The request-target as sent (len bytes, before percent-decoding). 0 when sound; else the fault
 * (> 0) with err filled (AE_BAD_REQUEST), naming the byte offset.
 */
int http_frame_target(const char *target, size_t len, struct attest_err *err) _wur_;

/*
 * MHD_OPTION_URI_LOG_CALLBACK: libmicrohttpd calls it with the raw request-target of each request,
 * before it splits the query off and unescapes. The verdict is kept with the request (a value of
 * kind MHD_POSTDATA_KIND, which libmicrohttpd itself never fills without a post processor) for
 * http_frame_check. Returns NULL (the request's context stays unset).
 */
void *http_frame_uri_log(void *cls, const char *uri, struct MHD_Connection *c);

/*
 * The whole check for one request head, from the access handler's first call: the target's
 * verdict (fails closed when none was recorded), every header field, the version. 0 with *ret
 * (the counts and the one Content-Length, for the body's checks), or -EBADMSG with err filled
 * (AE_BAD_REQUEST): the caller answers 400 and closes the connection.
 */
int http_frame_check(struct MHD_Connection *c, const char *version, struct http_frame *ret,
                     struct attest_err *err) _wur_;

#endif
