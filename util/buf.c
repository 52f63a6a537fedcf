/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
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

int wb_put_u64le(struct wb *w, uint64_t v)
{
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        return wb_put(w, b, 8);
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

/*
 * Eight characters at a time (SWAR, little-endian hosts): the ascii IMA reader decodes ~100 hex
 * digits per entry and the per-byte table cost ~13 instructions a digit, its top cost. A byte c
 * below 0x80 plus k sets bit 7 exactly when c >= 0x80 - k, with no carry into the next byte, so
 * one add and a mask test every byte against a bound; bytes with bit 7 set are refused first.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HEX_SWAR 1
#define B8(x) (0x0101010101010101ull * (x))

/* Every one of the 8 characters in v is a hex digit ('0'-'9', 'a'-'f', 'A'-'F'). */
static bool hex8_ok(uint64_t v)
{
        uint64_t y = v | B8(0x20);                          /* fold 'A'-'F' onto 'a'-'f' */
        uint64_t digit = (v + B8(0x50)) & ~(v + B8(0x46));  /* 0x30 <= c < 0x3a */
        uint64_t letter = (y + B8(0x1f)) & ~(y + B8(0x19)); /* 0x61 <= c | 0x20 < 0x67 */

        return (v & B8(0x80)) == 0 && ((digit | letter) & B8(0x80)) == B8(0x80);
}

/* 8 checked hex digits into 4 bytes (little-endian in the result). */
static uint32_t hex8_decode(uint64_t v)
{
        uint64_t n = (v & B8(0x0f)) + ((v >> 6) & B8(0x01)) * 9; /* letters have bit 6 */

        n = ((n << 4) | (n >> 8)) & 0x00ff00ff00ff00ffull; /* byte 2k: nibble 2k << 4 | 2k+1 */
        n = (n | (n >> 8)) & 0x0000ffff0000ffffull;
        n = (n | (n >> 16)) & 0xffffffffull;
        return (uint32_t)n;
}
#endif

/*
 * Sixteen at a time with SSE2 (every x86-64): signed byte compares against the bounds, so bytes
 * 0x80-0xff (negative) fail every range; the decode is hex8_decode()'s arithmetic per 16-bit lane.
 */
#ifdef __SSE2__
#include <emmintrin.h>

static bool hex16_ok(__m128i c)
{
        __m128i l = _mm_or_si128(c, _mm_set1_epi8(0x20));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
        __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(l, _mm_set1_epi8('a' - 1)),
                                       _mm_cmplt_epi8(l, _mm_set1_epi8('f' + 1)));

        return _mm_movemask_epi8(_mm_or_si128(digit, letter)) == 0xffff;
}

/* 16 checked hex digits into 8 bytes at out. */
static void hex16_decode(__m128i c, uint8_t *out)
{
        __m128i let = _mm_and_si128(_mm_srli_epi16(c, 6), _mm_set1_epi8(1)); /* 1 for letters */
        __m128i nib = _mm_add_epi8(_mm_and_si128(c, _mm_set1_epi8(0x0f)),
                                   _mm_add_epi8(_mm_slli_epi16(let, 3), let)); /* + 9 */
        __m128i b = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
                                  _mm_set1_epi16(0x00ff));

        _mm_storel_epi64((__m128i *)(void *)out, _mm_packus_epi16(b, b));
}
#endif

/* Validated before anything is written: a failed decode leaves even the spare bytes as they were.
 */
int wb_put_hex(struct wb *w, const char *s, size_t n)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned ok = 16;
        size_t i = 0, head = 0;
        uint8_t *o;
        int e;

        if (n % 2)
                return -EBADMSG;
        if (n / 2 > wb_avail(w))
                return -E2BIG;
#ifdef __SSE2__
        head = n - n % 16;
        for (; i < head; i += 16)
                if (!hex16_ok(_mm_loadu_si128((const __m128i *)(const void *)(u + i))))
                        return -EBADMSG;
#endif
#ifdef HEX_SWAR
        head = n - n % 8;
        for (; i < head; i += 8) {
                uint64_t v;

                memcpy(&v, u + i, 8);
                if (!hex8_ok(v))
                        return -EBADMSG;
        }
#endif
        for (; i < n; i++)
                ok &= hexval[u[i]];
        if (!ok)
                return -EBADMSG;
        if ((e = wb_reserve(w, n / 2, &o)) < 0)
                return e;
        i = 0;
#ifdef __SSE2__
        for (; i < n - n % 16; i += 16)
                hex16_decode(_mm_loadu_si128((const __m128i *)(const void *)(u + i)), o + i / 2);
