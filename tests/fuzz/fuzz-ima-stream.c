/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the streaming IMA reader (evidence/ima-stream.c) against the whole-buffer
 * reader on the same bytes. The input is a header of 8 bytes and a log:
 *
 *   [0] bits 0-1 format (auto, binary, ascii, auto), bit 2 big-endian, bit 3 at most 5 entries,
 *       bit 4 the read function fails (-EIO) once it has handed out the offset in [5..7]
 *   [1] window: IMA_STREAM_WINDOW_MIN + [1] * 4099 bytes
 *   [2..3] seed of the read sizes (each read hands out 1 byte to a whole window, at random)
 *   [4] the log is the rest repeated 1 + [4] times (at most 4 MiB), so the window slides
 *   [5..7] offset of the failing read (bit 4)
 *
 * Every step must agree: the same return, the same entry (every field and view, byte for byte),
 * the same error code and message; the stream's entry offset is where the whole-buffer reader
 * stood. A failed read ends the stream with that error (AE_FILE) and nothing read past it.
 */
#include <errno.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "evidence/ima.h"

#define HDR 8
#define LOG_MAX (4u << 20)

struct src {
        const uint8_t *p;
        size_t len, pos;
        uint32_t seed;
        size_t fail_at; /* SIZE_MAX: never */
        size_t cap;
};

static uint32_t next_rand(uint32_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 17;
        *s ^= *s << 5;
        return *s;
}

static int src_read(void *ctx, uint8_t *buf, size_t n, size_t *ret_n)
{
        struct src *s = ctx;
        uint32_t r = next_rand(&s->seed);
        size_t k;

        FUZZ_CHECK(n > 0 && n <= s->cap);
        if (s->pos >= s->fail_at)
                return -EIO;
        /* mostly small reads (a pipe's pieces), sometimes all that fits */
        k = r % 4 == 0 ? n : 1 + (r >> 2) % (r % 4 == 1 ? 16 : 70000);
        if (k > n)
                k = n;
        if (k > s->len - s->pos)
                k = s->len - s->pos;
        if (s->fail_at != SIZE_MAX && k > s->fail_at - s->pos)
                k = s->fail_at - s->pos;
        memcpy(buf, s->p + s->pos, k);
        s->pos += k;
        *ret_n = k;
        return 0;
}

static void same_view(const void *a, uint32_t an, const void *b, uint32_t bn)
{
        FUZZ_CHECK(an == bn);
        FUZZ_CHECK(!a == !b);
        FUZZ_CHECK(!a || an == 0 || memcmp(a, b, an) == 0);
}

static void same_entry(const struct ima_entry *a, const struct ima_entry *b)
{
        FUZZ_CHECK(a->pcr == b->pcr && a->violation == b->violation);
        FUZZ_CHECK(memcmp(a->sha1, b->sha1, 20) == 0);
        FUZZ_CHECK(memcmp(&a->tmpl, &b->tmpl, sizeof(a->tmpl)) == 0);
        same_view(a->tmpl_name, a->tmpl_name_len, b->tmpl_name, b->tmpl_name_len);
        same_view(a->data, a->data_len, b->data, b->data_len);
        same_view(a->algo, a->algo_len, b->algo, b->algo_len);
        same_view(a->digest, a->digest_len, b->digest, b->digest_len);
        same_view(a->name, a->name_len, b->name, b->name_len);
        same_view(a->sig, a->sig_len, b->sig, b->sig_len);
        same_view(a->buf, a->buf_len, b->buf, b->buf_len);
        same_view(a->modsig_algo, a->modsig_algo_len, b->modsig_algo, b->modsig_algo_len);
        same_view(a->modsig_digest, a->modsig_digest_len, b->modsig_digest, b->modsig_digest_len);
        same_view(a->modsig, a->modsig_len, b->modsig, b->modsig_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const enum ima_stream_format fmts[4] = {IMA_STREAM_AUTO, IMA_STREAM_BINARY,
                                                       IMA_STREAM_ASCII, IMA_STREAM_AUTO};
        struct ima_log_opts o = {0};
        struct ima_reader whole;
        struct ima_stream st;
        struct src s;
        enum ima_stream_format f;
        uint8_t *log;
        size_t one, len, window;
        unsigned reps;
        int x;

        if (size < HDR)
                return 0;
        f = fmts[data[0] & 3];
        o.big_endian = data[0] & 4;
        o.max_entries = data[0] & 8 ? 5 : UINT64_MAX;
        window = IMA_STREAM_WINDOW_MIN + (size_t)data[1] * 4099;
        one = size - HDR;
        reps = 1 + data[4];
        while (reps > 1 && one * reps > LOG_MAX)
                reps--;
        len = one * reps;
        if (!(log = malloc(len ? len : 1)))
                return 0;
        for (unsigned i = 0; i < reps; i++)
                memcpy(log + i * one, data + HDR, one);
        s = (struct src){.p = log,
                         .len = len,
                         .seed = 1u + data[2] + ((uint32_t)data[3] << 8),
                         .fail_at = SIZE_MAX,
                         .cap = window};
        if (data[0] & 16)
                s.fail_at = (data[5] | (size_t)data[6] << 8 | (size_t)data[7] << 16) % (len + 1);

        x = ima_stream_init(&st, f, window, src_read, &s, &o);
        if (x < 0) {
                /* only a read failing before the first window is full */
                FUZZ_CHECK(x == -EIO && s.fail_at != SIZE_MAX && st.read_error == -EIO);
                free(log);
                return 0;
        }
        /* init read a whole window (or all): auto saw the bytes the whole-buffer reader sees */
        if (f == IMA_STREAM_ASCII)
                FUZZ_CHECK(ima_reader_init_ascii(&whole, (const char *)log, len, &o) == 0);
        else if (f == IMA_STREAM_BINARY)
                ima_reader_init_binary(&whole, log, len, &o);
        else
                FUZZ_CHECK(ima_reader_init_auto(&whole, log, len, &o) == 0);
        FUZZ_CHECK(st.rd.format == whole.format);
        for (;;) {
                struct attest_err ew = {0}, es = {0};
                struct ima_entry a, b;
                uint64_t at = rd_offset(&whole.r), idx = whole.idx;
                int xw = ima_reader_next(&whole, &a, &ew);
                int xs = ima_stream_next(&st, &b, &es);

                if (xs < 0 && st.read_error) {
                        /* the failing read came before this entry's bytes were all in */
                        FUZZ_CHECK(xs == -EIO && es.code == AE_FILE && s.fail_at != SIZE_MAX);
                        /* it stays failed */
                        FUZZ_CHECK(ima_stream_next(&st, &b, &es) == -EIO);
                        break;
                }
                FUZZ_CHECK(st.entry_at == at && st.entry_idx == idx);
                FUZZ_CHECK(xs == xw);
                FUZZ_CHECK(st.rd.idx == whole.idx && st.rd.line == whole.line);
                if (xw <= 0) {
                        FUZZ_CHECK(es.code == ew.code);
                        FUZZ_CHECK(strcmp(es.msg, ew.msg) == 0);
                        /* the end of the log: every byte was read, none past a failing read */
                        FUZZ_CHECK(xw < 0 || s.pos == len);
                        break;
                }
                same_entry(&a, &b);
        }
        ima_reader_done(&whole);
        ima_stream_done(&st);
        free(log);
        return 0;
}
