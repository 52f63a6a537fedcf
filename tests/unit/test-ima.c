/* SPDX-License-Identifier: MIT */
/* IMA log readers, template hashes, replay and boot_aggregate: real logs, synthetic edge cases,
 * truncation and corruption sweeps. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>

#include "util/hex.h"
#include "evidence/ima-internal.h"
#include "evidence/ima.h"
#include "tests/lib/imagen.h"
#include "tests/unit/testutil.h"

static struct pcr_set load_pcrs(const char *boot)
{
        struct pcr_set all = {0};
        static const char *const banks[] = {"sha1", "sha256", "sha384", "sha512"};

        for (size_t i = 0; i < 4; i++) {
                char rel[512];
                size_t len;
                struct pcr_set one;
                struct attest_err err = {0};

                snprintf(rel, sizeof(rel), "tests/data/%s/pcrs-%s.txt", boot, banks[i]);
                char *t = tu_read(rel, &len);
                if (!t)
                        continue;
                ck_assert_msg(pcrs_parse(t, len, &one, &err) == 0, "%s: %s", rel, err.msg);
                for (int b = 0; b < BANK_COUNT; b++) {
                        all.have[b] |= one.have[b];
                        for (int p = 0; p < PCR_COUNT; p++)
                                if (one.have[b] & (1u << p))
                                        memcpy(all.v[b][p], one.v[b][p], BANK_DIGEST_MAX);
                }
                free(t);
        }
        return all;
}

/* Replay a whole log buffer; returns the reader's or the replay's error, 0 on success. */
static int replay_buf(const uint8_t *buf, size_t len, bool ascii, unsigned banks,
                      struct ima_replay *rp, struct hasher *h, struct attest_err *err)
{
        struct ima_reader rd;
        struct ima_entry e;
        int x;

        if (ascii)
                ck_assert_int_eq(ima_reader_init_ascii(&rd, (const char *)buf, len, NULL), 0);
        else
                ima_reader_init_binary(&rd, buf, len, NULL);
        ima_replay_init(rp, h, banks, ascii);
        while ((x = ima_reader_next(&rd, &e, err)) > 0)
                if ((x = ima_replay_extend(rp, &e, rd.idx - 1, err)) < 0)
                        break;
        ima_reader_done(&rd);
        return x;
}

/* Every PCR the replay touched, and PCR 10 always, equals the TPM's value in every bank it had. */
static bool replay_matches(const struct ima_replay *rp, const struct pcr_set *pcrs, unsigned *n)
{
        bool ok = true;

        *n = 0;
        for (int b = 0; b < BANK_COUNT; b++) {
                if (!(rp->banks & BANK_MASK(b)))
                        continue;
                for (int p = 0; p < PCR_COUNT; p++) {
                        if (!((rp->used | (1u << IMA_PCR)) & (1u << p)) ||
                            !(pcrs->have[b] & (1u << p)))
                                continue;
                        (*n)++;
                        if (memcmp(rp->pcr[b][p], pcrs->v[b][p], bank_size(b)) != 0)
                                ok = false;
                }
        }
        return ok;
}

START_TEST(test_real_logs_replay_to_their_pcrs_in_every_bank)
{
        char **boots = tu_boots();
        struct hasher *h;
        unsigned nboots = 0;

        ck_assert_int_eq(hasher_new(&h), 0);
        for (size_t i = 0; boots[i]; i++) {
                char rel[512];
                size_t blen, alen;
                struct pcr_set pcrs = load_pcrs(boots[i]);
                struct ima_replay rb, ra;
                struct attest_err err = {0};
                unsigned n, banks_with_pcrs = 0;

                snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boots[i]);
                uint8_t *bin = (uint8_t *)tu_read(rel, &blen);
                snprintf(rel, sizeof(rel), "tests/data/%s/ascii_runtime_measurements", boots[i]);
                uint8_t *asc = (uint8_t *)tu_read(rel, &alen);
                ck_assert_ptr_nonnull(bin);
                ck_assert_ptr_nonnull(asc);
                for (int b = 0; b < BANK_COUNT; b++)
                        if (pcrs.have[b] & (1u << IMA_PCR))
                                banks_with_pcrs |= BANK_MASK(b);
                ck_assert_msg(banks_with_pcrs, "%s: no PCR 10 values", boots[i]);

                ck_assert_msg(replay_buf(bin, blen, false, BANK_MASK_ALL, &rb, h, &err) == 0,
                              "%s binary: %s", boots[i], err.msg);
                ck_assert_msg(replay_matches(&rb, &pcrs, &n), "%s: binary replay != PCRs",
                              boots[i]);
                ck_assert_uint_ge(n, (unsigned)__builtin_popcount(banks_with_pcrs));
                ck_assert_msg(replay_buf(asc, alen, true, BANK_MASK_ALL, &ra, h, &err) == 0,
                              "%s ascii: %s", boots[i], err.msg);
                ck_assert_msg(replay_matches(&ra, &pcrs, &n), "%s: ascii replay != PCRs", boots[i]);
                ck_assert_uint_eq(ra.entries, rb.entries);
                ck_assert_uint_eq(ra.violations, rb.violations);
                ck_assert_uint_gt(rb.entries, 0);
                free(bin);
                free(asc);
                nboots++;
        }
        ck_assert_uint_ge(nboots, 2);
        hasher_free(h);
        tu_boots_free(boots);
}
END_TEST

/* Two views of one field are equal: both absent, or the same bytes. */
static bool view_eq(const void *a, uint32_t an, const void *b, uint32_t bn)
{
        return an == bn && (a == NULL) == (b == NULL) && (an == 0 || memcmp(a, b, an) == 0);
}

/*
 * The ascii reader decodes each field as it rebuilds it (no second pass over the data); the
 * binary reader decodes the data with ima_tmpl_decode(). Every view must come out the same.
 */
static void assert_same_entry(const struct ima_entry *ea, const struct ima_entry *eb,
                              const char *where, uint64_t idx)
{
        ck_assert_msg(ea->pcr == eb->pcr && memcmp(ea->sha1, eb->sha1, 20) == 0 &&
                              ea->violation == eb->violation,
                      "%s entry %" PRIu64 ": header", where, idx);
        ck_assert_msg(ea->tmpl.legacy == eb->tmpl.legacy && ea->tmpl.nfields == eb->tmpl.nfields &&
                              memcmp(ea->tmpl.field, eb->tmpl.field, eb->tmpl.nfields) == 0,
                      "%s entry %" PRIu64 ": template", where, idx);
        ck_assert_msg(view_eq(ea->data, ea->data_len, eb->data, eb->data_len),
                      "%s entry %" PRIu64 ": data", where, idx);
        ck_assert_msg(view_eq(ea->algo, ea->algo_len, eb->algo, eb->algo_len),
                      "%s entry %" PRIu64 ": algo", where, idx);
        ck_assert_msg(view_eq(ea->digest, ea->digest_len, eb->digest, eb->digest_len),
                      "%s entry %" PRIu64 ": digest", where, idx);
        ck_assert_msg(view_eq(ea->name, ea->name_len, eb->name, eb->name_len),
                      "%s entry %" PRIu64 ": name", where, idx);
        ck_assert_msg(view_eq(ea->sig, ea->sig_len, eb->sig, eb->sig_len),
                      "%s entry %" PRIu64 ": sig", where, idx);
        ck_assert_msg(view_eq(ea->buf, ea->buf_len, eb->buf, eb->buf_len),
                      "%s entry %" PRIu64 ": buf", where, idx);
}

