/* SPDX-License-Identifier: MIT */
/*
 * The TCG2 firmware event log reader (evidence/tcglog.c) and the boot replay (verify/boot.c): the
 * real SeaBIOS logs of tests/data replayed to their PCR files in all four banks, every error with
 * its entry and byte offset, the caps at cap - 1, cap and cap + 1, truncation at every byte, the
 * boot claims, incremental rounds, a replay mismatch naming PCR and bank.
 */
#include <check.h>
#include <errno.h>

#include "evidence/tcglog.h"
#include "tests/lib/tcglogen.h"
#include "tests/unit/testutil.h"
#include "util/hex.h"
#include "verify/boot.h"

/* Read the whole log: the entry count, or the error. */
static int read_all(const uint8_t *b, size_t n, uint64_t *ret_entries, struct attest_err *err)
{
        struct tcglog_reader lr;
        struct tcglog_event e;
        int x;

        tcglog_reader_init(&lr, b, n);
        while ((x = tcglog_next(&lr, &e, err)) > 0)
                ;
        if (ret_entries)
                *ret_entries = lr.index;
        return x;
}

/* Replay a whole log through the verifier's code into s. */
static int replay(const uint8_t *b, size_t n, struct boot_state *s, struct attest_err *err)
{
        struct evidence ev = {.boot_log = (uint8_t *)b, .boot_log_len = n};
        struct pcr_sel sel = {{0}};
        struct pcr_set none = {0};
        struct boot_result r;

        return boot_verify(&ev, &sel, &none, NULL, s, &r, err);
}

/* PCR lines "N HEX" of tests/data/<boot>/pcrs-<bank>.txt into v. */
static void read_pcrs(const char *boot, enum bank b, uint8_t v[PCR_COUNT][BANK_DIGEST_MAX])
{
        char rel[256], *buf, *line, *save = NULL;
        size_t n;

        snprintf(rel, sizeof(rel), "tests/data/%s/pcrs-%s.txt", boot, bank_name(b));
        buf = tu_read(rel, &n);
        ck_assert_msg(buf != NULL, "no %s", rel);
        for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                unsigned i = 0;
                char hex[2 * BANK_DIGEST_MAX + 1];
                size_t got = 0;

                ck_assert_int_eq(sscanf(line, "%u %128s", &i, hex), 2);
                ck_assert_uint_lt(i, PCR_COUNT);
                ck_assert_int_eq(hex_decode(hex, strlen(hex), v[i], BANK_DIGEST_MAX, &got), 0);
                ck_assert_uint_eq(got, bank_size(b));
        }
        free(buf);
}