#endif
#ifdef HEX_SWAR
        for (; i < head; i += 8) {
                uint64_t v;
                uint32_t b;

                memcpy(&v, u + i, 8);
                b = hex8_decode(v);
                memcpy(o + i / 2, &b, 4);
        }
#endif
        for (i = head; i < n; i += 2)
                o[i / 2] = (uint8_t)(hexval[u[i]] << 4 | (hexval[u[i + 1]] & 15));
        return 0;
}

/* 0x80 | value of each base64 character; 0 for every other byte. */
static const uint8_t b64val[256] = {
        ['A'] = 128, ['B'] = 129, ['C'] = 130, ['D'] = 131, ['E'] = 132, ['F'] = 133, ['G'] = 134,
        ['H'] = 135, ['I'] = 136, ['J'] = 137, ['K'] = 138, ['L'] = 139, ['M'] = 140, ['N'] = 141,
        ['O'] = 142, ['P'] = 143, ['Q'] = 144, ['R'] = 145, ['S'] = 146, ['T'] = 147, ['U'] = 148,
        ['V'] = 149, ['W'] = 150, ['X'] = 151, ['Y'] = 152, ['Z'] = 153, ['a'] = 154, ['b'] = 155,
        ['c'] = 156, ['d'] = 157, ['e'] = 158, ['f'] = 159, ['g'] = 160, ['h'] = 161, ['i'] = 162,
        ['j'] = 163, ['k'] = 164, ['l'] = 165, ['m'] = 166, ['n'] = 167, ['o'] = 168, ['p'] = 169,
        ['q'] = 170, ['r'] = 171, ['s'] = 172, ['t'] = 173, ['u'] = 174, ['v'] = 175, ['w'] = 176,
        ['x'] = 177, ['y'] = 178, ['z'] = 179, ['0'] = 180, ['1'] = 181, ['2'] = 182, ['3'] = 183,
        ['4'] = 184, ['5'] = 185, ['6'] = 186, ['7'] = 187, ['8'] = 188, ['9'] = 189, ['+'] = 190,
        ['/'] = 191,
};

/* The 24 bits of the last quartet at s; '=' counts as 0 where padding is allowed. -1 malformed. */
static int64_t b64_last(const unsigned char *s, size_t pad)
{
        uint32_t v = 0;

        for (size_t k = 0; k < 4; k++) {
                unsigned c = 0;

                if (!(s[k] == '=' && k >= 4 - pad) && !((c = b64val[s[k]]) & 0x80))
                        return -1;
                v = v << 6 | (c & 63);
        }
        /* non-canonical trailing bits are rejected */
        if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
                return -1;
        return v;
}

/* Padding and decoded size of n characters; -EBADMSG when n is not a whole number of quartets. */
static int b64_size(const char *s, size_t n, size_t *ret_pad, size_t *ret_len)
{
        size_t pad = 0;

        if (n % 4)
                return -EBADMSG;
        if (n >= 1 && s[n - 1] == '=')
                pad++;
        if (n >= 2 && s[n - 2] == '=')
                pad++;
        *ret_pad = pad;
        *ret_len = n / 4 * 3 - pad;
        return 0;
}

/*
 * The 24 bits of a quartet of table values (each 0x80 | value when valid, 0 when not): the sum of
 * the shifted entries is the bits plus B64_BIAS, the 0x80s shifted, since the entries only add.
 * Valid when a & b & c & d keeps bit 7.
 */
#define B64_BIAS (0x80u << 18 | 0x80u << 12 | 0x80u << 6 | 0x80u)

static uint32_t b64_bits(unsigned a, unsigned b, unsigned c, unsigned d)
{
        return (a << 18) + (b << 12) + (c << 6) + d - B64_BIAS;
}

/*
 * Check the n (> 0, a multiple of 4) characters at s and, when out is not NULL, decode them into
 * out (n / 4 * 3 - pad bytes) in the same pass: on -EBADMSG out holds part of the decode. Per
 * quartet before the last: four table lookups, one running test, and 4 bytes stored at once (the
 * fourth is overwritten by the next quartet; the last quartet writes at least one byte, so the
 * store stays inside out).
 */
