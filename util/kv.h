/* SPDX-License-Identifier: MIT */
/*
 * The one `key = value` config-file parser (attestd.conf, agent.conf), on the text cursor.
 *
 * Syntax (what both former parsers accepted, nothing dropped):
 * - lines end in '\n'; one '\r' before it is dropped (CRLF files); the last line may lack '\n';
 * - a line that is empty or blank (spaces, tabs, CR), or whose first non-blank byte is '#', is
 *   skipped; '#' elsewhere is part of the value (no trailing comments: "a = b # c" sets "b # c");
 * - otherwise `key = value`: the key is what comes before the first '=', the value all after it
 *   (later '=' included), both trimmed of blanks; the value may be empty (the caller decides
 *   whether an empty value is valid for its key);
 * - no quoting: quotes are bytes of the value like any other ("a = "x"" sets `"x"`), as before;
 * - a key given twice: both lines are returned, in order, so the later one wins in a setter.
 * New, and strict: the key is 1..key_max bytes of [A-Za-z0-9._-] (no known key has any other).
 *
 * Caps (struct kv_limits): the whole text, a line (without '\n' and '\r'), the key, the value and
 * the number of lines (blank and comment lines count). Each is checked before the cursor moves.
 *
 * Errors: -EINVAL with err (code AE_CONFIG) naming the file, the line and, when known, the key:
 * "attestd.conf:12: listen: value longer than 4095 bytes". A NUL byte is an error. Values are
 * untrusted: never put them into a message as they are.
 */
#ifndef ATTEST_KV_H
#define ATTEST_KV_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/macro.h"
#include "util/tok.h"

struct kv_limits {
        size_t file_max;    /* bytes of the whole text */
        size_t line_max;    /* bytes of one line, without its '\n' */
        size_t key_max;     /* bytes of a key */
        size_t value_max;   /* bytes of a value after trimming (without a NUL) */
        unsigned lines_max; /* lines, blank and comment lines included */
};

struct kv_pair {
        struct span key;   /* borrowed from the text, not NUL terminated */
        struct span value; /* borrowed, trimmed, maybe empty */
        unsigned line;     /* 1-based */
};

struct kv {
        struct tok t;
        const char *name; /* for messages: the file's path */
        struct kv_limits lim;
        unsigned line;   /* lines read so far */
        struct span key; /* of the last pair returned, for kv_fail() */
};

/* Start on len bytes of text; -EINVAL (err: "name: larger than N bytes") over file_max. */
int kv_init(struct kv *kv, const char *text, size_t len, const char *name,
            const struct kv_limits *lim, struct attest_err *err) _wur_;

/* The next pair: 1 with *ret set, 0 at the end of the text, -EINVAL with err. */
int kv_next(struct kv *kv, struct kv_pair *ret, struct attest_err *err) _wur_;

/*
 * For the caller's verdict on the last pair (unknown key, bad value): -EINVAL with err
 * "name:line: key: <fmt>".
 */
int kv_fail(const struct kv *kv, struct attest_err *err, const char *fmt, ...) _printf_(3, 4);

/* Prefix a message the caller's setter already wrote with "name:line". */
void kv_err_prefix(const struct kv *kv, struct attest_err *err);

/* The value as a NUL-terminated string into out (size bytes); -E2BIG when it does not fit. */
static inline int kv_value_cstr(const struct kv_pair *p, char *out, size_t size)
{
        return span_cstr(p->value, out, size);
}

#endif
