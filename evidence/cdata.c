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

static const char *const cap_names[] = {
#define SELINUX_CAP_NAME(id, name) [id] = name,
        SELINUX_CAPS(SELINUX_CAP_NAME)
#undef SELINUX_CAP_NAME
};

static const char *const flag_names[] = {
        [SELINUX_INITIALIZED] = "initialized",
        [SELINUX_ENFORCING] = "enforcing",
        [SELINUX_CHECKREQPROT] = "checkreqprot",
};

static const char *const tk_names[] = {
        [TK_SOURCE_NONE] = "none", [TK_SOURCE_TPM] = "tpm", [TK_SOURCE_TEE] = "tee",
        [TK_SOURCE_CAAM] = "caam", [TK_SOURCE_DCP] = "dcp", [TK_SOURCE_UNKNOWN] = "unknown",
};

static const char *const cfi_mode_names[] = {
        [CFI_MODE_NONE] = "none",       [CFI_MODE_KCFI] = "kcfi",
        [CFI_MODE_UNKNOWN] = "unknown", [CFI_MODE_ABSENT] = "absent",
        [CFI_MODE_FINEIBT] = "fineibt",
};

static bool word_is(const char *word, const char *p, size_t len)
{
        return strlen(word) == len && memcmp(word, p, len) == 0;
}

const char *selinux_cap_name(enum selinux_cap c)
{
        return (unsigned)c < SELINUX_CAP__COUNT ? cap_names[c] : "unknown";
}

enum selinux_cap selinux_cap_from_name(const char *name, size_t len)
{
        for (unsigned i = 0; i < SELINUX_CAP__COUNT; i++)
                if (word_is(cap_names[i], name, len))
                        return (enum selinux_cap)i;
        return SELINUX_CAP_UNKNOWN;
}

const char *selinux_flag_name(enum selinux_flag f)
{
        return (unsigned)f < SELINUX_FLAG__COUNT ? flag_names[f] : "unknown";
}

const char *tk_source_name(enum tk_source s)
{
        return (unsigned)s < TK_SOURCE__COUNT ? tk_names[s] : "unknown";
}

enum tk_source tk_source_from_name(const char *name, size_t len)
{
        for (unsigned i = 0; i < TK_SOURCE_UNKNOWN; i++)
                if (word_is(tk_names[i], name, len))
                        return (enum tk_source)i;
        return TK_SOURCE_UNKNOWN;
}

const char *cfi_mode_name(enum cfi_mode m)
{
        return (unsigned)m < CFI_MODE__COUNT ? cfi_mode_names[m] : "unknown";
}

enum cfi_mode cfi_mode_from_name(const char *name, size_t len)
{
        for (unsigned i = 0; i < CFI_MODE__COUNT; i++)
                if (i != CFI_MODE_UNKNOWN && i != CFI_MODE_ABSENT &&
                    word_is(cfi_mode_names[i], name, len))
                        return (enum cfi_mode)i;
        return CFI_MODE_UNKNOWN;
}

int cdata_selinux_flag(const struct cdata_selinux_state *s, enum selinux_flag f)
{
        if ((unsigned)f >= SELINUX_FLAG__COUNT || !(s->flags_present & (1u << f)))
                return -ENOENT;
        return !!(s->flags_value & (1u << f));
}

int cdata_selinux_cap(const struct cdata_selinux_state *s, enum selinux_cap c)
{
        if ((unsigned)c >= SELINUX_CAP__COUNT || !(s->caps_present & (1u << c)))
                return -ENOENT;
        return !!(s->caps_value & (1u << c));
}

