/* SPDX-License-Identifier: MIT */
/* Measured boot: replay of the firmware event log and its claims (verify/boot.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/hex.h"
#include "util/rd.h"
#include "verify/boot.h"

static const char *const var_names[BOOT_VAR__COUNT] = {"PK", "KEK", "db", "dbx"};

const char *boot_var_name(enum boot_var v)
{
        return v < BOOT_VAR__COUNT ? var_names[v] : "?";
}

void boot_state_init(struct boot_state *s)
{
        memset(s, 0, sizeof(*s));
}

void boot_pcr0_init(uint8_t *pcr, size_t size, uint8_t locality)
{
        memset(pcr, 0, size);
        if (size)
                pcr[size - 1] = locality;
}

static int bad_event(struct attest_err *err, const struct tcglog_event *e, const char *what)
{
        return attest_fail(err, -EBADMSG, AE_TCGLOG_BAD_EVENT,
                           "entry %" PRIu64 " at byte %" PRIu64 ": %s", e->index, e->offset, what);
}

/*
 * 1 when the event's digests are the hashes of p (n bytes) in every bank of banks it carries, 0
 * when not (*ret_bank the first that is not), < 0 when hashing failed.
 */
static int digests_are(struct hasher *h, unsigned banks, const struct tcglog_event *e,
                       const void *p, size_t n, int *ret_bank)
{
        for (int b = 0; b < BANK_COUNT; b++) {
                const struct tcglog_digest *d = tcglog_event_digest(e, (enum bank)b);
                uint8_t md[BANK_DIGEST_MAX];
                int x;

                if (!(banks & BANK_MASK(b)) || !d)
                        continue;
                if ((x = hasher_digest(h, (enum bank)b, p, n, md)) < 0)
                        return x;
                if (memcmp(md, d->p, d->size) != 0) {
                        *ret_bank = b;
                        return 0;
                }
        }
        return 1;
}

/*
 * The event's digests must be the hashes of its data (PFP: EV_SEPARATOR, and
 * EV_EFI_VARIABLE_DRIVER_CONFIG over the whole UEFI_VARIABLE_DATA) in every bank the log carries:
 * otherwise the data a claim reads is not what the replay anchors.
 */
static int data_bound(struct hasher *h, unsigned banks, const struct tcglog_event *e,
                      struct attest_err *err)
{
        int b = 0, x = digests_are(h, banks, e, e->data, e->size, &b);

        if (x < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "hash failed");
        if (x == 0)
                return attest_fail(err, -EBADMSG, AE_TCGLOG_BAD_EVENT,
                                   "entry %" PRIu64 " at byte %" PRIu64
                                   ": its %s digest is not the hash of its data",
                                   e->index, e->offset, bank_name((enum bank)b));
        return 0;
}

int boot_separator_kind(struct hasher *h, unsigned banks, const struct tcglog_event *e,
                        struct attest_err *err)
{
        static const uint8_t error_value[4] = {1, 0, 0, 0}; /* 00000001h, little-endian */
        int b = 0, x;

