/* SPDX-License-Identifier: MIT */
/*
 * A one-dimensional PostgreSQL array in the binary wire format (array_send/array_recv), to bind
 * as one binary parameter (db_bind_blob) of a statement that casts it (`?1::text[]`): the
 * verdicts of one group commit as one call (store-results.c). Binary, so no element is ever
 * quoted or escaped: a verdict's text goes as its bytes, whatever they hold.
 *
 *   int32 ndim (1) | int32 has-nulls | uint32 element type | int32 length | int32 lower bound (1)
 *   then per element: int32 length (-1: NULL) | its bytes          (all big endian)
 *
 * Errors are sticky: a failed add marks the array, pg_array_finish() reports it.
 */
#ifndef ATTEST_STORE_PG_ARRAY_H
#define ATTEST_STORE_PG_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"

/* PostgreSQL's built-in type OIDs (pg_type.dat) of the element types used */
#define PG_OID_BYTEA 17u
#define PG_OID_INT8 20u
#define PG_OID_INT4 23u
#define PG_OID_TEXT 25u

struct pg_array {
        uint8_t *p;
        size_t len, cap;
        uint32_t oid, n;
        bool nulls;
        int err; /* 0, -ENOMEM or -E2BIG (past INT32_MAX bytes or elements) */
};

void pg_array_init(struct pg_array *a, uint32_t oid);
void pg_array_done(struct pg_array *a);
/* An element of n bytes at p; p NULL: a NULL element. */
void pg_array_add(struct pg_array *a, const void *p, size_t n);
static inline void pg_array_add_text(struct pg_array *a, const char *s)
{
        pg_array_add(a, s, s ? strlen(s) : 0);
}
void pg_array_add_i64(struct pg_array *a, int64_t v);
void pg_array_add_i32(struct pg_array *a, int32_t v);
/* Complete the header: 0, or the first error of an add (the array is not to be sent then). */
int pg_array_finish(struct pg_array *a) _wur_;

#endif
