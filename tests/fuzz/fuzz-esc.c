/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the one escaping of untrusted bytes (util/esc.c). For any bytes and any
 * output size: the output is NUL-terminated inside the size, valid printable UTF-8 that jansson
 * takes as a string (a verdict can always be rendered), a prefix of the whole escaping, and it
 * decodes back to exactly the input bytes it says it took; esc_text ends a cut in "...".
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/esc.h"
#include "tests/fuzz/fuzz.h"

/* "\\" -> '\', "\xHH" -> HH, else the byte; the length, or -1 on a malformed escape */
static long unescape(const char *s, size_t n, unsigned char *out)
{
        static const char hexd[] = "0123456789abcdef";
        size_t i = 0, o = 0;

        while (i < n) {
                const char *h, *l;

                if (s[i] != '\\') {
                        out[o++] = (unsigned char)s[i++];
                        continue;
                }
                if (i + 1 < n && s[i + 1] == '\\') {
                        out[o++] = '\\';
                        i += 2;
                        continue;
                }
                if (n - i < 4)
                        return -1;
                if (s[i + 1] != 'x' || !s[i + 2] || !(h = strchr(hexd, s[i + 2])) || !s[i + 3] ||
                    !(l = strchr(hexd, s[i + 3])))
                        return -1;
                out[o++] = (unsigned char)((h - hexd) << 4 | (l - hexd));
                i += 4;
        }
        return (long)o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t max, used, n, fl;
        char *out, *full;
        unsigned char *back;
        json_t *j;

        if (size < 2)
                return 0;
        max = 1 + ((size_t)data[0] << 8 | data[1]);
        data += 2;
        size -= 2;
        out = malloc(max);
        full = malloc(size * ESC_BYTE_MAX + 1);
        back = malloc(size + 1);
        if (!out || !full || !back)
                abort();
        fl = esc_bytes(full, size * ESC_BYTE_MAX + 1, data, size, &used);
        if (used != size || strlen(full) != fl || !esc_is_text(full, fl))
                abort();
        if (unescape(full, fl, back) != (long)size || (size && memcmp(back, data, size) != 0))
                abort();
        if (esc_is_plain(data, size) != (fl == size && memcmp(full, data, size) == 0))
                abort();
        j = json_stringn(full, fl);
        if (!j)
                abort();
        json_decref(j);
        /* at the fuzzer's size: a prefix, cut on a whole unit */
        n = esc_bytes(out, max, data, size, &used);
        if (n >= max || strlen(out) != n || memcmp(out, full, n) != 0 || !esc_is_text(out, n) ||
            unescape(out, n, back) != (long)used || (used == size) != (n == fl))
                abort();
        n = esc_text(out, max, data, size);
        if (n >= max || !esc_is_text(out, n) ||
            (max > fl ? strcmp(out, full) != 0
                      : max >= 4 && (n < 3 || memcmp(out + n - 3, "...", 3) != 0)))
                abort();
        free(out);
        free(full);
        free(back);
        return 0;
}
