/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "hex.h"

/*
 * 16 + the value of a hex digit, 0 for any other byte. A table instead of comparisons: with
 * digits and letters mixed at random (every digest) the branches mispredicted on about half the
 * nibbles, which made hex_decode the top cost of the ascii log reader. Bit 4 marks a digit, so
 * one AND over the whole input tells whether every byte was one.
 */
static const uint8_t hexval[256] = {
        ['0'] = 16, ['1'] = 17, ['2'] = 18, ['3'] = 19, ['4'] = 20, ['5'] = 21,
        ['6'] = 22, ['7'] = 23, ['8'] = 24, ['9'] = 25, ['a'] = 26, ['b'] = 27,
        ['c'] = 28, ['d'] = 29, ['e'] = 30, ['f'] = 31, ['A'] = 26, ['B'] = 27,
        ['C'] = 28, ['D'] = 29, ['E'] = 30, ['F'] = 31,
};

int hex_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned ok = 16;

        if (n % 2)
                return -EBADMSG;
        if (n / 2 > max)
                return -E2BIG;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned hi = hexval[u[2 * i]], lo = hexval[u[2 * i + 1]];

                ok &= hi & lo;
                out[i] = (uint8_t)(hi << 4 | (lo & 15));
        }
        if (!ok)
                return -EBADMSG;
        *ret_len = n / 2;
        return 0;
}

void hex_encode(const uint8_t *in, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * n] = '\0';
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int b64_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        size_t pad = 0, len;

        if (n % 4)
                return -EBADMSG;
        if (n >= 1 && s[n - 1] == '=')
                pad++;
        if (n >= 2 && s[n - 2] == '=')
                pad++;
        len = n / 4 * 3 - pad;
        if (len > max)
                return -E2BIG;
        for (size_t i = 0, o = 0; i < n; i += 4) {
                int v[4];

                for (int k = 0; k < 4; k++) {
                        int last = i + 4 == n;

                        if (last && s[i + k] == '=' && k >= 4 - (int)pad)
                                v[k] = 0;
                        else if ((v[k] = b64val((unsigned char)s[i + k])) < 0)
                                return -EBADMSG;
                }
                uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                             (uint32_t)v[3];
                uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};

                for (int k = 0; k < 3 && o < len; k++)
                        out[o++] = b[k];
                /* non-canonical trailing bits are rejected */
                if (i + 4 == n && ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff))))
                        return -EBADMSG;
        }
        *ret_len = len;
        return 0;
}

size_t b64_encoded_size(size_t n)
{
        return (n + 2) / 3 * 4 + 1;
}

void b64_encode(const uint8_t *in, size_t n, char *out)
{
        size_t o = 0;

        for (size_t i = 0; i < n; i += 3) {
                uint32_t w = (uint32_t)in[i] << 16;

                if (i + 1 < n)
                        w |= (uint32_t)in[i + 1] << 8;
                if (i + 2 < n)
                        w |= in[i + 2];
                out[o++] = b64chars[w >> 18 & 63];
                out[o++] = b64chars[w >> 12 & 63];
                out[o++] = i + 1 < n ? b64chars[w >> 6 & 63] : '=';
                out[o++] = i + 2 < n ? b64chars[w & 63] : '=';
        }
        out[o] = '\0';
}
