/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/esc.h"
#include "util/log.h"

const char *log_escape(const char *s, size_t n, char *out, size_t max)
{
        esc_text(out, max, s, strnlen(s, n));
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
        o += esc_line(out + o, room, msg, strlen(msg));
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
