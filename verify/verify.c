/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "util/hex.h"
#include "evidence/jpath.h"
#include "verify/verify.h"

/* ---- replay state ---- */

void replay_state_init(struct replay_state *s)
{
        memset(s, 0, sizeof(*s));
        cdata_claims_init(&s->claims);
}

void replay_state_done(struct replay_state *s)
{
        cdata_claims_done(&s->claims);
        replay_state_init(s);
}

/* An owned state from a raw key=value text (re-validated). */
static int state_from_raw(uint64_t entry, const char *raw, size_t len, struct cdata_state *ret,
                          struct attest_err *err)
{
        struct cdata_state s = {.entry = entry};
        int x;

        if (!(s.raw = malloc(len + 1)))
                return -ENOMEM;
        memcpy(s.raw, raw, len);
        s.raw[len] = '\0';
        s.raw_len = (uint32_t)len;
        if ((x = cdata_kv_parse((const uint8_t *)s.raw, len, &s.kvs, err)) < 0) {
                free(s.raw);
                return x;
        }
        *ret = s;
        return 0;
}

static int claims_copy(const struct cdata_claims *src, struct cdata_claims *dst)
{
        struct cdata_claims c = *src;
        int x;

        c.selinux = NULL;
        c.n_selinux = 0;
        c.trusted_keys = (struct cdata_state){0};
        c.cfi = (struct cdata_state){0};
        if (src->n_selinux) {
                c.selinux = calloc((src->n_selinux + 15) / 16 * 16, sizeof(*c.selinux));
                if (!c.selinux)
                        return -ENOMEM;
        }
        for (uint32_t i = 0; i < src->n_selinux; i++) {
                const struct cdata_state *s = &src->selinux[i];

                if ((x = state_from_raw(s->entry, s->raw, s->raw_len, &c.selinux[i], NULL)) < 0) {
                        cdata_claims_done(&c);
                        return x;
                }
                c.n_selinux++;
        }
        if ((src->trusted_keys.raw &&
             (x = state_from_raw(src->trusted_keys.entry, src->trusted_keys.raw,
                                 src->trusted_keys.raw_len, &c.trusted_keys, NULL)) < 0) ||
            (src->cfi.raw && (x = state_from_raw(src->cfi.entry, src->cfi.raw, src->cfi.raw_len,
                                                 &c.cfi, NULL)) < 0)) {
                cdata_claims_done(&c);
                return x;
        }
        *dst = c;
        return 0;
}

int replay_state_copy(const struct replay_state *src, struct replay_state *ret)
{
        struct replay_state s = *src;
        int x;

        if ((x = claims_copy(&src->claims, &s.claims)) < 0)
                return x;
        *ret = s;
        return 0;
}

static json_t *hexj(const uint8_t *p, size_t n)
{
        char s[2 * BANK_DIGEST_MAX + 1];

        if (n > BANK_DIGEST_MAX)
                return NULL;
        hex_encode(p, n, s);
        return json_string(s);
}

static bool put(json_t *o, const char *k, json_t *v)
{
        return v && json_object_set_new(o, k, v) == 0;
}

static json_t *cstate_json(const struct cdata_state *s)
{
        return json_pack("{s:I, s:s%}", "entry", (json_int_t)s->entry, "raw", s->raw,
                         (size_t)s->raw_len);
}

