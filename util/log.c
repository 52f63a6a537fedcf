/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

/*
 * Copy n bytes of s into out (max bytes with the NUL): printable ASCII as is, control bytes and
 * bytes >= 0x7f as \xHH, '\\' too when esc_backslash; "..." when it does not all fit. The length.
 */
static bool plain(unsigned char c, bool esc_backslash)
{
        return c >= 0x20 && c < 0x7f && (c != '\\' || !esc_backslash);
}

static size_t escape(const char *s, size_t n, bool esc_backslash, char *out, size_t max)
{
        static const char hexd[] = "0123456789abcdef";
        size_t o = 0, need = 0, room;

        if (max == 0)
                return 0;
        for (size_t i = 0; i < n && need < max; i++)
                need += plain((unsigned char)s[i], esc_backslash) ? 1 : 4;
        /* all of it when it fits; else as much as fits with "..." after it */
        room = need <= max - 1 || max - 1 < 3 ? max - 1 : max - 1 - 3;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (plain(c, esc_backslash)) {
                        if (room - o < 1)
                                break;
                        out[o++] = (char)c;
                        continue;
                }
                if (room - o < 4)
                        break;
                out[o++] = '\\';
                out[o++] = 'x';
                out[o++] = hexd[c >> 4];
                out[o++] = hexd[c & 15];
        }
        if (need > max - 1 && max - 1 - o >= 3) {
                memcpy(out + o, "...", 3);
                o += 3;
        }
        out[o] = '\0';
        return o;
}

const char *log_escape(const char *s, size_t n, char *out, size_t max)
{
        escape(s, strnlen(s, n), true, out, max);
        return out;
}

static int clamp_prio(int prio)
{
        return prio < LOG_PRIO_ERR ? LOG_PRIO_ERR : prio > LOG_PRIO_DEBUG ? LOG_PRIO_DEBUG : prio;
}

size_t log_format(int prio, int prefixed, const char *msg, char *out, size_t max)
{
        const char *pre = "";
        char p[8];
        size_t o, room;

        if (max < 2) {
                if (max)
                        out[0] = '\0';
                return 0;
        }
        prio = clamp_prio(prio);
        if (prefixed) {
                snprintf(p, sizeof(p), "<%d>", prio);
                pre = p;
        } else if (prio == LOG_PRIO_ERR) {
                pre = "error: ";
        } else if (prio == LOG_PRIO_WARNING) {
                pre = "warning: ";
        }
        o = strnlen(pre, max - 2);
        memcpy(out, pre, o);
        /* the message, at most LOG_LINE_MAX bytes, then the newline */
        room = max - 1 - o;
        if (room > LOG_LINE_MAX + 1)
                room = LOG_LINE_MAX + 1;
        o += escape(msg, strlen(msg), false, out + o, room);
        out[o++] = '\n';
        out[o] = '\0';
        return o;
}

/* The sd-daemon prefix, unless stderr is a terminal that is not the journal. */
static bool want_prefix(void)
{
        return getenv("JOURNAL_STREAM") || !isatty(STDERR_FILENO);
}

void log_msg(int prio, const char *fmt, ...)
{
        char msg[LOG_LINE_MAX + 1], line[LOG_LINE_MAX + 16];
        int saved = errno;
        size_t len, off = 0;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n < 0)
                snprintf(msg, sizeof(msg), "(unformattable message)");
        else if ((size_t)n >= sizeof(msg))
                memcpy(msg + sizeof(msg) - 4, "...", 4); /* cut by vsnprintf: say so */
        len = log_format(prio, want_prefix(), msg, line, sizeof(line));
        while (off < len) {
                ssize_t w = write(STDERR_FILENO, line + off, len - off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break; /* nowhere else to say it */
                off += (size_t)w;
        }
        errno = saved;
}