/* Read a binary and an ascii log of the same entries side by side, comparing every entry. */
static void assert_same_logs(const uint8_t *bin, size_t blen, const char *asc, size_t alen,
                             const char *where)
{
        struct ima_reader rb, ra;
        struct ima_entry eb, ea;
        struct attest_err err = {0};
        int xb, xa;

        ima_reader_init_binary(&rb, bin, blen, NULL);
        ck_assert_int_eq(ima_reader_init_ascii(&ra, asc, alen, NULL), 0);
        for (uint64_t i = 0;; i++) {
                xb = ima_reader_next(&rb, &eb, &err);
                ck_assert_msg(xb >= 0, "%s: %s", where, err.msg);
                xa = ima_reader_next(&ra, &ea, &err);
                ck_assert_msg(xa >= 0, "%s: %s", where, err.msg);
                ck_assert_int_eq(xa, xb);
                if (!xb)
                        break;
                assert_same_entry(&ea, &eb, where, i);
        }
        ima_reader_done(&ra);
}

/* The ascii log is rebuilt into exactly the template data of the binary log. */
START_TEST(test_ascii_and_binary_logs_decode_to_the_same_entries)
{
        char **boots = tu_boots();

        for (size_t i = 0; boots[i]; i++) {
                char rel[512];
                size_t blen, alen;

                snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boots[i]);
                uint8_t *bin = (uint8_t *)tu_read(rel, &blen);
                snprintf(rel, sizeof(rel), "tests/data/%s/ascii_runtime_measurements", boots[i]);
                char *asc = tu_read(rel, &alen);
                assert_same_logs(bin, blen, asc, alen, boots[i]);
                free(bin);
                free(asc);
        }
        tu_boots_free(boots);
}
END_TEST

START_TEST(test_boot_aggregate_matches_real_pcrs_and_rejects_others)
{
        char **boots = tu_boots();
        struct hasher *h;
        unsigned checked = 0;

        ck_assert_int_eq(hasher_new(&h), 0);
        for (size_t i = 0; boots[i]; i++) {
                char rel[512];
                size_t blen;
                struct pcr_set pcrs = load_pcrs(boots[i]);
                struct ima_reader rd;
                struct ima_entry e;
                struct attest_err err = {0};

                snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boots[i]);
                uint8_t *bin = (uint8_t *)tu_read(rel, &blen);
                ima_reader_init_binary(&rd, bin, blen, NULL);
                ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
                ck_assert(ima_entry_is_boot_aggregate(&e));
                ck_assert_msg(ima_boot_aggregate_check(h, &e, &pcrs, &err) == 0, "%s: %s", boots[i],
                              err.msg);
                checked++;
                /* one PCR changed in the bank of the digest: mismatch */
                int b = bank_from_name(e.algo, e.algo_len);
                ck_assert_int_ge(b, 0);
                pcrs.v[b][b == BANK_SHA1 ? 7 : 9][0] ^= 1;
                ck_assert_int_eq(ima_boot_aggregate_check(h, &e, &pcrs, &err), -ESTALE);
                ck_assert_int_eq(err.code, AE_IMA_BOOT_AGGREGATE_MISMATCH);
                pcrs.have[b] &= ~1u;
                ck_assert_int_eq(ima_boot_aggregate_check(h, &e, &pcrs, &err), -ENOENT);
                free(bin);
        }
        ck_assert_uint_ge(checked, 2);
        hasher_free(h);
        tu_boots_free(boots);
}
END_TEST

/* A hand-built ima-ng entry replayed, checked against a digest computed here with EVP directly. */
/*
 * The hasher calls the provider's digest functions directly (evidence/bank.c): in every bank,
 * for every length 0-300 in one update and in three, interleaved with the other banks and with
 * extends, it must agree with OpenSSL's EVP one-shot.
 */
START_TEST(test_hasher_agrees_with_evp_in_every_bank)
{
        static const char *const names[BANK_COUNT] = {"SHA1", "SHA256", "SHA384", "SHA512"};
        uint8_t data[300], got[BANK_DIGEST_MAX], want[EVP_MAX_MD_SIZE], pcr[BANK_DIGEST_MAX] = {0},
                                                                        cat[2 * BANK_DIGEST_MAX];
        struct hasher *h;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 131 + 7);
        ck_assert_int_eq(hasher_new(&h), 0);
        for (size_t len = 0; len <= sizeof(data); len++) {
                for (int b = 0; b < BANK_COUNT; b++) {
                        size_t sz = bank_size(b), a = len / 3, c = len - len / 2;
                        unsigned wlen = 0;

                        ck_assert_int_eq(EVP_Digest(data, len, want, &wlen,
                                                    EVP_get_digestbyname(names[b]), NULL),
                                         1);
                        ck_assert_uint_eq(wlen, sz);
                        memset(got, 0, sizeof(got));
                        ck_assert_int_eq(hasher_digest(h, b, data, len, got), 0);
                        ck_assert_mem_eq(got, want, sz);
                        /* three updates, another bank's digest started and finished before */
                        ck_assert_int_eq(hasher_digest(h, (b + 1) % BANK_COUNT, data, 5, got), 0);
                        ck_assert_int_eq(hasher_begin(h, b), 0);
                        ck_assert_int_eq(hasher_update(h, data, a), 0);
                        ck_assert_int_eq(hasher_update(h, data + a, c - a), 0);
                        ck_assert_int_eq(hasher_update(h, data + c, len - c), 0);
                        memset(got, 0, sizeof(got));
                        ck_assert_int_eq(hasher_end(h, got), 0);
                        ck_assert_mem_eq(got, want, sz);
                        /* extend: pcr = H(pcr || digest) */
                        memcpy(cat, pcr, sz);
                        memcpy(cat + sz, want, sz);
                        ck_assert_int_eq(hasher_extend(h, b, pcr, want), 0);
                        ck_assert_int_eq(EVP_Digest(cat, 2 * sz, want, NULL,
                                                    EVP_get_digestbyname(names[b]), NULL),
                                         1);
                        ck_assert_mem_eq(pcr, want, sz);
                }
        }
        hasher_free(h);
}
END_TEST

