/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "verify/state-dec.h"

size_t state_dec_at(const struct state_dec *d)
{
        return d->base + rd_offset(&d->r);
}

int state_dec_truncated(struct state_dec *d, const char *field)
{
        return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_TRUNCATED,
                           "byte %zu (%s): truncated, %zu bytes left", state_dec_at(d), field,
                           rd_left(&d->r));
}

int state_dec_bad(struct state_dec *d, size_t off, const char *field, const char *fmt, ...)
{
        char why[160];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_BAD_VALUE, "byte %zu (%s): %s", off,
                           field, why);
}

int state_dec_u8(struct state_dec *d, const char *field, uint8_t *ret)
{
        return rd_u8(&d->r, ret) < 0 ? state_dec_truncated(d, field) : 0;
}

int state_dec_u32(struct state_dec *d, const char *field, uint32_t *ret)
{
        return rd_u32le(&d->r, ret) < 0 ? state_dec_truncated(d, field) : 0;
}

int state_dec_u64(struct state_dec *d, const char *field, uint64_t *ret)
{
        size_t off = state_dec_at(d);
        uint64_t v = 0;

        if (rd_u64le(&d->r, &v) < 0)
                return state_dec_truncated(d, field);
        if (v > INT64_MAX)
                return state_dec_bad(d, off, field, "%" PRIu64 " > INT64_MAX", v);
        *ret = v;
        return 0;
}

int state_dec_sized8(struct state_dec *d, const char *field, uint8_t min, uint8_t max,
                     const uint8_t **ret, uint8_t *ret_len)
{
        size_t off = state_dec_at(d);
        uint8_t n = 0;
        int x;

        if ((x = state_dec_u8(d, field, &n)) < 0)
                return x;
        if (n < min || n > max)
                return state_dec_bad(d, off, field, "length %u not in %u-%u", n, min, max);
        if (rd_bytes(&d->r, n, ret) < 0)
                return state_dec_truncated(d, field);
        *ret_len = n;
        return 0;
}

int state_put_sized8(struct wb *w, const void *p, size_t n)
{
        uint8_t *dst;
        int x;

        if (n > UINT8_MAX)
                return -EINVAL;
        if ((x = wb_reserve(w, 1 + n, &dst)) < 0)
                return x;
        dst[0] = (uint8_t)n;
        if (n)
                memcpy(dst + 1, p, n);
        return 0;
}
