/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "hex.h"

/*
 * 1 + the value of a hex digit, 0 for any other byte. A table instead of comparisons: with
 * digits and letters mixed at random (every digest) the branches mispredicted on about half the
 * nibbles, which made hex_decode the top cost of the ascii log reader.
 */
static const uint8_t hexval[256] = {
        ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
        ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
        ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
        ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int hex_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned bad = 0;

        if (n % 2)
                return -EBADMSG;
        if (n / 2 > max)
                return -E2BIG;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned hi = hexval[u[2 * i]], lo = hexval[u[2 * i + 1]];

                bad |= (hi == 0) | (lo == 0);
                out[i] = (uint8_t)((hi - 1) << 4 | (lo - 1));
        }
        if (bad)
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
