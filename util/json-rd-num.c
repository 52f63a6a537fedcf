/* SPDX-License-Identifier: MIT */
/*
 * The pull reader's numbers (RFC 8259 section 6): integers into int64_t, reals checked against
 * DBL_MAX the way strtod() would round them. The grammar is json-rd.c's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/json-rd-internal.h"
#include "util/json-rd.h"

#define EXP_SATURATE 1000000000 /* exponents are counted up to here, beyond it they only grow */

/* ---- numbers ---- */

/*
 * Whether the real with the digits [is, ie) (integer part) and [fs, fe) (fraction, empty when
 * fs == fe) times 10^exp rounds past DBL_MAX, as strtod() would decide on the whole text. The
 * decimal exponent of the first non-zero digit decides, except when it is 308: then strtod() on the
 * first 400 digits, plus one non-zero digit when a non-zero one follows them, which keeps the
 * comparison with the rounding boundary (309 significant digits) exact.
 */
static bool real_overflows(const unsigned char *b, size_t is, size_t ie, size_t fs, size_t fe,
                           int64_t exp)
{
        const size_t from[2] = {is, fs}, to[2] = {ie, fe};
        char text[400 + 1 + 16];
        size_t o = 0, first = 0;
        int part = -1;
        int64_t e10;
        double v;

        for (int p = 0; p < 2 && part < 0; p++)
                for (size_t k = from[p]; k < to[p] && part < 0; k++)
                        if (b[k] != '0') {
                                part = p;
                                first = k;
                        }
        if (part < 0)
                return false; /* zero */
        e10 = (part == 0 ? (int64_t)(ie - first) - 1 : -(int64_t)(first - fs) - 1) + exp;
        if (e10 != 308)
                return e10 > 308;
        for (int p = part; p < 2; p++)
                for (size_t k = p == part ? first : from[p]; k < to[p]; k++) {
                        if (o < 400) {
                                text[o++] = (char)b[k];
                        } else if (b[k] != '0') {
                                text[o++] = '1';
                                p = 2;
                                break;
                        }
                }
        snprintf(text + o, sizeof(text) - o, "e%d", 308 - (int)(o - 1));
        errno = 0;
        v = strtod(text, NULL);
        return errno == ERANGE && v > 1.0;
}

int jrd_scan_number(struct jrd *r, struct jrd_val *ret)
{
        const unsigned char *b = (const unsigned char *)r->buf;
        size_t n = r->len, i = r->pos, is, ie, fs = 0, fe = 0;
        bool neg = false, real = false;
        int64_t exp = 0;

        if (b[i] == '-') {
                neg = true;
                i++;
        }
        is = i;
        if (i < n && b[i] == '0') {
                i++;
                if (i < n && jrd_is_digit(b[i]))
                        return jrd_fail(r, r->pos, "number with a leading zero");
        } else if (i < n && jrd_is_digit(b[i])) {
                while (i < n && jrd_is_digit(b[i]))
                        i++;
        } else {
                return jrd_fail(r, r->pos, "invalid number");
        }
        ie = i;
        if (i < n && b[i] == '.') {
                i++;
                fs = i;
                if (i >= n || !jrd_is_digit(b[i]))
                        return jrd_fail(r, r->pos, "invalid number");
                while (i < n && jrd_is_digit(b[i]))
                        i++;
                fe = i;
                real = true;
        }
        if (i < n && (b[i] == 'e' || b[i] == 'E')) {
                bool eneg = false;

                i++;
                if (i < n && (b[i] == '+' || b[i] == '-'))
                        eneg = b[i++] == '-';
                if (i >= n || !jrd_is_digit(b[i]))
                        return jrd_fail(r, r->pos, "invalid number");
                for (; i < n && jrd_is_digit(b[i]); i++)
                        if (exp < EXP_SATURATE)
                                exp = exp * 10 + (b[i] - '0');
                if (eneg)
                        exp = -exp;
                real = true;
        }
        ret->off = r->pos;
        if (real) {
                if (real_overflows(b, is, ie, fs, fe, exp))
                        return jrd_fail(r, r->pos, "real number out of range");
                ret->type = JRD_REAL;
        } else {
                uint64_t m = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

                if (ie - is > 19)
                        return jrd_fail(r, r->pos, "integer out of range");
                for (size_t k = is; k < ie; k++)
                        m = m * 10 + (b[k] - '0'); /* 19 digits fit in 64 bits */
                if (m > limit)
                        return jrd_fail(r, r->pos, "integer out of range");
                ret->type = JRD_INT;
                ret->i = !neg ? (int64_t)m : m == limit ? INT64_MIN : -(int64_t)m;
        }
        r->pos = i;
        return 0;
}