START_TEST(test_real_seabios_logs_replay_to_their_pcrs)
{
        char **boots = tu_boots();
        unsigned n_boots = 0, n_uefi = 0;

        for (size_t k = 0; boots[k]; k++) {
                char rel[256];
                size_t n;
                uint8_t *log;
                struct boot_state s;
                struct attest_err err = {0};
                char *expect;
                size_t en;

                snprintf(rel, sizeof(rel), "tests/data/%s/binary_bios_measurements", boots[k]);
                if (!(log = (uint8_t *)tu_read(rel, &n)))
                        continue;
                ck_assert_msg(replay(log, n, &s, &err) == 0, "%s: %s", boots[k], err.msg);
                ck_assert_uint_eq(s.offset, n);
                ck_assert_uint_eq(s.banks, BANK_MASK_ALL);
                ck_assert_uint_eq(s.claims.separators, 0xff);
                snprintf(rel, sizeof(rel), "tests/data/%s/expect.txt", boots[k]);
                if ((expect = tu_read(rel, &en))) {
                        /* UEFI (OVMF): what the capture computed independently (Secure Boot,
                         * the Authenticode sha256 of boot loader and kernel) */
                        char sb[8] = "", want_l[65] = "", want_k[65] = "", got[65];

                        ck_assert_int_eq(
                                sscanf(expect,
                                       "secureboot %7s bootloader_authenticode_sha256 %64s "
                                       "kernel_authenticode_sha256 %64s",
                                       sb, want_l, want_k),
                                3);
                        ck_assert(s.claims.secureboot_seen);
                        ck_assert_int_eq(s.claims.secureboot, sb[0] == '1');
                        ck_assert_uint_eq(s.claims.vars_seen, 0xf);
                        ck_assert_uint_eq(s.claims.separator_errors, 0);
                        ck_assert_uint_ge(s.claims.n_apps, 2);
                        hex_encode(s.claims.apps[0].digest, 32, got);
                        ck_assert_str_eq(got, want_l);
                        hex_encode(s.claims.apps[s.claims.n_apps - 1].digest, 32, got);
                        ck_assert_str_eq(got, want_k);
                        n_uefi++;
                        free(expect);
                } else {
                        /* SeaBIOS: 14 entries, separators FFFFFFFFh (delimiters, as the PFP
                         * allows: no error), no UEFI claims */
                        ck_assert_uint_eq(s.entries, 14);
                        ck_assert_uint_eq(s.claims.separator_errors, 0);
                        ck_assert(!s.claims.secureboot_seen && !s.claims.n_apps);
                }
                for (int b = 0; b < BANK_COUNT; b++) {
                        uint8_t v[PCR_COUNT][BANK_DIGEST_MAX];

                        read_pcrs(boots[k], (enum bank)b, v);
                        for (unsigned i = 0; i < BOOT_PCRS; i++)
                                ck_assert_msg(memcmp(s.pcr[b][i], v[i], bank_size(b)) == 0,
                                              "%s: PCR %u %s", boots[k], i, bank_name(b));
                }
                n_boots++;
                free(log);
        }
        ck_assert_uint_ge(n_boots, 6);
        /* the OVMF captures (Secure Boot on and off), once they are in tests/data */
        ck_assert(n_uefi == 0 || n_uefi >= 2);
        tu_boots_free(boots);
}
END_TEST

/* A log with every event the claims use, two banks. */
static const uint8_t pk[] = "PK: an X.509 certificate list", kek[] = "KEK list", db[] = "db list",
                     dbx[] = "dbx hashes";

static void sample(struct tlg *g, bool secureboot)
{
        uint8_t sb = secureboot ? 1 : 0;

        tlg_begin(g, NULL, NULL, 0);
        tlg_locality(g, 3);
        tlg_event(g, 0, EV_S_CRTM_VERSION, "1\0.\0000\0\0\0", 8);
        tlg_event(g, 0, EV_POST_CODE, "POST CODE", 9);
        tlg_efi_var(g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "SecureBoot", &sb, 1);
        tlg_efi_var(g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "PK", pk, sizeof(pk));
        tlg_efi_var(g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "KEK", kek,
                    sizeof(kek));
        tlg_efi_var(g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_security, "db", db,
                    sizeof(db));
        tlg_efi_var(g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_security, "dbx", dbx,
                    sizeof(dbx));
        tlg_efi_var(g, 1, EV_EFI_VARIABLE_BOOT, tcglog_guid_global, "BootOrder", "\0\0", 2);
        for (uint32_t i = 0; i < BOOT_PCRS; i++)
                tlg_event(g, i, EV_SEPARATOR, "\0\0\0\0", 4);
        tlg_event(g, 4, EV_EFI_ACTION, "Calling EFI Application from Boot Option", 40);
        tlg_app(g, "shim image", 10);
        tlg_app(g, "grub image", 10);
        tlg_app(g, "kernel image", 12);
        tlg_event(g, 5, EV_EFI_ACTION, "Exit Boot Services Invocation", 29);
}