int replay_state_to_json(const struct replay_state *s, char **ret)
{
        json_auto_t *j = json_object(), *pcrs = json_object(), *claims = json_object(),
                    *sel = json_array(), *banks = json_array();
        const struct cdata_claims *c = &s->claims;
        char *out;

        if (!j || !pcrs || !claims || !sel || !banks)
                return -ENOMEM;
        if (!put(j, "version", json_integer(REPLAY_STATE_VERSION)) ||
            !put(j, "valid", json_boolean(s->valid)))
                return -ENOMEM;
        if (s->valid) {
                for (int b = 0; b < BANK_COUNT; b++) {
                        json_t *bank;

                        if (!(s->banks & BANK_MASK(b)))
                                continue;
                        if (json_array_append_new(banks, json_string(bank_name(b))) < 0)
                                return -ENOMEM;
                        if (!s->used)
                                continue;
                        if (!put(pcrs, bank_name(b), bank = json_object()))
                                return -ENOMEM;
                        for (unsigned i = 0; i < PCR_COUNT; i++) {
                                char idx[4];

                                if (!(s->used & (1u << i)))
                                        continue;
                                snprintf(idx, sizeof(idx), "%u", i);
                                if (!put(bank, idx, hexj(s->pcr[b][i], bank_size(b))))
                                        return -ENOMEM;
                        }
                }
                for (uint32_t i = 0; i < c->n_selinux; i++)
                        if (json_array_append_new(sel, cstate_json(&c->selinux[i])) < 0)
                                return -ENOMEM;
                if (json_object_set(claims, "selinux", sel) < 0 ||
                    !put(claims, "selinux_dropped", json_integer((json_int_t)c->selinux_dropped)))
                        return -ENOMEM;
                if (c->policy_hash_seen &&
                    !put(claims, "policy_hash",
                         json_pack("{s:I, s:o, s:I}", "entry", (json_int_t)c->policy_hash_entry,
                                   "hex", hexj(c->policy_hash, c->policy_hash_len), "count",
                                   (json_int_t)c->policy_hash_count)))
                        return -ENOMEM;
                if (c->kernel_version_seen &&
                    !put(claims, "kernel_version",
                         json_pack("{s:I, s:s}", "entry", (json_int_t)c->kernel_version_entry,
                                   "value", c->kernel_version)))
                        return -ENOMEM;
                if (c->trusted_keys.raw &&
                    !put(claims, "trusted_keys", cstate_json(&c->trusted_keys)))
                        return -ENOMEM;
                if (c->cfi.raw && !put(claims, "cfi", cstate_json(&c->cfi)))
                        return -ENOMEM;
                if (!put(j, "reset_count", json_integer(s->reset_count)) ||
                    !put(j, "restart_count", json_integer(s->restart_count)) ||
                    !put(j, "clock", json_integer((json_int_t)s->clock)) ||
                    !put(j, "entries", json_integer((json_int_t)s->entries)) ||
                    json_object_set(j, "banks", banks) < 0 ||
                    json_object_set(j, "pcrs", pcrs) < 0 ||
                    !put(j, "boot_aggregate",
                         json_pack("{s:b, s:b}", "seen", s->boot_aggregate_seen, "ok",
                                   s->boot_aggregate_ok)) ||
                    json_object_set(j, "claims", claims) < 0)
                        return -ENOMEM;
        }
        out = json_dumps(j, JSON_COMPACT);
        if (!out)
                return -ENOMEM;
        *ret = out;
        return 0;
}

#define S_JSON AE_REPLAY_STATE_JSON
#define S_TYPE AE_REPLAY_STATE_TYPE
#define S_UNKNOWN AE_REPLAY_STATE_UNKNOWN_FIELD
#define S_VALUE AE_REPLAY_STATE_BAD_VALUE

static int sfield(const json_t *o, const char *path, const char *key, json_t **ret, char *p,
                  struct attest_err *err)
{
        jpath_join(p, path, key);
        *ret = json_object_get(o, key);
        if (!*ret)
                return jpath_fail(err, -EBADMSG, AE_REPLAY_STATE_MISSING_FIELD, p, "missing");
        return 0;
}

static int suint(const json_t *o, const char *path, const char *key, uint64_t max, uint64_t *ret,
                 struct attest_err *err)
{
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = sfield(o, path, key, &v, p, err)) < 0)
                return x;
        if (!json_is_integer(v))
                return jpath_fail(err, -EBADMSG, S_TYPE, p, "not an integer");
        if (json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
                return jpath_fail(err, -EBADMSG, S_VALUE, p, "out of range");
        *ret = (uint64_t)json_integer_value(v);
        return 0;
}

static int sbool(const json_t *o, const char *path, const char *key, bool *ret,
                 struct attest_err *err)
{
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = sfield(o, path, key, &v, p, err)) < 0)
                return x;
        if (!json_is_boolean(v))
                return jpath_fail(err, -EBADMSG, S_TYPE, p, "not a boolean");
        *ret = json_is_true(v);
        return 0;
}

static int shex(const json_t *v, const char *p, uint8_t *out, size_t max, size_t *ret_len,
                struct attest_err *err)
{
        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, S_TYPE, p, "not a string");
        if (hex_decode(json_string_value(v), json_string_length(v), out, max, ret_len) < 0 ||
            *ret_len == 0)
                return jpath_fail(err, -EBADMSG, S_VALUE, p, "not hex of 1-%zu bytes", max);
        return 0;
}