        if ((x = digests_are(h, banks, e, e->data, e->size, &b)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "hash failed");
        if (x > 0)
                /* a delimiter is 00000000h or FFFFFFFFh; other data bound to the digests says
                 * something else happened, and is shown as an error */
                return e->size == 4 && (memcmp(e->data, "\0\0\0\0", 4) == 0 ||
                                        memcmp(e->data, "\xff\xff\xff\xff", 4) == 0)
                               ? 0
                               : 1;
        /* an error: the digests are of 00000001h, the data is the firmware's own description */
        if ((x = digests_are(h, banks, e, error_value, sizeof(error_value), &b)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "hash failed");
        if (x > 0)
                return 1;
        return attest_fail(err, -EBADMSG, AE_TCGLOG_BAD_EVENT,
                           "entry %" PRIu64 " at byte %" PRIu64
                           ": EV_SEPARATOR whose %s digest is the hash of neither its data nor the "
                           "error value 00000001h",
                           e->index, e->offset, bank_name((enum bank)b));
}

/* SecureBoot, PK, KEK, db, dbx: their GUIDs and names (UEFI 2.x, PFP "PCR[7]" events). */
static int var_claim(struct boot_claims *c, struct hasher *h, const struct tcglog_event *e,
                     struct attest_err *err)
{
        struct tcglog_efi_var v;
        bool global, security;
        int x;

        if (tcglog_efi_var_parse(e, &v) < 0)
                return bad_event(err, e, "UEFI_VARIABLE_DATA malformed");
        global = memcmp(v.guid, tcglog_guid_global, 16) == 0;
        security = memcmp(v.guid, tcglog_guid_security, 16) == 0;
        if (global && strcmp(v.name, "SecureBoot") == 0) {
                /* one byte, 1 enabled; an empty variable means not enabled */
                if (v.data_len > 1)
                        return bad_event(err, e, "SecureBoot variable of more than one byte");
                c->secureboot_seen = true;
                c->secureboot = v.data_len == 1 && v.data[0] == 1;
                c->secureboot_entry = e->index;
                return 0;
        }
        for (int i = 0; i < BOOT_VAR__COUNT; i++) {
                bool want_global = i == BOOT_VAR_PK || i == BOOT_VAR_KEK;

                if (strcmp(v.name, var_names[i]) != 0 || !(want_global ? global : security))
                        continue;
                if ((x = hasher_digest(h, BANK_SHA256, v.data, (size_t)v.data_len,
                                       c->var_sha256[i])) < 0)
                        return attest_fail(err, x, AE_VERIFY_INTERNAL, "sha256 failed");
                c->vars_seen |= (uint8_t)(1u << i);
                c->var_entry[i] = e->index;
        }
        return 0;
}

static int app_claim(struct boot_claims *c, unsigned banks, const struct tcglog_event *e,
                     struct attest_err *err)
{
        struct tcglog_efi_image img;
        const struct tcglog_digest *d = tcglog_event_digest(e, BANK_SHA256);
        struct boot_app *a;

        if (tcglog_efi_image_parse(e, &img) < 0)
                return bad_event(err, e, "UEFI_IMAGE_LOAD_EVENT malformed");
        for (int b = 0; !d && b < BANK_COUNT; b++)
                if (banks & BANK_MASK(b))
                        d = tcglog_event_digest(e, (enum bank)b);
        if (c->apps_total < UINT32_MAX)
                c->apps_total++;
        if (!d || c->n_apps >= BOOT_APPS_MAX)
                return 0;
        a = &c->apps[c->n_apps++];
        memset(a, 0, sizeof(*a));
        a->entry = e->index;
        a->bank = (uint8_t)d->bank;
        memcpy(a->digest, d->p, d->size);
        return 0;
}

static int claims_feed(struct boot_state *s, struct hasher *h, const struct tcglog_event *e,
                       struct attest_err *err)
{
        struct boot_claims *c = &s->claims;
        uint8_t loc = 0;
        int x;

        if (e->type == EV_NO_ACTION) {
                if ((x = tcglog_startup_locality(e, &loc)) < 0)
                        return bad_event(err, e, "StartupLocality event not 17 bytes");
                if (x > 0) {
                        if (e->pcr != 0)
                                return bad_event(err, e, "StartupLocality event not on PCR 0");
                        c->locality_seen = true;
                        c->locality = loc;
                        c->locality_entry = e->index;
                }
                return 0;
        }
        if (e->pcr >= BOOT_PCRS)
                return 0;
        switch (e->type) {
        case EV_SEPARATOR:
                if ((x = boot_separator_kind(h, s->banks, e, err)) < 0)
                        return x;
                c->separators |= (uint8_t)(1u << e->pcr);
                if (x > 0)
                        c->separator_errors |= (uint8_t)(1u << e->pcr);
                return 0;
        case EV_EFI_VARIABLE_DRIVER_CONFIG:
                if (e->pcr != BOOT_SB_PCR)
                        return 0;
                if ((x = data_bound(h, s->banks, e, err)) < 0)
                        return x;
                return var_claim(c, h, e, err);
        case EV_EFI_BOOT_SERVICES_APPLICATION:
                return e->pcr == BOOT_APP_PCR ? app_claim(c, s->banks, e, err) : 0;
        default:
                return 0;
        }
}

int boot_state_feed(struct boot_state *s, struct hasher *h, const struct tcglog_event *e,
                    struct attest_err *err)
{
        int x;

        if (e->index == 0) {
                /* the Spec ID event: the banks the log carries */
                s->banks = 0;
                for (unsigned i = 0; i < s->spec.n_algs; i++)
                        if (s->spec.algs[i].bank >= 0)
                                s->banks |= BANK_MASK(s->spec.algs[i].bank);
                return 0;
        }
        if ((x = claims_feed(s, h, e, err)) < 0)
                return x;
        if (e->type == EV_NO_ACTION) {
                uint8_t loc = 0;

                /* not extended; a startup locality sets PCR 0's start value */
                if (tcglog_startup_locality(e, &loc) > 0)
                        for (int b = 0; b < BANK_COUNT; b++)
                                if (s->banks & BANK_MASK(b))
                                        boot_pcr0_init(s->pcr[b][0], bank_size((enum bank)b), loc);
                return 0;
        }
        if (e->pcr >= BOOT_PCRS)
                return 0;
        for (int b = 0; b < BANK_COUNT; b++) {
                const struct tcglog_digest *d;

                if (!(s->banks & BANK_MASK(b)))
                        continue;
                d = tcglog_event_digest(e, (enum bank)b);
                if (!d)
                        return bad_event(err, e, "no digest of a bank the log carries");
                if ((x = hasher_extend(h, (enum bank)b, s->pcr[b][e->pcr], d->p)) < 0)
                        return attest_fail(err, x, AE_VERIFY_INTERNAL, "hash failed");
        }
        return 0;
}

/* Compare the replayed PCR 0-7 with the quoted ones: every bank both have. */
static int compare(const struct boot_state *s, const struct pcr_sel *sel,
                   const struct pcr_set *pcrs, struct boot_result *res, struct attest_err *err)
{
        uint8_t compared = 0, differ = 0;

        for (int b = 0; b < BANK_COUNT; b++) {
                uint32_t m = sel->mask[b] & pcrs->have[b] & ((1u << BOOT_PCRS) - 1);

                if (!(s->banks & BANK_MASK(b)) || !m)
                        continue;
                res->banks_compared |= BANK_MASK(b);
                for (unsigned i = 0; i < BOOT_PCRS; i++) {
                        char want[2 * BANK_DIGEST_MAX + 1], got[2 * BANK_DIGEST_MAX + 1];

                        if (!(m & (1u << i)))
                                continue;
                        compared |= (uint8_t)(1u << i);
                        if (memcmp(s->pcr[b][i], pcrs->v[b][i], bank_size((enum bank)b)) == 0)
                                continue;
                        differ |= (uint8_t)(1u << i);
                        hex_encode(pcrs->v[b][i], bank_size((enum bank)b), want);
                        hex_encode(s->pcr[b][i], bank_size((enum bank)b), got);
                        return attest_fail(err, -ESTALE, AE_BOOT_REPLAY_MISMATCH,
                                           "PCR %u %s: the firmware event log (%" PRIu64
                                           " entries) replays to %.16s..., the quote has %.16s...",
                                           i, bank_name((enum bank)b), s->entries, got, want);
                }
        }
        res->matched = compared & (uint8_t)~differ;
        return 0;
}

int boot_verify(const struct evidence *ev, const struct pcr_sel *sel, const struct pcr_set *pcrs,
                const struct boot_state *prev, struct boot_state *next, struct boot_result *res,
                struct attest_err *err)
{
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct boot_result r = {.sent = ev->boot_log != NULL};
        struct boot_state s;
        struct tcglog_reader lr;
        struct tcglog_event e;
        int x;

        if (prev && !prev->valid)
                prev = NULL;
        if (!r.sent) {
                /* nothing new: the stored replay still answers for this quote */
                if (!prev) {
                        boot_state_init(next);
                        *res = r;
                        return 0;
                }
                if ((x = compare(prev, sel, pcrs, &r, err)) < 0)
                        return x;
                if (next != prev)
                        *next = *prev;
                *res = r;
                return 0;
        }
        if (ev->boot_offset != 0 && (!prev || ev->boot_offset != prev->offset))
                return attest_fail(err, -ESTALE, AE_BOOT_OFFSET_MISMATCH,
                                   "$.boot_log.offset: %" PRIu64 ", expected 0 or %" PRIu64
                                   " (bytes already verified)",
                                   ev->boot_offset, prev ? prev->offset : 0);
        if (ev->boot_offset == 0 || !prev) {
                r.restarted = prev != NULL;
                boot_state_init(&s);
                tcglog_reader_init(&lr, ev->boot_log, ev->boot_log_len);
        } else {
                s = *prev;
                tcglog_reader_resume(&lr, ev->boot_log, ev->boot_log_len, s.offset, s.entries,
                                     &s.spec);
        }
        if ((x = hasher_new(&h)) < 0)
                return attest_fail(err, x, AE_VERIFY_INTERNAL, "no hasher");
        while ((x = tcglog_next(&lr, &e, err)) > 0) {
                if (e.index == 0)
                        s.spec = lr.spec;
                if ((x = boot_state_feed(&s, h, &e, err)) < 0)
                        break;
                r.new_entries++;
        }
        if (x < 0) {
                attest_err_prefix(err, "$.boot_log.data");
                return x;
        }
        r.new_bytes = ev->boot_log_len;
        s.offset = ev->boot_offset + ev->boot_log_len;
        s.entries = lr.index;
        s.valid = s.entries > 0;
        if (s.valid && (x = compare(&s, sel, pcrs, &r, err)) < 0)
                return x;
        *next = s;
        *res = r;
        return 0;
}

/* ---- the replay-state section ---- */

enum {
        BF_SB_SEEN = 1u << 0,
        BF_SB = 1u << 1,
        BF_LOC = 1u << 2,
        BF_ALL = (1u << 3) - 1,
};

static int put_u64(struct wb *w, uint64_t v)
{
        int x = wb_put_u32le(w, (uint32_t)v);

        return x < 0 ? x : wb_put_u32le(w, (uint32_t)(v >> 32));
}

static int put_u16(struct wb *w, uint16_t v)
{
        int x = wb_put_u8(w, (uint8_t)v);

        return x < 0 ? x : wb_put_u8(w, (uint8_t)(v >> 8));
}

int boot_state_put(struct wb *w, const struct boot_state *s)
{
        const struct boot_claims *c = &s->claims;
        size_t mark;
        uint8_t f = 0;
        int x = 0;

        if (!s->valid)
                return 0;
#define TRY(e)                                                                                     \
        do {                                                                                       \
                if ((x = (e)) < 0)                                                                 \
                        return x;                                                                  \
        } while (0)
        TRY(wb_put_u8(w, BOOT_STATE_TAG));
        mark = wb_len(w);
        TRY(wb_put_u32le(w, 0));
        TRY(put_u64(w, s->offset));
        TRY(put_u64(w, s->entries));
        TRY(wb_put_u8(w, (uint8_t)s->spec.n_algs));
        for (unsigned i = 0; i < s->spec.n_algs && i < TCGLOG_ALGS_MAX; i++) {
                TRY(put_u16(w, s->spec.algs[i].alg_id));
                TRY(put_u16(w, s->spec.algs[i].size));
        }
        TRY(wb_put_u32le(w, s->spec.platform_class));
        TRY(wb_put_u8(w, s->spec.version_minor));
        TRY(wb_put_u8(w, s->spec.version_major));
        TRY(wb_put_u8(w, s->spec.errata));
        TRY(wb_put_u8(w, s->spec.uintn_size));
        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; (s->banks & BANK_MASK(b)) && i < BOOT_PCRS; i++)
                        TRY(wb_put(w, s->pcr[b][i], bank_size((enum bank)b)));
        f |= c->secureboot_seen ? BF_SB_SEEN : 0;
        f |= c->secureboot ? BF_SB : 0;
        f |= c->locality_seen ? BF_LOC : 0;
        TRY(wb_put_u8(w, f));
        if (c->secureboot_seen)
                TRY(put_u64(w, c->secureboot_entry));
        TRY(wb_put_u8(w, c->vars_seen));
        for (int i = 0; i < BOOT_VAR__COUNT; i++)
                if (c->vars_seen & (1u << i)) {
                        TRY(put_u64(w, c->var_entry[i]));
                        TRY(wb_put(w, c->var_sha256[i], 32));
                }
        TRY(wb_put_u32le(w, c->apps_total));
        TRY(wb_put_u8(w, c->n_apps));
        for (unsigned i = 0; i < c->n_apps && i < BOOT_APPS_MAX; i++) {
                if (c->apps[i].bank >= BANK_COUNT)
                        return -EINVAL;
                TRY(put_u64(w, c->apps[i].entry));
                TRY(wb_put_u8(w, c->apps[i].bank));
                TRY(wb_put(w, c->apps[i].digest, bank_size((enum bank)c->apps[i].bank)));
        }
        TRY(wb_put_u8(w, c->separators));
        TRY(wb_put_u8(w, c->separator_errors));
        if (c->locality_seen) {
                TRY(wb_put_u8(w, c->locality));
                TRY(put_u64(w, c->locality_entry));
        }
#undef TRY
        return wb_set_u32(w, mark, false, (uint32_t)(wb_len(w) - mark - 4));
}

struct bdec {
        struct rd r;
        size_t off; /* of the payload in the whole state */
        struct attest_err *err;
};

static int btrunc(struct bdec *d, const char *field)
{
        return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_TRUNCATED,
                           "byte %zu (boot.%s): truncated, %zu bytes left",
                           d->off + rd_offset(&d->r), field, rd_left(&d->r));
}

