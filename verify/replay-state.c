/* SPDX-License-Identifier: MIT */
/* The replay state's stored form: see verify/replay-state.h for the layout. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/rd.h"
#include "verify/replay-state.h"
#include "verify/state-dec.h"

static const uint8_t magic[3] = {'a', 'r', 's'};

enum {
        F_VALID = 1u << 0,
        F_BA_SEEN = 1u << 1,
        F_BA_OK = 1u << 2,
        F_ALL = (1u << 3) - 1,
};

enum {
        C_SELINUX = 1u << 0,
        C_ENFORCED = 1u << 1,
        C_POLICY_HASH = 1u << 2,
        C_KERNEL = 1u << 3,
        C_TK = 1u << 4,
        C_CFI = 1u << 5,
        C_TK_RNG = 1u << 6, /* the trusted-keys entry had rng= (only with C_TK) */
        C_TK_REQ = 1u << 7, /* ... and requested= */
        C_ALL = (1u << 8) - 1,
};

#define PCRS_USED_ALL ((1u << PCR_COUNT) - 1)
#define FLAGS_ALL ((1u << SELINUX_FLAG__COUNT) - 1)
#define CAPS_ALL ((1u << SELINUX_CAP__COUNT) - 1)

void replay_state_init(struct replay_state *s)
{
        memset(s, 0, sizeof(*s));
        cdata_claims_init(&s->claims);
}

/* The IMA PCR values: a state's value holds those of its banks only (replay-state.h). */
#define PCRS_AT offsetof(struct replay_state, pcr)
#define PCRS_END (PCRS_AT + sizeof(((struct replay_state *)0)->pcr))

/* The decoder's scratch emptied but for the PCR values (the walk empties those of the state's
 * banks). */
static void scratch_empty(struct replay_state *s)
{
        memset(s, 0, PCRS_AT);
        memset((uint8_t *)s + PCRS_END, 0, sizeof(*s) - PCRS_END);
        cdata_claims_init(&s->claims);
}

void replay_state_copy(struct replay_state *dst, const struct replay_state *src)
{
        memcpy(dst, src, PCRS_AT);
        for (int b = 0; b < BANK_COUNT; b++)
                if (src->banks & BANK_MASK(b))
                        memcpy(dst->pcr[b], src->pcr[b], sizeof(dst->pcr[b]));
        memcpy((uint8_t *)dst + PCRS_END, (const uint8_t *)src + PCRS_END, sizeof(*src) - PCRS_END);
}

/* ---- encoding ---- */

static int encode_claims(struct wb *w, const struct cdata_claims *c)
{
        const struct cdata_selinux_history *h = &c->history;
        uint8_t f = 0;
        int x = 0;

        f |= c->selinux_seen ? C_SELINUX : 0;
        f |= h->enforced ? C_ENFORCED : 0;
        f |= c->policy_hash_seen ? C_POLICY_HASH : 0;
        f |= c->kernel_version_seen ? C_KERNEL : 0;
        f |= c->trusted_keys_seen ? C_TK : 0;
        f |= c->cfi_seen ? C_CFI : 0;
        f |= c->trusted_keys_seen && c->trusted_keys.rng_name[0] ? C_TK_RNG : 0;
        f |= c->trusted_keys_seen && c->trusted_keys.requested_name[0] ? C_TK_REQ : 0;
        if ((x = wb_put_u8(w, f)) < 0 || (x = wb_put_u64le(w, h->states)) < 0 ||
            (h->enforced && (x = wb_put_u64le(w, h->first_enforcing)) < 0) ||
            (x = wb_put_u8(w, (uint8_t)h->lapse)) < 0 ||
            (h->lapse != SELINUX_LAPSE_NONE && (x = wb_put_u64le(w, h->lapse_entry)) < 0))
                return x;
        if (c->selinux_seen && ((x = wb_put_u64le(w, c->selinux.entry)) < 0 ||
                                (x = wb_put_u8(w, c->selinux.flags_present)) < 0 ||
                                (x = wb_put_u8(w, c->selinux.flags_value)) < 0 ||
                                (x = wb_put_u32le(w, c->selinux.caps_present)) < 0 ||
                                (x = wb_put_u32le(w, c->selinux.caps_value)) < 0 ||
                                (x = wb_put_u32le(w, c->selinux.unknown_keys)) < 0))
                return x;
        if (c->policy_hash_seen &&
            ((x = wb_put_u64le(w, c->policy_hash_entry)) < 0 ||
             (x = wb_put_u32le(w, c->policy_hash_count)) < 0 ||
             (x = state_put_sized8(w, c->policy_hash, c->policy_hash_len)) < 0))
                return x;
        if (c->kernel_version_seen &&
            ((x = wb_put_u64le(w, c->kernel_version_entry)) < 0 ||
             (x = state_put_sized8(w, c->kernel_version,
                                   strnlen(c->kernel_version, sizeof(c->kernel_version)))) < 0))
                return x;
        if (c->trusted_keys_seen &&
            ((x = wb_put_u64le(w, c->trusted_keys.entry)) < 0 ||
             (x = state_put_sized8(w, c->trusted_keys.source_name,
                                   strnlen(c->trusted_keys.source_name, CDATA_WORD_MAX))) < 0 ||
             ((f & C_TK_RNG) &&
              (x = state_put_sized8(w, c->trusted_keys.rng_name,
                                    strnlen(c->trusted_keys.rng_name, CDATA_WORD_MAX))) < 0) ||
             ((f & C_TK_REQ) &&
              (x = state_put_sized8(w, c->trusted_keys.requested_name,
                                    strnlen(c->trusted_keys.requested_name, CDATA_WORD_MAX))) < 0)))
                return x;
        if (c->cfi_seen &&
            ((x = wb_put_u64le(w, c->cfi.entry)) < 0 ||
             (x = wb_put_u8(w, (uint8_t)(c->cfi.enabled | c->cfi.permissive << 1))) < 0 ||
             (x = wb_put_u8(w, (uint8_t)c->cfi.mode)) < 0))
                return x;
        return 0;
}

