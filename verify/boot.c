/* SPDX-License-Identifier: MIT */
/* Measured boot: replay of the firmware event log and its claims (verify/boot.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/hex.h"
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
                c->separators |= (uint8_t)(1u << e->pcr);
                if (e->size == 4 && memcmp(e->data, "\xff\xff\xff\xff", 4) == 0)
                        c->separator_errors |= (uint8_t)(1u << e->pcr);
                return 0;
        case EV_EFI_VARIABLE_DRIVER_CONFIG:
                return e->pcr == BOOT_SB_PCR ? var_claim(c, h, e, err) : 0;
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
                s = *prev;
                if ((x = compare(&s, sel, pcrs, &r, err)) < 0)
                        return x;
                *next = s;
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