static int bbad(struct bdec *d, size_t at, const char *field, const char *why)
{
        return attest_fail(d->err, -EBADMSG, AE_REPLAY_STATE_BAD_VALUE, "byte %zu (boot.%s): %s",
                           d->off + at, field, why);
}

static int bu8(struct bdec *d, const char *field, uint8_t *ret)
{
        return rd_u8(&d->r, ret) < 0 ? btrunc(d, field) : 0;
}

static int bu16(struct bdec *d, const char *field, uint16_t *ret)
{
        return rd_u16le(&d->r, ret) < 0 ? btrunc(d, field) : 0;
}

static int bu32(struct bdec *d, const char *field, uint32_t *ret)
{
        return rd_u32le(&d->r, ret) < 0 ? btrunc(d, field) : 0;
}

/* A u64 at most max. */
static int bu64(struct bdec *d, const char *field, uint64_t max, uint64_t *ret)
{
        size_t at = rd_offset(&d->r);

        if (rd_u64le(&d->r, ret) < 0)
                return btrunc(d, field);
        if (*ret > max)
                return bbad(d, at, field, "out of range");
        return 0;
}

static int bbytes(struct bdec *d, const char *field, void *out, size_t n)
{
        return rd_copy(&d->r, out, n) < 0 ? btrunc(d, field) : 0;
}