/* ---- the observer's section ('R'), opaque ---- */

/* u8 'R' | u32 length | the observer's bytes; nothing when it has none */
static int encode_observer(struct wb *w, const uint8_t *obs, size_t len)
{
        int x;

        if (!len)
                return 0;
        if (len > REPLAY_STATE_OBSERVER_MAX || !obs)
                return -EINVAL;
        if ((x = wb_put_u8(w, REPLAY_STATE_OBSERVER_TAG)) < 0 ||
            (x = wb_put_u32le(w, (uint32_t)len)) < 0)
                return x;
        return wb_put(w, obs, len);
}

static int encode(struct wb *w, const struct replay_state *s, const uint8_t *obs, size_t obs_len)
{
        uint8_t f = 0;
        int x;

        f |= s->valid ? F_VALID : 0;
        f |= s->boot_aggregate_seen ? F_BA_SEEN : 0;
        f |= s->boot_aggregate_ok ? F_BA_OK : 0;
        if ((x = wb_put(w, magic, sizeof(magic))) < 0 ||
            (x = wb_put_u8(w, REPLAY_STATE_VERSION)) < 0)
                return x;
        if (!s->valid)
                return obs_len ? -EINVAL : wb_put_u8(w, F_VALID & 0);
        if ((x = wb_put_u8(w, f)) < 0 || (x = wb_put_u32le(w, s->reset_count)) < 0 ||
            (x = wb_put_u32le(w, s->restart_count)) < 0 || (x = wb_put_u64le(w, s->clock)) < 0 ||
            (x = wb_put_u64le(w, s->entries)) < 0 || (x = wb_put_u8(w, (uint8_t)s->banks)) < 0 ||
            (x = wb_put_u32le(w, s->used)) < 0)
                return x;
        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; i < PCR_COUNT; i++)
                        if ((s->banks & BANK_MASK(b)) && (s->used & (1u << i)) &&
                            (x = wb_put(w, s->pcr[b][i], bank_size(b))) < 0)
                                return x;
        if ((x = encode_claims(w, &s->claims)) < 0)
                return x;
        /* the tagged sections in increasing tag order: 'B' (boot), then 'R' (the observer's) */
        if ((x = boot_state_put(w, &s->boot)) < 0)
                return x;
        return encode_observer(w, obs, obs_len);
}

static int decode_check(const uint8_t *buf, size_t len, struct replay_state *scratch,
                        struct replay_observer_section *obs, struct attest_err *err);

