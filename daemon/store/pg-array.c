/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/store/pg-array.h"

#define PG_ARRAY_HEAD 20 /* ndim, flags, element type, length, lower bound */

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
}

void pg_array_init(struct pg_array *a, uint32_t oid)
{
        *a = (struct pg_array){.oid = oid, .len = PG_ARRAY_HEAD};
}

void pg_array_done(struct pg_array *a)
{
        free(a->p);
        *a = (struct pg_array){0};
}

/* Room for n more bytes at the end (the whole at most INT32_MAX), NULL on an error */
static uint8_t *room(struct pg_array *a, size_t n)
{
        size_t cap;
        uint8_t *p;

        if (a->err)
                return NULL;
        if (n > (size_t)INT32_MAX - a->len || a->n >= (uint32_t)INT32_MAX) {
                a->err = -E2BIG;
                return NULL;
        }
        if (a->len + n > a->cap) {
                cap = a->cap ? a->cap : 256;
                while (cap < a->len + n)
                        cap *= 2;
                if (!(p = realloc(a->p, cap))) {
                        a->err = -ENOMEM;
                        return NULL;
                }
                a->p = p;
                a->cap = cap;
        }
        p = a->p + a->len;
        a->len += n;
        return p;
}

void pg_array_add(struct pg_array *a, const void *p, size_t n)
{
        uint8_t *q;

        if (!p) {
                if ((q = room(a, 4))) {
                        put32(q, UINT32_MAX); /* -1 */
                        a->nulls = true;
                        a->n++;
                }
                return;
        }
        if (n > (size_t)INT32_MAX) {
                a->err = a->err ? a->err : -E2BIG;
                return;
        }
        if ((q = room(a, 4 + n))) {
                put32(q, (uint32_t)n);
                if (n)
                        memcpy(q + 4, p, n);
                a->n++;
        }
}

void pg_array_add_i64(struct pg_array *a, int64_t v)
{
        uint8_t b[8];

        put32(b, (uint32_t)((uint64_t)v >> 32));
        put32(b + 4, (uint32_t)v);
        pg_array_add(a, b, sizeof(b));
}

void pg_array_add_i32(struct pg_array *a, int32_t v)
{
        uint8_t b[4];

        put32(b, (uint32_t)v);
        pg_array_add(a, b, sizeof(b));
}

int pg_array_finish(struct pg_array *a)
{
        if (a->err)
                return a->err;
        if (!a->p && !room(a, 0)) /* nothing added yet: room for the head */
                return a->err;
        put32(a->p, a->n ? 1 : 0);
        put32(a->p + 4, a->nulls ? 1 : 0);
        put32(a->p + 8, a->oid);
        /* an empty array has no dimension: its head ends here */
        if (!a->n) {
                a->len = 12;
                return 0;
        }
        put32(a->p + 12, a->n);
        put32(a->p + 16, 1);
        return 0;
}
