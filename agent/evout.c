/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/evout.h"
#include "util/hex.h"

enum { PHASE_HEAD, PHASE_BODY, PHASE_TAIL, PHASE_DONE };

int evout_open(struct evout *o, const struct evidence *ev, const struct imalog *l,
               const struct imalog_span *span, struct attest_err *err)
{
        uint64_t n = (uint64_t)(span->end - span->start);
        int x;

        *o = (struct evout){.phase = PHASE_HEAD};
        if (ev->ima || ev->ima_len || span->end < span->start)
                return attest_fail(err, -EINVAL, AE_INTERNAL, "entries given twice");
        if (wb_new(&o->head, evidence_json_head_max(ev)) < 0 ||
            wb_new(&o->tail, EVIDENCE_TAIL_MAX) < 0 || !(o->raw = malloc(EVOUT_RAW)) ||
            !(o->b64 = malloc(EVOUT_RAW / 3 * 4 + 1))) {
                evout_close(o);
                return attest_fail(err, -ENOMEM, AE_INTERNAL, "out of memory");
        }
        x = evidence_json_head(ev, &o->head);
        if (x == 0)
                x = evidence_json_tail(&ev->host, &o->tail);
        if (x < 0) {
                evout_close(o);
                return attest_fail(err, x,
                                   x == -EINVAL ? AE_EVIDENCE_BAD_VALUE : AE_EVIDENCE_TOO_BIG,
                                   x == -EINVAL ? "a host fact is not printable ASCII"
                                                : "evidence envelope over its cap (%u bytes "
                                                  "before the entries, %u after)",
                                   EVIDENCE_HEAD_MAX, EVIDENCE_TAIL_MAX);
        }
        if ((x = imalog_stream_open(l, span, &o->log, err)) < 0) {
                evout_close(o);
                return x;
        }
        o->log_open = true;
        o->size = wb_len(&o->head) + (n + 2) / 3 * 4 + wb_len(&o->tail);
        return 0;
}

uint64_t evout_size(const struct evout *o)
{
        return o->size;
}

/* Copy what is left of src (from *pos) into buf. */
static size_t drain(const uint8_t *src, size_t len, size_t *pos, uint8_t *buf, size_t n)
{
        size_t k = len - *pos < n ? len - *pos : n;

        memcpy(buf, src + *pos, k);
        *pos += k;
        return k;
}

/* The next EVOUT_RAW bytes of the log as base64; at its end, on to the tail. */
static ssize_t refill(struct evout *o, struct attest_err *err)
{
        ssize_t r = imalog_stream_read(&o->log, o->raw, EVOUT_RAW, err);

        if (r <= 0) {
                if (r == 0)
                        o->phase = PHASE_TAIL;
                return r;
        }
        /* only the last read of the span may end between base64 groups */
        if (r % 3 && o->log.pos != o->log.end)
                return attest_fail(err, -EIO, AE_INTERNAL, "short read inside the log");
        b64_encode(o->raw, (size_t)r, o->b64);
        o->b64_len = ((size_t)r + 2) / 3 * 4;
        o->b64_pos = 0;
        return r;
}

ssize_t evout_read(struct evout *o, uint8_t *buf, size_t n, struct attest_err *err)
{
        size_t done = 0;

        while (done < n && o->phase != PHASE_DONE) {
                switch (o->phase) {
                case PHASE_HEAD:
                        done += drain(wb_data(&o->head), wb_len(&o->head), &o->head_pos, buf + done,
                                      n - done);
                        if (o->head_pos == wb_len(&o->head))
                                o->phase = PHASE_BODY;
                        break;
                case PHASE_BODY:
                        if (o->b64_pos < o->b64_len) {
                                done += drain((const uint8_t *)o->b64, o->b64_len, &o->b64_pos,
                                              buf + done, n - done);
                                break;
                        }
                        ssize_t r = refill(o, err);

                        if (r < 0)
                                return r;
                        break;
                case PHASE_TAIL:
                        done += drain(wb_data(&o->tail), wb_len(&o->tail), &o->tail_pos, buf + done,
                                      n - done);
                        if (o->tail_pos == wb_len(&o->tail))
                                o->phase = PHASE_DONE;
                        break;
                default:
                        break;
                }
        }
        return (ssize_t)done;
}

void evout_close(struct evout *o)
{
        wb_free(&o->head);
        wb_free(&o->tail);
        free(o->raw);
        free(o->b64);
        o->raw = NULL;
        o->b64 = NULL;
        if (o->log_open)
                imalog_stream_close(&o->log);
        o->log_open = false;
}
