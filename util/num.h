/* SPDX-License-Identifier: MIT */
/*
 * Safe integer parsing for text that comes from outside (config files, flags, tokens files): one
 * rule everywhere, no strtol surprises.
 *
 * A number is decimal digits and nothing else: no blank before or after, no '+', no leading zero
 * (but "0" itself), no base prefix, no unit suffix. num_i64 alone takes one leading '-' (not "-0").
 * Overflow is checked before each multiply, never after the fact.
 *
 * Errors: -EBADMSG not a number by these rules (empty, a stray byte, a sign, a leading zero),
 * -ERANGE a number outside min..max (overflowing ones included). *ret is written only on success.
 *
 * Neither configuration file uses units (seconds and bytes are plain numbers), so there are no
 * duration or size parsers here.
 */
#ifndef ATTEST_NUM_H
#define ATTEST_NUM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

int num_u64(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *ret) _wur_;
int num_u32(const char *s, size_t n, uint32_t min, uint32_t max, uint32_t *ret) _wur_;
int num_uint(const char *s, size_t n, unsigned min, unsigned max, unsigned *ret) _wur_;
int num_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *ret) _wur_;

#endif
