/* SPDX-License-Identifier: MIT */
/* The ima.runtime round context and excludes: matching under cost bounds, the PUT probe. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/jpath.h"
#include "policy/runtime-internal.h"

int rt_ctx_new(const struct rt_policy *p, struct rt_ctx **ret)
{
        _cleanup_(rt_ctx_freep) struct rt_ctx *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->p = p;
        c->budget = RT_EXCL_BUDGET_UNITS;
        c->ns = RT_EXCL_BUDGET_NS;
        if (!p->excl) {
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (!(c->md = pcre2_match_data_create_from_pattern(p->excl, NULL)) ||
            !(c->mctx = pcre2_match_context_create(NULL)))
                return -ENOMEM;
        pcre2_set_depth_limit(c->mctx, RT_DEPTH_LIMIT);
        pcre2_set_heap_limit(c->mctx, RT_HEAP_LIMIT_KIB);
        /* a JIT stack of bounded size, per round (a stack serves one thread at a time) */
        if (p->jit) {
                if (!(c->stack = pcre2_jit_stack_create(RT_JIT_STACK_MIN, RT_JIT_STACK_MAX, NULL)))
                        return -ENOMEM;
                pcre2_jit_stack_assign(c->mctx, NULL, c->stack);
        }
        *ret = TAKE_PTR(c);
        return 0;
}

struct rt_ctx *rt_ctx_free(struct rt_ctx *c)
{
        if (c) {
                pcre2_match_data_free(c->md);
                pcre2_match_context_free(c->mctx);
                pcre2_jit_stack_free(c->stack);
                free(c);
        }
        return NULL;
}

void rt_ctx_set_budget(struct rt_ctx *c, uint64_t units, int64_t ns)
{
        c->budget = units;
        c->ns = ns;
}

uint64_t rt_ctx_budget(const struct rt_ctx *c)
{
        return c->budget;
}

const char *rt_ctx_exclude_note(const struct rt_ctx *c)
{
        return c->noted ? c->note : NULL;
}

/* One match of code under limit: >= 0 matched, PCRE2_ERROR_NOMATCH, or another error (a limit).
 * jit false: the interpreter even for a JIT-compiled code. */
static int match_once(struct rt_ctx *c, const pcre2_code *code, const char *s, size_t n,
                      uint32_t limit, bool jit)
{
        if (c->limit != limit) {
                pcre2_set_match_limit(c->mctx, limit);
                c->limit = limit;
        }
        if (jit)
                return pcre2_jit_match(code, (PCRE2_SPTR)s, n, 0, 0, c->md, c->mctx);
        return pcre2_match(code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_JIT, c->md, c->mctx);
}

/* The coarse clock (a tick of 1-10 ms, about 5 ns a read against 40 for CLOCK_MONOTONIC on the
 * development VM): a match shorter than a tick reads 0 or one tick, in proportion to its length,
 * so the sum over a round's matches is what they took; a long match reads at least its length
 * less one tick. */
static int64_t now_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
        return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static const uint32_t tiers[] = {RT_MATCH_TIER0, RT_MATCH_TIER1, RT_MATCH_LIMIT};

/*
 * code against s by tiers, each charged in full to the budget before it runs: 1 matched, 0 not,
 * RT_EXCL_LIMIT past RT_MATCH_LIMIT (or any other error), RT_EXCL_BUDGET when the next tier is not
 * affordable. The match data must fit code (every code has fewer groups than the alternation).
 */
static int match_tiers(struct rt_ctx *c, const pcre2_code *code, const char *s, size_t n)
{
        for (size_t t = 0; t < ARRAY_SIZE(tiers); t++) {
                int m;

                if (c->budget < tiers[t])
                        return -RT_EXCL_BUDGET;
                c->budget -= tiers[t];
                m = match_once(c, code, s, n, tiers[t], c->p->jit);
                if (m >= 0)
                        return 1;
                if (m == PCRE2_ERROR_NOMATCH)
                        return 0;
                if (m != PCRE2_ERROR_MATCHLIMIT)
                        break; /* depth, heap, JIT stack: a bigger match limit does not help */
        }
        return -RT_EXCL_LIMIT;
}