static int get_spec(struct bdec *d, struct boot_state *s)
{
        uint8_t n = 0;
        size_t at = rd_offset(&d->r);
        int x;

        if ((x = bu8(d, "n_algs", &n)) < 0)
                return x;
        if (n == 0 || n > TCGLOG_ALGS_MAX)
                return bbad(d, at, "n_algs", "not in 1-8");
        s->spec.n_algs = n;
        for (unsigned i = 0; i < n; i++) {
                struct tcglog_alg *a = &s->spec.algs[i];
                int b;

                at = rd_offset(&d->r);
                if ((x = bu16(d, "alg", &a->alg_id)) < 0 || (x = bu16(d, "alg", &a->size)) < 0)
                        return x;
                b = bank_from_tpm_alg(a->alg_id);
                if (a->size == 0 || a->size > TCGLOG_DIGEST_MAX ||
                    (b >= 0 && bank_size((enum bank)b) != a->size))
                        return bbad(d, at, "alg", "bad digest size");
                for (unsigned j = 0; j < i; j++)
                        if (s->spec.algs[j].alg_id == a->alg_id)
                                return bbad(d, at, "alg", "listed twice");
                a->bank = b < 0 ? -1 : b;
                if (b >= 0)
                        s->banks |= BANK_MASK(b);
        }
        if ((x = bu32(d, "platform_class", &s->spec.platform_class)) < 0 ||
            (x = bu8(d, "spec", &s->spec.version_minor)) < 0 ||
            (x = bu8(d, "spec", &s->spec.version_major)) < 0 ||
            (x = bu8(d, "spec", &s->spec.errata)) < 0 ||
            (x = bu8(d, "spec", &s->spec.uintn_size)) < 0)
                return x;
        return 0;
}

