/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evidence/cdata.h"
#include "util/tok.h"

static const struct {
        const char *event;
        enum cdata_kind kind;
} events[] = {
        {"selinux-state", CDATA_SELINUX_STATE},
        {"selinux-policy-hash", CDATA_SELINUX_POLICY_HASH},
        {"kernel_version", CDATA_KERNEL_VERSION},
        {"trusted-keys-source", CDATA_TRUSTED_KEYS},
        {"cfi-state", CDATA_CFI},
};

const char *cdata_kind_name(enum cdata_kind k)
{
        for (size_t i = 0; i < ARRAY_SIZE(events); i++)
                if (events[i].kind == k)
                        return events[i].event;
        return "none";
}

enum cdata_kind cdata_kind_of(const struct ima_entry *e)
{
        /* a violation's fields are covered by no hash: never a claim */
        if (e->violation || (!e->buf && !e->buf_len))
                return CDATA_NONE;
        if (!e->name)
                return CDATA_NONE;
        for (size_t i = 0; i < ARRAY_SIZE(events); i++)
                if (strlen(events[i].event) == e->name_len &&
                    memcmp(events[i].event, e->name, e->name_len) == 0)
                        return events[i].kind;
        return CDATA_NONE;
}

static bool key_char(uint8_t c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static bool val_char(uint8_t c)
{
        return c >= 0x20 && c < 0x7f && c != ';' && c != '=';
}

static bool span_all(struct span s, bool (*ok)(uint8_t))
{
        for (size_t i = 0; i < s.n; i++)
                if (!ok((uint8_t)s.p[i]))
                        return false;
        return true;
}

/* "key=value;" pairs, cut by the text cursor: the key up to '=', the value up to ';'. */
int cdata_kv_parse(const uint8_t *buf, size_t len, struct cdata_kvs *ret, struct attest_err *err)
{
        struct cdata_kvs kvs = {0};
        struct tok t = TOK_INIT(buf, len);

        if (len > CDATA_BUF_MAX)
                return attest_fail(err, -E2BIG, AE_CDATA_TOO_LONG,
                                   "key=value buffer of %zu bytes > %d", len, CDATA_BUF_MAX);
        if (len == 0)
                return attest_fail(err, -EBADMSG, AE_CDATA_EMPTY, "empty key=value buffer");
        while (!tok_empty(&t)) {
                size_t off = tok_offset(&t);
                struct span key, val;
                struct cdata_kv *kv;

                if (tok_field(&t, '=', CDATA_KEY_MAX, &key) < 0 || !t.more || key.n == 0 ||
                    !span_all(key, key_char))
                        return attest_fail(err, -EBADMSG, AE_CDATA_BAD_KEY,
                                           "byte %zu: expected a key [a-z0-9_] of at most %d "
                                           "bytes and '='",
                                           off, CDATA_KEY_MAX);
                if (tok_field(&t, ';', CDATA_BUF_MAX, &val) < 0 || !t.more ||
                    !span_all(val, val_char))
                        return attest_fail(err, -EBADMSG, AE_CDATA_BAD_VALUE,
                                           "byte %zu: value of '%.*s' not ';' terminated or not "
                                           "printable",
                                           off + key.n + 1, (int)key.n, key.p);
                for (uint32_t j = 0; j < kvs.n; j++)
                        if (kvs.kv[j].key_len == key.n && memcmp(kvs.kv[j].key, key.p, key.n) == 0)
                                return attest_fail(err, -EBADMSG, AE_CDATA_DUPLICATE_KEY,
                                                   "byte %zu: key '%.*s' given twice", off,
                                                   (int)key.n, key.p);
                if (kvs.n == CDATA_KV_MAX)
                        return attest_fail(err, -E2BIG, AE_CDATA_TOO_MANY,
                                           "byte %zu: more than %d pairs", off, CDATA_KV_MAX);
                kv = &kvs.kv[kvs.n++];
                kv->key = key.p;
                kv->key_len = (uint32_t)key.n;
                kv->val = val.p;
                kv->val_len = (uint32_t)val.n;
        }
        *ret = kvs;
        return 0;
}

const struct cdata_kv *cdata_kv_get(const struct cdata_kvs *kvs, const char *key)
{
        size_t n = strlen(key);

        for (uint32_t i = 0; i < kvs->n; i++)
                if (kvs->kv[i].key_len == n && memcmp(kvs->kv[i].key, key, n) == 0)
                        return &kvs->kv[i];
        return NULL;
}

int cdata_kv_bool(const struct cdata_kvs *kvs, const char *key)
{
        const struct cdata_kv *kv = cdata_kv_get(kvs, key);

        if (!kv)
                return -ENOENT;
        if (kv->val_len == 1 && (kv->val[0] == '0' || kv->val[0] == '1'))
                return kv->val[0] == '1';
        return -EBADMSG;
}

void cdata_claims_init(struct cdata_claims *c)
{
        memset(c, 0, sizeof(*c));
}

static void state_done(struct cdata_state *s)
{
        free(s->raw);
        memset(s, 0, sizeof(*s));
}

void cdata_claims_done(struct cdata_claims *c)
{
        for (uint32_t i = 0; i < c->n_selinux; i++)
                state_done(&c->selinux[i]);
        free(c->selinux);
        state_done(&c->trusted_keys);
        state_done(&c->cfi);
        memset(c, 0, sizeof(*c));
}

/* Parse e's buffer into a new owned state (the kvs re-pointed into the copy). */
static int state_make(const struct ima_entry *e, uint64_t idx, struct cdata_state *ret,
                      struct attest_err *err)
{
        struct cdata_state s = {.entry = idx};
        int x;

        if ((x = cdata_kv_parse(e->buf, e->buf_len, &s.kvs, err)) < 0) {
                attest_err_prefix(err, "entry %" PRIu64 " (%.*s)", idx, (int)e->name_len, e->name);
                return x;
        }
        s.raw = malloc(e->buf_len + 1);
        if (!s.raw)
                return -ENOMEM;
        memcpy(s.raw, e->buf, e->buf_len);
        s.raw[e->buf_len] = '\0';
        s.raw_len = e->buf_len;
        for (uint32_t i = 0; i < s.kvs.n; i++) {
                s.kvs.kv[i].key = s.raw + (s.kvs.kv[i].key - (const char *)e->buf);
                s.kvs.kv[i].val = s.raw + (s.kvs.kv[i].val - (const char *)e->buf);
        }
        *ret = s;
        return 0;
}

int cdata_claims_feed(struct cdata_claims *c, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err)
{
        struct cdata_state s;
        int x;

        switch (cdata_kind_of(e)) {
        case CDATA_NONE:
                return 0;
        case CDATA_SELINUX_STATE:
                if (c->n_selinux == CDATA_HISTORY_MAX) {
                        c->selinux_dropped++;
                        return 0;
                }
                if ((x = state_make(e, idx, &s, err)) < 0)
                        return x;
                if (c->n_selinux % 16 == 0) {
                        struct cdata_state *n =
                                realloc(c->selinux, (c->n_selinux + 16) * sizeof(*n));
                        if (!n) {
                                state_done(&s);
                                return -ENOMEM;
                        }
                        c->selinux = n;
                }
                c->selinux[c->n_selinux++] = s;
                return 1;
        case CDATA_SELINUX_POLICY_HASH:
                if (e->buf_len == 0 || e->buf_len > BANK_DIGEST_MAX)
                        return attest_fail(err, -EBADMSG, AE_CDATA_BAD_POLICY_HASH,
                                           "entry %" PRIu64
                                           " (selinux-policy-hash): %u bytes is no digest",
                                           idx, e->buf_len);
                memcpy(c->policy_hash, e->buf, e->buf_len);
                c->policy_hash_len = e->buf_len;
                c->policy_hash_entry = idx;
                c->policy_hash_seen = true;
                c->policy_hash_count++;
                return 1;
        case CDATA_KERNEL_VERSION:
                if (e->buf_len == 0 || e->buf_len >= sizeof(c->kernel_version))
                        return attest_fail(err, -EBADMSG, AE_CDATA_BAD_KERNEL_VERSION,
                                           "entry %" PRIu64 " (kernel_version): length %u", idx,
                                           e->buf_len);
                for (uint32_t i = 0; i < e->buf_len; i++)
                        if (e->buf[i] < 0x21 || e->buf[i] > 0x7e)
                                return attest_fail(err, -EBADMSG, AE_CDATA_BAD_KERNEL_VERSION,
                                                   "entry %" PRIu64
                                                   " (kernel_version): byte %u not printable",
                                                   idx, i);
                memcpy(c->kernel_version, e->buf, e->buf_len);
                c->kernel_version[e->buf_len] = '\0';
                c->kernel_version_entry = idx;
                c->kernel_version_seen = true;
                return 1;
        case CDATA_TRUSTED_KEYS:
        case CDATA_CFI:
                if ((x = state_make(e, idx, &s, err)) < 0)
                        return x;
                struct cdata_state *dst =
                        cdata_kind_of(e) == CDATA_CFI ? &c->cfi : &c->trusted_keys;
                state_done(dst);
                *dst = s;
                return 1;
        }
        return 0;
}
