/* SPDX-License-Identifier: MIT */
/*
 * The streaming reader (evidence/ima.h): one ima_reader over a window of the log that slides
 * forward. Before each entry, when fewer than IMA_STREAM_LOOKAHEAD bytes are left in the window
 * and the log has not ended, the unread bytes move to the window's start and reads fill the rest
 * (up to the window size or the end of the log). The reader's index, line number, template cache
 * and scratch buffer carry over; its base moves with the window, so byte offsets in messages
 * count from the start of the log.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/ima-internal.h"

_Static_assert(IMA_STREAM_LOOKAHEAD >= 4 + 20 + 4 + IMA_TMPL_NAME_MAX + 4 + IMA_DATA_MAX,
               "a binary entry must fit the lookahead");
_Static_assert(IMA_STREAM_LOOKAHEAD >= IMA_ASCII_LINE_MAX + 1,
               "an ascii line and its newline must fit the lookahead");

static int refill(struct ima_stream *s, struct attest_err *err)
{
        struct rd *r = &s->rd.r;
        size_t used = rd_offset(r), len = rd_left(r);

        if (s->read_error)
                return s->read_error;
        if (used) {
                memmove(s->win, r->p, len);
                s->rd.base += used;
        }
        while (len < s->cap && !s->eof) {
                size_t n = 0;
                int x = s->read(s->ctx, s->win + len, s->cap - len, &n);

                if (x >= 0 && n > s->cap - len)
                        x = -EIO; /* a read function that says it wrote past the buffer */
                if (x < 0) {
                        *r = (struct rd)RD_INIT(s->win, len);
                        s->read_error = x;
                        return attest_fail(err, x, AE_FILE, "reading at byte %" PRIu64 ": %s",
                                           s->rd.base + len, strerror(-x));
                }
                if (n == 0)
                        s->eof = true;
                len += n;
        }
        *r = (struct rd)RD_INIT(s->win, len);
        return 0;
}

int ima_stream_init(struct ima_stream *s, enum ima_stream_format format, size_t window,
                    ima_stream_read_fn read, void *ctx, const struct ima_log_opts *opts)
{
        struct attest_err err = {0};
        const uint8_t *p;
        size_t len;
        int x;

        if (window == 0)
                window = IMA_STREAM_WINDOW_DEFAULT;
        if (window < IMA_STREAM_WINDOW_MIN)
                window = IMA_STREAM_WINDOW_MIN;
        *s = (struct ima_stream){.cap = window, .read = read, .ctx = ctx};
        if (!(s->win = malloc(window)))
                return -ENOMEM;
        s->rd.r = (struct rd)RD_INIT(s->win, 0);
        if ((x = refill(s, &err)) < 0) {
                ima_stream_done(s);
                return x;
        }
        p = s->rd.r.p;
        len = rd_left(&s->rd.r);
        if (format == IMA_STREAM_ASCII || (format == IMA_STREAM_AUTO && ima_ascii_looks(p, len))) {
                if ((x = ima_reader_init_ascii(&s->rd, (const char *)p, len, opts)) < 0) {
                        ima_stream_done(s);
                        return x;
                }
        } else {
                ima_reader_init_binary(&s->rd, p, len, opts);
        }
        return 0;
}

int ima_stream_next(struct ima_stream *s, struct ima_entry *ret, struct attest_err *err)
{
        int x;

        if (s->read_error)
                return attest_fail(err, s->read_error, AE_FILE, "reading: %s",
                                   strerror(-s->read_error));
        if (!s->eof && rd_left(&s->rd.r) < IMA_STREAM_LOOKAHEAD && (x = refill(s, err)) < 0)
                return x;
        s->entry_idx = s->rd.idx;
        s->entry_at = s->rd.base + rd_offset(&s->rd.r);
        /* the format's reader directly, not through ima_reader_next() in another file */
        return s->rd.format == IMA_FORMAT_ASCII ? ima_ascii_next(&s->rd, ret, err)
                                                : ima_binary_next(&s->rd, ret, err);
}

void ima_stream_done(struct ima_stream *s)
{
        ima_reader_done(&s->rd);
        free(s->win);
        s->win = NULL;
}
