/* SPDX-License-Identifier: MIT */
/* Server text made safe for the operator's terminal (attestctl/tty.h has the printed form). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "attestctl/tty.h"
#include "util/esc.h"
#include "util/macro.h"

struct range {
        uint32_t lo, hi;
};

/* No column of their own (combining marks, variation selectors). */
static const struct range zero_width[] = {
        {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd},   {0x0610, 0x061a},
        {0x064b, 0x065f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff},   {0x20d0, 0x20ff},
        {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xe0100, 0xe01ef},
};

/* Two columns (East Asian wide and fullwidth, common emoji). */
static const struct range wide[] = {
        {0x1100, 0x115f},   {0x2e80, 0x303e},   {0x3041, 0x33ff}, {0x3400, 0x4dbf},
        {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xac00, 0xd7a3}, {0xf900, 0xfaff},
        {0xfe30, 0xfe4f},   {0xff00, 0xff60},   {0xffe0, 0xffe6}, {0x1f300, 0x1f64f},
        {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
};

static bool in(const struct range *r, size_t n, uint32_t cp)
{
        for (size_t i = 0; i < n; i++)
                if (cp >= r[i].lo && cp <= r[i].hi)
                        return true;
        return false;
}

/* One character of the input and its printed form. */
struct unit {
        size_t in;   /* input bytes it takes */
        size_t len;  /* bytes of out */
        size_t cols; /* columns of out */
        char out[TTY_UNIT_MAX];
};

static void hex(char *out, uint32_t v, unsigned digits)
{
        static const char hexd[] = "0123456789abcdef";

        for (unsigned i = 0; i < digits; i++)
                out[i] = hexd[(v >> (4 * (digits - 1 - i))) & 15];
}

static int hex_val(unsigned char c)
{
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

/* The byte an escape "\xHH" at p stands for, or -1 when p holds none (p NUL terminated). */
static int esc_byte(const unsigned char *p)
{
        if (p[0] != '\\' || p[1] != 'x' || hex_val(p[2]) < 0 || hex_val(p[3]) < 0)
                return -1;
        return hex_val(p[2]) * 16 + hex_val(p[3]);
}

/*
 * The unit at p (NUL terminated, p[0] != 0). keep: p is escaped text already, whose "\xHH" is
 * one unit of four columns (a cut never splits it).
 */
static void next_unit(const unsigned char *p, struct unit *u, bool keep)
{
        uint32_t cp = 0;
        size_t n;

        if (keep && esc_byte(p) >= 0) {
                /* the escapes of one character's bytes (a bidi override is three) go together */
                int lead = esc_byte(p);
                size_t k = lead >= 0xf0 && lead <= 0xf4   ? 4
                           : lead >= 0xe0 && lead <= 0xef ? 3
                           : lead >= 0xc2 && lead <= 0xdf ? 2
                                                          : 1;

                for (size_t i = 1; i < k; i++) {
                        int b = esc_byte(p + 4 * i);

                        if (b < 0x80 || b > 0xbf) {
                                k = 1;
                                break;
                        }
                }
                u->in = u->len = u->cols = 4 * k;
                memcpy(u->out, p, 4 * k);
                return;
        }
        if (p[0] >= 0x20 && p[0] < 0x7f) {
                u->in = u->len = u->cols = 1;
                u->out[0] = (char)p[0];
                return;
        }
        /* p is NUL terminated: a sequence never reads past the NUL (not a continuation byte) */
        n = esc_utf8(p, strnlen((const char *)p, 4), &cp);
        if (n == 0 || esc_hidden(cp)) {
                /* util/esc.h's form: each byte of it as \xHH */
                size_t k = n ? n : 1;

                for (size_t i = 0; i < k; i++) {
                        u->out[4 * i] = '\\';
                        u->out[4 * i + 1] = 'x';
                        hex(u->out + 4 * i + 2, p[i], 2);
                }
                u->in = k;
                u->len = u->cols = 4 * k;
        } else {
                memcpy(u->out, p, n);
                u->in = u->len = n;
                u->cols = in(zero_width, ARRAY_SIZE(zero_width), cp) ? 0
                          : in(wide, ARRAY_SIZE(wide), cp)           ? 2
                                                                     : 1;
        }
}

/*
 * How many input bytes of s are printed so that the escaped form takes at most max_cols columns
 * (0: any) and max_bytes bytes, "..." included when *ret_cut (the rest does not fit).
 */
static size_t fit(const char *s, size_t max_cols, size_t max_bytes, bool keep, bool *ret_cut)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t mc = max_cols ? max_cols : SIZE_MAX, i = 0, cols = 0, bytes = 0, mark = 0;
        struct unit u;

        while (p[i]) {
                next_unit(p + i, &u, keep);
                if (u.cols > mc - cols || u.len > max_bytes - bytes) {
                        *ret_cut = true;
                        return mark;
                }
                cols += u.cols;
                bytes += u.len;
                i += u.in;
                /* the last place where "..." still fits after it */
                if (mc - cols >= 3 && max_bytes - bytes >= 3)
                        mark = i;
        }
        *ret_cut = false;
        return i;
}

static size_t text(const char *s, size_t max_cols, char *out, size_t n, bool keep)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t end, i = 0, o = 0, cols = 0;
        bool cut;
        struct unit u;

        if (n < 4) {
                if (n)
                        out[0] = '\0';
                return 0;
        }
        if (max_cols && max_cols < 3)
                max_cols = 3;
        end = fit(s, max_cols, n - 1, keep, &cut);
        while (i < end) {
                next_unit(p + i, &u, keep);
                memcpy(out + o, u.out, u.len);
                o += u.len;
                cols += u.cols;
                i += u.in;
        }
        if (cut) {
                memcpy(out + o, "...", 3);
                o += 3;
                cols += 3;
        }
        out[o] = '\0';
        return cols;
}

size_t tty_text(const char *s, size_t max_cols, char *out, size_t n)
{
        return text(s, max_cols, out, n, false);
}

size_t tty_cut(const char *s, size_t max_cols, char *out, size_t n)
{
        return text(s, max_cols, out, n, true);
}

size_t tty_width(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t i = 0, cols = 0;
        struct unit u;

        while (p[i]) {
                next_unit(p + i, &u, false);
                cols += u.cols;
                i += u.in;
        }
        return cols;
}

void tty_fputs(const char *s, size_t max_cols, FILE *f)
{
        const unsigned char *p;
        size_t end, i = 0;
        bool cut;
        struct unit u;

        if (!s)
                s = "-";
        p = (const unsigned char *)s;
        if (max_cols && max_cols < 3)
                max_cols = 3;
        end = fit(s, max_cols, SIZE_MAX, false, &cut);
        while (i < end) {
                /* a run of printable ASCII in one write */
                size_t run = 0;

                while (i + run < end && p[i + run] >= 0x20 && p[i + run] < 0x7f)
                        run++;
                if (run) {
                        fwrite(p + i, 1, run, f);
                        i += run;
                        continue;
                }
                next_unit(p + i, &u, false);
                fwrite(u.out, 1, u.len, f);
                i += u.in;
        }
        if (cut)
                fputs("...", f);
}
