/* SPDX-License-Identifier: MIT */
/* The runtime results carried between rounds: see policy/runtime-state.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/runtime-state.h"
#include "policy/runtime.h"
#include "util/rd.h"
#include "verify/state-dec.h"

_Static_assert(RT_STATE_BODY_MAX <= REPLAY_STATE_OBSERVER_MAX,
               "the runtime body must fit the replay state's observer section");
/* only fail[0 .. nfail-1] is read: the value ends inside fail[] (runtime-state.h) */
_Static_assert(offsetof(struct rt_state, fail) + sizeof(((struct rt_state *)0)->fail) ==
                       sizeof(struct rt_state),
               "rt_state.fail must be the last member");

static const char *const reason_names[RT_REASON__COUNT] = {
        [RT_REASON_NOT_ALLOWED] = "not_allowed",
        [RT_REASON_DIGEST_MISMATCH] = "digest_mismatch",
        [RT_REASON_BAD_SIGNATURE] = "bad_signature",
        [RT_REASON_UNKNOWN_KEY] = "unknown_key",
        [RT_REASON_VIOLATION] = "violation",
        [RT_REASON_KEYRING_NOT_ALLOWED] = "keyring_not_allowed",
        [RT_REASON_BUF_NOT_ALLOWED] = "buf_not_allowed",
        [RT_REASON_UNSUPPORTED] = "unsupported",
        [RT_REASON_EXCLUDE_LIMIT] = "exclude_match_limit",
        [RT_REASON_EXCLUDE_BUDGET] = "exclude_budget_spent",
};

const char *rt_reason_name(enum rt_reason r)
{
        return (unsigned)r < RT_REASON__COUNT ? reason_names[r] : "unknown";
}

void rt_state_init(struct rt_state *s)
{
        memset(s, 0, sizeof(*s));
}

void rt_state_empty(struct rt_state *s)
{
        memset(s, 0, offsetof(struct rt_state, fail));
}

/* the results only: the ref stays */
static void results_empty(struct rt_state *s)
{
        s->passed = s->failed = s->excluded = s->signed_ok = s->violations = 0;
        s->nfail = 0;
}

void rt_state_copy(struct rt_state *dst, const struct rt_state *src)
{
        size_t n = src->nfail < RT_FAILURES_CAP ? src->nfail : RT_FAILURES_CAP;

        memcpy(dst, src, offsetof(struct rt_state, fail) + n * sizeof(struct rt_failure));
}

/* ---- the round ---- */

enum rt_round rt_state_for_round(struct rt_state *st, bool replay_valid, uint64_t ima_offset,
                                 const char *ref)
{
        bool same;

        if (!ref) {
                /* no runtime policy: no runtime results kept (emptied, not zeroed: fail[] is read
                 * up to nfail only) */
                rt_state_empty(st);
                return RT_ROUND_OFF;
        }
        same = strncmp(st->ref, ref, sizeof(st->ref)) == 0;
        if (replay_valid && !same) {
                /* another version judged this boot's earlier entries */
                if (ima_offset != 0)
                        return RT_ROUND_RESTART;
                rt_state_empty(st);
                snprintf(st->ref, sizeof(st->ref), "%s", ref);
                return RT_ROUND_AFRESH;
        }
        if (!replay_valid)
                rt_state_empty(st); /* nothing stored to add to */
        snprintf(st->ref, sizeof(st->ref), "%s", ref);
        return RT_ROUND_JUDGE;
}

int rt_observer_begin(void *arg, uint64_t first)
{
        struct rt_observer *o = arg;

        /* the boot's log from entry 0 again: the results of the entries before are not this
         * boot's */
        if (first == 0)
                results_empty(o->st);
        return 0;
}

int rt_observer_entry(void *arg, const struct ima_entry *e, uint64_t idx)
{
        struct rt_observer *o = arg;
        int x = rt_eval_entry(o->ctx, e, idx, o->st, NULL);

        return x < 0 ? x : 0;
}

/* ---- encoding ---- */

