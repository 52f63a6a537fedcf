/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <string.h>

#include "daemon/log.h"

void log_line(const char *prefix, const char *fmt, ...)
{
        char line[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        /* one write per line so threads do not interleave */
        fprintf(stderr, "%s%s\n", prefix, line);
}

const char *log_escape(const char *s, size_t n, char *out, size_t max)
{
        static const char hexd[] = "0123456789abcdef";
        size_t o = 0;

        if (max == 0)
                return out;
        for (size_t i = 0; i < n && s[i]; i++) {
                unsigned char c = (unsigned char)s[i];
                size_t need = (c >= 0x20 && c < 0x7f && c != '\\') ? 1 : 4;

                if (o + need + 4 > max) {
                        if (o + 4 <= max) {
                                memcpy(out + o, "...", 3);
                                o += 3;
                        }
                        break;
                }
                if (need == 1) {
                        out[o++] = (char)c;
                        continue;
                }
                out[o++] = '\\';
                out[o++] = 'x';
                out[o++] = hexd[c >> 4];
                out[o++] = hexd[c & 15];
        }
        out[o] = '\0';
        return out;
}
