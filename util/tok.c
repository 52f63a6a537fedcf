/* SPDX-License-Identifier: MIT */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/tok.h"

/* The first '\n' or NUL in p[0..n), NULL when there is neither: one pass over the line instead of
 * a memchr for each (the ascii IMA reader's hottest loop). */
static const char *find_nl_or_nul(const char *p, size_t n)
{
        size_t i = 0;

#ifdef __SSE2__
        const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

        for (; i + 16 <= n; i += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
                unsigned m = (unsigned)_mm_movemask_epi8(
                        _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, zero)));

                if (m)
                        return p + i + __builtin_ctz(m);
        }
#endif
        for (; i < n; i++)
                if (p[i] == '\n' || p[i] == '\0')
                        return p + i;
        return NULL;
}

int tok_line(struct tok *t, size_t max, unsigned flags, struct tok *ret)
{
        size_t scan, n;
        const char *nl;

        if (t->left == 0)
                return 0;
        /* a line of max bytes needs max + 1 to show its '\n' */
        scan = t->left <= max ? t->left : max + 1;
        nl = find_nl_or_nul(t->p, scan);
        if (nl && *nl == '\0') {
                /* a NUL in the line; unless the line is over max anyway (no '\n' in reach) */
                if (!memchr(nl, '\n', scan - (size_t)(nl - t->p)) && t->left > max)
                        return -E2BIG;
                return -EBADMSG;
        }
        if (!nl) {
                if (t->left > max)
                        return -E2BIG;
                if (flags & TOK_NL_REQUIRED)
                        return -EBADMSG;
                n = t->left;
        } else {
                n = (size_t)(nl - t->p);
        }
        tok_init(ret, t->p, n);
        if ((flags & TOK_STRIP_CR) && n && t->p[n - 1] == '\r')
                tok_init(ret, t->p, n - 1);
        if (nl)
                n++;
        t->p += n;
        t->left -= n;
        t->more = false;
        return 1;
}

int tok_rfield(struct tok *t, char sep, size_t max, struct span *ret)
{
        size_t scan = t->left <= max ? t->left : max + 1;

        if (t->left == 0 && !t->more)
                return -ENOENT;
        /* look back at most max + 1 bytes for the separator */
        for (size_t i = 0; i < scan; i++) {
                size_t at = t->left - 1 - i;

                if (t->p[at] == sep) {
                        *ret = (struct span){t->p + at + 1, i};
                        t->left = at;
                        t->more = true;
                        return 0;
                }
        }
        if (t->left > max)
                return -E2BIG;
        return tok_take_rest_(t, ret);
}

static bool blank(char c)
{
        return c == ' ' || c == '\t';
}

size_t tok_skip_blank(struct tok *t)
{
        size_t n = 0;

        while (n < t->left && blank(t->p[n]))
                n++;
        t->p += n;
        t->left -= n;
        if (n)
                t->more = false;
        return n;
}

int tok_word(struct tok *t, size_t max, struct span *ret)
{
        size_t skip = 0, n = 0;

        while (skip < t->left && blank(t->p[skip]))
                skip++;
        if (skip == t->left)
                return -ENOENT;
        while (n < t->left - skip && !blank(t->p[skip + n])) {
                if (n == max)
                        return -E2BIG;
                n++;
        }
        *ret = (struct span){t->p + skip, n};
        t->p += skip + n;
        t->left -= skip + n;
        t->more = false;
        return 0;
}

bool span_eq(struct span s, const char *lit)
{
        size_t n = strlen(lit);

        return s.n == n && (n == 0 || memcmp(s.p, lit, n) == 0);
}

struct span span_trim(struct span s)
{
        while (s.n && (blank(s.p[0]) || s.p[0] == '\r')) {
                s.p++;
                s.n--;
        }
        while (s.n && (blank(s.p[s.n - 1]) || s.p[s.n - 1] == '\r'))
                s.n--;
        return s;
}

int span_u64(struct span s, uint64_t max, uint64_t *ret)
{
        struct tok t = TOK_INIT(s.p, s.n);
        uint64_t v;
        int e;

        if ((e = tok_u64(&t, max, &v)) < 0)
                return e;
        if (!tok_empty(&t))
                return -EBADMSG;
        *ret = v;
        return 0;
}

int span_cstr(struct span s, char *out, size_t size)
{
        if (size == 0 || s.n > size - 1)
                return -E2BIG;
        if (s.n)
                memcpy(out, s.p, s.n);
        out[s.n] = '\0';
        return 0;
}