static int b64_run(const char *s, size_t n, size_t pad, uint8_t *out)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned ok = 0x80;
        size_t o = 0, body = n - 4;
        int64_t last;

        if (out) {
                for (size_t i = 0; i < body; i += 4, o += 3) {
                        unsigned a = b64val[u[i]], b = b64val[u[i + 1]], c = b64val[u[i + 2]],
                                 d = b64val[u[i + 3]];
                        uint32_t w = b64_bits(a, b, c, d) << 8; /* the 3 bytes, big-endian */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        w = __builtin_bswap32(w);
#endif
                        ok &= a & b & c & d;
                        memcpy(out + o, &w, 4);
                }
        } else {
                for (size_t i = 0; i < body; i += 4)
                        ok &= b64val[u[i]] & b64val[u[i + 1]] & b64val[u[i + 2]] & b64val[u[i + 3]];
        }
        if (!ok || (last = b64_last(u + body, pad)) < 0)
                return -EBADMSG;
        for (int k = 2; out && k >= (int)pad; k--)
                out[o++] = (uint8_t)(last >> (8 * k));
        return 0;
}

/* Validated before anything is written, like wb_put_hex. */
int wb_put_b64(struct wb *w, const char *s, size_t n)
{
        size_t pad, len;
        uint8_t *out;
        int e;

        if ((e = b64_size(s, n, &pad, &len)) < 0)
                return e;
        if (len > wb_avail(w))
                return -E2BIG;
        if (n == 0)
                return 0;
        if ((e = b64_run(s, n, pad, NULL)) < 0)
                return e;
        if ((e = wb_reserve(w, len, &out)) < 0)
                return e;
        return b64_run(s, n, pad, out);
}

int wb_put_b64_scratch(struct wb *w, const char *s, size_t n)
{
        size_t pad, len;
        int e;

        if ((e = b64_size(s, n, &pad, &len)) < 0)
                return e;
        if (len > wb_avail(w))
                return -E2BIG;
        if (n == 0)
                return 0;
        if ((e = b64_run(s, n, pad, w->p + w->len)) < 0)
                return e;
        w->len += len;
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

int wb_put_json_int_first(struct wb *w, const char *key, int64_t value, const char *obj, size_t n)
{
        char head[160];
        int hl, e;

        /* "{}" has no member to follow the new one: that would need no comma */
        if (n < 3 || obj[0] != '{' || obj[n - 1] != '}' || obj[1] == '}')
                return -EINVAL;
        hl = snprintf(head, sizeof(head), "{\"%s\":%" PRId64 ",", key, value);
        if (hl < 0 || (size_t)hl >= sizeof(head))
                return -EINVAL;
        /* all or nothing: room for both parts first */
        if ((size_t)hl > wb_avail(w) || n - 1 > wb_avail(w) - (size_t)hl)
                return -E2BIG;
        if ((e = wb_put(w, head, (size_t)hl)) < 0)
                return e;
        return wb_put(w, obj + 1, n - 1);
}

int wb_put_json_raw_last(struct wb *w, const char *obj, size_t n, const char *key, const char *raw,
                         size_t rn)
{
        size_t kn = strnlen(key, 64), head;
        bool empty;
        uint8_t *o;
        int e;

        if (n < 2 || obj[0] != '{' || obj[n - 1] != '}' || rn == 0 || kn == 64)
                return -EINVAL;
        if (n > wb_avail(w))
                return -E2BIG;
        empty = n == 2; /* "{}": no comma before the member */
        /* obj without its "}", a comma unless empty, "\"" key "\":" (no wrap: n <= avail) */
        head = n - 1 + (empty ? 0 : 1) + 1 + kn + 2;
        /* then raw and "}": all or nothing */
        if (head > wb_avail(w) || rn >= wb_avail(w) - head)
                return -E2BIG;
        if ((e = wb_reserve(w, head + rn + 1, &o)) < 0)
                return e;
        memcpy(o, obj, n - 1);
        o += n - 1;
        if (!empty)
                *o++ = ',';
        *o++ = '"';
        memcpy(o, key, kn);
        o += kn;
        *o++ = '"';
        *o++ = ':';
        memcpy(o, raw, rn);
        o[rn] = '}';
        return 0;
}

int wb_put_json_plain(struct wb *w, const char *s)
{
        size_t n = strlen(s);
        uint8_t *o;
        int e;

        for (size_t i = 0; i < n; i++)
                if ((uint8_t)s[i] < 0x20 || (uint8_t)s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
                        return -EINVAL;
        if (n > SIZE_MAX - 2)
                return -E2BIG;
        if ((e = wb_reserve(w, n + 2, &o)) < 0)
                return e;
        o[0] = '"';
        memcpy(o + 1, s, n);
        o[n + 1] = '"';
        return 0;
}