static int scstate(const json_t *o, const char *path, struct cdata_state *ret,
                   struct attest_err *err)
{
        static const char *const keys[] = {"entry", "raw", NULL};
        char p[JPATH_MAX];
        uint64_t entry;
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, S_TYPE, S_UNKNOWN, err)) < 0 ||
            (x = suint(o, path, "entry", INT64_MAX, &entry, err)) < 0 ||
            (x = sfield(o, path, "raw", &v, p, err)) < 0)
                return x;
        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, S_TYPE, p, "not a string");
        if ((x = state_from_raw(entry, json_string_value(v), json_string_length(v), ret, err)) <
            0) {
                attest_err_prefix(err, "%s", p);
                return x;
        }
        return 0;
}

static int sclaims(const json_t *o, const char *path, struct cdata_claims *c,
                   struct attest_err *err)
{
        static const char *const keys[] = {"selinux",
                                           "selinux_dropped",
                                           "policy_hash",
                                           "kernel_version",
                                           "trusted_keys",
                                           "cfi",
                                           NULL};
        static const char *const phkeys[] = {"entry", "hex", "count", NULL};
        static const char *const kvkeys[] = {"entry", "value", NULL};
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *v, *w;
        uint64_t u;
        size_t n;
        int x;

        if ((x = jpath_object(o, path, keys, S_TYPE, S_UNKNOWN, err)) < 0 ||
            (x = sfield(o, path, "selinux", &v, p, err)) < 0)
                return x;
        if (!json_is_array(v))
                return jpath_fail(err, -EBADMSG, S_TYPE, p, "not an array");
        if (json_array_size(v) > CDATA_HISTORY_MAX)
                return jpath_fail(err, -E2BIG, S_VALUE, p, "more than %d states",
                                  CDATA_HISTORY_MAX);
        if (json_array_size(v)) {
                c->selinux = calloc((json_array_size(v) + 15) / 16 * 16, sizeof(*c->selinux));
                if (!c->selinux)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
                jpath_index(q, p, i);
                if ((x = scstate(json_array_get(v, i), q, &c->selinux[i], err)) < 0)
                        return x;
                c->n_selinux++;
        }
        if ((x = suint(o, path, "selinux_dropped", INT64_MAX, &c->selinux_dropped, err)) < 0)
                return x;
        if ((v = json_object_get(o, "policy_hash"))) {
                jpath_join(p, path, "policy_hash");
                if ((x = jpath_object(v, p, phkeys, S_TYPE, S_UNKNOWN, err)) < 0 ||
                    (x = suint(v, p, "entry", INT64_MAX, &c->policy_hash_entry, err)) < 0 ||
                    (x = suint(v, p, "count", UINT32_MAX, &u, err)) < 0 ||
                    (x = sfield(v, p, "hex", &w, q, err)) < 0 ||
                    (x = shex(w, q, c->policy_hash, sizeof(c->policy_hash), &n, err)) < 0)
                        return x;
                c->policy_hash_len = (uint32_t)n;
                c->policy_hash_count = (uint32_t)u;
                c->policy_hash_seen = true;
        }
        if ((v = json_object_get(o, "kernel_version"))) {
                jpath_join(p, path, "kernel_version");
                if ((x = jpath_object(v, p, kvkeys, S_TYPE, S_UNKNOWN, err)) < 0 ||
                    (x = suint(v, p, "entry", INT64_MAX, &c->kernel_version_entry, err)) < 0 ||
                    (x = sfield(v, p, "value", &w, q, err)) < 0)
                        return x;
                if (!json_is_string(w) || json_string_length(w) == 0 ||
                    json_string_length(w) >= sizeof(c->kernel_version))
                        return jpath_fail(err, -EBADMSG, S_VALUE, q, "not a kernel version");
                for (size_t i = 0; i < json_string_length(w); i++)
                        if (json_string_value(w)[i] < 0x21 || json_string_value(w)[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, S_VALUE, q, "not printable");
                memcpy(c->kernel_version, json_string_value(w), json_string_length(w) + 1);
                c->kernel_version_seen = true;
        }
        if ((v = json_object_get(o, "trusted_keys"))) {
                jpath_join(p, path, "trusted_keys");
                if ((x = scstate(v, p, &c->trusted_keys, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "cfi"))) {
                jpath_join(p, path, "cfi");
                if ((x = scstate(v, p, &c->cfi, err)) < 0)
                        return x;
        }
        return 0;
}

static int sbanks(const json_t *a, const char *path, unsigned *ret, struct attest_err *err)
{
        char q[JPATH_MAX];
        unsigned mask = 0;
        size_t i;
        json_t *v;

        if (!json_is_array(a))
                return jpath_fail(err, -EBADMSG, S_TYPE, path, "not an array");
        json_array_foreach(a, i, v)
        {
                int b;

                jpath_index(q, path, i);
                if (!json_is_string(v) ||
                    (b = bank_from_name(json_string_value(v), json_string_length(v))) < 0)
                        return jpath_fail(err, -EBADMSG, S_VALUE, q, "not a bank name");
                if (mask & BANK_MASK(b))
                        return jpath_fail(err, -EBADMSG, S_VALUE, q, "bank listed twice");
                mask |= BANK_MASK(b);
        }
        if (!mask)
                return jpath_fail(err, -EBADMSG, S_VALUE, path, "no bank");
        *ret = mask;
        return 0;
}

static int spcrs(const json_t *o, const char *path, struct replay_state *s, struct attest_err *err)
{
        const char *bname, *idx;
        json_t *bv, *v;
        uint32_t used = 0, seen[BANK_COUNT] = {0};

        if (!json_is_object(o))
                return jpath_fail(err, -EBADMSG, S_TYPE, path, "not an object");
        json_object_foreach((json_t *)o, bname, bv)
        {
                char bp[JPATH_MAX];
                int b = bank_from_name(bname, strlen(bname));

                jpath_join(bp, path, bname);
                if (b < 0)
                        return jpath_fail(err, -EBADMSG, S_UNKNOWN, bp, "unknown bank");
                if (!json_is_object(bv))
                        return jpath_fail(err, -EBADMSG, S_TYPE, bp, "not an object");
                json_object_foreach(bv, idx, v)
                {
                        char ip[JPATH_MAX];
                        size_t got;
                        unsigned i = 0;
                        int x;

                        jpath_join(ip, bp, idx);
                        if (jpath_pcr_index(idx, &i) < 0)
                                return jpath_fail(err, -EBADMSG, S_UNKNOWN, ip,
                                                  "not a PCR index 0-23");
                        if ((x = shex(v, ip, s->pcr[b][i], bank_size(b), &got, err)) < 0)
                                return x;
                        if (got != bank_size(b))
                                return jpath_fail(err, -EBADMSG, S_VALUE, ip,
                                                  "%zu bytes, %zu wanted", got, bank_size(b));
                        seen[b] |= 1u << i;
                        used |= 1u << i;
                }
        }
        /* every replayed bank carries the same PCRs, the others none */
        for (int b = 0; b < BANK_COUNT; b++)
                if (seen[b] != ((s->banks & BANK_MASK(b)) ? used : 0))
                        return jpath_fail(err, -EBADMSG, S_VALUE, path,
                                          "bank %s does not list the PCRs the log extended",
                                          bank_name(b));
        s->used = used;
        return 0;
}

int replay_state_from_json(const char *buf, size_t len, struct replay_state *ret,
                           struct attest_err *err)
{
        static const char *const keys[] = {
                "version", "valid", "reset_count",    "restart_count", "clock", "entries",
                "banks",   "pcrs",  "boot_aggregate", "claims",        NULL};
        static const char *const bakeys[] = {"seen", "ok", NULL};
        json_auto_t *j = NULL;
        struct replay_state s;
        char p[JPATH_MAX];
        uint64_t u;
        json_t *v = NULL;
        int x;

        replay_state_init(&s);
        if (len > REPLAY_STATE_JSON_MAX)
                return attest_fail(err, -E2BIG, AE_REPLAY_STATE_TOO_BIG,
                                   "$: document of %zu bytes > %u", len, REPLAY_STATE_JSON_MAX);
        if ((x = jpath_load(buf, len, REPLAY_STATE_JSON_MAX, S_JSON, &j, err)) < 0 ||
            (x = jpath_object(j, "$", keys, S_TYPE, S_UNKNOWN, err)) < 0 ||
            (x = suint(j, "$", "version", UINT32_MAX, &u, err)) < 0)
                return x;
        if (u != REPLAY_STATE_VERSION)
                return attest_fail(err, -EBADMSG, AE_REPLAY_STATE_VERSION,
                                   "$.version: %" PRIu64 " is not supported", u);
        if ((x = sbool(j, "$", "valid", &s.valid, err)) < 0)
                return x;
        if (!s.valid) {
                if (json_object_size(j) != 2)
                        return attest_fail(err, -EBADMSG, S_VALUE,
                                           "$: an invalid state has no other fields");
                *ret = s;
                return 0;
        }
        if ((x = suint(j, "$", "reset_count", UINT32_MAX, &u, err)) < 0)
                return x;
        s.reset_count = (uint32_t)u;
        if ((x = suint(j, "$", "restart_count", UINT32_MAX, &u, err)) < 0)
                return x;
        s.restart_count = (uint32_t)u;
        if ((x = suint(j, "$", "clock", INT64_MAX, &s.clock, err)) < 0 ||
            (x = suint(j, "$", "entries", INT64_MAX, &s.entries, err)) < 0 ||
            (x = sfield(j, "$", "banks", &v, p, err)) < 0 ||
            (x = sbanks(v, p, &s.banks, err)) < 0 || (x = sfield(j, "$", "pcrs", &v, p, err)) < 0 ||
            (x = spcrs(v, p, &s, err)) < 0 ||
            (x = sfield(j, "$", "boot_aggregate", &v, p, err)) < 0 ||
            (x = jpath_object(v, p, bakeys, S_TYPE, S_UNKNOWN, err)) < 0 ||
            (x = sbool(v, p, "seen", &s.boot_aggregate_seen, err)) < 0 ||
            (x = sbool(v, p, "ok", &s.boot_aggregate_ok, err)) < 0)
                return x;
        if (s.boot_aggregate_ok && !s.boot_aggregate_seen)
                return attest_fail(err, -EBADMSG, S_VALUE, "$.boot_aggregate: ok without seen");
        if ((x = sfield(j, "$", "claims", &v, p, err)) < 0 ||
            (x = sclaims(v, p, &s.claims, err)) < 0) {
                replay_state_done(&s);
                return x;
        }
        *ret = s;
        return 0;
}

/* ---- verification ---- */

void verify_result_done(struct verify_result *r)
{
        replay_state_done(&r->next);
}

/* Do the replayed PCR 10 values equal the quoted ones in every bank that quotes PCR 10? */
static bool pcr10_matches(const struct ima_replay *rp, const struct quote_info *q,
                          const struct pcr_set *pcrs)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if ((q->sel.mask[b] & (1u << IMA_PCR)) &&
                    memcmp(rp->pcr[b][IMA_PCR], pcrs->v[b][IMA_PCR], bank_size(b)) != 0)
                        return false;
        return true;
}

static int reader_open(struct ima_reader *rd, const struct evidence *ev, uint64_t max_entries)
{
        struct ima_log_opts o = {.max_entries = max_entries};
        static const uint8_t empty[1];
        const uint8_t *buf = ev->ima ? ev->ima : empty;

        if (ev->ima_format == IMA_FORMAT_ASCII)
                return ima_reader_init_ascii(rd, (const char *)buf, ev->ima_len, &o);
        ima_reader_init_binary(rd, buf, ev->ima_len, &o);
        return 0;
}

DEFINE_CLEANUP_FUNC(struct ima_reader *, ima_reader_done)

/*
 * Pass 1: the shortest prefix of the new entries whose replay from the start state gives the
 * quoted PCR 10. On success *ret_n is its length and rp holds the replayed values.
 */
static int find_prefix(const struct evidence *ev, const struct replay_state *start,
                       const struct quote_info *q, uint64_t max_entries, struct hasher *h,
                       struct ima_replay *rp, uint64_t *ret_n, uint64_t *ret_total,
                       struct attest_err *err)
{
        struct ima_reader rd;
        _cleanup_(ima_reader_donep) struct ima_reader *rdp = NULL;
        struct ima_entry e;
        uint64_t n = 0;
        int x;

