/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "util/buf.h"

int wb_new(struct wb *w, size_t max)
{
        uint8_t *p = malloc(max ? max : 1);

        if (!p)
                return -ENOMEM;
        *w = (struct wb){.p = p, .max = max, .owned = true};
        return 0;
}

void wb_free(struct wb *w)
{
        if (w->owned)
                free(w->p);
        *w = (struct wb){0};
}

int wb_rollback(struct wb *w, size_t mark)
{
        if (mark > w->len)
                return -EINVAL;
        w->len = mark;
        return 0;
}

int wb_reserve(struct wb *w, size_t n, uint8_t **ret)
{
        if (n > w->max - w->len)
                return -E2BIG;
        if (ret)
                *ret = w->p + w->len;
        w->len += n;
        return 0;
}

int wb_put(struct wb *w, const void *p, size_t n)
{
        uint8_t *o;
        int e;

        if ((e = wb_reserve(w, n, &o)) < 0)
                return e;
        if (n)
                memcpy(o, p, n);
        return 0;
}

int wb_put_u8(struct wb *w, uint8_t v)
{
        return wb_put(w, &v, 1);
}

int wb_put_u16be(struct wb *w, uint16_t v)
{
        const uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

        return wb_put(w, b, 2);
}

static void u32_bytes(uint8_t b[4], bool big_endian, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                b[big_endian ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

int wb_put_u32be(struct wb *w, uint32_t v)
{
        return wb_put_u32(w, true, v);
}

int wb_put_u32le(struct wb *w, uint32_t v)
{
        return wb_put_u32(w, false, v);
}

int wb_put_u32(struct wb *w, bool big_endian, uint32_t v)
{
        uint8_t b[4];

        u32_bytes(b, big_endian, v);
        return wb_put(w, b, 4);
}

int wb_set_u32(struct wb *w, size_t off, bool big_endian, uint32_t v)
{
        if (off > w->len || w->len - off < 4)
                return -EINVAL;
        u32_bytes(w->p + off, big_endian, v);
        return 0;
}

/*
 * 16 + the value of a hex digit, 0 for any other byte. A table instead of comparisons: with
 * digits and letters mixed at random (every digest) the branches mispredicted on about half the
 * nibbles, which made hex decoding the top cost of the ascii log reader. Bit 4 marks a digit, so
 * one AND over the whole input tells whether every byte was one.
 */
static const uint8_t hexval[256] = {
        ['0'] = 16, ['1'] = 17, ['2'] = 18, ['3'] = 19, ['4'] = 20, ['5'] = 21,
        ['6'] = 22, ['7'] = 23, ['8'] = 24, ['9'] = 25, ['a'] = 26, ['b'] = 27,
        ['c'] = 28, ['d'] = 29, ['e'] = 30, ['f'] = 31, ['A'] = 26, ['B'] = 27,
        ['C'] = 28, ['D'] = 29, ['E'] = 30, ['F'] = 31,
};

/* Validated before anything is written: a failed decode leaves even the spare bytes as they were.
 */
int wb_put_hex(struct wb *w, const char *s, size_t n)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned ok = 16;
        uint8_t *o;
        int e;

        if (n % 2)
                return -EBADMSG;
        if (n / 2 > wb_avail(w))
                return -E2BIG;
        for (size_t i = 0; i < n; i++)
                ok &= hexval[u[i]];
        if (!ok)
                return -EBADMSG;
        if ((e = wb_reserve(w, n / 2, &o)) < 0)
                return e;
        for (size_t i = 0; i < n / 2; i++)
                o[i] = (uint8_t)(hexval[u[2 * i]] << 4 | (hexval[u[2 * i + 1]] & 15));
        return 0;
}

static int b64val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

/* The 24 bits of the quartet at s[i]; '=' counts as 0 where padding is allowed. -1 malformed. */
static int64_t b64_quartet(const char *s, size_t i, bool last, size_t pad)
{
        uint32_t v = 0;

        for (size_t k = 0; k < 4; k++) {
                int c;

                if (last && s[i + k] == '=' && k >= 4 - pad)
                        c = 0;
                else if ((c = b64val((unsigned char)s[i + k])) < 0)
                        return -1;
                v = v << 6 | (uint32_t)c;
        }
        /* non-canonical trailing bits are rejected */
        if (last && ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))))
                return -1;
        return v;
}

/* Validated before anything is written, like wb_put_hex. */
int wb_put_b64(struct wb *w, const char *s, size_t n)
{
        size_t pad = 0, len, o = 0;
        uint8_t *out;
        int e;

        if (n % 4)
                return -EBADMSG;
        if (n >= 1 && s[n - 1] == '=')
                pad++;
        if (n >= 2 && s[n - 2] == '=')
                pad++;
        len = n / 4 * 3 - pad;
        if (len > wb_avail(w))
                return -E2BIG;
        for (size_t i = 0; i < n; i += 4)
                if (b64_quartet(s, i, i + 4 == n, pad) < 0)
                        return -EBADMSG;
        if ((e = wb_reserve(w, len, &out)) < 0)
                return e;
        for (size_t i = 0; i < n; i += 4) {
                uint32_t v = (uint32_t)b64_quartet(s, i, i + 4 == n, pad);

                for (int k = 2; k >= 0 && o < len; k--)
                        out[o++] = (uint8_t)(v >> (8 * k));
        }
        return 0;
}

int wb_sized_begin(struct wb *w, bool big_endian, size_t *ret_mark)
{
        size_t mark = w->len;
        int e;

        if ((e = wb_put_u32(w, big_endian, 0)) < 0)
                return e;
        *ret_mark = mark;
        return 0;
}

int wb_sized_end(struct wb *w, bool big_endian, size_t mark, size_t limit)
{
        size_t n;

        if (mark > w->len || w->len - mark < 4)
                return -EINVAL;
        n = w->len - mark - 4;
        if (n > limit || n > UINT32_MAX)
                return -E2BIG;
        return wb_set_u32(w, mark, big_endian, (uint32_t)n);
}