int rt_state_put(struct wb *w, const struct rt_state *s)
{
        size_t ref = strnlen(s->ref, sizeof(s->ref));
        int x;

        if (!ref)
                return 0;
        if (s->nfail > RT_FAILURES_CAP)
                return -EINVAL;
        if ((x = state_put_sized8(w, s->ref, ref)) < 0 || (x = wb_put_u64le(w, s->passed)) < 0 ||
            (x = wb_put_u64le(w, s->failed)) < 0 || (x = wb_put_u64le(w, s->excluded)) < 0 ||
            (x = wb_put_u64le(w, s->signed_ok)) < 0 || (x = wb_put_u64le(w, s->violations)) < 0 ||
            (x = wb_put_u8(w, (uint8_t)s->nfail)) < 0)
                return x;
        for (unsigned i = 0; i < s->nfail; i++) {
                const struct rt_failure *f = &s->fail[i];

                if (f->digest_len > RT_DIGEST_MAX || f->path_len > RT_FAIL_PATH_MAX)
                        return -EINVAL;
                if ((x = wb_put_u64le(w, f->entry)) < 0 || (x = wb_put_u8(w, f->reason)) < 0 ||
                    (x = wb_put_u8(w, f->algo)) < 0 ||
                    (x = state_put_sized8(w, f->digest, f->digest_len)) < 0 ||
                    (x = wb_put_u8(w, f->path_cut ? 1 : 0)) < 0 ||
                    (x = state_put_sized8(w, f->path, f->path_len)) < 0)
                        return x;
        }
        return 0;
}

/* ---- decoding ---- */

static int failure_get(struct state_dec *d, uint64_t entries, const struct rt_failure *prev,
                       struct rt_failure *f)
{
        const uint8_t *p;
        uint8_t n = 0, cut = 0;
        size_t off = state_dec_at(d);
        int x;

        memset(f, 0, sizeof(*f));
        if ((x = state_dec_u64(d, "runtime.failure.entry", &f->entry)) < 0)
                return x;
        if (f->entry >= entries)
                return state_dec_bad(d, off, "runtime.failure.entry",
                                     "entry %" PRIu64 " not below the entry count %" PRIu64,
                                     f->entry, entries);
        if (prev && f->entry <= prev->entry)
                return state_dec_bad(d, off, "runtime.failure.entry",
                                     "not after the previous failure");
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "runtime.failure.reason", &f->reason)) < 0)
                return x;
        if (f->reason >= RT_REASON__COUNT)
                return state_dec_bad(d, off, "runtime.failure.reason", "%u is no reason",
                                     f->reason);
        if ((x = state_dec_u8(d, "runtime.failure.algo", &f->algo)) < 0 ||
            (x = state_dec_sized8(d, "runtime.failure.digest", 0, RT_DIGEST_MAX, &p, &n)) < 0)
                return x;
        memcpy(f->digest, p, n);
        f->digest_len = n;
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "runtime.failure.flags", &cut)) < 0)
                return x;
        if (cut & ~1u)
                return state_dec_bad(d, off, "runtime.failure.flags", "unknown bits 0x%x",
                                     cut & ~1u);
        f->path_cut = cut;
        off = state_dec_at(d);
        if ((x = state_dec_sized8(d, "runtime.failure.path", 0, RT_FAIL_PATH_MAX, &p, &n)) < 0)
                return x;
        if (memchr(p, '\0', n))
                return state_dec_bad(d, off, "runtime.failure.path", "NUL in the path");
        memcpy(f->path, p, n);
        f->path[n] = '\0';
        f->path_len = n;
        return 0;
}

/* The body, every field checked, into *s (a scratch the caller drops on failure). */
static int body_get(struct state_dec *d, uint64_t entries, struct rt_state *s)
{
        const uint8_t *p;
        uint8_t n = 0, nfail = 0;
        size_t off = state_dec_at(d);
        int x;

        if ((x = state_dec_sized8(d, "runtime.ref", 1, RT_REF_MAX, &p, &n)) < 0)
                return x;
        for (uint8_t i = 0; i < n; i++)
                if (p[i] < 0x21 || p[i] > 0x7e)
                        return state_dec_bad(d, off, "runtime.ref", "byte %u not printable", i);
        memcpy(s->ref, p, n);
        s->ref[n] = '\0';
        if ((x = state_dec_u64(d, "runtime.passed", &s->passed)) < 0 ||
            (x = state_dec_u64(d, "runtime.failed", &s->failed)) < 0 ||
            (x = state_dec_u64(d, "runtime.excluded", &s->excluded)) < 0 ||
            (x = state_dec_u64(d, "runtime.signed", &s->signed_ok)) < 0 ||
            (x = state_dec_u64(d, "runtime.violations", &s->violations)) < 0)
                return x;
        /* every judged entry is one of the counted outcomes (violations allowed included) */
        if (s->passed > entries || s->failed > entries || s->excluded > entries ||
            s->violations > entries || s->signed_ok > s->passed ||
            s->passed + s->failed + s->excluded > entries)
                return state_dec_bad(d, off, "runtime.counts",
                                     "counts exceed the %" PRIu64 " entries", entries);
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "runtime.nfail", &nfail)) < 0)
                return x;
        if (nfail > RT_FAILURES_CAP || nfail > s->failed)
                return state_dec_bad(d, off, "runtime.nfail",
                                     "%u failures named, %" PRIu64 " counted", nfail, s->failed);
        s->nfail = nfail;
        for (unsigned i = 0; i < nfail; i++)
                if ((x = failure_get(d, entries, i ? &s->fail[i - 1] : NULL, &s->fail[i])) < 0)
                        return x;
        return 0;
}