/* A kv's 0/1 value, or an error naming the entry, the event and the key. */
static int kv_flag(const struct cdata_kv *kv, uint64_t idx, const char *event, bool *ret,
                   struct attest_err *err)
{
        if (kv->val_len == 1 && (kv->val[0] == '0' || kv->val[0] == '1')) {
                *ret = kv->val[0] == '1';
                return 0;
        }
        return attest_fail(err, -EBADMSG, AE_CDATA_BAD_FLAG,
                           "entry %" PRIu64 " (%s): %.*s='%.*s' is not 0 or 1", idx, event,
                           (int)kv->key_len, kv->key, (int)(kv->val_len > 32 ? 32 : kv->val_len),
                           kv->val);
}

static int need_key(const struct cdata_kvs *kvs, const char *key, uint64_t idx, const char *event,
                    const struct cdata_kv **ret, struct attest_err *err)
{
        *ret = cdata_kv_get(kvs, key);
        if (!*ret)
                return attest_fail(err, -EBADMSG, AE_CDATA_MISSING_KEY,
                                   "entry %" PRIu64 " (%s): no key '%s'", idx, event, key);
        return 0;
}

static int parse_kvs(const uint8_t *buf, size_t len, uint64_t idx, const char *event,
                     struct cdata_kvs *ret, struct attest_err *err)
{
        int x = cdata_kv_parse(buf, len, ret, err);

        if (x < 0)
                attest_err_prefix(err, "entry %" PRIu64 " (%s)", idx, event);
        return x;
}

int cdata_selinux_parse(const uint8_t *buf, size_t len, uint64_t idx,
                        struct cdata_selinux_state *ret, struct attest_err *err)
{
        struct cdata_selinux_state s = {.entry = idx};
        struct cdata_kvs kvs;
        int x;

        if ((x = parse_kvs(buf, len, idx, "selinux-state", &kvs, err)) < 0)
                return x;
        for (uint32_t i = 0; i < kvs.n; i++) {
                const struct cdata_kv *kv = &kvs.kv[i];
                enum selinux_cap c;
                unsigned f;
                bool v = false;

                for (f = 0; f < SELINUX_FLAG__COUNT; f++)
                        if (word_is(flag_names[f], kv->key, kv->key_len))
                                break;
                c = selinux_cap_from_name(kv->key, kv->key_len);
                if (f == SELINUX_FLAG__COUNT && c == SELINUX_CAP_UNKNOWN) {
                        s.unknown_keys++;
                        continue;
                }
                if ((x = kv_flag(kv, idx, "selinux-state", &v, err)) < 0)
                        return x;
                if (f < SELINUX_FLAG__COUNT) {
                        s.flags_present |= (uint8_t)(1u << f);
                        s.flags_value |= (uint8_t)((unsigned)v << f);
                } else {
                        s.caps_present |= 1u << c;
                        s.caps_value |= (uint32_t)v << c;
                }
        }
        *ret = s;
        return 0;
}

void cdata_history_feed(struct cdata_selinux_history *h, const struct cdata_selinux_state *s)
{
        int enf = cdata_selinux_flag(s, SELINUX_ENFORCING);

        h->states++;
        if (!h->enforced) {
                if (enf == 1) {
                        h->enforced = true;
                        h->first_enforcing = s->entry;
                }
                return;
        }
        if (h->lapse != SELINUX_LAPSE_NONE)
                return;
        /* initialized may be absent (older kernels) */
        if (enf == 1 && cdata_selinux_flag(s, SELINUX_INITIALIZED) != 0)
                return;
        h->lapse = enf == 0  ? SELINUX_LAPSE_PERMISSIVE
                   : enf < 0 ? SELINUX_LAPSE_NO_ENFORCING
                             : SELINUX_LAPSE_UNINITIALIZED;
        h->lapse_entry = s->entry;
}

/* A word value ([a-z0-9_], at most CDATA_WORD_MAX - 1 bytes) copied into out. */
static int kv_word(const struct cdata_kv *kv, uint64_t idx, const char *event, char *out,
                   struct attest_err *err)
{
        bool ok = kv->val_len > 0 && kv->val_len < CDATA_WORD_MAX;