        ima_replay_init(rp, h, start->banks, true);
        memcpy(rp->pcr, start->pcr, sizeof(rp->pcr));
        rp->used = start->used;
        if ((x = reader_open(&rd, ev, max_entries)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "cannot open the IMA log reader");
        rdp = &rd;
        for (;;) {
                if (pcr10_matches(rp, q, &ev->pcrs)) {
                        uint64_t total = n;

                        /* count what follows, for the caller's information only */
                        while (ima_reader_next(&rd, &e, NULL) > 0)
                                total++;
                        *ret_n = n;
                        *ret_total = total;
                        return 0;
                }
                x = ima_reader_next(&rd, &e, err);
                if (x < 0) {
                        attest_err_prefix(err, "$.ima.entries: entry %" PRIu64, start->entries + n);
                        return x;
                }
                if (x == 0)
                        break;
                if ((x = ima_replay_extend(rp, &e, start->entries + n, err)) < 0) {
                        attest_err_prefix(err, "$.ima.entries");
                        return x;
                }
                n++;
        }
        /* no prefix matched: say what was compared */
        for (int b = 0; b < BANK_COUNT; b++) {
                char want[2 * BANK_DIGEST_MAX + 1], got[2 * BANK_DIGEST_MAX + 1];

                if (!(q->sel.mask[b] & (1u << IMA_PCR)))
                        continue;
                hex_encode(ev->pcrs.v[b][IMA_PCR], bank_size(b), want);
                hex_encode(rp->pcr[b][IMA_PCR], bank_size(b), got);
                return attest_fail(err, -ESTALE, AE_IMA_REPLAY_MISMATCH,
                                   "%" PRIu64 " stored entries + %" PRIu64
                                   " new: no prefix replays to the quoted PCR 10; quoted %s:%.16s"
                                   "..., full replay %.16s...",
                                   start->entries, n, bank_name(b), want, got);
        }
        return attest_fail(err, -ESTALE, AE_IMA_REPLAY_MISMATCH, "no quoted PCR 10");
}

/* Pass 2: boot_aggregate and the claims of the n accepted entries. */
static int feed_prefix(const struct evidence *ev, const struct quote_info *q, uint64_t n,
                       struct hasher *h, struct replay_state *next, struct attest_err *ba_err,
                       struct attest_err *err)
{
        struct ima_reader rd;
        _cleanup_(ima_reader_donep) struct ima_reader *rdp = NULL;
        struct ima_entry e;
        struct pcr_set quoted = {0};
        int x;