int replay_state_encode(const struct replay_state *s, const uint8_t *obs, size_t obs_len,
                        uint8_t **ret, size_t *ret_len)
{
        struct wb w;
        struct replay_state check; /* the check's scratch: a few hundred bytes of it written */
        struct replay_observer_section sec;
        uint8_t *out;
        int x;

        if (!s || !ret || !ret_len)
                return -EINVAL;
        if ((x = wb_new(&w, REPLAY_STATE_MAX)) < 0)
                return x;
        /*
         * What cannot be read back must not be stored: it would cost a full replay. The encoder
         * writes what it is given; the decoder's rules between fields (entries below the entry
         * count, printable words) are checked only there, so a state
         * the verifier got wrong is refused here, not found unreadable next round. The check is
         * the decoder's walk without building the state (no PCR values copied, nothing returned).
         */
        if ((x = encode(&w, s, obs, obs_len)) < 0 ||
            decode_check(wb_data(&w), wb_len(&w), &check, &sec, NULL) < 0) {
                wb_free(&w);
                return x == -ENOMEM ? x : -EINVAL;
        }
        if (!(out = malloc(wb_len(&w) ? wb_len(&w) : 1))) {
                wb_free(&w);
                return -ENOMEM;
        }
        memcpy(out, wb_data(&w), wb_len(&w));
        *ret_len = wb_len(&w);
        *ret = out;
        wb_free(&w);
        return 0;
}

/* ---- decoding ---- */

/* A log entry number: below the state's entry count. */
static int entryf(struct state_dec *d, const char *field, uint64_t entries, uint64_t *ret)
{
        size_t off = state_dec_at(d);
        int x;

        if ((x = state_dec_u64(d, field, ret)) < 0)
                return x;
        if (*ret >= entries)
                return state_dec_bad(d, off, field,
                                     "entry %" PRIu64 " not below the entry count %" PRIu64, *ret,
                                     entries);
        return 0;
}

static int bitsf(struct state_dec *d, const char *field, uint32_t v, uint32_t allowed, size_t off)
{
        if (v & ~allowed)
                return state_dec_bad(d, off, field, "unknown bits 0x%" PRIx32, v & ~allowed);
        return 0;
}

static int decode_selinux(struct state_dec *d, uint64_t entries, struct cdata_selinux_state *s)
{
        size_t off;
        int x;

        if ((x = entryf(d, "selinux.entry", entries, &s->entry)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "selinux.flags_present", &s->flags_present)) < 0 ||
            (x = bitsf(d, "selinux.flags_present", s->flags_present, FLAGS_ALL, off)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "selinux.flags_value", &s->flags_value)) < 0 ||
            (x = bitsf(d, "selinux.flags_value", s->flags_value, s->flags_present, off)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u32(d, "selinux.caps_present", &s->caps_present)) < 0 ||
            (x = bitsf(d, "selinux.caps_present", s->caps_present, CAPS_ALL, off)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u32(d, "selinux.caps_value", &s->caps_value)) < 0 ||
            (x = bitsf(d, "selinux.caps_value", s->caps_value, s->caps_present, off)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u32(d, "selinux.unknown_keys", &s->unknown_keys)) < 0)
                return x;
        if (s->unknown_keys > CDATA_KV_MAX)
                return state_dec_bad(d, off, "selinux.unknown_keys", "%" PRIu32 " > %d",
                                     s->unknown_keys, CDATA_KV_MAX);
        return 0;
}

static int decode_history(struct state_dec *d, uint8_t f, uint64_t entries,
                          struct cdata_selinux_history *h)
{
        size_t off = state_dec_at(d);
        uint8_t lapse = 0;
        int x;

        if ((x = state_dec_u64(d, "history.states", &h->states)) < 0)
                return x;
        if (h->states > entries || !h->states != !(f & C_SELINUX))
                return state_dec_bad(d, off, "history.states",
                                     "%" PRIu64 " states with %" PRIu64 " entries, selinux %s",
                                     h->states, entries, f & C_SELINUX ? "seen" : "not seen");
        h->enforced = f & C_ENFORCED;
        if (h->enforced &&
            (x = entryf(d, "history.first_enforcing", entries, &h->first_enforcing)) < 0)
                return x;
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "history.lapse", &lapse)) < 0)
                return x;
        if (lapse >= SELINUX_LAPSE__COUNT || (lapse != SELINUX_LAPSE_NONE && !h->enforced))
                return state_dec_bad(d, off, "history.lapse", "%u%s", lapse,
                                     lapse < SELINUX_LAPSE__COUNT ? " without an enforcing state"
                                                                  : " is no lapse");
        h->lapse = lapse;
        if (lapse == SELINUX_LAPSE_NONE)
                return 0;
        off = state_dec_at(d);
        if ((x = entryf(d, "history.lapse_entry", entries, &h->lapse_entry)) < 0)
                return x;
        if (h->lapse_entry <= h->first_enforcing)
                return state_dec_bad(d, off, "history.lapse_entry",
                                     "%" PRIu64 " not after %" PRIu64, h->lapse_entry,
                                     h->first_enforcing);
        return 0;
}