START_TEST(test_claims_of_a_uefi_log)
{
        struct tlg g;
        struct boot_state s;
        struct attest_err err = {0};
        uint8_t want[32], pcr0[32] = {0};
        struct hasher *h = NULL;

        sample(&g, true);
        ck_assert_msg(replay(g.buf, g.len, &s, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(s.banks, BANK_MASK(BANK_SHA1) | BANK_MASK(BANK_SHA256));
        ck_assert(s.claims.secureboot_seen && s.claims.secureboot);
        ck_assert_uint_eq(s.claims.secureboot_entry, 4);
        ck_assert_uint_eq(s.claims.vars_seen, 0xf);
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(hasher_digest(h, BANK_SHA256, dbx, sizeof(dbx), want), 0);
        ck_assert_mem_eq(s.claims.var_sha256[BOOT_VAR_DBX], want, 32);
        ck_assert_int_eq(hasher_digest(h, BANK_SHA256, pk, sizeof(pk), want), 0);
        ck_assert_mem_eq(s.claims.var_sha256[BOOT_VAR_PK], want, 32);
        ck_assert_uint_eq(s.claims.n_apps, 3);
        ck_assert_uint_eq(s.claims.apps[0].bank, BANK_SHA256);
        ck_assert_int_eq(hasher_digest(h, BANK_SHA256, "kernel image", 12, want), 0);
        ck_assert_mem_eq(s.claims.apps[2].digest, want, 32);
        ck_assert_uint_eq(s.claims.separators, 0xff);
        ck_assert_uint_eq(s.claims.separator_errors, 0);
        ck_assert(s.claims.locality_seen);
        ck_assert_uint_eq(s.claims.locality, 3);
        /* PCR 0 started at ...03 (PFP: locality 3), then S-CRTM version, POST code, separator */
        pcr0[31] = 3;
        {
                uint8_t d[32];

                ck_assert_int_eq(hasher_digest(h, BANK_SHA256, "1\0.\0000\0\0\0", 8, d), 0);
                ck_assert_int_eq(hasher_extend(h, BANK_SHA256, pcr0, d), 0);
                ck_assert_int_eq(hasher_digest(h, BANK_SHA256, "POST CODE", 9, d), 0);
                ck_assert_int_eq(hasher_extend(h, BANK_SHA256, pcr0, d), 0);
                ck_assert_int_eq(hasher_digest(h, BANK_SHA256, "\0\0\0\0", 4, d), 0);
                ck_assert_int_eq(hasher_extend(h, BANK_SHA256, pcr0, d), 0);
        }
        ck_assert_mem_eq(s.pcr[BANK_SHA256][0], pcr0, 32);
        tlg_free(&g);
        sample(&g, false);
        ck_assert_int_eq(replay(g.buf, g.len, &s, &err), 0);
        ck_assert(s.claims.secureboot_seen && !s.claims.secureboot);
        tlg_free(&g);
        hasher_free(h);
}
END_TEST

/* Incremental: two rounds over a split log give the one-round state; a bad offset is refused. */
START_TEST(test_incremental_rounds_and_offsets)
{
        struct tlg g;
        struct boot_state whole, a, b;
        struct boot_result r;
        struct attest_err err = {0};
        struct pcr_sel sel = {{0}};
        struct pcr_set q = {0};
        struct evidence ev = {0};
        struct tcglog_reader lr;
        struct tcglog_event e;
        size_t cut = 0;

        sample(&g, true);
        ck_assert_int_eq(replay(g.buf, g.len, &whole, &err), 0);
        /* cut after entry 9 */
        tcglog_reader_init(&lr, g.buf, g.len);
        for (int i = 0; i < 10; i++)
                ck_assert_int_eq(tcglog_next(&lr, &e, &err), 1);
        cut = (size_t)e.end;
        /* the quote covers sha256 PCR 0-7 with the values of the whole log */
        sel.mask[BANK_SHA256] = 0xff;
        q.have[BANK_SHA256] = 0xff;
        memcpy(q.v[BANK_SHA256], whole.pcr[BANK_SHA256], sizeof(whole.pcr[BANK_SHA256]));
        ev.boot_log = g.buf;
        ev.boot_log_len = cut;
        /* round 1: half the log does not replay to the quote */
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, NULL, &a, &r, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_BOOT_REPLAY_MISMATCH);
        ck_assert_msg(strstr(err.msg, "PCR 0 sha256: ") == err.msg, "%s", err.msg);
        /* without a quote of PCR 0-7 it is accepted unchecked */
        ck_assert_int_eq(boot_verify(&ev, &(struct pcr_sel){{0}}, &q, NULL, &a, &r, &err), 0);
        ck_assert_uint_eq(r.matched, 0);
        ck_assert_uint_eq(a.offset, cut);
        ck_assert_uint_eq(a.entries, 10);
        /* round 2: the rest from the stored offset */
        ev.boot_offset = cut;
        ev.boot_log = g.buf + cut;
        ev.boot_log_len = g.len - cut;
        ck_assert_msg(boot_verify(&ev, &sel, &q, &a, &b, &r, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(r.matched, 0xff);
        ck_assert_uint_eq(r.new_entries, whole.entries - 10);
        ck_assert_uint_eq(b.offset, g.len);
        ck_assert_mem_eq(b.pcr, whole.pcr, sizeof(whole.pcr));
        ck_assert_mem_eq(&b.claims, &whole.claims, sizeof(whole.claims));
        /* round 3: nothing new, the stored replay still answers the quote */
        ev.boot_offset = g.len;
        ev.boot_log_len = 0;
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, &b, &a, &r, &err), 0);
        ck_assert_uint_eq(r.matched, 0xff);
        /* an offset that is neither 0 nor the stored one */
        ev.boot_offset = cut;
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, &b, &a, &r, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_BOOT_OFFSET_MISMATCH);
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, NULL, &a, &r, &err), -ESTALE);
        /* offset 0 with a stored state: replayed from scratch */
        ev.boot_offset = 0;
        ev.boot_log = g.buf;
        ev.boot_log_len = g.len;
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, &b, &a, &r, &err), 0);
        ck_assert(r.restarted);
        ck_assert_uint_eq(a.entries, whole.entries);
        /* a changed quoted value is caught, naming the PCR and bank */
        q.v[BANK_SHA256][7][0] ^= 1;
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, &b, &a, &r, &err), -ESTALE);
        ck_assert_msg(strstr(err.msg, "PCR 7 sha256: the firmware event log (23 entries)"), "%s",
                      err.msg);
        /* and so is a changed stored state (no log sent) */
        ck_assert_int_eq(boot_verify(&(struct evidence){0}, &sel, &q, &b, &a, &r, &err), -ESTALE);
        tlg_free(&g);
}
END_TEST