        for (int b = 0; b < BANK_COUNT; b++) {
                quoted.have[b] = q->sel.mask[b] & ev->pcrs.have[b];
                memcpy(quoted.v[b], ev->pcrs.v[b], sizeof(quoted.v[b]));
        }
        if ((x = reader_open(&rd, ev, n)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "cannot open the IMA log reader");
        rdp = &rd;
        for (uint64_t i = 0; i < n; i++) {
                uint64_t idx = next->entries + i;

                if ((x = ima_reader_next(&rd, &e, err)) <= 0)
                        return x < 0 ? x
                                     : attest_fail(err, -EIO, AE_VERIFY_INTERNAL,
                                                   "log shorter on the second pass");
                if (idx == 0 && ima_entry_is_boot_aggregate(&e)) {
                        next->boot_aggregate_seen = true;
                        next->boot_aggregate_ok =
                                ima_boot_aggregate_check(h, &e, &quoted, ba_err) == 0;
                }
                if (e.pcr != IMA_PCR)
                        continue; /* only PCR 10 is checked against the quote: no claims */
                if ((x = cdata_claims_feed(&next->claims, &e, idx, err)) < 0) {
                        attest_err_prefix(err, "$.ima.entries");
                        return x;
                }
        }
        next->entries += n;
        return 0;
}

int verify_evidence(const struct verify_input *in, const struct evidence *ev,
                    struct verify_result *ret, struct attest_err *err)
{
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct verify_result r = {0};
        const struct replay_state *prev = in && in->prev && in->prev->valid ? in->prev : NULL;
        struct ima_replay rp;
        uint64_t max_entries, total = 0;
        unsigned quoted10 = 0;
        int x;