START_TEST(test_replay_matches_independent_computation)
{
        static const char name[] = "/bin/true";
        uint8_t data[4 + 8 + 32 + 4 + sizeof(name)], log[512], d[32], th[32], th1[20];
        uint8_t pcr[32] = {0}, ext[64];
        size_t o = 0, l = 0;
        struct hasher *h;
        struct ima_replay rp;
        struct attest_err err = {0};

        memset(d, 0x5a, 32);
        data[o++] = 40, data[o++] = 0, data[o++] = 0, data[o++] = 0;
        memcpy(data + o, "sha256:\0", 8), o += 8;
        memcpy(data + o, d, 32), o += 32;
        data[o++] = sizeof(name), data[o++] = 0, data[o++] = 0, data[o++] = 0;
        memcpy(data + o, name, sizeof(name)), o += sizeof(name);
        ck_assert_uint_eq(o, sizeof(data));
        ck_assert_int_eq(EVP_Digest(data, o, th1, NULL, EVP_sha1(), NULL), 1);
        ck_assert_int_eq(EVP_Digest(data, o, th, NULL, EVP_sha256(), NULL), 1);
        memcpy(ext, pcr, 32);
        memcpy(ext + 32, th, 32);
        ck_assert_int_eq(EVP_Digest(ext, 64, pcr, NULL, EVP_sha256(), NULL), 1);

        log[l++] = 10, log[l++] = 0, log[l++] = 0, log[l++] = 0;
        memcpy(log + l, th1, 20), l += 20;
        log[l++] = 6, log[l++] = 0, log[l++] = 0, log[l++] = 0;
        memcpy(log + l, "ima-ng", 6), l += 6;
        log[l++] = (uint8_t)o, log[l++] = 0, log[l++] = 0, log[l++] = 0;
        memcpy(log + l, data, o), l += o;

        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(replay_buf(log, l, false, BANK_MASK_ALL, &rp, h, &err), 0);
        ck_assert_uint_eq(rp.entries, 1);
        ck_assert_int_eq(memcmp(rp.pcr[BANK_SHA256][10], pcr, 32), 0);
        /* the logged sha1 hash is checked when the sha1 bank is replayed */
        log[4] ^= 1;
        ck_assert_int_eq(replay_buf(log, l, false, BANK_MASK_ALL, &rp, h, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_IMA_SHA1_MISMATCH);
        hasher_free(h);
}
END_TEST

/*
 * A failed extend writes nothing. The sha1 bank is extended before the template hash is checked
 * (evidence/ima-replay.c, for speed), into a copy: a mismatch must leave every PCR and counter as
 * it was, with the sha1 bank replayed, without it (the check alone), and with every bank.
 */
START_TEST(test_replay_mismatch_leaves_the_replay_unchanged)
{
        static const unsigned masks[] = {BANK_MASK_ALL, BANK_MASK(BANK_SHA1),
                                         BANK_MASK(BANK_SHA256)};
        uint8_t d32[32];
        struct imagen g;
        struct hasher *h;

        memset(d32, 0x11, sizeof(d32));
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, "/first"), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, "/second"), 0);
        ck_assert_int_eq(hasher_new(&h), 0);
        for (size_t m = 0; m < ARRAY_SIZE(masks); m++) {
                for (int ascii = 0; ascii <= 1; ascii++) {
                        static struct ima_replay rp, before;
                        struct attest_err err = {0};
                        struct ima_reader rd;
                        struct ima_entry e;

                        if (ascii)
                                ck_assert_int_eq(ima_reader_init_ascii(&rd, g.txt, g.txt_len, NULL),
                                                 0);
                        else
                                ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
                        ima_replay_init(&rp, h, masks[m], true);
                        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
                        ck_assert_int_eq(ima_replay_extend(&rp, &e, 0, &err), 0);
                        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
                        e.sha1[7] ^= 0x40; /* the logged hash no longer matches the data */
                        before = rp;
                        ck_assert_int_eq(ima_replay_extend(&rp, &e, 1, &err), -EBADMSG);
                        ck_assert_int_eq(err.code, AE_IMA_SHA1_MISMATCH);
                        ck_assert_msg(memcmp(rp.pcr, before.pcr, sizeof(rp.pcr)) == 0,
                                      "mask %#x %s: a failed extend changed a PCR", masks[m],
                                      ascii ? "ascii" : "binary");
                        ck_assert_uint_eq(rp.entries, before.entries);
                        ck_assert_uint_eq(rp.violations, before.violations);
                        ck_assert_uint_eq(rp.used, before.used);
                        /* the entry as logged still replays */
                        e.sha1[7] ^= 0x40;
                        ck_assert_int_eq(ima_replay_extend(&rp, &e, 1, &err), 0);
                        ck_assert_uint_eq(rp.entries, 2);
                        ima_reader_done(&rd);
                }
        }
        hasher_free(h);
        imagen_done(&g);
}
END_TEST

/*
 * ima_all_zero() reads eight bytes at a time and the last eight overlapping: every length up to
 * a sha512 digest and more, every byte position, every bit must count.
 */
START_TEST(test_all_zero_sees_every_byte)
{
        uint8_t buf[80] = {0};

        for (size_t n = 0; n <= sizeof(buf); n++) {
                ck_assert_msg(ima_all_zero(buf, n), "n %zu", n);
                for (size_t i = 0; i < n; i++)
                        for (int bit = 0; bit < 8; bit++) {
                                buf[i] = (uint8_t)(1u << bit);
                                ck_assert_msg(!ima_all_zero(buf, n), "n %zu byte %zu bit %d", n, i,
                                              bit);
                                buf[i] = 0;
                        }
        }
        /* bytes past n are not looked at */
        buf[20] = 1;
        ck_assert(ima_all_zero(buf, 20));
}
END_TEST

START_TEST(test_violation_extends_ff_in_every_bank)
{
        struct imagen g;
        struct hasher *h;
        struct ima_replay rp;
        struct attest_err err = {0};
        uint8_t ext[128], want[64];

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_violation(&g, 10, "/tmp/written-while-open"), 0);
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(replay_buf(g.bin, g.bin_len, false, BANK_MASK_ALL, &rp, h, &err), 0);
        ck_assert_uint_eq(rp.violations, 1);
        for (int b = 0; b < BANK_COUNT; b++) {
                size_t n = bank_size(b);
                const EVP_MD *md = b == BANK_SHA1     ? EVP_sha1()
                                   : b == BANK_SHA256 ? EVP_sha256()
                                   : b == BANK_SHA384 ? EVP_sha384()
                                                      : EVP_sha512();

                memset(ext, 0, n);
                memset(ext + n, 0xff, n);
                ck_assert_int_eq(EVP_Digest(ext, 2 * n, want, NULL, md, NULL), 1);
                ck_assert_int_eq(memcmp(rp.pcr[b][10], want, n), 0);
        }
        ck_assert_int_eq(replay_buf((uint8_t *)g.txt, g.txt_len, true, BANK_MASK_ALL, &rp, h, &err),
                         0);
        ck_assert_uint_eq(rp.violations, 1);
        hasher_free(h);
        imagen_done(&g);
}
END_TEST

/* Every template, several PCRs: binary and ascii replay agree, sha1 checked on every entry. */
START_TEST(test_every_template_and_multiple_pcrs)
{
        struct imagen g;
        struct hasher *h;
        struct ima_replay rb, ra;
        struct attest_err err = {0};
        uint8_t d32[32], d20[20], sig[70];
        static const char buf[] = "initialized=1;enforcing=1;";

        memset(d32, 0x11, 32);
        memset(d20, 0x22, 20);
        memset(sig, 0x03, sizeof(sig));
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, "boot_aggregate"), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha1", d20, 20, "/etc/with space/name"), 0);
        ck_assert_int_eq(imagen_sig(&g, 10, d32, "/usr/bin/signed", sig, sizeof(sig)), 0);
        ck_assert_int_eq(imagen_sig(&g, 10, d32, "/usr/bin/unsigned", NULL, 0), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", buf, strlen(buf)), 0);
        ck_assert_int_eq(imagen_modsig(&g, 11, d32, "/lib/modules/x.ko", sig, sizeof(sig)), 0);
        ck_assert_int_eq(imagen_legacy(&g, 12, d20, "/legacy/template"), 0);
        ck_assert_int_eq(imagen_violation(&g, 10, "/violated"), 0);
        {
                uint8_t dng[40] = "sha256:";
                struct imagen_field f[3] = {
                        {IMA_FIELD_D_NG, dng, 8 + 32},
                        {IMA_FIELD_N_NG, "cfi-state", 10},
                        {IMA_FIELD_BUF, "enabled=1;", 10},
                };

                memcpy(dng + 8, d32, 32);
                ck_assert_int_eq(imagen_fields(&g, 23, "d-ng|n-ng|buf", f, 3, 0), 0);
        }
        ck_assert_int_eq(g.entries, 9);
        /* custom field lists: d outside template 'ima' (md5, sha1, none), two names, an empty
         * d-modsig, a modsig of its own */
        {
                uint8_t d16[16], dmod[40] = "sha256:";
                struct imagen_field md5[2] = {{IMA_FIELD_D, d16, 16}, {IMA_FIELD_N_NG, "m", 2}};
                struct imagen_field sha1[2] = {{IMA_FIELD_D, d20, 20}, {IMA_FIELD_N_NG, "s", 2}};
                struct imagen_field none[2] = {{IMA_FIELD_D, "", 0}, {IMA_FIELD_N, "x y", 4}};
                struct imagen_field two[3] = {{IMA_FIELD_N_NG, "first", 6},
                                              {IMA_FIELD_N_NG, "second name", 12},
                                              {IMA_FIELD_SIG, "", 0}};
                struct imagen_field mods[4] = {{IMA_FIELD_D_MODSIG, "", 0},
                                               {IMA_FIELD_N_NG, "k.ko", 5},
                                               {IMA_FIELD_D_MODSIG, dmod, 8 + 32},
                                               {IMA_FIELD_MODSIG, sig, sizeof(sig)}};

                memset(d16, 0x44, 16);
                memcpy(dmod + 8, d32, 32);
                ck_assert_int_eq(imagen_fields(&g, 10, "d|n-ng", md5, 2, 0), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "d|n-ng", sha1, 2, 0), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "d|n", none, 2, 0), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "n-ng|n-ng|sig", two, 3, 0), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "d-modsig|n-ng|d-modsig|modsig", mods, 4, 0),
                                 0);
        }
        assert_same_logs(g.bin, g.bin_len, g.txt, g.txt_len, "every template");
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_msg(replay_buf(g.bin, g.bin_len, false, BANK_MASK_ALL, &rb, h, &err) == 0, "%s",
                      err.msg);
        ck_assert_msg(replay_buf((uint8_t *)g.txt, g.txt_len, true, BANK_MASK_ALL, &ra, h, &err) ==
                              0,
                      "%s", err.msg);
        ck_assert_uint_eq(rb.entries, g.entries);
        ck_assert_uint_eq(rb.used, (1u << 10) | (1u << 11) | (1u << 12) | (1u << 23));
        ck_assert_int_eq(memcmp(rb.pcr, ra.pcr, sizeof(rb.pcr)), 0);
        /* distinct PCRs hold distinct values */
        ck_assert_int_ne(memcmp(rb.pcr[BANK_SHA256][10], rb.pcr[BANK_SHA256][11], 32), 0);

        /* decoded views */
        struct ima_reader rd;
        struct ima_entry e;
        ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.name_len, strlen("/etc/with space/name"));
        ck_assert_uint_eq(e.digest_len, 20);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.sig_len, sizeof(sig));
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_ptr_null(e.sig);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.buf_len, strlen(buf));
        ck_assert_int_eq(memcmp(e.buf, buf, e.buf_len), 0);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.tmpl.nfields, 5);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert(e.tmpl.legacy);
        ck_assert_uint_eq(e.name_len, strlen("/legacy/template"));
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert(e.violation);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.pcr, 23);
        ck_assert_uint_eq(e.buf_len, 10);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.digest_len, 16);
        ck_assert_int_eq(memcmp(e.algo, "md5", 3), 0);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.digest_len, 20);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_ptr_null(e.digest);
        ck_assert_uint_eq(e.name_len, 3);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.name_len, strlen("second name"));
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
        ck_assert_uint_eq(e.tmpl.nfields, 4);
        ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 0);
        hasher_free(h);
        imagen_done(&g);
}
END_TEST