/* One crafted bad log and what the reader must say. */
struct bad_case {
        const char *name;
        int e;
        enum attest_code code;
        const char *msg;
};

static void expect(const struct tlg *g, const struct bad_case *c)
{
        struct attest_err err = {0};
        int x = read_all(g->buf, g->len, NULL, &err);

        ck_assert_msg(x == c->e, "%s: %d (%s)", c->name, x, err.msg);
        ck_assert_msg(err.code == c->code, "%s: %s", c->name, attest_code_name(err.code));
        ck_assert_msg(strstr(err.msg, c->msg) != NULL, "%s: '%s' lacks '%s'", c->name, err.msg,
                      c->msg);
}

START_TEST(test_every_error_names_entry_and_byte)
{
        struct tlg g;
        size_t second;

        /* not a crypto-agile log */
        tlg_begin(&g, NULL, NULL, 0);
        g.buf[32] = 'X';
        expect(&g, &(struct bad_case){"signature", -EBADMSG, AE_TCGLOG_BAD_SPECID,
                                      "entry 0 at byte 0: no \"Spec ID Event03\""});
        tlg_free(&g);
        /* first event on PCR 1 */
        tlg_begin(&g, NULL, NULL, 0);
        g.buf[0] = 1;
        expect(&g, &(struct bad_case){"first pcr", -EBADMSG, AE_TCGLOG_BAD_SPECID,
                                      "entry 0 at byte 0: first event is PCR 1"});
        tlg_free(&g);
        /* sha256 of 31 bytes */
        tlg_begin(&g, (uint16_t[]){0x000b}, (uint16_t[]){31}, 1);
        expect(&g, &(struct bad_case){"size", -EBADMSG, AE_TCGLOG_BAD_SPECID,
                                      "algorithm 0x000b: digestSize 31, not 32"});
        tlg_free(&g);
        /* an algorithm twice */
        tlg_begin(&g, (uint16_t[]){0x000b, 0x000b}, (uint16_t[]){32, 32}, 2);
        expect(&g, &(struct bad_case){"twice", -EBADMSG, AE_TCGLOG_BAD_SPECID, "listed twice"});
        tlg_free(&g);
        /* major version 1 */
        tlg_begin(&g, NULL, NULL, 0);
        g.buf[32 + 16 + 4 + 1] = 1;
        expect(&g,
               &(struct bad_case){"major", -EBADMSG, AE_TCGLOG_BAD_SPECID, "specVersionMajor 1"});
        tlg_free(&g);
        /* an event on PCR 24, after the Spec ID event */
        tlg_begin(&g, NULL, NULL, 0);
        second = g.len;
        tlg_event(&g, 24, EV_ACTION, "x", 1);
        {
                char m[64];

                snprintf(m, sizeof(m), "entry 1 at byte %zu: pcrIndex 24 > 23", second);
                expect(&g, &(struct bad_case){"pcr", -EBADMSG, AE_TCGLOG_BAD_PCR, m});
        }
        tlg_free(&g);
        /* fewer digests than algorithms */
        tlg_begin(&g, NULL, NULL, 0);
        tlg_event(&g, 0, EV_ACTION, "x", 1);
        g.buf[second + 8] = 1;
        expect(&g, &(struct bad_case){"count", -EBADMSG, AE_TCGLOG_BAD_DIGEST,
                                      "1 digests, the Spec ID event lists 2"});
        /* an algorithm the Spec ID event does not list */
        g.buf[second + 8] = 2;
        g.buf[second + 12] = 0x0c;
        expect(&g, &(struct bad_case){"alg", -EBADMSG, AE_TCGLOG_BAD_DIGEST,
                                      "digest 0: algorithm 0x000c not in the Spec ID event"});
        /* the same algorithm twice */
        g.buf[second + 12] = 0x04;
        g.buf[second + 34] = 0x04;
        expect(&g, &(struct bad_case){"dup", -EBADMSG, AE_TCGLOG_BAD_DIGEST, "given twice"});
        tlg_free(&g);
        /* a StartupLocality event of the wrong size is a bad event for the claims */
        {
                struct boot_state s;
                struct attest_err err = {0};

                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 0, EV_NO_ACTION, "StartupLocality\0\3\3", 18);
                ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
                ck_assert_int_eq(err.code, AE_TCGLOG_BAD_EVENT);
                ck_assert_msg(strstr(err.msg, "$.boot_log.data: entry 1 at byte"), "%s", err.msg);
                tlg_free(&g);
                /* a malformed UEFI_VARIABLE_DATA on PCR 7 */
                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, "short", 5);
                ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
                ck_assert_msg(strstr(err.msg, "UEFI_VARIABLE_DATA malformed"), "%s", err.msg);
                tlg_free(&g);
                /* a malformed UEFI_IMAGE_LOAD_EVENT on PCR 4 */
                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 4, EV_EFI_BOOT_SERVICES_APPLICATION, "short", 5);
                ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
                ck_assert_msg(strstr(err.msg, "UEFI_IMAGE_LOAD_EVENT malformed"), "%s", err.msg);
                tlg_free(&g);
        }
}
END_TEST