        if (!in || !ev || !ret || !in->ak || !in->nonce || !in->nonce_len)
                return attest_fail(err, -EINVAL, AE_VERIFY_INVALID_ARGUMENT,
                                   "missing AK, nonce or evidence");
        max_entries = in->max_entries ? in->max_entries : IMA_ENTRIES_DEFAULT;
        if (ev->nonce_len != in->nonce_len ||
            CRYPTO_memcmp(ev->nonce, in->nonce, in->nonce_len) != 0)
                return attest_fail(err, -ESTALE, AE_EVIDENCE_NONCE_MISMATCH,
                                   "$.nonce: not the nonce of this challenge");
        if ((x = quote_verify(in->ak, ev->attest, ev->attest_len, ev->sig, ev->sig_len, in->nonce,
                              in->nonce_len, in->sel, &ev->pcrs, &r.quote, err)) < 0)
                return x;
        for (int b = 0; b < BANK_COUNT; b++)
                if (r.quote.sel.mask[b] & (1u << IMA_PCR))
                        quoted10 |= BANK_MASK(b);
        if (!quoted10)
                return attest_fail(err, -EBADMSG, AE_VERIFY_PCR10_NOT_QUOTED,
                                   "the quote covers PCR 10 in no bank: the IMA log is unanchored");