static int get_claims(struct bdec *d, struct boot_state *s)
{
        struct boot_claims *c = &s->claims;
        uint64_t below = s->entries - 1;
        size_t at = rd_offset(&d->r);
        uint8_t f = 0;
        int x;

        if ((x = bu8(d, "flags", &f)) < 0)
                return x;
        if ((f & ~BF_ALL) || ((f & BF_SB) && !(f & BF_SB_SEEN)))
                return bbad(d, at, "flags", "unknown bits or secureboot without seen");
        c->secureboot_seen = f & BF_SB_SEEN;
        c->secureboot = f & BF_SB;
        c->locality_seen = f & BF_LOC;
        if (c->secureboot_seen &&
            (x = bu64(d, "secureboot_entry", below, &c->secureboot_entry)) < 0)
                return x;
        at = rd_offset(&d->r);
        if ((x = bu8(d, "vars", &c->vars_seen)) < 0)
                return x;
        if (c->vars_seen >> BOOT_VAR__COUNT)
                return bbad(d, at, "vars", "unknown bits");
        for (int i = 0; i < BOOT_VAR__COUNT; i++)
                if ((c->vars_seen & (1u << i)) &&
                    ((x = bu64(d, "var_entry", below, &c->var_entry[i])) < 0 ||
                     (x = bbytes(d, "var_sha256", c->var_sha256[i], 32)) < 0))
                        return x;
        if ((x = bu32(d, "apps_total", &c->apps_total)) < 0)
                return x;
        at = rd_offset(&d->r);
        if ((x = bu8(d, "apps", &c->n_apps)) < 0)
                return x;
        if (c->n_apps > BOOT_APPS_MAX || c->n_apps > c->apps_total || c->apps_total > s->entries)
                return bbad(d, at, "apps", "more kept than allowed or seen");
        for (unsigned i = 0; i < c->n_apps; i++) {
                struct boot_app *a = &c->apps[i];

                if ((x = bu64(d, "app_entry", below, &a->entry)) < 0)
                        return x;
                at = rd_offset(&d->r);
                if ((x = bu8(d, "app_bank", &a->bank)) < 0)
                        return x;
                if (a->bank >= BANK_COUNT || !(s->banks & BANK_MASK(a->bank)))
                        return bbad(d, at, "app_bank", "not a bank of the log");
                if ((x = bbytes(d, "app_digest", a->digest, bank_size((enum bank)a->bank))) < 0)
                        return x;
        }
        if ((x = bu8(d, "separators", &c->separators)) < 0)
                return x;
        at = rd_offset(&d->r);
        if ((x = bu8(d, "separator_errors", &c->separator_errors)) < 0)
                return x;
        if (c->separator_errors & ~c->separators)
                return bbad(d, at, "separator_errors", "error without a separator");
        if (c->locality_seen && ((x = bu8(d, "locality", &c->locality)) < 0 ||
                                 (x = bu64(d, "locality_entry", below, &c->locality_entry)) < 0))
                return x;
        return 0;
}