/*
 * The data a claim reads must be what the digests cover: a SecureBoot variable flipped to 1 under
 * the digests of 0 (so that the replay still matches) is refused, as is a changed separator.
 */
START_TEST(test_claim_data_must_match_its_digests)
{
        struct tlg g;
        struct boot_state s;
        struct attest_err err = {0};
        uint8_t off = 0;

        tlg_begin(&g, NULL, NULL, 0);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "SecureBoot", &off,
                    1);
        ck_assert_int_eq(replay(g.buf, g.len, &s, &err), 0);
        ck_assert(s.claims.secureboot_seen && !s.claims.secureboot);
        g.buf[g.len - 1] = 1; /* the variable's data byte, digests unchanged */
        ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_TCGLOG_BAD_EVENT);
        ck_assert_msg(strstr(err.msg, "entry 1 at byte 69: its sha1 digest is not the hash of its "
                                      "data"),
                      "%s", err.msg);
        tlg_free(&g);
        tlg_begin(&g, NULL, NULL, 0);
        tlg_event(&g, 3, EV_SEPARATOR, "\0\0\0\0", 4);
        g.buf[g.len - 1] = 0xff;
        ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_TCGLOG_BAD_EVENT);
        tlg_free(&g);
}
END_TEST

/*
 * EV_SEPARATOR as the TCG PC Client PFP defines it: a delimiter's data is 00000000h or FFFFFFFFh
 * (SeaBIOS), bound to its digests; an error's digests are the hash of 00000001h whatever its data
 * (EDK2 records 01000000 itself, other firmware a description); any other bound value is shown as
 * an error; digests of neither are a malformed event.
 */