        r.rebooted = prev && (prev->reset_count != r.quote.reset_count ||
                              prev->restart_count != r.quote.restart_count);
        if (prev && !r.rebooted && r.quote.clock < prev->clock)
                return attest_fail(err, -ESTALE, AE_QUOTE_CLOCK_REWIND,
                                   "TPM clock %" PRIu64 " ms is before the last quote's %" PRIu64
                                   " ms in the same boot",
                                   r.quote.clock, prev->clock);
        if (r.rebooted && ev->ima_offset != 0)
                return attest_fail(err, -ESTALE, AE_IMA_OFFSET_REBOOT,
                                   "$.ima.offset: %" PRIu64
                                   ", but the quote shows a reboot (resetCount %u -> %u, "
                                   "restartCount %u -> %u): the log must be sent from entry 0",
                                   ev->ima_offset, prev->reset_count, r.quote.reset_count,
                                   prev->restart_count, r.quote.restart_count);
        if (r.rebooted || !prev) {
                replay_state_init(&r.next);
                /* replay the banks that anchor the log; a later quote must stay within them */
                r.next.banks = quoted10;
        } else {
                if (quoted10 & ~prev->banks) {
                        char want[PCR_SEL_TEXT_MAX];
                        struct pcr_sel have = {{0}};

                        for (int b = 0; b < BANK_COUNT; b++)
                                if (prev->banks & BANK_MASK(b))
                                        have.mask[b] = 1u << IMA_PCR;
                        if (pcr_sel_format(&have, want, sizeof(want)) < 0)
                                want[0] = '\0';
                        return attest_fail(err, -ESTALE, AE_IMA_BANK_UNTRACKED,
                                           "the quote covers PCR 10 in a bank the stored replay "
                                           "does not track (it has %s): reset the state and "
                                           "send the log from entry 0",
                                           want);
                }
                if (ev->ima_offset != prev->entries)
                        return attest_fail(err, -ESTALE, AE_IMA_OFFSET_MISMATCH,
                                           "$.ima.offset: %" PRIu64 ", expected %" PRIu64
                                           " (entries already verified)",
                                           ev->ima_offset, prev->entries);
                if ((x = replay_state_copy(prev, &r.next)) < 0)
                        return x;
        }
        if (!prev && ev->ima_offset != 0) {
                replay_state_done(&r.next);
                return attest_fail(err, -ESTALE, AE_IMA_OFFSET_MISMATCH,
                                   "$.ima.offset: %" PRIu64 ", expected 0 (no stored state)",
                                   ev->ima_offset);
        }

        if ((x = hasher_new(&h)) < 0 ||
            (x = find_prefix(ev, &r.next, &r.quote, max_entries, h, &rp, &r.new_entries, &total,
                             err)) < 0 ||
            (x = feed_prefix(ev, &r.quote, r.new_entries, h, &r.next, &r.boot_aggregate_err, err)) <
                    0) {
                replay_state_done(&r.next);
                return x;
        }
        r.extra_entries = total - r.new_entries;
        memcpy(r.next.pcr, rp.pcr, sizeof(r.next.pcr));
        r.next.used = rp.used;
        r.next.valid = true;
        r.next.reset_count = r.quote.reset_count;
        r.next.restart_count = r.quote.restart_count;
        r.next.clock = r.quote.clock;
        r.boot_aggregate_seen = r.next.boot_aggregate_seen;
        r.boot_aggregate_ok = r.next.boot_aggregate_ok;
        *ret = r;
        return 0;
}