static void expect_ascii_error(const char *text, enum attest_code code, const char *where);

static void expect_binary_error(const uint8_t *buf, size_t len, int want, enum attest_code code)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        int x;

        ima_reader_init_binary(&rd, buf, len, NULL);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                ;
        ck_assert_int_eq(x, want);
        ck_assert_int_eq(err.code, code);
        ck_assert_msg(strstr(err.msg, "entry ") && strstr(err.msg, " at byte "), "%s", err.msg);
}

START_TEST(test_oversize_and_malformed_entries_are_rejected)
{
        struct imagen g;
        char *big = malloc(IMA_DATA_MAX + 2);
        uint8_t d32[32] = {0};

        ck_assert_ptr_nonnull(big);
        /* name of 4097 bytes */
        memset(big, 'a', IMA_NAME_MAX + 1);
        big[0] = '/';
        big[IMA_NAME_MAX + 1] = '\0';
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, big), 0);
        expect_binary_error(g.bin, g.bin_len, -E2BIG, AE_IMA_NAME_TOO_LONG);
        imagen_done(&g);
        /* exactly 4096 is fine */
        big[IMA_NAME_MAX] = '\0';
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, big), 0);
        {
                struct ima_reader rd;
                struct ima_entry e;
                struct attest_err err = {0};

                ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
                ck_assert_int_eq(ima_reader_next(&rd, &e, &err), 1);
                ck_assert_uint_eq(e.name_len, IMA_NAME_MAX);
        }
        imagen_done(&g);
        /* template data over 64 KiB */
        memset(big, 'x', IMA_DATA_MAX);
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "huge", big, IMA_DATA_MAX), 0);
        expect_binary_error(g.bin, g.bin_len, -E2BIG, AE_IMA_DATA_TOO_LONG);
        expect_ascii_error(g.txt, AE_IMA_DATA_TOO_LONG, "line 1");
        imagen_done(&g);
        /* legacy template name over 255 */
        memset(big, 'n', 300);
        big[300] = '\0';
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_legacy(&g, 10, d32, big), 0);
        expect_binary_error(g.bin, g.bin_len, -E2BIG, AE_IMA_NAME_TOO_LONG);
        imagen_done(&g);
        /* PCR 24 */
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 24, "sha256", d32, 32, "/x"), 0);
        expect_binary_error(g.bin, g.bin_len, -EBADMSG, AE_IMA_BAD_PCR);
        imagen_done(&g);
        /* unknown template and unknown field */
        {
                struct imagen_field f[1] = {{IMA_FIELD_BUF, "abc", 3}};

                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "ima-future", f, 1, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE);
                imagen_done(&g);
                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "buf|iuid", f, 1, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE);
                imagen_done(&g);
        }
        /* field list longer than the data: ima-sig declared, two fields present */
        {
                uint8_t dng[40] = "sha256:";
                struct imagen_field f[2] = {{IMA_FIELD_D_NG, dng, 40}, {IMA_FIELD_N_NG, "/a", 3}};

                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "ima-sig", f, 2, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EBADMSG, AE_IMA_TRUNCATED);
                imagen_done(&g);
                /* and three fields under a two-field template */
                struct imagen_field f3[3] = {{IMA_FIELD_D_NG, dng, 40},
                                             {IMA_FIELD_N_NG, "/a", 3},
                                             {IMA_FIELD_SIG, "s", 1}};
                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "ima-ng", f3, 3, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EBADMSG, AE_IMA_TRAILING_DATA);
                imagen_done(&g);
                /* d-ng whose digest length disagrees with its algorithm */
                struct imagen_field fb[2] = {{IMA_FIELD_D_NG, dng, 8 + 20},
                                             {IMA_FIELD_N_NG, "/a", 3}};
                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "ima-ng", fb, 2, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EBADMSG, AE_IMA_BAD_FIELD);
                imagen_done(&g);
                /* n-ng without its NUL */
                struct imagen_field fn[2] = {{IMA_FIELD_D_NG, dng, 40}, {IMA_FIELD_N_NG, "/ab", 3}};
                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_fields(&g, 10, "ima-ng", fn, 2, 0), 0);
                expect_binary_error(g.bin, g.bin_len, -EBADMSG, AE_IMA_BAD_FIELD);
                imagen_done(&g);
        }
        free(big);
}
END_TEST

START_TEST(test_entry_cap_is_enforced)
{
        struct imagen g;
        uint8_t d32[32] = {0};
        struct ima_log_opts o = {.max_entries = 3};
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        int x, n = 0;

        ck_assert_int_eq(imagen_init(&g), 0);
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d32, 32, "/f"), 0);
        ima_reader_init_binary(&rd, g.bin, g.bin_len, &o);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                n++;
        ck_assert_int_eq(n, 3);
        ck_assert_int_eq(x, -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_TOO_MANY_ENTRIES);
        imagen_done(&g);
}
END_TEST

#define D256 "sha256:6c54f2bc3953b80ac6a88d61ede827409f0eab62d1758cbeb4f19e7cb9fb5fe3"

static void expect_ascii_error(const char *text, enum attest_code code, const char *where)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        int x;

        ck_assert_int_eq(ima_reader_init_ascii(&rd, text, strlen(text), NULL), 0);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                ;
        ima_reader_done(&rd);
        ck_assert_msg(x < 0, "accepted: %.120s", text);
        ck_assert_int_eq(err.code, code);
        ck_assert_msg(strstr(err.msg, where), "message '%s' lacks '%s'", err.msg, where);
}