        for (uint32_t i = 0; ok && i < kv->val_len; i++)
                ok = key_char((uint8_t)kv->val[i]);
        if (!ok)
                return attest_fail(err, -EBADMSG, AE_CDATA_BAD_VALUE,
                                   "entry %" PRIu64 " (%s): %.*s is not a word [a-z0-9_]{1,%d}",
                                   idx, event, (int)kv->key_len, kv->key, CDATA_WORD_MAX - 1);
        memcpy(out, kv->val, kv->val_len);
        out[kv->val_len] = '\0';
        return 0;
}

static int parse_tk(const struct ima_entry *e, uint64_t idx, struct cdata_trusted_keys *ret,
                    struct attest_err *err)
{
        static const char event[] = "trusted-keys-source";
        struct cdata_trusted_keys t = {.entry = idx};
        const struct cdata_kv *kv;
        struct cdata_kvs kvs;
        int x;

        if ((x = parse_kvs(e->buf, e->buf_len, idx, event, &kvs, err)) < 0 ||
            (x = need_key(&kvs, "source", idx, event, &kv, err)) < 0 ||
            (x = kv_word(kv, idx, event, t.source_name, err)) < 0)
                return x;
        t.source = tk_source_from_name(t.source_name, kv->val_len);
        /* optional, but a word when present: what a policy compares must be a plain name */
        if ((kv = cdata_kv_get(&kvs, "rng")) && (x = kv_word(kv, idx, event, t.rng_name, err)) < 0)
                return x;
        if ((kv = cdata_kv_get(&kvs, "requested")) &&
            (x = kv_word(kv, idx, event, t.requested_name, err)) < 0)
                return x;
        *ret = t;
        return 0;
}

static int parse_cfi(const struct ima_entry *e, uint64_t idx, struct cdata_cfi *ret,
                     struct attest_err *err)
{
        static const char event[] = "cfi-state";
        struct cdata_cfi c = {.entry = idx, .mode = CFI_MODE_ABSENT};
        const struct cdata_kv *kv;
        struct cdata_kvs kvs;
        char mode[CDATA_WORD_MAX];
        int x;

        if ((x = parse_kvs(e->buf, e->buf_len, idx, event, &kvs, err)) < 0 ||
            (x = need_key(&kvs, "enabled", idx, event, &kv, err)) < 0 ||
            (x = kv_flag(kv, idx, event, &c.enabled, err)) < 0 ||
            (x = need_key(&kvs, "permissive", idx, event, &kv, err)) < 0 ||
            (x = kv_flag(kv, idx, event, &c.permissive, err)) < 0)
                return x;
        if ((kv = cdata_kv_get(&kvs, "mode"))) {
                if ((x = kv_word(kv, idx, event, mode, err)) < 0)
                        return x;
                c.mode = cfi_mode_from_name(mode, strlen(mode));
        }
        *ret = c;
        return 0;
}

void cdata_claims_init(struct cdata_claims *c)
{
        memset(c, 0, sizeof(*c));
}

int cdata_claims_feed(struct cdata_claims *c, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err)
{
        struct cdata_selinux_state st;
        struct cdata_trusted_keys tk;
        struct cdata_cfi cfi;
        int x;

        switch (cdata_kind_of(e)) {
        case CDATA_NONE:
                return 0;
        case CDATA_SELINUX_STATE:
                if ((x = cdata_selinux_parse(e->buf, e->buf_len, idx, &st, err)) < 0)
                        return x;
                c->selinux = st;
                c->selinux_seen = true;
                cdata_history_feed(&c->history, &st);
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
                if ((x = parse_tk(e, idx, &tk, err)) < 0)
                        return x;
                c->trusted_keys = tk;
                c->trusted_keys_seen = true;
                return 1;
        case CDATA_CFI:
                if ((x = parse_cfi(e, idx, &cfi, err)) < 0)
                        return x;
                c->cfi = cfi;
                c->cfi_seen = true;
                return 1;
        }
        return 0;
}
