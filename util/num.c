/* SPDX-License-Identifier: MIT */
#include "util/num.h"
#include "util/tok.h"

/* The magnitude as a u64 up to lim: the tok_u64 rules, and the whole span must be the number. */
static int magnitude(const char *s, size_t n, uint64_t lim, uint64_t *ret)
{
        if (!s)
                return -EBADMSG;
        return span_u64((struct span){s, n}, lim, ret);
}

int num_u64(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *ret)
{
        uint64_t v;
        int e;

        if ((e = magnitude(s, n, max, &v)) < 0)
                return e;
        if (v < min)
                return -ERANGE;
        *ret = v;
        return 0;
}

int num_u32(const char *s, size_t n, uint32_t min, uint32_t max, uint32_t *ret)
{
        uint64_t v;
        int e;

        if ((e = num_u64(s, n, min, max, &v)) < 0)
                return e;
        *ret = (uint32_t)v;
        return 0;
}

int num_uint(const char *s, size_t n, unsigned min, unsigned max, unsigned *ret)
{
        uint64_t v;
        int e;

        if ((e = num_u64(s, n, min, max, &v)) < 0)
                return e;
        *ret = (unsigned)v;
        return 0;
}

int num_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *ret)
{
        uint64_t v;
        int64_t r;
        int e;

        if (min > max)
                return -ERANGE;
        if (s && n > 0 && s[0] == '-') {
                /* |INT64_MIN| = INT64_MAX + 1, written without a signed overflow */
                if ((e = magnitude(s + 1, n - 1, (uint64_t)INT64_MAX + 1, &v)) < 0)
                        return e;
                if (v == 0)
                        return -EBADMSG; /* "-0" */
                r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
        } else {
                if ((e = magnitude(s, n, INT64_MAX, &v)) < 0)
                        return e;
                r = (int64_t)v;
        }
        if (r < min || r > max)
                return -ERANGE;
        *ret = r;
        return 0;
}