static bool word_char(uint8_t c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* A word of the trusted-keys entry: u8 length (1..CDATA_WORD_MAX - 1) | [a-z0-9_] bytes. */
static int wordf(struct state_dec *d, const char *field, char out[CDATA_WORD_MAX])
{
        size_t off = state_dec_at(d);
        const uint8_t *p;
        uint8_t n = 0;
        int x;

        if ((x = state_dec_sized8(d, field, 1, CDATA_WORD_MAX - 1, &p, &n)) < 0)
                return x;
        for (uint8_t i = 0; i < n; i++)
                if (!word_char(p[i]))
                        return state_dec_bad(d, off, field, "byte %u not [a-z0-9_]", i);
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
}

static int decode_claims(struct state_dec *d, uint64_t entries, struct cdata_claims *c)
{
        const uint8_t *p;
        uint8_t f = 0, n = 0, bits = 0, mode = 0;
        size_t off = state_dec_at(d);
        int x;

        if ((x = state_dec_u8(d, "claims.flags", &f)) < 0 ||
            (x = bitsf(d, "claims.flags", f, C_ALL, off)) < 0)
                return x;
        if ((f & C_ENFORCED) && !(f & C_SELINUX))
                return state_dec_bad(d, off, "claims.flags", "enforced without a selinux-state");
        if ((f & (C_TK_RNG | C_TK_REQ)) && !(f & C_TK))
                return state_dec_bad(d, off, "claims.flags",
                                     "trusted-keys rng or requested without a trusted-keys entry");
        if ((x = decode_history(d, f, entries, &c->history)) < 0)
                return x;
        if ((c->selinux_seen = f & C_SELINUX) && (x = decode_selinux(d, entries, &c->selinux)) < 0)
                return x;
        if ((c->policy_hash_seen = f & C_POLICY_HASH)) {
                if ((x = entryf(d, "policy_hash.entry", entries, &c->policy_hash_entry)) < 0)
                        return x;
                off = state_dec_at(d);
                if ((x = state_dec_u32(d, "policy_hash.count", &c->policy_hash_count)) < 0)
                        return x;
                if (c->policy_hash_count == 0 || c->policy_hash_count > entries)
                        return state_dec_bad(d, off, "policy_hash.count",
                                             "%" PRIu32 " not in 1-%" PRIu64, c->policy_hash_count,
                                             entries);
                if ((x = state_dec_sized8(d, "policy_hash.digest", 1, BANK_DIGEST_MAX, &p, &n)) < 0)
                        return x;
                memcpy(c->policy_hash, p, n);
                c->policy_hash_len = n;
        }
        if ((c->kernel_version_seen = f & C_KERNEL)) {
                if ((x = entryf(d, "kernel_version.entry", entries, &c->kernel_version_entry)) < 0)
                        return x;
                off = state_dec_at(d);
                if ((x = state_dec_sized8(d, "kernel_version.value", 1,
                                          CDATA_KERNEL_VERSION_MAX - 1, &p, &n)) < 0)
                        return x;
                for (uint8_t i = 0; i < n; i++)
                        if (p[i] < 0x21 || p[i] > 0x7e)
                                return state_dec_bad(d, off, "kernel_version.value",
                                                     "byte %u not printable", i);
                memcpy(c->kernel_version, p, n);
                c->kernel_version[n] = '\0';
        }
        if ((c->trusted_keys_seen = f & C_TK)) {
                if ((x = entryf(d, "trusted_keys.entry", entries, &c->trusted_keys.entry)) < 0 ||
                    (x = wordf(d, "trusted_keys.source", c->trusted_keys.source_name)) < 0 ||
                    ((f & C_TK_RNG) &&
                     (x = wordf(d, "trusted_keys.rng", c->trusted_keys.rng_name)) < 0) ||
                    ((f & C_TK_REQ) &&
                     (x = wordf(d, "trusted_keys.requested", c->trusted_keys.requested_name)) < 0))
                        return x;
                c->trusted_keys.source = tk_source_from_name(c->trusted_keys.source_name,
                                                             strlen(c->trusted_keys.source_name));
        }
        if ((c->cfi_seen = f & C_CFI)) {
                if ((x = entryf(d, "cfi.entry", entries, &c->cfi.entry)) < 0)
                        return x;
                off = state_dec_at(d);
                if ((x = state_dec_u8(d, "cfi.bits", &bits)) < 0 ||
                    (x = bitsf(d, "cfi.bits", bits, 3, off)) < 0)
                        return x;
                c->cfi.enabled = bits & 1;
                c->cfi.permissive = bits & 2;
                off = state_dec_at(d);
                if ((x = state_dec_u8(d, "cfi.mode", &mode)) < 0)
                        return x;
                if (mode >= CFI_MODE__COUNT)
                        return state_dec_bad(d, off, "cfi.mode", "%u is no mode", mode);
                c->cfi.mode = mode;
        }
        return 0;
}

/* Tagged sections after the claims, each u8 tag | u32 length | body, tags ascending. */
static int decode_sections(struct state_dec *d, struct replay_state *s,
                           struct replay_observer_section *obs)
{
        int last = -1;

        while (rd_left(&d->r)) {
                size_t off = state_dec_at(d), end;
                const uint8_t *p;
                uint8_t tag = 0;
                uint32_t len = 0;
                int x;

                /* what is no known section is bytes after the state */
                if (d->r.p[0] != BOOT_STATE_TAG && d->r.p[0] != REPLAY_STATE_OBSERVER_TAG)
                        return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_TRAILING,
                                           "byte %zu: %zu bytes after the state", off,
                                           rd_left(&d->r));
                if ((x = state_dec_u8(d, "section.tag", &tag)) < 0 ||
                    (x = state_dec_u32(d, "section.length", &len)) < 0)
                        return x;
                if ((int)tag <= last)
                        return state_dec_bad(d, off, "section.tag", "tag 0x%02x after 0x%02x", tag,
                                             last);
                last = tag;
                if (len > rd_left(&d->r))
                        return state_dec_truncated(d, "section");
                end = state_dec_at(d) + len;
                switch (tag) {
                case BOOT_STATE_TAG:
                        if (rd_bytes(&d->r, len, &p) < 0)
                                return state_dec_truncated(d, "section");
                        x = boot_state_get_in(p, len, off + 5, &s->boot, d->err);
                        break;
                case REPLAY_STATE_OBSERVER_TAG:
                        /* the observer's bytes: its decoder reads them (replay-state.h) */
                        if (len > REPLAY_STATE_OBSERVER_MAX)
                                return state_dec_bad(d, off + 1, "section.length",
                                                     "%" PRIu32 " > %d", len,
                                                     REPLAY_STATE_OBSERVER_MAX);
                        if (rd_bytes(&d->r, len, &p) < 0)
                                return state_dec_truncated(d, "section");
                        *obs = (struct replay_observer_section){
                                .p = p, .len = len, .off = off + 5, .entries = s->entries};
                        x = 0;
                        break;
                default:
                        return state_dec_bad(d, off, "section.tag", "unknown section %u", tag);
                }
                if (x < 0)
                        return x;
                if (state_dec_at(d) != end)
                        return state_dec_bad(d, off, "section.length",
                                             "%" PRIu32 " bytes, the section used %zu", len,
                                             state_dec_at(d) - (end - len));
        }
        return 0;
}

