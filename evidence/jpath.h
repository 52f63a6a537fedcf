/* SPDX-License-Identifier: MIT */
/*
 * Walking untrusted JSON (jansson) with the JSON path of every value at hand, so each error names
 * where it is ("$.quote.pcrs.sha256.10: not hex"). Shared by the evidence codec, the replay state
 * and the policy parser. Paths are bounded strings; keys taken from the input are escaped before
 * they are put in a path or a message.
 */
#ifndef ATTEST_JPATH_H
#define ATTEST_JPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/err.h"

#define JPATH_MAX 160

/* child path: "$.a" + "b" -> "$.a.b"; keys with bytes outside [A-Za-z0-9_-] are escaped. */
void jpath_join(char *out, const char *parent, const char *key);
/* "$.a" + 3 -> "$.a[3]" */
void jpath_index(char *out, const char *parent, size_t i);
/* A JSON object key naming a PCR: decimal 0..23 without leading zeros. 0, or -EINVAL. */
int jpath_pcr_index(const char *key, unsigned *ret) _wur_;

/*
 * Parse buf (len bytes, at most max) as one JSON object: duplicate keys, NUL in strings and
 * anything but an object at the top are rejected. code is the error code for syntax errors.
 */
int jpath_load(const char *buf, size_t len, size_t max, enum attest_code code, json_t **ret,
               struct attest_err *err) _wur_;

/* -EBADMSG with err "<code>" / "<path>: <why>". */
int jpath_fail(struct attest_err *err, int e, enum attest_code code, const char *path,
               const char *fmt, ...) _printf_(5, 6);

/*
 * Require obj (at path) to be an object with no key outside allowed (NULL terminated). Codes:
 * "<prefix>_type", "<prefix>_unknown_field"; prefix is e.g. "evidence".
 */
int jpath_object(const json_t *obj, const char *path, const char *const *allowed,
                 enum attest_code code_type, enum attest_code code_unknown, struct attest_err *err)
        _wur_;

#endif
