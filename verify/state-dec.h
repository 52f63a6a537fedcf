/* SPDX-License-Identifier: MIT */
/*
 * Named-field reading of a stored replay state (verify/replay-state.c) and of the sections its
 * observers keep in it (policy/runtime-state.c): one decoder, so that every refusal reads alike,
 * "byte N (field): why", N counted from the start of the whole stored state, with
 * AE_REPLAY_STATE_TRUNCATED or AE_REPLAY_STATE_BAD_VALUE.
 */
#ifndef ATTEST_VERIFY_STATE_DEC_H
#define ATTEST_VERIFY_STATE_DEC_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/macro.h"
#include "util/rd.h"

struct state_dec {
        struct rd r;
        size_t base; /* r's first byte's offset in the stored state (0: r is all of it) */
        struct attest_err *err;
};

/* The next byte's offset in the stored state. */
size_t state_dec_at(const struct state_dec *d);

/* -EBADMSG: field is cut short (AE_REPLAY_STATE_TRUNCATED). */
int state_dec_truncated(struct state_dec *d, const char *field);

/* -EBADMSG: field at off holds a value the format forbids (AE_REPLAY_STATE_BAD_VALUE). */
int state_dec_bad(struct state_dec *d, size_t off, const char *field, const char *fmt, ...)
        _printf_(4, 5);

/* One little-endian integer each; 0 or -EBADMSG. state_dec_u64 refuses values over INT64_MAX
 * (SQLite and JSON carry them as signed). */
int state_dec_u8(struct state_dec *d, const char *field, uint8_t *ret);
int state_dec_u32(struct state_dec *d, const char *field, uint32_t *ret);
int state_dec_u64(struct state_dec *d, const char *field, uint64_t *ret);

/* A u8 length in [min, max], then that many bytes (*ret borrows from the input). */
int state_dec_sized8(struct state_dec *d, const char *field, uint8_t min, uint8_t max,
                     const uint8_t **ret, uint8_t *ret_len);

/* The writer's side of state_dec_sized8(): a u8 length, then the n bytes; -EINVAL when n does
 * not fit in a u8, else wb_put()'s result (the buffer unchanged on failure). */
int state_put_sized8(struct wb *w, const void *p, size_t n);

#endif