int boot_state_get_in(const uint8_t *p, size_t n, size_t off, struct boot_state *s,
                      struct attest_err *err)
{
        struct bdec d = {.r = RD_INIT(p, n), .off = off, .err = err};
        size_t at;
        int x;

        if ((x = bu64(&d, "offset", INT64_MAX, &s->offset)) < 0)
                return x;
        at = rd_offset(&d.r);
        if ((x = bu64(&d, "entries", TCGLOG_ENTRIES_MAX, &s->entries)) < 0)
                return x;
        if (s->entries == 0 || s->entries > s->offset)
                return bbad(&d, at, "entries", "no entry, or more entries than bytes");
        if ((x = get_spec(&d, s)) < 0)
                return x;
        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; (s->banks & BANK_MASK(b)) && i < BOOT_PCRS; i++)
                        if ((x = bbytes(&d, "pcrs", s->pcr[b][i], bank_size((enum bank)b))) < 0)
                                return x;
        if ((x = get_claims(&d, s)) < 0)
                return x;
        if (rd_left(&d.r))
                return bbad(&d, rd_offset(&d.r), "end", "bytes after the section");
        s->valid = true;
        return 0;
}

int boot_state_get(const uint8_t *p, size_t n, size_t off, struct boot_state *ret,
                   struct attest_err *err)
{
        struct boot_state s;
        int x;

        boot_state_init(&s);
        if ((x = boot_state_get_in(p, n, off, &s, err)) < 0)
                return x;
        *ret = s;
        return 0;
}