START_TEST(test_separator_values_as_the_pfp_defines)
{
        static const char why[] = "firmware volume hash mismatch";
        struct tlg g;
        struct boot_state s;
        struct attest_err err = {0};

        tlg_begin(&g, NULL, NULL, 0);
        tlg_event(&g, 0, EV_SEPARATOR, "\0\0\0\0", 4);
        tlg_event(&g, 1, EV_SEPARATOR, "\xff\xff\xff\xff", 4);
        tlg_event(&g, 2, EV_SEPARATOR, "\x01\0\0\0", 4);
        tlg_event_of(&g, 3, EV_SEPARATOR, why, sizeof(why) - 1, "\x01\0\0\0", 4);
        tlg_event(&g, 4, EV_SEPARATOR, "\x02\0\0\0", 4);
        tlg_event(&g, 5, EV_SEPARATOR, "\0\0\0\0\0", 5);
        tlg_event(&g, 6, EV_SEPARATOR, "\0\0\0\0", 4);
        tlg_event(&g, 7, EV_SEPARATOR, "\xff\xff\xff\xff", 4);
        ck_assert_msg(replay(g.buf, g.len, &s, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(s.claims.separators, 0xff);
        ck_assert_uint_eq(s.claims.separator_errors, 0x3c); /* PCRs 2, 3, 4, 5 */
        tlg_free(&g);

        /* data 00000000h, digests of 00000002h: neither its data nor the error value */
        tlg_begin(&g, NULL, NULL, 0);
        tlg_event_of(&g, 4, EV_SEPARATOR, "\0\0\0\0", 4, "\x02\0\0\0", 4);
        ck_assert_int_eq(replay(g.buf, g.len, &s, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_TCGLOG_BAD_EVENT);
        ck_assert_msg(strstr(err.msg, "entry 1 at byte 69: EV_SEPARATOR whose sha1 digest is the "
                                      "hash of neither its data nor the error value 00000001h"),
                      "%s", err.msg);
        tlg_free(&g);
}
END_TEST

/* Truncated at every byte: an error naming an entry, never a crash or a success past a cut. */
START_TEST(test_truncation_at_every_byte)
{
        struct tlg g;
        struct tcglog_reader lr;
        struct tcglog_event e;
        struct attest_err err;
        uint64_t ends[64];
        unsigned n_ends = 0;

        sample(&g, true);
        tcglog_reader_init(&lr, g.buf, g.len);
        while (tcglog_next(&lr, &e, NULL) > 0 && n_ends < 64)
                ends[n_ends++] = e.end;
        for (size_t k = 0; k < g.len; k++) {
                bool boundary = false;
                int x;

                for (unsigned i = 0; i < n_ends; i++)
                        boundary |= ends[i] == k;
                memset(&err, 0, sizeof(err));
                x = read_all(g.buf, k, NULL, &err);
                if (boundary || k == 0) {
                        ck_assert_msg(x == 0, "cut %zu at an entry boundary: %s", k, err.msg);
                        continue;
                }
                ck_assert_msg(x == -EBADMSG, "cut %zu: %d", k, x);
                ck_assert_msg(strncmp(err.msg, "entry ", 6) == 0, "cut %zu: %s", k, err.msg);
        }
        tlg_free(&g);
}
END_TEST

/* A failed read leaves the reader where it was. */
START_TEST(test_failed_read_leaves_reader_unchanged)
{
        struct tlg g;
        struct tcglog_reader lr, before;
        struct tcglog_event e;

        tlg_begin(&g, NULL, NULL, 0);
        tlg_event(&g, 30, EV_ACTION, "x", 1);
        tcglog_reader_init(&lr, g.buf, g.len);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        before = lr;
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), -EBADMSG);
        ck_assert_mem_eq(&lr, &before, sizeof(lr));
        tlg_free(&g);
}
END_TEST

START_TEST(test_event_size_cap)
{
        static const size_t sizes[] = {TCGLOG_EVENT_MAX - 1, TCGLOG_EVENT_MAX,
                                       TCGLOG_EVENT_MAX + 1};
        uint8_t *data = calloc(1, TCGLOG_EVENT_MAX + 1);

        for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
                struct tlg g;
                struct attest_err err = {0};
                int x;

                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 2, EV_EFI_HANDOFF_TABLES2, data, sizes[k]);
                x = read_all(g.buf, g.len, NULL, &err);
                if (sizes[k] > TCGLOG_EVENT_MAX) {
                        ck_assert_int_eq(x, -E2BIG);
                        ck_assert_int_eq(err.code, AE_TCGLOG_TOO_BIG);
                        ck_assert_msg(strstr(err.msg, "entry 1 at byte 69: eventSize > 65536"),
                                      "%s", err.msg);
                } else {
                        ck_assert_msg(x == 0, "%zu: %s", sizes[k], err.msg);
                }
                tlg_free(&g);
        }
        free(data);
}
END_TEST

