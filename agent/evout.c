/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/evout.h"
#include "util/hex.h"

#define EVOUT_TAIL_MAX (16u * 1024)

enum { PHASE_HEAD, PHASE_BODY, PHASE_TAIL, PHASE_DONE };

static int put_s(struct wb *w, const char *s)
{
        return wb_put(w, s, strlen(s));
}

/* A JSON string of printable ASCII, escaped as jansson's compact dump does. */
static int put_str(struct wb *w, const char *s)
{
        size_t mark = wb_len(w);
        int x = wb_put_u8(w, '"');

        for (; x == 0 && *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c < 0x20 || c > 0x7e)
                        x = -EINVAL;
                else if (c == '"' || c == '\\')
                        x = wb_put(w, c == '"' ? "\\\"" : "\\\\", 2);
                else
                        x = wb_put_u8(w, c);
        }
        if (x == 0)
                x = wb_put_u8(w, '"');
        if (x < 0 && wb_rollback(w, mark) < 0)
                return -EINVAL;
        return x;
}

/* "key": */
static int put_key(struct wb *w, const char *key)
{
        int x = put_str(w, key);

        return x < 0 ? x : wb_put_u8(w, ':');
}

static int put_hex(struct wb *w, const uint8_t *p, size_t n)
{
        uint8_t *o;
        int x;

        /* hex_encode writes a NUL after the 2n digits: reserve it, then drop it */
        if ((x = wb_reserve(w, 2 * n + 1, &o)) < 0)
                return x;
        hex_encode(p, n, (char *)o);
        return wb_rollback(w, wb_len(w) - 1);
}

static int put_b64(struct wb *w, const uint8_t *p, size_t n)
{
        uint8_t *o;
        int x;

        if ((x = wb_reserve(w, b64_encoded_size(n), &o)) < 0)
                return x;
        b64_encode(p, n, (char *)o);
        return wb_rollback(w, wb_len(w) - 1);
}

static int put_bool(struct wb *w, bool b)
{
        return put_s(w, b ? "true" : "false");
}

/* {"version":1,"nonce":..,"quote":{..},"ima":{"offset":N,"format":"..","entries":" */
static int write_head(struct wb *w, const struct evidence *ev)
{
        char num[32];
        bool first_bank = true;
        int x = 0;

        snprintf(num, sizeof(num), "{\"version\":%d,", EVIDENCE_VERSION);
#define TRY(e)                                                                                     \
        do {                                                                                       \
                if ((x = (e)) < 0)                                                                 \
                        return x;                                                                  \
        } while (0)
        TRY(put_s(w, num));
        TRY(put_key(w, "nonce"));
        TRY(wb_put_u8(w, '"'));
        TRY(put_hex(w, ev->nonce, ev->nonce_len));
        TRY(put_s(w, "\",\"quote\":{\"attest\":\""));
        TRY(put_b64(w, ev->attest, ev->attest_len));
        TRY(put_s(w, "\",\"signature\":\""));
        TRY(put_b64(w, ev->sig, ev->sig_len));
        TRY(put_s(w, "\",\"pcrs\":{"));
        for (int b = 0; b < BANK_COUNT; b++) {
                bool first = true;

                if (!ev->pcrs.have[b])
                        continue;
                if (!first_bank)
                        TRY(wb_put_u8(w, ','));
                first_bank = false;
                TRY(put_key(w, bank_name(b)));
                TRY(wb_put_u8(w, '{'));
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        if (!(ev->pcrs.have[b] & (1u << i)))
                                continue;
                        snprintf(num, sizeof(num), "%s\"%u\":\"", first ? "" : ",", i);
                        first = false;
                        TRY(put_s(w, num));
                        TRY(put_hex(w, ev->pcrs.v[b][i], bank_size(b)));
                        TRY(wb_put_u8(w, '"'));
                }
                TRY(wb_put_u8(w, '}'));
        }
        snprintf(num, sizeof(num), "%" PRIu64, ev->ima_offset);
        TRY(put_s(w, "}},\"ima\":{\"offset\":"));
        TRY(put_s(w, num));
        TRY(put_s(w, ev->ima_format == IMA_FORMAT_ASCII ? ",\"format\":\"ascii\""
                                                        : ",\"format\":\"binary\""));
        return put_s(w, ",\"entries\":\"");
}

/* "},"host":{..}} */
static int write_tail(struct wb *w, const struct evidence_host *h)
{
        bool first = true;
        int x = 0;

        TRY(put_s(w, "\"},\"host\":{"));
#define SEP()                                                                                      \
        do {                                                                                       \
                if (!first)                                                                        \
                        TRY(wb_put_u8(w, ','));                                                    \
                first = false;                                                                     \
        } while (0)
        if (h->kernel[0]) {
                SEP();
                TRY(put_key(w, "kernel"));
                TRY(put_str(w, h->kernel));
        }
        if (h->cmdline) {
                SEP();
                TRY(put_key(w, "cmdline"));
                TRY(put_str(w, h->cmdline));
        }
        if (h->boot_id[0]) {
                SEP();
                TRY(put_key(w, "boot_id"));
                TRY(put_str(w, h->boot_id));
        }
        if (h->cfi_present) {
                SEP();
                TRY(put_s(w, "\"cfi\":{\"source\":"));
                TRY(put_str(w, h->cfi_source));
                TRY(put_s(w, ",\"enabled\":"));
                TRY(put_bool(w, h->cfi_enabled));
                TRY(put_s(w, ",\"permissive\":"));
                TRY(put_bool(w, h->cfi_permissive));
                TRY(wb_put_u8(w, '}'));
        }
        if (h->tk_present) {
                SEP();
                TRY(put_s(w, "\"trusted_keys\":{\"source\":"));
                TRY(put_str(w, h->tk_source));
                TRY(put_s(w, ",\"origin\":"));
                TRY(put_str(w, h->tk_origin));
                TRY(wb_put_u8(w, '}'));
        }
#undef SEP
#undef TRY
        return put_s(w, "}}");
}

int evout_open(struct evout *o, const struct evidence *ev, const struct imalog *l,
               const struct imalog_span *span, struct attest_err *err)
{
        uint64_t n = (uint64_t)(span->end - span->start);
        int x;

        *o = (struct evout){.phase = PHASE_HEAD};
        if (ev->ima || ev->ima_len || span->end < span->start)
                return attest_fail(err, -EINVAL, AE_INTERNAL, "entries given twice");
        if (wb_new(&o->head, EVOUT_ENVELOPE_MAX) < 0 || wb_new(&o->tail, EVOUT_TAIL_MAX) < 0 ||
            !(o->raw = malloc(EVOUT_RAW)) || !(o->b64 = malloc(EVOUT_RAW / 3 * 4 + 1))) {
                evout_close(o);
                return attest_fail(err, -ENOMEM, AE_INTERNAL, "out of memory");
        }
        x = write_head(&o->head, ev);
        if (x == 0)
                x = write_tail(&o->tail, &ev->host);
        if (x < 0) {
                evout_close(o);
                return attest_fail(err, x,
                                   x == -EINVAL ? AE_EVIDENCE_BAD_VALUE : AE_EVIDENCE_TOO_BIG,
                                   x == -EINVAL ? "a host fact is not printable ASCII"
                                                : "evidence envelope over %u bytes",
                                   EVOUT_ENVELOPE_MAX);
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
