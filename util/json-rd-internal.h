/* SPDX-License-Identifier: MIT */
/* What json-rd.c (the grammar, strings, duplicate keys) and json-rd-num.c (numbers) share. */
#ifndef ATTEST_JSON_RD_INTERNAL_H
#define ATTEST_JSON_RD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/json-rd.h"

static inline bool jrd_is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

/* Record the first error (-EBADMSG, why, at byte off) and return r's error. */
int jrd_fail(struct jrd *r, size_t off, const char *why);
/* A number at r->pos (its '-' or first digit) into ret, r->pos past it; -EBADMSG with jrd_fail. */
int jrd_scan_number(struct jrd *r, struct jrd_val *ret);

#endif