START_TEST(test_algorithm_count_cap)
{
        static const uint16_t algs[9] = {0x0004, 0x000b, 0x000c, 0x000d, 0x0012,
                                         0x0027, 0x0028, 0x0029, 0x0010};
        static const uint16_t sizes[9] = {20, 32, 48, 64, 32, 32, 48, 64, 32};

        for (unsigned n = TCGLOG_ALGS_MAX - 1; n <= TCGLOG_ALGS_MAX + 1; n++) {
                struct tlg g;
                struct attest_err err = {0};
                struct boot_state s;
                int x;

                tlg_begin(&g, algs, sizes, n);
                tlg_event(&g, 0, EV_SEPARATOR, "\0\0\0\0", 4);
                x = replay(g.buf, g.len, &s, &err);
                if (n > TCGLOG_ALGS_MAX) {
                        ck_assert_int_eq(x, -E2BIG);
                        ck_assert_msg(strstr(err.msg, "numberOfAlgorithms 9 not in 1-8"), "%s",
                                      err.msg);
                } else {
                        ck_assert_msg(x == 0, "%u: %s", n, err.msg);
                        ck_assert_uint_eq(s.banks, BANK_MASK_ALL); /* unknown ones not replayed */
                }
                tlg_free(&g);
        }
}
END_TEST

START_TEST(test_entry_count_cap)
{
        struct tlg g;
        struct attest_err err = {0};
        uint64_t n = 0;

        /* minimal events: one sha1 digest; the Spec ID event counts as entry 0 */
        tlg_begin(&g, (uint16_t[]){0x0004}, (uint16_t[]){20}, 1);
        for (unsigned i = 1; i < TCGLOG_ENTRIES_MAX - 1; i++)
                tlg_event(&g, 1, EV_ACTION, NULL, 0);
        ck_assert_int_eq(read_all(g.buf, g.len, &n, &err), 0); /* cap - 1 */
        ck_assert_uint_eq(n, TCGLOG_ENTRIES_MAX - 1);
        tlg_event(&g, 1, EV_ACTION, NULL, 0);
        ck_assert_int_eq(read_all(g.buf, g.len, &n, &err), 0); /* cap */
        ck_assert_uint_eq(n, TCGLOG_ENTRIES_MAX);
        tlg_event(&g, 1, EV_ACTION, NULL, 0);
        ck_assert_int_eq(read_all(g.buf, g.len, &n, &err), -E2BIG); /* cap + 1 */
        ck_assert_int_eq(err.code, AE_TCGLOG_TOO_BIG);
        ck_assert_msg(strstr(err.msg, "entry 65536 at byte"), "%s", err.msg);
        tlg_free(&g);
}
END_TEST

