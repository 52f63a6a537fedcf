/* SPDX-License-Identifier: MIT */
/*
 * The reader is a state machine over one cursor (r->pos), every read checked against r->len
 * before the byte is touched. Open containers are a bit stack (object or array per depth, so the
 * depth cap costs 256 bytes, not a recursion). Keys of the open objects sit on one stack: opening
 * an object pushes a mark holding the previous object's first key, so the keys of the innermost
 * object are always keys[obj_start .. nkeys); closing it checks them for duplicates (pairwise up to
 * DUP_PAIRWISE_MAX keys, sorted above: no input makes it quadratic) and pops them with the mark.
 * Numbers are scanned in json-rd-num.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/json-rd-internal.h"
#include "util/json-rd.h"

enum {
        S_VALUE, /* a value is due: the document, an element, a member's value */
        S_FIRST, /* a container was just opened */
        S_NEXT,  /* a value in a container was read: ',' or the close is due */
        S_DONE,  /* the top-level value was read */
};

#define KEY_MARK 1u
#define KEY_ESC 2u
#define DUP_PAIRWISE_MAX 32

int jrd_fail(struct jrd *r, size_t off, const char *why)
{
        if (!r->err) {
                r->err = -EBADMSG;
                r->why = why;
                r->err_off = off;
        }
        return r->err;
}

void jrd_init(struct jrd *r, const char *buf, size_t len)
{
        r->buf = buf;
        r->len = len;
        r->pos = 0;
        r->depth = 0;
        r->state = S_VALUE;
        r->keys = r->inline_keys;
        r->nkeys = 0;
        r->cap_keys = JRD_KEYS_INLINE;
        r->obj_start = 0;
        r->err = 0;
        r->why = NULL;
        r->err_off = 0;
        if (len > JRD_INPUT_MAX) {
                r->err = -E2BIG;
                r->why = "input larger than the reader's cap";
        }
}

void jrd_free(struct jrd *r)
{
        if (r->keys != r->inline_keys)
                free(r->keys);
        r->keys = r->inline_keys;
        r->nkeys = 0;
        r->cap_keys = JRD_KEYS_INLINE;
}

const char *jrd_error(const struct jrd *r, size_t *ret_off)
{
        if (ret_off)
                *ret_off = r->err_off;
        return r->err ? r->why : NULL;
}