START_TEST(test_ascii_errors_name_line_and_field)
{
        static const char ok[] =
                "10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng "
                "sha256:6c54f2bc3953b80ac6a88d61ede827409f0eab62d1758cbeb4f19e7cb9fb5fe3 "
                "boot_aggregate\n";
        char buf[1024];

        snprintf(buf, sizeof(buf), "%s%s", ok, "x0 0000 ima-ng sha256:00 a\n");
        expect_ascii_error(buf, AE_IMA_BAD_PCR, "line 2 field 1");
        snprintf(buf, sizeof(buf), "%s%s", ok,
                 "24 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng sha256:00 a\n");
        expect_ascii_error(buf, AE_IMA_BAD_PCR, "line 2 field 1");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dfz ima-ng sha256:00 a\n",
                           AE_IMA_BAD_HASH, "line 1 field 2");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-foo sha256:00 a\n",
                           AE_IMA_UNKNOWN_TEMPLATE, "line 1 field 3");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng sha256:0g a\n",
                           AE_IMA_BAD_FIELD, "line 1 field 4");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng nodigest a\n",
                           AE_IMA_BAD_FIELD, "line 1 field 4");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-buf " D256 " a zz\n",
                           AE_IMA_BAD_FIELD, "line 1 field 6");
        /* well-formed hex of the wrong size for its algorithm, or an algorithm IMA cannot name */
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-buf sha256:00 a 00\n",
                           AE_IMA_BAD_FIELD, "line 1 field 4: digest algorithm");
        expect_ascii_error(
                "10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng "
                "sha257:6c54f2bc3953b80ac6a88d61ede827409f0eab62d1758cbeb4f19e7cb9fb5fe3 a\n",
                AE_IMA_BAD_FIELD, "line 1 field 4: digest algorithm");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-buf sha256:00\n",
                           AE_IMA_BAD_LINE, "line 1");
        /* checks the binary reader makes in ima_tmpl_decode(), made on the ascii fields */
        expect_ascii_error("10 0000000000000000000000000000000000000000 ima-ng " D256 " v\n",
                           AE_IMA_BAD_VIOLATION, "line 1 field 4: violation");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff d|n-ng abcdef a\n",
                           AE_IMA_BAD_FIELD, "line 1 field 4: d is not");
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-modsig " D256
                           " a 00 sha257:00 00\n",
                           AE_IMA_BAD_FIELD, "line 1 field 7: digest algorithm");
        {
                /* a name cut from the left (not the last n field) still has its cap */
                static char longname[IMA_NAME_MAX + 128];
                int k = snprintf(longname, sizeof(longname),
                                 "10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff n-ng|n-ng ");

                memset(longname + k, 'n', IMA_NAME_MAX + 1);
                memcpy(longname + k + IMA_NAME_MAX + 1, " b\n", 4);
                expect_ascii_error(longname, AE_IMA_NAME_TOO_LONG, "line 1 field 4: name");
        }
        /* a logged hash that does not match the rebuilt data fails the replay */
        struct hasher *h;
        struct ima_replay rp;
        struct attest_err err = {0};
        char bad[sizeof(ok)];
        memcpy(bad, ok, sizeof(ok));
        bad[3] = 'b';
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(
                replay_buf((uint8_t *)ok, strlen(ok), true, BANK_MASK(BANK_SHA256), &rp, h, &err),
                0);
        ck_assert_int_eq(
                replay_buf((uint8_t *)bad, strlen(bad), true, BANK_MASK(BANK_SHA256), &rp, h, &err),
                -EBADMSG);
        ck_assert_int_eq(err.code, AE_IMA_SHA1_MISMATCH);
        hasher_free(h);
        /* no newline at the end */
        expect_ascii_error("10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff ima-ng sha256:00 a",
                           AE_IMA_TRUNCATED, "line 1");
}
END_TEST

/*
 * An ascii line built from its fields: "10 <hash> <tmpl> f1 f2 ...\n", each field either given as
 * text or, when hex_bytes is set, as that many bytes of hex ("ab" repeated). Caller frees.
 */
struct afield {
        const char *text; /* NULL: hex_bytes bytes of hex */
        size_t hex_bytes;
};

static char *ascii_line(const char *tmpl, const struct afield *f, size_t nf, size_t *ret_len)
{
        size_t cap = 128 + strlen(tmpl), len;
        char *s;

        for (size_t i = 0; i < nf; i++)
                cap += 1 + (f[i].text ? strlen(f[i].text) : 2 * f[i].hex_bytes);
        s = malloc(cap);
        ck_assert_ptr_nonnull(s);
        len = (size_t)snprintf(s, cap, "10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff %s", tmpl);
        for (size_t i = 0; i < nf; i++) {
                s[len++] = ' ';
                if (f[i].text) {
                        memcpy(s + len, f[i].text, strlen(f[i].text));
                        len += strlen(f[i].text);
                } else {
                        for (size_t k = 0; k < f[i].hex_bytes; k++, len += 2)
                                memcpy(s + len, "ab", 2);
                }
        }
        s[len++] = '\n';
        ck_assert_uint_le(len, cap);
        *ret_len = len;
        return s;
}

/* Read the one line; 1 with *e, or the error with err. */
static int read_one(const char *s, size_t len, struct ima_entry *e, struct attest_err *err)
{
        struct ima_reader rd;
        int x;

        ck_assert_int_eq(ima_reader_init_ascii(&rd, s, len, NULL), 0);
        x = ima_reader_next(&rd, e, err);
        if (x < 0) {
                ck_assert_uint_eq(rd_offset(&rd.r), 0);
                ck_assert_uint_eq(rd.line, 1);
        } else {
                ck_assert_uint_le(e->data_len, IMA_DATA_MAX);
        }
        ima_reader_done(&rd);
        return x;
}

/*
 * A fixed overflow: custom templates whose digests come after a full buf field wrote past the
 * 65,664-byte scratch (the d-ng path had no cap check and `cap - pos - 4` wrapped). ASan catches
 * the write; after the fix each is rejected as template data over the cap.
 */
