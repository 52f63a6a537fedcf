/* SPDX-License-Identifier: MIT */
/*
 * The request framing checks (daemon/http/http-frame.c) against a plain reference written from
 * RFC 9112 here, one request head per input:
 *
 *   byte 0      version: HTTP/1.1, HTTP/1.0, HTTP/1.2 (mod 3)
 *   then        the request-target up to '\n' (any bytes, by length), then header fields, one a
 *               line, NAME ':' VALUE (a line without ':' is a name with an empty value), as
 *               libmicrohttpd hands them over: NUL-terminated, so a NUL cuts a name or value short
 *
 * Invariants: the target's verdict is a known fault, with a message when refused, and agrees with
 * the reference; the head is refused exactly when the reference refuses it, always with
 * bad_request and a message; Content-Length is the one sent when there is one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/http/http-frame.h"
#include "tests/fuzz/fuzz.h"

static const char *const versions[] = {"HTTP/1.1", "HTTP/1.0", "HTTP/1.2"};

static bool ref_tchar(unsigned char ch)
{
        return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
               (ch && memchr("!#$%&'*+-.^_`|~", ch, 15));
}

static bool ref_hex(unsigned char ch)
{
        return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

/* RFC 9112 3.2 / RFC 3986 plus attestd's rules on %2F, %5C, %00 and '\' */
static bool ref_target_ok(const unsigned char *t, size_t n)
{
        bool path = true;

        if (n > HTTP_FRAME_LEN_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (t[i] <= 0x20 || t[i] >= 0x7f || t[i] == '#')
                        return false;
                if (t[i] == '?')
                        path = false;
                if (t[i] == '\\' && path)
                        return false;
                if (t[i] != '%')
                        continue;
                if (i + 2 >= n || !ref_hex(t[i + 1]) || !ref_hex(t[i + 2]))
                        return false;
                if (t[i + 1] == '0' && t[i + 2] == '0')
                        return false;
                if (path && ((t[i + 1] == '2' && (t[i + 2] | 0x20) == 'f') ||
                             (t[i + 1] == '5' && (t[i + 2] | 0x20) == 'c')))
                        return false;
                i += 2;
        }
        return true;
}

struct ref {
        unsigned ncl, nte, nhost, nfields;
        bool bad;
        unsigned long long cl;
};

static void ref_field(struct ref *r, const char *name, const char *value)
{
        size_t nl = strlen(name), vl = strlen(value);

        if (++r->nfields > HTTP_FRAME_FIELDS_MAX || nl == 0 || nl > HTTP_FRAME_LEN_MAX ||
            vl > HTTP_FRAME_LEN_MAX)
                r->bad = true;
        for (size_t i = 0; i < nl; i++)
                if (!ref_tchar((unsigned char)name[i]))
                        r->bad = true;
        if ((nl > 14 && !strncasecmp(name, "content-length", 14)) ||
            (nl > 17 && !strncasecmp(name, "transfer-encoding", 17)))
                r->bad = true;
        for (size_t i = 0; i < vl; i++) {
                unsigned char ch = (unsigned char)value[i];

                if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                        r->bad = true;
        }
        if (!strcasecmp(name, "content-length")) {
                unsigned long long v = 0;
                bool digits = vl > 0 && vl <= 20 && !(vl > 1 && value[0] == '0');

                for (size_t i = 0; digits && i < vl; i++) {
                        unsigned d = (unsigned)(value[i] - '0');

                        if (value[i] < '0' || value[i] > '9' ||
                            v > (18446744073709551615ULL - d) / 10)
                                digits = false;
                        else
                                v = v * 10 + d;
                }
                if (!digits)
                        r->bad = true;
                if (++r->ncl == 1)
                        r->cl = v;
        } else if (!strcasecmp(name, "transfer-encoding")) {
                r->nte++;
                if (strcasecmp(value, "chunked") != 0)
                        r->bad = true;
        } else if (!strcasecmp(name, "host")) {
                r->nhost++;
        }
}

static bool ref_end_ok(const struct ref *r, const char *version)
{
        if (r->bad || r->ncl > 1 || (r->ncl && r->nte) || r->nte > 1 || r->nhost > 1)
                return false;
        return r->nhost == 1 || !strcmp(version, "HTTP/1.0");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *version;
        struct attest_err err = {0};
        struct http_frame f;
        struct ref r = {0};
        const uint8_t *nl, *p, *end;
        char *line;
        int e;

        if (size < 1)
                return 0;
        version = versions[data[0] % 3];
        data++;
        size--;
        nl = memchr(data, '\n', size);
        {
                size_t tl = nl ? (size_t)(nl - data) : size;

                e = http_frame_target((const char *)data, tl, &err);
                FUZZ_CHECK(e >= 0 && e < HTTP_FRAME_TARGET__COUNT);
                FUZZ_CHECK((e == 0) == ref_target_ok(data, tl));
                if (e) {
                        FUZZ_CHECK(err.code == AE_BAD_REQUEST && err.msg[0]);
                        FUZZ_CHECK(http_frame_target_why((enum http_frame_target_fault)e));
                }
        }
        if (!nl)
                return 0;
        http_frame_init(&f);
        end = data + size;
        for (p = nl + 1; p < end;) {
                const uint8_t *q = memchr(p, '\n', (size_t)(end - p));
                size_t ll = q ? (size_t)(q - p) : (size_t)(end - p);
                char *colon, *name, *value;

                line = malloc(ll + 1);
                FUZZ_CHECK(line != NULL);
                memcpy(line, p, ll);
                line[ll] = '\0';
                colon = memchr(line, ':', ll);
                name = line;
                value = colon ? colon + 1 : line + ll;
                if (colon)
                        *colon = '\0';
                e = http_frame_field(&f, name, value, NULL);
                FUZZ_CHECK(e == 0 || e == -EBADMSG || e == -E2BIG);
                ref_field(&r, name, value);
                free(line);
                p += ll + 1;
        }
        e = http_frame_end(&f, version, &err);
        FUZZ_CHECK(e == 0 || e == -EBADMSG);
        FUZZ_CHECK((e == 0) == ref_end_ok(&r, version));
        if (e)
                FUZZ_CHECK(err.code == AE_BAD_REQUEST && err.msg[0]);
        else if (f.ncl)
                FUZZ_CHECK(f.cl == r.cl);
        return 0;
}