/* The note: path cut at NOTE_PATH_MAX, control bytes as '?'. */
static void note(struct rt_ctx *c, const char *what, const char *path, size_t len)
{
        char shown[NOTE_PATH_MAX + 1];
        size_t n = len < NOTE_PATH_MAX ? len : NOTE_PATH_MAX;

        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)path[i];

                shown[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
        }
        shown[n] = '\0';
        snprintf(c->note, sizeof(c->note), "%s on entry %" PRIu64 ": %s%s", what, c->idx, shown,
                 len > n ? "..." : "");
        c->noted = true;
}

/* After the alternation stopped at its limit on path: which exclude alone does (each tried at
 * RT_MATCH_LIMIT while the budget lasts), for the note. */
static void name_culprit(struct rt_ctx *c, const char *path, size_t len)
{
        char what[96];

        for (size_t i = 0; i < c->p->nexcl && c->budget >= RT_MATCH_LIMIT; i++) {
                int m;

                c->budget -= RT_MATCH_LIMIT;
                m = match_once(c, c->p->each[i], path, len, RT_MATCH_LIMIT, c->p->jit);
                if (m < 0 && m != PCRE2_ERROR_NOMATCH) {
                        snprintf(what, sizeof(what),
                                 "exclude pattern %zu exceeded its match budget", i);
                        note(c, what, path, len);
                        return;
                }
        }
        note(c, "the excludes together exceeded their match budget", path, len);
}

enum rt_excl rt_exclude_match(struct rt_ctx *c, const char *path, size_t len)
{
        int64_t t0;
        int m;

        if (!c->p->excl)
                return RT_EXCL_NO;
        /* every path brings its allowance: a round of ordinary paths never runs dry */
        c->budget = c->budget > UINT64_MAX - RT_EXCL_UNITS_PER_PATH
                            ? UINT64_MAX
                            : c->budget + RT_EXCL_UNITS_PER_PATH;
        c->ns = c->ns > INT64_MAX - RT_EXCL_NS_PER_PATH ? INT64_MAX : c->ns + RT_EXCL_NS_PER_PATH;
        if (c->ns <= 0) {
                m = -RT_EXCL_BUDGET;
        } else {
                t0 = now_ns();
                m = match_tiers(c, c->p->excl, path, len);
                if (m == -RT_EXCL_LIMIT && !c->noted)
                        name_culprit(c, path, len);
                c->ns -= now_ns() - t0;
        }
        if (m >= 0)
                return m ? RT_EXCL_YES : RT_EXCL_NO;
        if (m == -RT_EXCL_BUDGET && !c->noted)
                note(c, "the excludes' match budget of the round was spent", path, len);
        return (enum rt_excl) - m;
}

bool rt_excluded(struct rt_ctx *c, const char *path, size_t len)
{
        return rt_exclude_match(c, path, len) == RT_EXCL_YES;
}

/* ---- the PUT probe ---- */

static bool probe_lit(unsigned char ch)
{
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               (ch && strchr("/._-~@%,:= ", ch));
}

#define PROBE_LITS 8
#define PROBE_PREFIX 128

/* The pattern's literal prefix (after a '^'), and up to PROBE_LITS distinct literal characters
 * and 'a' (and '/' when it has none). */
static void probe_chars(const char *re, char *prefix, size_t *ret_plen, char *lits,
                        size_t *ret_nlits)
{
        size_t n = strlen(re), i = 0, plen = 0, nl = 0;

        if (n && re[0] == '^')
                i = 1;
        for (; i < n && plen < PROBE_PREFIX && probe_lit((unsigned char)re[i]) && re[i] != '.';
             i++) {
                /* a quantified last character is not part of the prefix */
                if (i + 1 < n && strchr("*+?{", re[i + 1]))
                        break;
                prefix[plen++] = re[i];
        }
        for (i = 0; i < n && nl < PROBE_LITS; i++) {
                unsigned char ch = (unsigned char)re[i];

                if (ch == '\\') {
                        /* an escaped punctuation character is a literal; \d, \w ... are not */
                        if (i + 1 < n && probe_lit((unsigned char)re[i + 1]) &&
                            !((re[i + 1] | 0x20) >= 'a' && (re[i + 1] | 0x20) <= 'z'))
                                ch = (unsigned char)re[i + 1];
                        i++;
                        if (!probe_lit(ch) || ch == '\\')
                                continue;
                } else if (!probe_lit(ch)) {
                        continue;
                }
                if (!memchr(lits, ch, nl))
                        lits[nl++] = (char)ch;
        }
        /* classes (\w, [[:alpha:]]) name no letter: a run of 'a' stands for them */
        if (!memchr(lits, 'a', nl))
                lits[nl++] = 'a';
        if (nl == 1)
                lits[nl++] = '/';
        *ret_plen = plen;
        *ret_nlits = nl;
}

