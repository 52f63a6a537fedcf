/* SPDX-License-Identifier: MIT */
/*
 * Strict JSON reader (RFC 8259) over a caller's buffer, pull style: no tree, no copy of a string,
 * no allocation unless the open objects hold more than JRD_KEYS_INLINE keys between them. Made for
 * the documents on the hot path whose shape is fixed (the evidence body): the caller walks the
 * document with jrd_value / jrd_member / jrd_element and skips what it does not want with
 * jrd_skip, which still reads and checks every byte.
 *
 * What it accepts is exactly what jansson 2.14's json_loadb(JSON_REJECT_DUPLICATES) accepts, so
 * the two can be compared byte for byte (tests/fuzz/fuzz-evidence-diff.c), with one exception
 * that makes this reader stricter: a NUL byte is never accepted (jansson drops one NUL that
 * directly follows a number or a literal). In detail:
 * - whitespace is space, tab, CR, LF; nothing else is skipped (no BOM, no comments);
 * - strings: UTF-8 checked (no overlong forms, no surrogates, nothing above U+10FFFF), no control
 *   byte below 0x20, escapes \" \\ \/ \b \f \n \r \t \uXXXX with surrogates only in valid pairs,
 *   and no \u0000 (a NUL inside a key or value);
 * - numbers: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; without fraction or exponent an
 *   integer in int64_t range, otherwise a real that must not overflow a double (a value that
 *   rounds past DBL_MAX is rejected, one that underflows is not);
 * - literals true, false, null; no key twice in one object (compared after unescaping);
 * - at most JRD_DEPTH_MAX values deep, counting the value itself: the top-level value is at depth
 *   1, so 2048 nested arrays are accepted and a scalar inside them is not (jansson's
 *   JSON_PARSER_MAX_DEPTH);
 * - the input is at most JRD_INPUT_MAX bytes (-E2BIG); one value, then only whitespace.
 *
 * Errors: -EBADMSG for anything malformed (jrd_error() says what and where; the reader stays at
 * the error and every later call fails the same way), -E2BIG input over JRD_INPUT_MAX, -ENOMEM,
 * -EINVAL when a call does not fit the reader's state (a caller's bug).
 */
#ifndef ATTEST_JSON_RD_H
#define ATTEST_JSON_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define JRD_DEPTH_MAX 2048
#define JRD_INPUT_MAX (1u << 30)
#define JRD_KEYS_INLINE 64

enum jrd_type {
        JRD_OBJECT,
        JRD_ARRAY,
        JRD_STRING,
        JRD_INT,
        JRD_REAL,
        JRD_TRUE,
        JRD_FALSE,
        JRD_NULL,
};

/* A string as it stands in the input, borrowed from it: p/raw are the bytes between the quotes. */
struct jrd_str {
        const char *p;
        size_t raw; /* bytes at p */
        size_t len; /* bytes once unescaped */
        bool esc;   /* holds escapes: unescape with jrd_str_copy(); else p[0..raw) is the value */
};

struct jrd_val {
        enum jrd_type type;
        size_t off;       /* offset of the value's first byte */
        struct jrd_str s; /* JRD_STRING */
        int64_t i;        /* JRD_INT */
};

/* A key of an open object, or (flags JRD_KEY_MARK) the start of an object: see json-rd.c. */
struct jrd_key {
        uint32_t off, raw, len, flags;
};

struct jrd {
        const char *buf;
        size_t len, pos;
        unsigned depth; /* open containers */
        int state;
        uint8_t is_obj[JRD_DEPTH_MAX / 8]; /* bit d: the container at depth d + 1 is an object */
        struct jrd_key *keys;              /* inline_keys or heap */
        uint32_t nkeys, cap_keys, obj_start;
        int err;
        const char *why;
        size_t err_off;
        struct jrd_key inline_keys[JRD_KEYS_INLINE];
};

/* A reader over buf (len bytes, borrowed for the reader's life). jrd_free() releases it. */
void jrd_init(struct jrd *r, const char *buf, size_t len);
void jrd_free(struct jrd *r);

/*
 * The next value: the document, an element after jrd_element() returned 1, or a member's value
 * after jrd_member(). A string, number or literal is read whole; an object or array is opened
 * (read its members with jrd_member / jrd_element, or jrd_skip the rest).
 */
int jrd_value(struct jrd *r, struct jrd_val *ret) _wur_;
/*
 * In an open object: 1 and the next key in *ret_key (its ':' read, a value must follow), or 0 when
 * the object closed (its keys checked for duplicates).
 */
int jrd_member(struct jrd *r, struct jrd_str *ret_key) _wur_;
/* In an open array: 1 when an element follows (read it with jrd_value), 0 when the array closed. */
int jrd_element(struct jrd *r) _wur_;
/* Read and check the rest of the innermost open container, and close it. */
int jrd_skip(struct jrd *r) _wur_;
/* Read and check the next value whole, whatever it is. */
int jrd_skip_value(struct jrd *r) _wur_;
/* After the top-level value: only whitespace may follow. */
int jrd_end(struct jrd *r) _wur_;

/* Why and where the reader failed (NULL when it has not). */
const char *jrd_error(const struct jrd *r, size_t *ret_off);

/* Unescape s into out (size bytes, > s->len) and NUL terminate it; -E2BIG when it does not fit. */
int jrd_str_copy(const struct jrd_str *s, char *out, size_t size) _wur_;
/* Whether s unescaped is the NUL terminated lit. */
bool jrd_str_eq(const struct jrd_str *s, const char *lit) _wur_;

#endif