int rt_state_get(const struct replay_observer_section *sec, struct rt_state *ret,
                 struct attest_err *err)
{
        struct rt_state s;
        struct state_dec d;
        int x;

        if (!sec)
                return attest_fail(err, -EINVAL, AE_REPLAY_STATE_TRUNCATED, "no section");
        if (!sec->p) {
                /* no section: no runtime policy judged this boot (an empty one is truncated) */
                if (sec->len)
                        return attest_fail(err, -EINVAL, AE_REPLAY_STATE_TRUNCATED, "no buffer");
                if (ret)
                        rt_state_empty(ret);
                return 0;
        }
        d = (struct state_dec){.r = RD_INIT(sec->p, sec->len), .base = sec->off, .err = err};
        rt_state_empty(&s);
        if ((x = body_get(&d, sec->entries, &s)) < 0)
                return x;
        /* the tag's offset, as the replay state's sections name it */
        if (rd_left(&d.r))
                return state_dec_bad(&d, sec->off - 5, "section.length",
                                     "%zu bytes, the section used %zu", sec->len, rd_offset(&d.r));
        if (ret)
                rt_state_copy(ret, &s);
        return 0;
}

/* ---- the stored state: verify's with the runtime body as its observer section ---- */

int rt_state_stored_encode(const struct replay_state *s, const struct rt_state *rt, uint8_t **ret,
                           size_t *ret_len)
{
        struct replay_observer_section sec;
        struct rt_state check; /* the check's scratch: fail[] written up to nfail */
        struct wb w;
        int x;

        if (!s || !rt || !ret || !ret_len)
                return -EINVAL;
        if ((x = wb_new(&w, RT_STATE_BODY_MAX)) < 0)
                return x;
        /* what cannot be read back must not be stored (as replay_state_encode) */
        if ((x = rt_state_put(&w, rt)) < 0) {
                wb_free(&w);
                return x == -ENOMEM ? x : -EINVAL;
        }
        sec = (struct replay_observer_section){
                .p = wb_data(&w), .len = wb_len(&w), .off = 0, .entries = s->entries};
        if (wb_len(&w) && (!s->valid || rt_state_get(&sec, &check, NULL) < 0)) {
                wb_free(&w);
                return -EINVAL;
        }
        x = replay_state_encode(s, wb_data(&w), wb_len(&w), ret, ret_len);
        wb_free(&w);
        return x;
}

int rt_state_stored_decode(const uint8_t *buf, size_t len, struct replay_state *ret,
                           struct rt_state *ret_rt, struct attest_err *err)
{
        struct replay_observer_section sec;
        struct replay_state s;
        struct rt_state rt;
        int x;

        if ((x = replay_state_decode(buf, len, &s, &sec, err)) < 0 ||
            (x = rt_state_get(&sec, &rt, err)) < 0)
                return x;
        if (ret)
                replay_state_copy(ret, &s);
        if (ret_rt)
                rt_state_copy(ret_rt, &rt);
        return 0;
}

int rt_state_stored_boot_offset(const uint8_t *buf, size_t len, uint64_t *ret,
                                struct attest_err *err)
{
        struct replay_observer_section sec;
        struct rt_state rt;
        uint64_t off = 0;
        int x;

        if ((x = replay_state_boot_offset(buf, len, &off, &sec, err)) < 0 ||
            (x = rt_state_get(&sec, &rt, err)) < 0)
                return x;
        if (ret)
                *ret = off;
        return 0;
}