/*
 * Whether code stops at RT_MATCH_LIMIT (interpreter) on a subject of at most max bytes: prefix, a
 * run of each literal, then a tail that fails late: nothing, "\x01", "\n", or "\x01" and a
 * literal (what a required last character needs); long subjects only the tails "\x01" and
 * "\x01" with the pattern's required last character (linear patterns cost the subject's length
 * each time).
 */
static bool probe_hits(struct rt_ctx *c, const pcre2_code *code, const char *prefix, size_t plen,
                       const char *lits, size_t nl, char *buf, size_t max, bool lng)
{
        size_t run = max - plen - 2;
        uint32_t last = 0, have_last = 0;

        if (pcre2_pattern_info(code, PCRE2_INFO_LASTCODETYPE, &have_last) < 0 ||
            (have_last && pcre2_pattern_info(code, PCRE2_INFO_LASTCODEUNIT, &last) < 0))
                have_last = 0;
        for (size_t r = 0; r < nl; r++) {
                memcpy(buf, prefix, plen);
                memset(buf + plen, lits[r], run);
                for (size_t t = 0; t < 3 + nl; t++) {
                        size_t n = plen + run;
                        int m;

                        if (lng && t != 1 && t != 3)
                                continue;
                        if (t == 1 || t >= 3)
                                buf[n++] = '\x01';
                        else if (t == 2)
                                buf[n++] = '\n';
                        if (t >= 3)
                                buf[n++] = lng ? (have_last ? (char)last : lits[0]) : lits[t - 3];
                        m = match_once(c, code, buf, n, RT_MATCH_LIMIT, false);
                        if (m < 0 && m != PCRE2_ERROR_NOMATCH)
                                return true;
                }
        }
        return false;
}

int rt_policy_probe(const struct rt_policy *p, const char *path,
                    void (*warn)(void *arg, const char *msg), void *arg, struct attest_err *err)
{
        _cleanup_(rt_ctx_freep) struct rt_ctx *c = NULL;
        _cleanup_free_ char *buf = NULL;
        char q[JPATH_MAX], msg[JPATH_MAX + 256];
        int64_t t0 = now_ns();
        int x;

        if (!p || !p->nexcl)
                return 0;
        if ((x = rt_ctx_new(p, &c)) < 0)
                return x;
        if (!(buf = malloc(RT_PROBE_LONG)))
                return -ENOMEM;
        for (size_t i = 0; i < p->nexcl; i++) {
                char prefix[PROBE_PREFIX], lits[PROBE_LITS + 2];
                size_t plen, nl;

                jpath_index(q, path, i);
                if (now_ns() - t0 > RT_PROBE_NS) {
                        snprintf(msg, sizeof(msg),
                                 "%s: not probed, nor those after it (the probe stops after %d ms)",
                                 q, RT_PROBE_NS / 1000000);
                        if (warn)
                                warn(arg, msg);
                        return 0;
                }
                probe_chars(p->src[i], prefix, &plen, lits, &nl);
                if (probe_hits(c, p->each[i], prefix, plen, lits, nl, buf, RT_PROBE_SHORT + plen,
                               false))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "exceeds the match limit (%d) on a %d-byte path built "
                                          "from its own characters: catastrophic backtracking "
                                          "(nested quantifiers such as (a+)+ or (a|aa)+)",
                                          RT_MATCH_LIMIT, RT_PROBE_SHORT);
                if (warn &&
                    probe_hits(c, p->each[i], prefix, plen, lits, nl, buf, RT_PROBE_LONG, true)) {
                        snprintf(msg, sizeof(msg),
                                 "%s: exceeds the match limit (%d) on a %d-byte path built from "
                                 "its own characters (polynomial backtracking, e.g. .* twice): "
                                 "such paths fail as exclude_match_limit; [^/]* instead of .* "
                                 "avoids it",
                                 q, RT_MATCH_LIMIT, RT_PROBE_LONG);
                        warn(arg, msg);
                }
        }
        return 0;
}