/*
 * The whole walk: every field checked, the state built in *s (a scratch the caller drops on
 * failure), emptied by scratch_empty. With pcrs the PCR values of the state's banks are emptied and
 * filled; without, they are checked for length only (the walk reads none of them back).
 */
static int walk(struct state_dec *d, struct replay_state *s, struct replay_observer_section *obs,
                bool pcrs)
{
        const uint8_t *m, *p;
        uint8_t v = 0, f = 0, banks = 0;
        size_t off, len = rd_left(&d->r);
        int x;

        if (!d->r.p && len)
                return attest_fail(d->err, -EINVAL, AE_REPLAY_STATE_TRUNCATED, "no buffer");
        if (len > REPLAY_STATE_MAX)
                return attest_fail(d->err, -E2BIG, AE_REPLAY_STATE_TOO_BIG, "%zu bytes > %d", len,
                                   REPLAY_STATE_MAX);
        if (rd_bytes(&d->r, sizeof(magic), &m) < 0 || memcmp(m, magic, sizeof(magic)) != 0)
                return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_MAGIC,
                                   "byte 0: not a replay state (no \"ars\" magic)");
        if ((x = state_dec_u8(d, "version", &v)) < 0)
                return x;
        if (v != REPLAY_STATE_VERSION)
                return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_VERSION,
                                   "byte 3 (version): %u is not supported (%d is)", v,
                                   REPLAY_STATE_VERSION);
        off = state_dec_at(d);
        if ((x = state_dec_u8(d, "flags", &f)) < 0 || (x = bitsf(d, "flags", f, F_ALL, off)) < 0)
                return x;
        if (!(f & F_VALID) && f)
                return state_dec_bad(d, off, "flags", "an invalid state has no other flag");
        if ((f & F_BA_OK) && !(f & F_BA_SEEN))
                return state_dec_bad(d, off, "flags", "boot_aggregate ok without seen");
        s->valid = f & F_VALID;
        s->boot_aggregate_seen = f & F_BA_SEEN;
        s->boot_aggregate_ok = f & F_BA_OK;
        if (s->valid) {
                if ((x = state_dec_u32(d, "reset_count", &s->reset_count)) < 0 ||
                    (x = state_dec_u32(d, "restart_count", &s->restart_count)) < 0 ||
                    (x = state_dec_u64(d, "clock", &s->clock)) < 0 ||
                    (x = state_dec_u64(d, "entries", &s->entries)) < 0)
                        return x;
                if (s->boot_aggregate_seen && s->entries == 0)
                        return state_dec_bad(d, 4, "flags", "boot_aggregate seen in no entry");
                off = state_dec_at(d);
                if ((x = state_dec_u8(d, "banks", &banks)) < 0 ||
                    (x = bitsf(d, "banks", banks, BANK_MASK_ALL, off)) < 0)
                        return x;
                if (!banks)
                        return state_dec_bad(d, off, "banks", "no bank");
                s->banks = banks;
                off = state_dec_at(d);
                if ((x = state_dec_u32(d, "used", &s->used)) < 0 ||
                    (x = bitsf(d, "used", s->used, PCRS_USED_ALL, off)) < 0)
                        return x;
                if (s->used && !s->entries)
                        return state_dec_bad(d, off, "used", "PCRs extended by no entry");
                for (int b = 0; b < BANK_COUNT; b++)
                        if (pcrs && (s->banks & BANK_MASK(b)))
                                memset(s->pcr[b], 0, sizeof(s->pcr[b]));
                for (int b = 0; b < BANK_COUNT; b++)
                        for (unsigned i = 0; i < PCR_COUNT; i++) {
                                if (!(s->banks & BANK_MASK(b)) || !(s->used & (1u << i)))
                                        continue;
                                if (rd_bytes(&d->r, bank_size(b), &p) < 0)
                                        return state_dec_truncated(d, "pcrs");
                                if (pcrs)
                                        memcpy(s->pcr[b][i], p, bank_size(b));
                        }
                if ((x = decode_claims(d, s->entries, &s->claims)) < 0 ||
                    (x = decode_sections(d, s, obs)) < 0)
                        return x;
        }
        if (rd_left(&d->r))
                return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_TRAILING,
                                   "byte %zu: %zu bytes after the state", state_dec_at(d),
                                   rd_left(&d->r));
        return 0;
}