START_TEST(test_ascii_custom_template_cannot_overflow_the_data)
{
        /* 65532 bytes of buf fill the data to 65536 before the digests */
        const struct afield four[] = {{NULL, 65532}, {D256, 0}, {D256, 0}, {NULL, 2000}};
        const struct afield three[] = {{NULL, 65532}, {D256, 0}, {NULL, 2000}};
        const struct afield dfirst[] = {{D256, 0}, {D256, 0}, {NULL, 65530}};
        struct attest_err err = {0};
        struct ima_entry e;
        size_t len;
        char *s;

        s = ascii_line("buf|d-ng|d-ng|buf", four, 4, &len);
        ck_assert_uint_le(len, IMA_ASCII_LINE_MAX + 1);
        ck_assert_int_eq(read_one(s, len, &e, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
        free(s);
        err = (struct attest_err){0};
        s = ascii_line("buf|d-ng|buf", three, 3, &len);
        ck_assert_int_eq(read_one(s, len, &e, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
        free(s);
        /* digests first, then a buf that passes the cap by 2 + 8 + 36 * 2 bytes */
        err = (struct attest_err){0};
        s = ascii_line("d-ng|d-ng|buf", dfirst, 3, &len);
        ck_assert_int_eq(read_one(s, len, &e, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
        free(s);
}
END_TEST

/* Template data at cap - 1, cap and cap + 1 (template "buf": 4 + n bytes). */
START_TEST(test_ascii_template_data_cap)
{
        struct attest_err err = {0};
        struct ima_entry e;
        size_t len;
        char *s;

        for (int d = -1; d <= 1; d++) {
                const struct afield f[] = {{NULL, (size_t)(IMA_DATA_MAX - 4 + d)}};

                err = (struct attest_err){0};
                s = ascii_line("buf", f, 1, &len);
                if (d <= 0) {
                        ck_assert_int_eq(read_one(s, len, &e, &err), 1);
                        ck_assert_uint_eq(e.data_len, (uint32_t)(IMA_DATA_MAX + d));
                        ck_assert_uint_eq(e.buf_len, (uint32_t)(IMA_DATA_MAX - 4 + d));
                } else {
                        ck_assert_int_eq(read_one(s, len, &e, &err), -E2BIG);
                        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
                }
                free(s);
        }
        /* the same with a digest and a name around the buf (ima-buf) */
        for (int d = -1; d <= 1; d++) {
                size_t fixed = 4 + 8 + 32 + 4 + 2 + 4; /* d-ng field, n-ng "a\0", buf prefix */
                const struct afield f[] = {
                        {D256, 0}, {"a", 0}, {NULL, (size_t)(IMA_DATA_MAX - (int)fixed + d)}};

                err = (struct attest_err){0};
                s = ascii_line("ima-buf", f, 3, &len);
                ck_assert_int_eq(read_one(s, len, &e, &err), d <= 0 ? 1 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(e.data_len, (uint32_t)(IMA_DATA_MAX + d));
                else
                        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
                free(s);
        }
}
END_TEST

/* Names at IMA_NAME_MAX - 1, cap, cap + 1; lines at IMA_ASCII_LINE_MAX - 1, cap, cap + 1. */
START_TEST(test_ascii_name_and_line_caps)
{
        struct attest_err err = {0};
        struct ima_entry e;
        size_t len;
        char *s, *name = malloc(IMA_NAME_MAX + 2);

        ck_assert_ptr_nonnull(name);
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(IMA_NAME_MAX + d);

                memset(name, 'n', n);
                name[n / 2] = ' '; /* names may hold spaces */
                name[n] = '\0';
                const struct afield f[] = {{D256, 0}, {name, 0}};
                err = (struct attest_err){0};
                s = ascii_line("ima-ng", f, 2, &len);
                ck_assert_int_eq(read_one(s, len, &e, &err), d <= 0 ? 1 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(e.name_len, n);
                else
                        ck_assert_int_eq(err.code, AE_IMA_NAME_TOO_LONG);
                free(s);
        }
        free(name);
        /* line length ('\n' not counted): hex fields of sig templates, all even in length */
        for (int d = -1; d <= 1; d++) {
                size_t total = (size_t)(IMA_ASCII_LINE_MAX + d), hex, pos;
                const char *tmpl = "sig|sig";
                unsigned k = 2;

                hex = total - (3 + 41 + strlen(tmpl)) - k; /* "10 ", hash and space, spaces */
                if (hex % 2) {
                        tmpl = "sig|sig|sig";
                        k = 3;
                        hex = total - (3 + 41 + strlen(tmpl)) - k;
                }
                ck_assert_uint_eq(hex % 2, 0);
                s = malloc(total + 1);
                ck_assert_ptr_nonnull(s);
                pos = (size_t)snprintf(s, total + 1,
                                       "10 a6cab0e151c5c531e3a75f6b3086fdfedda16dff %s", tmpl);
                for (unsigned i = 0; i < k; i++) {
                        size_t n = i + 1 < k ? hex / k / 2 * 2 : total - pos - 1;

                        s[pos++] = ' ';
                        memset(s + pos, 'a', n);
                        pos += n;
                }
                ck_assert_uint_eq(pos, total);
                s[pos] = '\n';
                len = total + 1;
                err = (struct attest_err){0};
                ck_assert_int_eq(read_one(s, len, &e, &err), -E2BIG);
                /* within the line cap the data cap speaks; past it, the line cap */
                ck_assert_int_eq(err.code, d <= 0 ? AE_IMA_DATA_TOO_LONG : AE_IMA_LINE_TOO_LONG);
                free(s);
        }
}
END_TEST

/* Every prefix of a real log either ends cleanly at an entry boundary or fails as truncated. */
START_TEST(test_truncation_at_every_byte)
{
        size_t len;
        uint8_t *bin =
                (uint8_t *)tu_read("tests/data/qemu61-tcb/binary_runtime_measurements", &len);
        size_t *bounds = calloc(1024, sizeof(size_t)), nb = 0;
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        int x;

        ck_assert_ptr_nonnull(bin);
        ima_reader_init_binary(&rd, bin, len, NULL);
        bounds[nb++] = 0;
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                bounds[nb++] = rd_offset(&rd.r);
        ck_assert_int_eq(x, 0);
        for (size_t cut = 0; cut < len; cut++) {
                bool boundary = false;
                size_t before;

                for (size_t k = 0; k < nb; k++)
                        boundary |= bounds[k] == cut;
                ima_reader_init_binary(&rd, bin, cut, NULL);
                do {
                        before = rd_offset(&rd.r);
                        x = ima_reader_next(&rd, &e, &err);
                } while (x > 0);
                if (boundary) {
                        ck_assert_msg(x == 0, "cut %zu: %s", cut, err.msg);
                } else {
                        ck_assert_msg(x == -EBADMSG, "cut %zu accepted", cut);
                        ck_assert_int_eq(err.code, AE_IMA_TRUNCATED);
                        /* a failed read leaves the reader where it was */
                        ck_assert_uint_eq(rd_offset(&rd.r), before);
                }
        }
        free(bounds);
        free(bin);
}
END_TEST

/*
 * Byte spans no hash covers: the name of a violation entry (the kernel extends 0xff for it and
 * hashes nothing). Binary: the name bytes; ascii: the name token.
 */
static size_t violation_name_spans(const uint8_t *buf, size_t len, bool ascii, size_t (*sp)[2],
                                   size_t max)
{
        size_t n = 0;

        if (!ascii) {
                struct ima_reader rd;
                struct ima_entry e;

                ima_reader_init_binary(&rd, buf, len, NULL);
                while (ima_reader_next(&rd, &e, NULL) > 0 && n < max)
                        if (e.violation) {
                                sp[n][0] = (size_t)((const uint8_t *)e.name - buf);
                                sp[n][1] = sp[n][0] + e.name_len;
                                n++;
                        }
                return n;
        }
        for (size_t at = 0; at < len && n < max;) {
                const uint8_t *eol = memchr(buf + at, '\n', len - at);
                size_t end = eol ? (size_t)(eol - buf) : len, last = at;

                if (end - at > 43 &&
                    memcmp(buf + at, "10 0000000000000000000000000000000000000000 ", 43) == 0) {
                        /* "PCR HASH TEMPLATE DIGEST NAME[ MORE]": the name is field 5 */
                        unsigned spaces = 0;
                        size_t k = at;

                        for (; k < end && spaces < 4; k++)
                                if (buf[k] == ' ')
                                        spaces++;
                        last = k;
                        while (k < end && buf[k] != ' ')
                                k++;
                        sp[n][0] = last;
                        sp[n][1] = k;
                        n++;
                }
                at = end + 1;
        }
        return n;
}

/*
 * Flipping any byte of a real log is rejected by the parser or makes the replay differ from
 * the TPM's PCRs; it never passes, never crashes. Both formats. The one exception is by design
 * and asserted as such: the name of a violation entry is hashed by nobody, so a flip there may
 * replay fine, but the entry stays a violation and yields no claim.
 */
START_TEST(test_corruption_sweep_never_passes)
{
        static const char *const files[] = {"binary_runtime_measurements",
                                            "ascii_runtime_measurements"};
        char **boots = tu_boots();
        struct hasher *h;
        unsigned long flips = 0, rejected = 0, mismatched = 0, unhashed_passes = 0;

        ck_assert_int_eq(hasher_new(&h), 0);
        for (size_t i = 0; boots[i]; i++) {
                struct pcr_set pcrs = load_pcrs(boots[i]);

                for (size_t f = 0; f < 2; f++) {
                        char rel[512];
                        size_t len;
                        struct ima_replay rp;
                        struct attest_err err = {0};
                        unsigned n;

                        snprintf(rel, sizeof(rel), "tests/data/%s/%s", boots[i], files[f]);
                        uint8_t *buf = (uint8_t *)tu_read(rel, &len);
                        size_t spans[64][2], nsp;

                        ck_assert_ptr_nonnull(buf);
                        nsp = violation_name_spans(buf, len, f == 1, spans, 64);
                        for (size_t pos = 0; pos < len; pos++) {
                                bool unhashed = false;

                                for (size_t k = 0; k < nsp; k++)
                                        unhashed |= pos >= spans[k][0] && pos < spans[k][1];
                                static const uint8_t masks[] = {0x01, 0x80, 0xff};

                                for (size_t m = 0; m < ARRAY_SIZE(masks); m++) {
                                        buf[pos] ^= masks[m];
                                        flips++;
                                        if (replay_buf(buf, len, f == 1, BANK_MASK_ALL, &rp, h,
                                                       &err) < 0)
                                                rejected++;
                                        else if (!replay_matches(&rp, &pcrs, &n))
                                                mismatched++;
                                        else if (unhashed)
                                                unhashed_passes++;
                                        else
                                                ck_abort_msg("%s byte %zu ^%02x passed", rel, pos,
                                                             masks[m]);
                                        buf[pos] ^= masks[m];
                                }
                        }
                        free(buf);
                }
        }
        ck_assert_uint_eq(flips, rejected + mismatched + unhashed_passes);
        printf("corruption sweep: %lu flips, %lu rejected, %lu replay mismatches, %lu in "
               "violation names (hashed by nobody)\n",
               flips, rejected, mismatched, unhashed_passes);
        ck_assert_uint_gt(rejected, 0);
        ck_assert_uint_gt(mismatched, 0);
        hasher_free(h);
        tu_boots_free(boots);
}
END_TEST

START_TEST(test_deleted_and_reordered_entries_fail_replay)
{
        size_t len;
        uint8_t *bin =
                (uint8_t *)tu_read("tests/data/qemu61-tcb/binary_runtime_measurements", &len);
        struct pcr_set pcrs = load_pcrs("qemu61-tcb");
        size_t bounds[64], nb = 0;
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        struct hasher *h;
        struct ima_replay rp;
        unsigned n;
        uint8_t *mod = malloc(len);

        ck_assert_int_eq(hasher_new(&h), 0);
        ima_reader_init_binary(&rd, bin, len, NULL);
        bounds[nb++] = 0;
        while (ima_reader_next(&rd, &e, &err) > 0 && nb < 64)
                bounds[nb++] = rd_offset(&rd.r);
        ck_assert_uint_ge(nb, 4);
        for (size_t k = 0; k + 1 < nb; k++) {
                /* delete entry k */
                size_t a = bounds[k], b = bounds[k + 1], l = 0;

                memcpy(mod, bin, a), l = a;
                memcpy(mod + l, bin + b, len - b), l += len - b;
                ck_assert_int_eq(replay_buf(mod, l, false, BANK_MASK_ALL, &rp, h, &err), 0);
                ck_assert_msg(!replay_matches(&rp, &pcrs, &n), "deleting entry %zu passed", k);
                /* swap entries k and k+1 */
                if (k + 2 < nb) {
                        size_t c = bounds[k + 2];

                        memcpy(mod, bin, len);
                        memcpy(mod + a, bin + b, c - b);
                        memcpy(mod + a + (c - b), bin + a, b - a);
                        if (memcmp(mod, bin, len) == 0)
                                continue; /* two identical entries: a swap changes nothing */
                        ck_assert_int_eq(replay_buf(mod, len, false, BANK_MASK_ALL, &rp, h, &err),
                                         0);
                        ck_assert_msg(!replay_matches(&rp, &pcrs, &n), "swapping %zu passed", k);
                }
        }
        free(mod);
        free(bin);
        hasher_free(h);
}
END_TEST

/* ---- the streaming reader (evidence/ima-stream.c) ---- */

/* A log in memory handed out in reads of `step` bytes (0: as much as asked), failing at fail_at. */
struct mem_src {
        const uint8_t *p;
        size_t len, pos, step, fail_at, reads;
};

static int mem_read(void *ctx, uint8_t *buf, size_t n, size_t *ret_n)
{
        struct mem_src *m = ctx;
        size_t k = m->step && m->step < n ? m->step : n;

        if (m->pos >= m->fail_at)
                return -EIO;
        if (k > m->len - m->pos)
                k = m->len - m->pos;
        if (k > m->fail_at - m->pos)
                k = m->fail_at - m->pos;
        memcpy(buf, m->p + m->pos, k);
        m->pos += k;
        m->reads++;
        *ret_n = k;
        return 0;
}

/*
 * A synthetic log past the default window: ima-ng entries, and every 13th an ima-buf entry
 * whose template data is near the 64 KiB cap (an ascii line of ~120,000 bytes), so entries of
 * every size come across the window's end.
 */
static void make_stream_log(struct imagen *g, unsigned entries)
{
        static uint8_t big[60000];
        uint8_t d32[32];
        char name[64];

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (uint8_t)(i * 7);
        ck_assert_int_eq(imagen_init(g), 0);
        for (unsigned i = 0; i < entries; i++) {
                memset(d32, (int)i, sizeof(d32));
                snprintf(name, sizeof(name), "/usr/lib/stream/file-%u", i);
                if (i % 13 == 12)
                        ck_assert_int_eq(imagen_buf(g, 10, "big", big, sizeof(big) - i % 5), 0);
                else if (i % 101 == 50)
                        ck_assert_int_eq(imagen_violation(g, 10, name), 0);
                else
                        ck_assert_int_eq(imagen_ng(g, 10 + i % 3, "sha256", d32, 32, name), 0);
        }
}

/*
 * Read log through the stream (window bytes, reads of step) and through the whole-buffer reader
 * side by side: the same entries and the same end or error (code and message). Returns how many
 * entries were read; *ret_slides how often the window moved.
 */
static uint64_t stream_vs_whole(const uint8_t *log, size_t len, enum ima_stream_format f,
                                size_t window, size_t step, unsigned *ret_slides,
                                struct attest_err *ret_err)
{
        struct mem_src m = {.p = log, .len = len, .step = step, .fail_at = SIZE_MAX};
        struct ima_stream st;
        struct ima_reader rd;
        struct ima_entry a, b;
        uint64_t base = 0;
        unsigned slides = 0;
        int xs, xw;

        ck_assert_int_eq(ima_stream_init(&st, f, window, mem_read, &m, NULL), 0);
        if (f == IMA_STREAM_ASCII)
                ck_assert_int_eq(ima_reader_init_ascii(&rd, (const char *)log, len, NULL), 0);
        else if (f == IMA_STREAM_BINARY)
                ima_reader_init_binary(&rd, log, len, NULL);
        else
                ck_assert_int_eq(ima_reader_init_auto(&rd, log, len, NULL), 0);
        ck_assert_int_eq(st.rd.format, rd.format);
        for (;;) {
                struct attest_err es = {0}, ew = {0};
                uint64_t at = rd_offset(&rd.r), idx = rd.idx;

                xw = ima_reader_next(&rd, &a, &ew);
                xs = ima_stream_next(&st, &b, &es);
                ck_assert_int_eq(xs, xw);
                ck_assert_uint_eq(st.entry_at, at);
                ck_assert_uint_eq(st.entry_idx, idx);
                if (st.rd.base != base) {
                        slides++;
                        base = st.rd.base;
                }
                if (xw <= 0) {
                        ck_assert_int_eq(es.code, ew.code);
                        ck_assert_str_eq(es.msg, ew.msg);
                        *ret_err = es;
                        break;
                }
                assert_same_entry(&b, &a, "stream", rd.idx - 1);
                ck_assert_msg(view_eq(b.tmpl_name, b.tmpl_name_len, a.tmpl_name, a.tmpl_name_len),
                              "entry %" PRIu64 ": template name", rd.idx - 1);
        }
        ck_assert_uint_eq(st.rd.idx, rd.idx);
        if (xw == 0)
                ck_assert_uint_eq(m.pos, len); /* every byte read, no more asked for */
        ima_stream_done(&st);
        ima_reader_done(&rd);
        *ret_slides = slides;
        return rd.idx;
}

/*
 * The same entries as the whole-buffer reader, binary and ascii, through the smallest window and
 * the default one, in reads of 1 byte, of 4099 bytes and as large as asked: entries straddle
 * every read and the window's end, and the window slides many times.
 */
START_TEST(test_stream_reads_what_the_whole_buffer_reader_reads)
{
        static const size_t steps[] = {1, 4099, 0};
        static const size_t windows[] = {IMA_STREAM_WINDOW_MIN, 0};
        struct attest_err err;
        struct imagen g;
        unsigned slides;

        make_stream_log(&g, 400);
        ck_assert_uint_gt(g.bin_len, IMA_STREAM_WINDOW_DEFAULT);
        for (size_t w = 0; w < ARRAY_SIZE(windows); w++) {
                for (size_t k = 0; k < ARRAY_SIZE(steps); k++) {
                        /* reads of one byte on the small window only: enough, and slow */
                        if (steps[k] == 1 && windows[w] == 0)
                                continue;
                        ck_assert_uint_eq(stream_vs_whole(g.bin, g.bin_len, IMA_STREAM_BINARY,
                                                          windows[w], steps[k], &slides, &err),
                                          400);
                        ck_assert_uint_ge(slides, (windows[w] ? 4 : 1));
                        ck_assert_uint_eq(stream_vs_whole((const uint8_t *)g.txt, g.txt_len,
                                                          IMA_STREAM_AUTO, windows[w], steps[k],
                                                          &slides, &err),
                                          400);
                        ck_assert_uint_ge(slides, (windows[w] ? 4 : 1));
                }
        }
        /* auto-detection picks binary for the binary log */
        ck_assert_uint_eq(stream_vs_whole(g.bin, g.bin_len, IMA_STREAM_AUTO, 0, 0, &slides, &err),
                          400);
        imagen_done(&g);
}
END_TEST

/*
 * A log cut inside its last entry, far past the first window: the error names that entry and the
 * byte offset in the log (binary; ascii names the line), as the whole-buffer reader does; a log
 * cut between entries reads to its end.
 */
START_TEST(test_stream_truncated_last_entry)
{
        struct attest_err err;
        struct imagen g;
        struct ima_reader rd;
        struct ima_entry e;
        unsigned slides;
        size_t last = 0;
        char want[128];
        int x;

        make_stream_log(&g, 300);
        ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
        while (rd.idx < 299 && ima_reader_next(&rd, &e, &err) > 0)
                last = rd_offset(&rd.r);
        ck_assert_uint_gt(last, 2 * IMA_STREAM_WINDOW_MIN);
        /* a cut in the header, in the template name, in the data */
        for (size_t cut = last + 1; cut < g.bin_len; cut += (g.bin_len - last) / 3) {
                ck_assert_uint_eq(stream_vs_whole(g.bin, cut, IMA_STREAM_BINARY,
                                                  IMA_STREAM_WINDOW_MIN, 997, &slides, &err),
                                  299);
                ck_assert_int_eq(err.code, AE_IMA_TRUNCATED);
                ck_assert_msg(strncmp(err.msg, "entry 299 at byte ", 18) == 0, "%s", err.msg);
        }
        /* the data length field of the last entry: its offset is named exactly */
        {
                uint32_t tlen;

                memcpy(&tlen, g.bin + last + 24, 4);
                size_t data_off = last + 28 + tlen;

                ck_assert_uint_eq(stream_vs_whole(g.bin, data_off + 10, IMA_STREAM_BINARY, 0, 0,
                                                  &slides, &err),
                                  299);
                snprintf(want, sizeof(want), "entry 299 at byte %zu: template data truncated",
                         data_off);
                ck_assert_str_eq(err.msg, want);
        }
        ck_assert_uint_eq(stream_vs_whole(g.bin, last, IMA_STREAM_BINARY, 0, 0, &slides, &err),
                          299);
        /* ascii: the last line without its newline */
        x = (int)stream_vs_whole((const uint8_t *)g.txt, g.txt_len - 1, IMA_STREAM_ASCII,
                                 IMA_STREAM_WINDOW_MIN, 4096, &slides, &err);
        ck_assert_int_eq(x, 299);
        ck_assert_int_eq(err.code, AE_IMA_TRUNCATED);
        ck_assert_str_eq(err.msg, "line 300 field 1: last line has no newline");
        ima_reader_done(&rd);
        imagen_done(&g);
}
END_TEST

/* A read that fails stops the stream with its errno and the byte offset, and it stays stopped. */
START_TEST(test_stream_read_error)
{
        struct imagen g;
        struct mem_src m;
        struct ima_stream st;
        struct ima_entry e;
        struct attest_err err = {0};
        uint64_t n = 0;
        int x;

        make_stream_log(&g, 300);
        m = (struct mem_src){.p = g.bin, .len = g.bin_len, .step = 1000, .fail_at = 300000};
        ck_assert_int_eq(
                ima_stream_init(&st, IMA_STREAM_AUTO, IMA_STREAM_WINDOW_MIN, mem_read, &m, NULL),
                0);
        ck_assert_int_eq(st.rd.format, IMA_FORMAT_BINARY);
        while ((x = ima_stream_next(&st, &e, &err)) > 0)
                n++;
        ck_assert_int_eq(x, -EIO);
        ck_assert_int_eq(st.read_error, -EIO);
        ck_assert_int_eq(err.code, AE_FILE);
        ck_assert_str_eq(err.msg, "reading at byte 300000: Input/output error");
        ck_assert_uint_gt(n, 0);
        ck_assert_int_eq(ima_stream_next(&st, &e, &err), -EIO);
        ima_stream_done(&st);
        /* before the first window is full: init fails */
        m = (struct mem_src){.p = g.bin, .len = g.bin_len, .step = 1000, .fail_at = 5000};
        ck_assert_int_eq(ima_stream_init(&st, IMA_STREAM_AUTO, 0, mem_read, &m, NULL), -EIO);
        imagen_done(&g);
}
END_TEST

static Suite *ima_suite(void)
{
        Suite *s = suite_create("ima");
        TCase *real = tcase_create("real"), *syn = tcase_create("synthetic"),
              *sweep = tcase_create("sweep"), *stream = tcase_create("stream");

        tcase_add_test(real, test_real_logs_replay_to_their_pcrs_in_every_bank);
        tcase_add_test(real, test_ascii_and_binary_logs_decode_to_the_same_entries);
        tcase_add_test(real, test_boot_aggregate_matches_real_pcrs_and_rejects_others);
        tcase_add_test(syn, test_hasher_agrees_with_evp_in_every_bank);
        tcase_add_test(syn, test_replay_matches_independent_computation);
        tcase_add_test(syn, test_replay_mismatch_leaves_the_replay_unchanged);
        tcase_add_test(syn, test_all_zero_sees_every_byte);
        tcase_add_test(syn, test_violation_extends_ff_in_every_bank);
        tcase_add_test(syn, test_every_template_and_multiple_pcrs);
        tcase_add_test(syn, test_oversize_and_malformed_entries_are_rejected);
        tcase_add_test(syn, test_entry_cap_is_enforced);
        tcase_add_test(syn, test_ascii_errors_name_line_and_field);
        tcase_add_test(syn, test_ascii_custom_template_cannot_overflow_the_data);
        tcase_add_test(syn, test_ascii_template_data_cap);
        tcase_add_test(syn, test_ascii_name_and_line_caps);
        tcase_add_test(sweep, test_truncation_at_every_byte);
        tcase_add_test(sweep, test_corruption_sweep_never_passes);
        tcase_add_test(sweep, test_deleted_and_reordered_entries_fail_replay);
        tcase_add_test(stream, test_stream_reads_what_the_whole_buffer_reader_reads);
        tcase_add_test(stream, test_stream_truncated_last_entry);
        tcase_add_test(stream, test_stream_read_error);
        tcase_set_timeout(sweep, 600);
        tcase_set_timeout(stream, 300);
        suite_add_tcase(s, real);
        suite_add_tcase(s, syn);
        suite_add_tcase(s, sweep);
        suite_add_tcase(s, stream);
        return s;
}

int main(void)
{
        return tu_run(ima_suite());
}
