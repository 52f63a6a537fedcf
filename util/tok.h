/* SPDX-License-Identifier: MIT */
/*
 * Text cursor: the one way untrusted text (ascii IMA lines, key=value buffers, PCR files, the
 * config and tokens files) is cut into lines, fields and numbers. The text counterpart of rd.h.
 *
 * Rules (curl's strparse, OpenSSH sshbuf): every token has a cap, checked before the cursor
 * moves; the cursor advances only on success (a failed call leaves it unchanged, byte for byte);
 * no pointer is formed from an untrusted length; spans are borrowed from the text the cursor was
 * made on and are not NUL terminated.
 *
 * Fields: a cursor holding "a b" has the fields "a" and "b"; "a " has "a" and an empty field; an
 * empty cursor has none, unless a separator was just consumed (then one empty field is left).
 *
 * Errors: -ENOENT no token left, -E2BIG token longer than its cap, -EBADMSG malformed (a NUL in a
 * line, a last line without its newline where one is required, a number that is not one),
 * -ERANGE number above its maximum.
 */
#ifndef ATTEST_TOK_H
#define ATTEST_TOK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"

struct span {
        const char *p;
        size_t n;
};

struct tok {
        const char *p; /* next unread byte */
        size_t left;   /* bytes after p */
        size_t size;   /* size of the whole text, for tok_offset() */
        bool more;     /* a separator was consumed: one more (maybe empty) field follows */
};

#define TOK_INIT(text, len)                                                                        \
        {                                                                                          \
                .p = (const char *)(text), .left = (len), .size = (len), .more = false             \
        }

static inline void tok_init(struct tok *t, const void *text, size_t len)
{
        *t = (struct tok)TOK_INIT(text, len);
}

static inline size_t tok_offset(const struct tok *t)
{
        return t->size - t->left;
}

static inline size_t tok_left(const struct tok *t)
{
        return t->left;
}

/* No byte left (a pending empty field after a trailing separator does not count). */
static inline bool tok_empty(const struct tok *t)
{
        return t->left == 0;
}

/* tok_line() flags */
#define TOK_NL_REQUIRED 1u /* the last line must end in '\n' too (-EBADMSG otherwise) */
#define TOK_STRIP_CR 2u    /* drop one '\r' before the '\n' */

/*
 * The next line, without its '\n', as a cursor of its own. 1 with *ret set, 0 at the end of the
 * text, -E2BIG when no '\n' comes within max + 1 bytes (the line is longer than max), -EBADMSG on a
 * NUL byte in the line or a missing last newline under TOK_NL_REQUIRED.
 */
int tok_line(struct tok *t, size_t max, unsigned flags, struct tok *ret) _wur_;

/*
 * The field and number readers below are inline: the ascii IMA reader cuts every entry with them
 * (a million entries a second).
 */

/* Everything left as the token (the caller checked its cap); not for use outside tok.[ch]. */
static inline int tok_take_rest_(struct tok *t, struct span *ret)
{
        *ret = (struct span){t->p, t->left};
        t->p += t->left;
        t->left = 0;
        t->more = false;
        return 0;
}

/*
 * The next field up to sep (not included; sep is consumed), or the rest when no sep follows.
 * -ENOENT when no field is left, -E2BIG when it is longer than max.
 */
_wur_ static inline int tok_field(struct tok *t, char sep, size_t max, struct span *ret)
{
        size_t scan = t->left <= max ? t->left : max + 1;
        const char *s;

        if (t->left == 0 && !t->more)
                return -ENOENT;
        s = memchr(t->p, sep, scan);
        if (!s) {
                if (t->left > max)
                        return -E2BIG;
                return tok_take_rest_(t, ret);
        }
        *ret = (struct span){t->p, (size_t)(s - t->p)};
        t->left -= ret->n + 1;
        t->p += ret->n + 1;
        t->more = true;
        return 0;
}

/* The last field, after the last sep; the cursor keeps what comes before that sep. */
int tok_rfield(struct tok *t, char sep, size_t max, struct span *ret) _wur_;
/* Everything left as one field; -ENOENT none, -E2BIG longer than max. */
_wur_ static inline int tok_rest(struct tok *t, size_t max, struct span *ret)
{
        if (t->left == 0 && !t->more)
                return -ENOENT;
        if (t->left > max)
                return -E2BIG;
        return tok_take_rest_(t, ret);
}

/* Skip spaces and tabs; the count skipped. */
size_t tok_skip_blank(struct tok *t);
/*
 * Blank-separated word: skip spaces and tabs, then take up to the next space, tab or the end.
 * -ENOENT when only blanks are left, -E2BIG when the word is longer than max.
 */
int tok_word(struct tok *t, size_t max, struct span *ret) _wur_;

/* Consume c when it comes next. */
static inline bool tok_char(struct tok *t, char c)
{
        if (t->left == 0 || t->p[0] != c)
                return false;
        t->p++;
        t->left--;
        t->more = false;
        return true;
}

/*
 * A decimal number: digits only, no sign, no leading zero (but "0"), at most max. -EBADMSG when
 * no digit comes next or a leading zero, -ERANGE above max (checked before each multiply).
 */
_wur_ static inline int tok_u64(struct tok *t, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;
        size_t n = 0;

        while (n < t->left && t->p[n] >= '0' && t->p[n] <= '9') {
                unsigned d = (unsigned)(t->p[n] - '0');

                if (n == 1 && v == 0)
                        return -EBADMSG; /* leading zero */
                if (d > max || v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
                n++;
        }
        if (n == 0)
                return -EBADMSG;
        t->p += n;
        t->left -= n;
        t->more = false;
        *ret = v;
        return 0;
}

_wur_ static inline int tok_u32(struct tok *t, uint32_t max, uint32_t *ret)
{
        uint64_t v;
        int e;

        if ((e = tok_u64(t, max, &v)) < 0)
                return e;
        *ret = (uint32_t)v;
        return 0;
}

/* Span helpers: equal to a C string; blanks (space, tab, CR) trimmed on both sides. */
bool span_eq(struct span s, const char *lit);
struct span span_trim(struct span s);
/* The whole span as a decimal number (tok_u64 rules, nothing may follow). */
int span_u64(struct span s, uint64_t max, uint64_t *ret) _wur_;
/* Copy into a NUL-terminated string of size bytes; -E2BIG (out untouched) when it does not fit. */
int span_cstr(struct span s, char *out, size_t size) _wur_;

#endif