/* The walk without the IMA PCR values (neither emptied nor copied): for what needs the verdict of
 * the decoder, not the state. */
static int decode_check(const uint8_t *buf, size_t len, struct replay_state *scratch,
                        struct replay_observer_section *obs, struct attest_err *err)
{
        struct state_dec d = {.r = RD_INIT(buf, len), .err = err};

        scratch_empty(scratch);
        *obs = (struct replay_observer_section){0};
        return walk(&d, scratch, obs, false);
}

int replay_state_decode(const uint8_t *buf, size_t len, struct replay_state *ret,
                        struct replay_observer_section *ret_obs, struct attest_err *err)
{
        struct state_dec d = {.r = RD_INIT(buf, len), .err = err};
        struct replay_observer_section obs = {0};
        struct replay_state s;
        int x;

        scratch_empty(&s);
        if ((x = walk(&d, &s, &obs, true)) < 0)
                return x;
        if (ret)
                replay_state_copy(ret, &s);
        if (ret_obs)
                *ret_obs = obs;
        return 0;
}

int replay_state_boot_offset(const uint8_t *buf, size_t len, uint64_t *ret,
                             struct replay_observer_section *ret_obs, struct attest_err *err)
{
        struct replay_observer_section obs;
        struct replay_state s;
        int x;

        if ((x = decode_check(buf, len, &s, &obs, err)) < 0)
                return x;
        if (ret)
                *ret = s.valid && s.boot.valid ? s.boot.offset : 0;
        if (ret_obs)
                *ret_obs = obs;
        return 0;
}
