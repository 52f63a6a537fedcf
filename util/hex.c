/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "util/buf.h"
#include "util/hex.h"

int hex_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        struct wb w = WB_INIT(out, max);
        int e;

        if ((e = wb_put_hex(&w, s, n)) < 0)
                return e;
        *ret_len = wb_len(&w);
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

int b64_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        struct wb w = WB_INIT(out, max);
        int e;

        if ((e = wb_put_b64_scratch(&w, s, n)) < 0)
                return e;
        *ret_len = wb_len(&w);
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
