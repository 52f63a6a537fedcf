/* SPDX-License-Identifier: MIT */
/*
 * Why something failed, for a person: a stable code and a message naming the entry, line, byte
 * offset or JSON path. Functions still return -errno; the err is filled alongside (STYLE "Errors").
 */
#ifndef ATTEST_ERR_H
#define ATTEST_ERR_H

#include "macro.h"

struct attest_err {
        const char *code; /* static string, e.g. "ima_truncated"; NULL when unset */
        char msg[256];
};

/*
 * Fill err (which may be NULL) with code and a formatted message; returns e (a negative errno)
 * so callers can write `return attest_fail(err, -EBADMSG, "ima_truncated", "entry %zu", i);`.
 */
int attest_fail(struct attest_err *err, int e, const char *code, const char *fmt, ...)
        _printf_(4, 5);

/* Prefix an already filled message with more context ("line 3: ..."). */
void attest_err_prefix(struct attest_err *err, const char *fmt, ...) _printf_(2, 3);

#endif
