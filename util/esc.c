/* SPDX-License-Identifier: MIT */
/* The one escaping of untrusted bytes for text (util/esc.h). */
#include <stdint.h>
#include <string.h>

#include "util/esc.h"

/* Unicode 15, table 3-7: the well-formed byte sequences */
size_t esc_utf8(const void *src, size_t n, uint32_t *ret_cp)
{
        const unsigned char *p = src;
        unsigned char b, lo = 0x80, hi = 0xbf;
        size_t len;
        uint32_t cp;

        if (n == 0)
                return 0;
        b = p[0];
        if (b < 0x80) {
                *ret_cp = b;
                return 1;
        }
        if (b >= 0xc2 && b <= 0xdf) {
                len = 2;
                cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
                len = 3;
                cp = b & 0x0f;
                if (b == 0xe0)
                        lo = 0xa0;
                else if (b == 0xed)
                        hi = 0x9f; /* no surrogates */
        } else if (b >= 0xf0 && b <= 0xf4) {
                len = 4;
                cp = b & 0x07;
                if (b == 0xf0)
                        lo = 0x90;
                else if (b == 0xf4)
                        hi = 0x8f; /* nothing past U+10FFFF */
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                unsigned char c = p[i];

                if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xbf))
                        return 0;
                cp = cp << 6 | (c & 0x3f);
        }
        *ret_cp = cp;
        return len;
}

bool esc_hidden(uint32_t cp)
{
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
                return true;
        /* invisible and bidirectional format characters: they hide or reorder what is shown
         * (the same set as attestctl's terminal guard, attestctl/tty.h) */
        return (cp == 0x061c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
                (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
                (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f));
}

/* The next unit at s[i]: its input length (*ret_in) and output length (the return). */
static size_t unit(const unsigned char *s, size_t n, size_t i, bool bs, size_t *ret_in,
                   bool *ret_copy)
{
        uint32_t cp;
        size_t len = esc_utf8(s + i, n - i, &cp);

        if (len && !esc_hidden(cp)) {
                *ret_in = len;
                *ret_copy = true;
                return cp == '\\' && bs ? 2 : len;
        }
        /* one byte escaped: an unprintable character is escaped a byte at a time */
        *ret_in = 1;
        *ret_copy = false;
        return ESC_BYTE_MAX;
}

static size_t run(char *out, size_t max, const void *src, size_t n, bool bs, size_t *ret_used)
{
        static const char hexd[] = "0123456789abcdef";
        const unsigned char *s = src;
        size_t i = 0, o = 0;

        if (max == 0) {
                if (ret_used)
                        *ret_used = 0;
                return 0;
        }
        while (i < n) {
                size_t in, w;
                bool copy;

                w = unit(s, n, i, bs, &in, &copy);
                if (w > max - 1 - o)
                        break;
                if (!copy) {
                        out[o++] = '\\';
                        out[o++] = 'x';
                        out[o++] = hexd[s[i] >> 4];
                        out[o++] = hexd[s[i] & 15];
                } else if (s[i] == '\\' && bs) {
                        out[o++] = '\\';
                        out[o++] = '\\';
                } else {
                        memcpy(out + o, s + i, in);
                        o += in;
                }
                i += in;
        }
        out[o] = '\0';
        if (ret_used)
                *ret_used = i;
        return o;
}

size_t esc_bytes(char *out, size_t max, const void *src, size_t n, size_t *ret_used)
{
        return run(out, max, src, n, true, ret_used);
}

static size_t cut(char *out, size_t max, const void *src, size_t n, bool bs)
{
        size_t used, o = run(out, max, src, n, bs, &used);

        if (used == n || max < 4)
                return o;
        /* cut: again with room for "..." */
        o = run(out, max - 3, src, n, bs, NULL);
        memcpy(out + o, "...", 4);
        return o + 3;
}

size_t esc_text(char *out, size_t max, const void *src, size_t n)
{
        return cut(out, max, src, n, true);
}

size_t esc_line(char *out, size_t max, const void *src, size_t n)
{
        return cut(out, max, src, n, false);
}

bool esc_is_plain(const void *src, size_t n)
{
        const unsigned char *s = src;

        for (size_t i = 0; i < n;) {
                size_t in, w;
                bool copy;

                w = unit(s, n, i, true, &in, &copy);
                if (!copy || w != in)
                        return false;
                i += in;
        }
        return true;
}

bool esc_is_text(const void *src, size_t n)
{
        const unsigned char *s = src;

        for (size_t i = 0; i < n;) {
                size_t in;
                bool copy;

                unit(s, n, i, false, &in, &copy);
                if (!copy)
                        return false;
                i += in;
        }
        return true;
}