static void skip_ws(struct jrd *r)
{
        const char *b = r->buf;
        size_t i = r->pos;

        while (i < r->len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
                i++;
        r->pos = i;
}

static bool top_is_obj(const struct jrd *r)
{
        unsigned d = r->depth - 1;

        return r->is_obj[d / 8] & (1u << (d % 8));
}

static void value_done(struct jrd *r)
{
        r->state = r->depth ? S_NEXT : S_DONE;
}

/* ---- strings ---- */

static int hexval(unsigned char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* The code unit of "\uXXXX" at p[i] (p[i] == '\\'), -1 when not 4 hex digits within n bytes. */
static int32_t u_escape(const unsigned char *p, size_t i, size_t n)
{
        int32_t v = 0;

        if (n - i < 6 || p[i] != '\\' || p[i + 1] != 'u')
                return -1;
        for (size_t k = 2; k < 6; k++) {
                int h = hexval(p[i + k]);

                if (h < 0)
                        return -1;
                v = v << 4 | h;
        }
        return v;
}

static size_t utf8_size(uint32_t cp)
{
        return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/*
 * Length of the UTF-8 sequence at p (left bytes, p[0] >= 0x80), 0 when invalid: RFC 3629 (no
 * overlong form, no surrogate, nothing above U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
        unsigned c = p[0], lo = 0x80, hi = 0xbf;
        size_t n;

        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
        else
                return 0;
        if (left < n)
                return 0;
        if (c == 0xe0)
                lo = 0xa0;
        else if (c == 0xed)
                hi = 0x9f;
        else if (c == 0xf0)
                lo = 0x90;
        else if (c == 0xf4)
                hi = 0x8f;
        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t k = 2; k < n; k++)
                if ((p[k] & 0xc0) != 0x80)
                        return 0;
        return n;
}

/* Index of the first byte at or after i that is '"', '\\', below 0x20 or above 0x7f; n if none. */
static size_t plain_run(const unsigned char *b, size_t i, size_t n)
{
#ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      space = _mm_set1_epi8(0x20);

        while (n - i >= 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
                /* signed compare: bytes >= 0x80 are negative, so below 0x20 too */
                __m128i stop = _mm_or_si128(
                        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                        _mm_cmplt_epi8(v, space));
                unsigned m = (unsigned)_mm_movemask_epi8(stop);

                if (m)
                        return i + (size_t)__builtin_ctz(m);
                i += 16;
        }
#endif
        while (i < n && b[i] >= 0x20 && b[i] < 0x80 && b[i] != '"' && b[i] != '\\')
                i++;
        return i;
}

/* r->pos at the opening quote; on success past the closing one. */
static int scan_string(struct jrd *r, struct jrd_str *ret)
{
        const unsigned char *b = (const unsigned char *)r->buf;
        size_t n = r->len, start = r->pos + 1, i = start, shrink = 0;
        bool esc = false;

        for (;;) {
                unsigned c;

                i = plain_run(b, i, n);
                if (i >= n)
                        return jrd_fail(r, r->pos, "unterminated string");
                c = b[i];
                if (c == '"')
                        break;
                if (c < 0x20)
                        return jrd_fail(r, i, "control byte in a string");
                if (c >= 0x80) {
                        size_t k = utf8_seq(b + i, n - i);

                        if (!k)
                                return jrd_fail(r, i, "invalid UTF-8");
                        i += k;
                        continue;
                }
                /* an escape */
                esc = true;
                if (n - i < 2)
                        return jrd_fail(r, r->pos, "unterminated string");
                c = b[i + 1];
                if (c == 'u') {
                        int32_t u = u_escape(b, i, n), lo;

                        if (u < 0)
                                return jrd_fail(r, i, "invalid \\u escape");
                        if (u >= 0xdc00 && u <= 0xdfff)
                                return jrd_fail(r, i, "unpaired surrogate");
                        if (u >= 0xd800 && u <= 0xdbff) {
                                lo = u_escape(b, i + 6, n);
                                if (lo < 0xdc00 || lo > 0xdfff)
                                        return jrd_fail(r, i, "unpaired surrogate");
                                shrink += 12 - 4;
                                i += 12;
                                continue;
                        }
                        if (u == 0)
                                return jrd_fail(r, i, "\\u0000 in a string");
                        shrink += 6 - utf8_size((uint32_t)u);
                        i += 6;
                        continue;
                }
                if (!(c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                      c == 'r' || c == 't'))
                        return jrd_fail(r, i, "invalid escape");
                shrink++;
                i += 2;
        }
        ret->p = r->buf + start;
        ret->raw = i - start;
        ret->len = ret->raw - shrink;
        ret->esc = esc;
        r->pos = i + 1;
        return 0;
}

/*
 * One escape of a string already checked by scan_string, at p[*i] == '\\': its bytes into out
 * (at most 4), *i past it. Returns the byte count.
 */
static size_t unescape_one(const unsigned char *p, size_t *i, size_t n, uint8_t out[4])
{
        uint32_t cp;
        unsigned c = p[*i + 1];

        if (c != 'u') {
                static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";

                *i += 2;
                out[0] = (uint8_t)to[strchr(from, (int)c) - from];
                return 1;
        }
        cp = (uint32_t)u_escape(p, *i, n);
        *i += 6;
        if (cp >= 0xd800 && cp <= 0xdbff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)u_escape(p, *i, n) - 0xdc00);
                *i += 6;
        }
        switch (utf8_size(cp)) {
        case 1:
                out[0] = (uint8_t)cp;
                return 1;
        case 2:
                out[0] = (uint8_t)(0xc0 | cp >> 6);
                out[1] = (uint8_t)(0x80 | (cp & 0x3f));
                return 2;
        case 3:
                out[0] = (uint8_t)(0xe0 | cp >> 12);
                out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
                out[2] = (uint8_t)(0x80 | (cp & 0x3f));
                return 3;
        default:
                out[0] = (uint8_t)(0xf0 | cp >> 18);
                out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
                out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
                out[3] = (uint8_t)(0x80 | (cp & 0x3f));
                return 4;
        }
}

/* The unescaped bytes of a checked string, one at a time. */
struct str_it {
        const unsigned char *p;
        size_t i, n;
        uint8_t pend[4];
        size_t npend, ipend;
};

static void it_init(struct str_it *it, const char *p, size_t raw)
{
        *it = (struct str_it){.p = (const unsigned char *)p, .n = raw};
}

/* The next byte, -1 at the end. */
static int it_next(struct str_it *it)
{
        if (it->ipend < it->npend)
                return it->pend[it->ipend++];
        if (it->i >= it->n)
                return -1;
        if (it->p[it->i] != '\\')
                return it->p[it->i++];
        it->npend = unescape_one(it->p, &it->i, it->n, it->pend);
        it->ipend = 1;
        return it->pend[0];
}

int jrd_str_copy(const struct jrd_str *s, char *out, size_t size)
{
        struct str_it it;
        size_t o = 0;
        int c;

        if (s->len >= size)
                return -E2BIG;
        if (!s->esc) {
                memcpy(out, s->p, s->len);
                out[s->len] = '\0';
                return 0;
        }
        it_init(&it, s->p, s->raw);
        while ((c = it_next(&it)) >= 0 && o < s->len)
                out[o++] = (char)c;
        out[o] = '\0';
        return 0;
}

bool jrd_str_eq(const struct jrd_str *s, const char *lit)
{
        size_t n = strlen(lit);
        struct str_it it;

        if (s->len != n)
                return false;
        if (!s->esc)
                return memcmp(s->p, lit, n) == 0;
        it_init(&it, s->p, s->raw);
        for (size_t k = 0; k < n; k++)
                if (it_next(&it) != (unsigned char)lit[k])
                        return false;
        return true;
}

/* ---- duplicate keys ---- */

static int key_cmp(const char *buf, const struct jrd_key *a, const struct jrd_key *b)
{
        struct str_it ia, ib;

        if (a->len != b->len)
                return a->len < b->len ? -1 : 1;
        if (!((a->flags | b->flags) & KEY_ESC))
                return memcmp(buf + a->off, buf + b->off, a->len);
        it_init(&ia, buf + a->off, a->raw);
        it_init(&ib, buf + b->off, b->raw);
        for (;;) {
                int ca = it_next(&ia), cb = it_next(&ib);

                if (ca != cb)
                        return ca < cb ? -1 : 1;
                if (ca < 0)
                        return 0;
        }
}

static int key_qcmp(const void *a, const void *b, void *buf)
{
        return key_cmp(buf, a, b);
}

static int push_key(struct jrd *r, struct jrd_key k)
{
        if (r->nkeys == r->cap_keys) {
                struct jrd_key *n;
                uint32_t cap = r->cap_keys * 2;

                if (r->keys == r->inline_keys) {
                        n = malloc(cap * sizeof(*n));
                        if (n)
                                memcpy(n, r->keys, r->nkeys * sizeof(*n));
                } else {
                        n = realloc(r->keys, cap * sizeof(*n));
                }
                if (!n) {
                        if (!r->err) {
                                r->err = -ENOMEM;
                                r->why = "out of memory";
                        }
                        return r->err;
                }
                r->keys = n;
                r->cap_keys = cap;
        }
        r->keys[r->nkeys++] = k;
        return 0;
}

static int check_duplicates(struct jrd *r, size_t close_off)
{
        struct jrd_key *k = r->keys + r->obj_start;
        uint32_t n = r->nkeys - r->obj_start;

        if (n <= DUP_PAIRWISE_MAX) {
                for (uint32_t a = 1; a < n; a++)
                        for (uint32_t b = 0; b < a; b++)
                                if (k[a].len == k[b].len && key_cmp(r->buf, &k[a], &k[b]) == 0)
                                        return jrd_fail(r, k[a].off - 1, "duplicate key");
                return 0;
        }
        qsort_r(k, n, sizeof(*k), key_qcmp, (void *)r->buf);
        for (uint32_t a = 1; a < n; a++)
                if (key_cmp(r->buf, &k[a], &k[a - 1]) == 0)
                        return jrd_fail(r, close_off, "duplicate key");
        return 0;
}

/* ---- the grammar ---- */

static int literal(struct jrd *r, const char *word, size_t n)
{
        if (r->len - r->pos < n || memcmp(r->buf + r->pos, word, n) != 0)
                return jrd_fail(r, r->pos, "invalid literal");
        r->pos += n;
        return 0;
}

static int open_container(struct jrd *r, bool obj)
{
        unsigned d = r->depth;
        int e;

        if (obj) {
                if ((e = push_key(r, (struct jrd_key){.off = r->obj_start, .flags = KEY_MARK})) < 0)
                        return e;
                r->obj_start = r->nkeys;
                r->is_obj[d / 8] |= (uint8_t)(1u << (d % 8));
        } else {
                r->is_obj[d / 8] &= (uint8_t) ~(1u << (d % 8));
        }
        r->depth++;
        r->pos++;
        r->state = S_FIRST;
        return 0;
}

int jrd_value(struct jrd *r, struct jrd_val *ret)
{
        int e;

        if (r->err)
                return r->err;
        if (r->state != S_VALUE)
                return -EINVAL;
        ret->s = (struct jrd_str){0};
        ret->i = 0;
        skip_ws(r);
        if (r->depth >= JRD_DEPTH_MAX)
                return jrd_fail(r, r->pos, "nested deeper than 2048 values");
        if (r->pos >= r->len)
                return jrd_fail(r, r->pos, "premature end of input");
        ret->off = r->pos;
        switch (r->buf[r->pos]) {
        case '{':
                ret->type = JRD_OBJECT;
                return open_container(r, true);
        case '[':
                ret->type = JRD_ARRAY;
                return open_container(r, false);
        case '"':
                ret->type = JRD_STRING;
                e = scan_string(r, &ret->s);
                break;
        case 't':
                ret->type = JRD_TRUE;
                e = literal(r, "true", 4);
                break;
        case 'f':
                ret->type = JRD_FALSE;
                e = literal(r, "false", 5);
                break;
        case 'n':
                ret->type = JRD_NULL;
                e = literal(r, "null", 4);
                break;
        default:
                if (r->buf[r->pos] != '-' && !jrd_is_digit((unsigned char)r->buf[r->pos]))
                        return jrd_fail(r, r->pos, "value expected");
                e = jrd_scan_number(r, ret);
                break;
        }
        if (e < 0)
                return e;
        value_done(r);
        return 0;
}

/* In an open container, after skipping whitespace: the close byte, or ',' when one is due. */
static int separator(struct jrd *r, char close, bool *ret_closed)
{
        skip_ws(r);
        if (r->pos >= r->len)
                return jrd_fail(r, r->pos, "premature end of input");
        if (r->buf[r->pos] == close) {
                *ret_closed = true;
                return 0;
        }
        *ret_closed = false;
        if (r->state == S_NEXT) {
                if (r->buf[r->pos] != ',')
                        return jrd_fail(r, r->pos,
                                        close == '}' ? "',' or '}' expected"
                                                     : "',' or ']' expected");
                r->pos++;
                skip_ws(r);
        }
        return 0;
}

static int close_container(struct jrd *r)
{
        r->pos++;
        r->depth--;
        value_done(r);
        return 0;
}

int jrd_member(struct jrd *r, struct jrd_str *ret_key)
{
        struct jrd_key k;
        bool closed;
        int e;

        if (r->err)
                return r->err;
        if ((r->state != S_FIRST && r->state != S_NEXT) || !top_is_obj(r))
                return -EINVAL;
        if ((e = separator(r, '}', &closed)) < 0)
                return e;
        if (closed) {
                uint32_t mark = r->obj_start - 1;

                if ((e = check_duplicates(r, r->pos)) < 0)
                        return e;
                r->nkeys = mark;
                r->obj_start = r->keys[mark].off;
                return close_container(r);
        }
        if (r->pos >= r->len || r->buf[r->pos] != '"')
                return jrd_fail(r, r->pos, "key expected");
        if ((e = scan_string(r, ret_key)) < 0)
                return e;
        k = (struct jrd_key){.off = (uint32_t)(ret_key->p - r->buf),
                             .raw = (uint32_t)ret_key->raw,
                             .len = (uint32_t)ret_key->len,
                             .flags = ret_key->esc ? KEY_ESC : 0};
        if ((e = push_key(r, k)) < 0)
                return e;
        skip_ws(r);
        if (r->pos >= r->len || r->buf[r->pos] != ':')
                return jrd_fail(r, r->pos, "':' expected");
        r->pos++;
        r->state = S_VALUE;
        return 1;
}

int jrd_element(struct jrd *r)
{
        bool closed;
        int e;

        if (r->err)
                return r->err;
        if ((r->state != S_FIRST && r->state != S_NEXT) || top_is_obj(r))
                return -EINVAL;
        if ((e = separator(r, ']', &closed)) < 0)
                return e;
        if (closed)
                return close_container(r);
        r->state = S_VALUE;
        return 1;
}

int jrd_skip(struct jrd *r)
{
        unsigned target;

        if (r->err)
                return r->err;
        if (r->depth == 0)
                return -EINVAL;
        target = r->depth - 1;
        while (r->depth > target) {
                struct jrd_val v;
                struct jrd_str k;
                int x;

                if (r->state == S_VALUE)
                        x = jrd_value(r, &v);
                else if (top_is_obj(r))
                        x = jrd_member(r, &k);
                else
                        x = jrd_element(r);
                if (x < 0)
                        return x;
        }
        return 0;
}

int jrd_skip_value(struct jrd *r)
{
        struct jrd_val v;
        int e;

        if ((e = jrd_value(r, &v)) < 0)
                return e;
        if (v.type == JRD_OBJECT || v.type == JRD_ARRAY)
                return jrd_skip(r);
        return 0;
}

int jrd_end(struct jrd *r)
{
        if (r->err)
                return r->err;
        if (r->state != S_DONE)
                return -EINVAL;
        skip_ws(r);
        if (r->pos != r->len)
                return jrd_fail(r, r->pos, "bytes after the document");
        return 0;
}