START_TEST(test_efi_variable_names)
{
        struct tlg g;
        struct tcglog_reader lr;
        struct tcglog_event e;
        struct tcglog_efi_var v;
        char longname[TCGLOG_VARNAME_MAX + 2];

        memset(longname, 'A', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        tlg_begin(&g, NULL, NULL, 0);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "SecureBoot", "\1",
                    1);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, longname, "", 0);
        tcglog_reader_init(&lr, g.buf, g.len);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_efi_var_parse(&e, &v), 0);
        ck_assert_str_eq(v.name, "SecureBoot");
        ck_assert_uint_eq(v.data_len, 1);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_efi_var_parse(&e, &v), 0);
        ck_assert_str_eq(v.name, ""); /* 65 characters: not decoded */
        ck_assert_uint_eq(v.name_chars, TCGLOG_VARNAME_MAX + 1);
        /* a data length past the event */
        e.size -= 1;
        ck_assert_int_eq(tcglog_efi_var_parse(&e, &v), -EBADMSG);
        tlg_free(&g);
        /* VariableDataLength 1 with 2 bytes after the name: trailing bytes are refused */
        {
                uint8_t raw[16 + 8 + 8 + 2 + 2] = {0};

                raw[16] = 1; /* UnicodeNameLength 1 */
                raw[24] = 1; /* VariableDataLength 1 */
                raw[32] = 'X';
                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, raw, sizeof(raw));
                tcglog_reader_init(&lr, g.buf, g.len);
                ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
                ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
                ck_assert_int_eq(tcglog_efi_var_parse(&e, &v), -EBADMSG);
                raw[24] = 2; /* exact: accepted */
                tlg_free(&g);
                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, raw, sizeof(raw));
                tcglog_reader_init(&lr, g.buf, g.len);
                ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
                ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
                ck_assert_int_eq(tcglog_efi_var_parse(&e, &v), 0);
                ck_assert_str_eq(v.name, "X");
                tlg_free(&g);
        }
}
END_TEST

START_TEST(test_event_text)
{
        struct tlg g;
        struct tcglog_reader lr;
        struct tcglog_event e;
        char t[8];

        tlg_begin(&g, NULL, NULL, 0);
        tlg_event(&g, 0, EV_S_CRTM_VERSION, "1\0.\0\x30\0\0\0", 8); /* UTF-16 "1.0" */
        tlg_event(&g, 4, EV_EFI_ACTION, "Calling EFI Application", 23);
        tlg_event(&g, 0, EV_POST_CODE, "ab\n", 3);                    /* not printable */
        tlg_event(&g, 0, EV_S_CRTM_VERSION, "\0\0\0\0\0\0\0\0\0", 9); /* odd size */
        tlg_event(&g, 0, EV_SEPARATOR, "\0\0\0\0", 4);
        tcglog_reader_init(&lr, g.buf, g.len);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_event_text(&e, t, sizeof(t)), 1);
        ck_assert_str_eq(t, "1.0");
        ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
        ck_assert_int_eq(tcglog_event_text(&e, t, sizeof(t)), 1);
        ck_assert_str_eq(t, "Calling"); /* cut to the buffer */
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(tcglog_next(&lr, &e, NULL), 1);
                ck_assert_int_eq(tcglog_event_text(&e, t, sizeof(t)), 0);
                ck_assert_str_eq(t, "");
        }
        tlg_free(&g);
}
END_TEST

static Suite *tcglog_suite(void)
{
        Suite *s = suite_create("tcglog");
        TCase *tc = tcase_create("reader");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_real_seabios_logs_replay_to_their_pcrs);
        tcase_add_test(tc, test_claims_of_a_uefi_log);
        tcase_add_test(tc, test_incremental_rounds_and_offsets);
        tcase_add_test(tc, test_every_error_names_entry_and_byte);
        tcase_add_test(tc, test_truncation_at_every_byte);
        tcase_add_test(tc, test_claim_data_must_match_its_digests);
        tcase_add_test(tc, test_separator_values_as_the_pfp_defines);
        tcase_add_test(tc, test_failed_read_leaves_reader_unchanged);
        tcase_add_test(tc, test_event_size_cap);
        tcase_add_test(tc, test_algorithm_count_cap);
        tcase_add_test(tc, test_entry_count_cap);
        tcase_add_test(tc, test_efi_variable_names);
        tcase_add_test(tc, test_event_text);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(tcglog_suite());
}
