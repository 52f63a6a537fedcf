/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "util/sink.h"

size_t text_sink_write(char *p, size_t size, size_t n, void *ud)
{
        struct text_sink *s = ud;
        size_t len = size * n;

        if (len > s->max - s->len) {
                s->overflow = true;
                return 0;
        }
        if (memchr(p, '\0', len)) {
                s->nul = true;
                return 0;
        }
        if (s->len + len + 1 > s->cap) {
                size_t cap = s->cap ? s->cap : 4096;
                char *nb;

                while (cap < s->len + len + 1)
                        cap *= 2;
                if (!(nb = realloc(s->buf, cap)))
                        return 0;
                s->buf = nb;
                s->cap = cap;
        }
        memcpy(s->buf + s->len, p, len);
        s->len += len;
        s->buf[s->len] = '\0';
        return len;
}
