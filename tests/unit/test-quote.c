/* SPDX-License-Identifier: MIT */
/*
 * Quote verification against real quotes from swtpm (fixtures made by
 * tests/integration/make-quote-fixtures.sh, directory in $QUOTE_FIXTURES), plus quotes signed here
 * with OpenSSL keys dressed as AKs, for the checks a real TPM cannot be made to fail (magic, type,
 * P-384, TPML order, sizeofSelect), on the verifier's path (quote_verify) and the agent's
 * (tpm_quote_consistent).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "util/hex.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"
#include "evidence/quote.h"
#include "tpm/tpm.h"

#define BLOB_MAX 4096

struct fx {
        uint8_t ak[BLOB_MAX], attest[BLOB_MAX], sig[BLOB_MAX];
        size_t ak_len, attest_len, sig_len;
        struct pcr_set pcrs;
};

static uint8_t nonce[64];
static size_t nonce_len;
static struct pcr_sel sel;

static size_t slurp(const char *rel, uint8_t *buf, size_t max)
{
        const char *dir = getenv("QUOTE_FIXTURES");
        char path[4096];
        FILE *f;
        size_t n;

        ck_assert_msg(dir != NULL, "QUOTE_FIXTURES is not set (run through meson test)");
        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        n = fread(buf, 1, max, f);
        ck_assert_msg(feof(f) && n < max, "%s: read error or too big", path);
        fclose(f);
        return n;
}

static void load_pcrs(const char *rel, struct pcr_set *ret)
{
        static uint8_t text[PCR_FILE_MAX];
        struct attest_err err = {0};
        size_t n = slurp(rel, text, sizeof(text));

        ck_assert_msg(pcrs_parse((const char *)text, n, ret, &err) == 0, "%s: %s", rel, err.msg);
}

static void load(const char *kind, struct fx *f)
{
        char p[256], hex[256];
        size_t n;

        memset(f, 0, sizeof(*f));
        snprintf(p, sizeof(p), "%s/ak.pub", kind);
        f->ak_len = slurp(p, f->ak, sizeof(f->ak));
        snprintf(p, sizeof(p), "%s/quote.attest", kind);
        f->attest_len = slurp(p, f->attest, sizeof(f->attest));
        snprintf(p, sizeof(p), "%s/quote.sig", kind);
        f->sig_len = slurp(p, f->sig, sizeof(f->sig));
        snprintf(p, sizeof(p), "%s/pcrs.yaml", kind);
        load_pcrs(p, &f->pcrs);
        n = slurp("nonce.hex", (uint8_t *)hex, sizeof(hex) - 1);
        while (n && (hex[n - 1] == '\n' || hex[n - 1] == '\r'))
                n--;
        ck_assert_int_eq(hex_decode(hex, n, nonce, sizeof(nonce), &nonce_len), 0);
        ck_assert_uint_eq(nonce_len, 32);
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha1:10", &sel), 0);
}

static struct quote_ak *ak_of(const struct fx *f)
{
        struct attest_err err = {0};
        struct quote_ak *ak = NULL;

        ck_assert_msg(quote_ak_parse(f->ak, f->ak_len, &ak, &err) == 0, "%s: %s",
                      attest_code_name(err.code), err.msg);
        return ak;
}

/* Verify and check the errno and the code. */
static void expect(const struct quote_ak *ak, const uint8_t *attest, size_t alen,
                   const uint8_t *sig, size_t slen, const uint8_t *n, size_t nlen,
                   const struct pcr_sel *s, const struct pcr_set *pcrs, int want,
                   enum attest_code want_code)
{
        struct attest_err err = {0};
        struct quote_info info;
        int r;

        memset(&info, 0xa5, sizeof(info));
        r = quote_verify(ak, attest, alen, sig, slen, n, nlen, s, pcrs, &info, &err);
        ck_assert_msg(r == want, "quote_verify = %d, want %d (%s: %s)", r, want,
                      attest_code_name(err.code), err.msg);
        if (want_code) {
                ck_assert_int_ne(err.code, AE_NONE);
                ck_assert_int_eq(err.code, want_code);
                ck_assert_msg(strlen(err.msg) > 0, "no message for %s",
                              attest_code_name(want_code));
                /* ret_* written only on success */
                ck_assert_uint_eq(info.reset_count, 0xa5a5a5a5u);
        }
}

static void expect_fx(const struct quote_ak *ak, const struct fx *f, int want,
                      enum attest_code code)
{
        expect(ak, f->attest, f->attest_len, f->sig, f->sig_len, nonce, nonce_len, &sel, &f->pcrs,
               want, code);
}

/* ---- real swtpm quotes ---- */

static void accepts(const char *kind, uint16_t sig_alg)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        struct quote_info info;
        uint8_t name[QUOTE_NAME_MAX], want_name[BLOB_MAX];
        size_t name_len, want_len;
        char p[64];
        struct fx f;

        load(kind, &f);
        ak = ak_of(&f);
        ck_assert_int_eq(quote_verify(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce,
                                      nonce_len, &sel, &f.pcrs, &info, &err),
                         0);
        ck_assert(pcr_sel_equal(&info.sel, &sel));
        ck_assert_int_eq(info.hash, BANK_SHA256);
        ck_assert_uint_eq(info.sig_alg, sig_alg);
        ck_assert_uint_ge(info.reset_count, 1);
        ck_assert(info.safe);
        ck_assert_uint_ne(info.firmware_version, 0);
        ck_assert_uint_gt(info.clock, 0);
        /* no expected selection: any, reported back */
        memset(&info, 0, sizeof(info));
        ck_assert_int_eq(quote_verify(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce,
                                      nonce_len, NULL, &f.pcrs, &info, &err),
                         0);
        ck_assert(pcr_sel_equal(&info.sel, &sel));
        /* the name tpm2_createak printed (-n) */
        ck_assert_int_eq(quote_ak_name(ak, name, sizeof(name), &name_len), 0);
        snprintf(p, sizeof(p), "%s/ak.name", kind);
        want_len = slurp(p, want_name, sizeof(want_name));
        ck_assert_uint_eq(name_len, want_len);
        ck_assert_int_eq(memcmp(name, want_name, name_len), 0);
        ck_assert_int_eq(quote_ak_name(ak, name, name_len - 1, &name_len), -E2BIG);
        ck_assert_ptr_nonnull(quote_ak_pkey(ak));
}

START_TEST(test_quote_accepts_swtpm_rsa_rsassa)
{
        accepts("rsa", TPM2_ALG_RSASSA);
}
END_TEST

START_TEST(test_quote_accepts_swtpm_ecc_p256)
{
        accepts("ecc", TPM2_ALG_ECDSA);
}
END_TEST

START_TEST(test_quote_accepts_swtpm_rsapss)
{
        accepts("rsapss", TPM2_ALG_RSAPSS);
}
END_TEST

/* ---- one AK, many threads (daemon/akcache.c shares a parsed AK between HTTP threads) ---- */

struct shared_run {
        const struct quote_ak *ak;
        const struct fx *f;
        int bad; /* verifications that gave the wrong answer */
};

static void *shared_verify(void *arg)
{
        struct shared_run *r = arg;
        uint8_t sig[BLOB_MAX];

        memcpy(sig, r->f->sig, r->f->sig_len);
        for (int i = 0; i < 150; i++) {
                struct attest_err err = {0};
                bool tamper = i % 3 == 2;
                int e;

                sig[r->f->sig_len - 1] ^= tamper ? 0x01 : 0x00;
                e = quote_verify(r->ak, r->f->attest, r->f->attest_len, sig, r->f->sig_len, nonce,
                                 nonce_len, &sel, &r->f->pcrs, NULL, &err);
                sig[r->f->sig_len - 1] ^= tamper ? 0x01 : 0x00;
                if (tamper ? e != -EKEYREJECTED || err.code != AE_QUOTE_SIGNATURE : e != 0)
                        r->bad++;
        }
        return NULL;
}

START_TEST(test_quote_verify_shares_ak_between_threads)
{
        const char *kinds[] = {"rsa", "ecc", "rsapss"};

        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
                struct shared_run run[4];
                pthread_t t[4];
                struct fx f;

                load(kinds[k], &f);
                ak = ak_of(&f);
                for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                        run[i] = (struct shared_run){.ak = ak, .f = &f};
                        ck_assert_int_eq(pthread_create(&t[i], NULL, shared_verify, &run[i]), 0);
                }
                for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
                        ck_assert_msg(run[i].bad == 0, "%s: thread %zu: %d wrong answers", kinds[k],
                                      i, run[i].bad);
                }
        }
}
END_TEST

START_TEST(test_quote_accepts_tpm2b_attest)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t wrapped[BLOB_MAX + 2];
        struct fx f;

        load("rsa", &f);
        ak = ak_of(&f);
        wrapped[0] = (uint8_t)(f.attest_len >> 8);
        wrapped[1] = (uint8_t)f.attest_len;
        memcpy(wrapped + 2, f.attest, f.attest_len);
        expect(ak, wrapped, f.attest_len + 2, f.sig, f.sig_len, nonce, nonce_len, &sel, &f.pcrs, 0,
               AE_NONE);
        /* a wrong size prefix is not a TPM2B_ATTEST, and not a TPMS_ATTEST either */
        wrapped[1]++;
        expect(ak, wrapped, f.attest_len + 2, f.sig, f.sig_len, nonce, nonce_len, &sel, &f.pcrs,
               -EBADMSG, AE_QUOTE_ATTEST_MALFORMED);
}
END_TEST

START_TEST(test_quote_rejects_wrong_nonce)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t other[64];
        struct fx f;

        load("ecc", &f);
        ak = ak_of(&f);
        memcpy(other, nonce, nonce_len);
        other[nonce_len - 1] ^= 1;
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, other, nonce_len, &sel, &f.pcrs,
               -ESTALE, AE_QUOTE_NONCE);
        /* a prefix of the right nonce, the nonce with a byte more, no nonce */
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len - 1, &sel, &f.pcrs,
               -ESTALE, AE_QUOTE_NONCE);
        memcpy(other, nonce, nonce_len);
        other[nonce_len] = 0;
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, other, nonce_len + 1, &sel, &f.pcrs,
               -ESTALE, AE_QUOTE_NONCE);
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, NULL, 0, &sel, &f.pcrs, -ESTALE,
               AE_QUOTE_NONCE);
}
END_TEST

START_TEST(test_quote_rejects_flipped_attest_byte)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct fx f;
        /* magic 4, type 2, qualifiedSigner 2+34, extraData 2+32: then clockInfo.clock */
        const size_t clock_off = 4 + 2 + 2 + 34 + 2 + 32;

        load("rsa", &f);
        ak = ak_of(&f);
        f.attest[clock_off + 7] ^= 0x01;
        expect_fx(ak, &f, -EKEYREJECTED, AE_QUOTE_SIGNATURE);
        f.attest[clock_off + 7] ^= 0x01;
        /* every byte, every bit position class: never accepted */
        for (size_t i = 0; i < f.attest_len; i++) {
                struct attest_err err = {0};

                f.attest[i] ^= 0x80;
                int r = quote_verify(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len,
                                     &sel, &f.pcrs, NULL, &err);
                ck_assert_msg(r == -EKEYREJECTED || r == -EBADMSG || r == -EOPNOTSUPP,
                              "flip at %zu: %d %s", i, r, attest_code_name(err.code));
                f.attest[i] ^= 0x80;
        }
        expect_fx(ak, &f, 0, AE_NONE);
}
END_TEST

START_TEST(test_quote_rejects_flipped_signature_byte)
{
        const char *kinds[] = {"rsa", "ecc", "rsapss"};

        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
                struct fx f;

                load(kinds[k], &f);
                ak = ak_of(&f);
                f.sig[f.sig_len - 1] ^= 0x01;
                expect_fx(ak, &f, -EKEYREJECTED, AE_QUOTE_SIGNATURE);
                f.sig[f.sig_len - 1] ^= 0x01;
                for (size_t i = 0; i < f.sig_len; i++) {
                        struct attest_err err = {0};

                        f.sig[i] ^= 0x04;
                        int r = quote_verify(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce,
                                             nonce_len, &sel, &f.pcrs, NULL, &err);
                        ck_assert_msg(r < 0, "%s: flip at %zu accepted", kinds[k], i);
                        f.sig[i] ^= 0x04;
                }
        }
}
END_TEST

START_TEST(test_quote_rejects_pcr_changed_after_quote)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct pcr_set after;
        struct fx f;

        load("rsa", &f);
        ak = ak_of(&f);
        load_pcrs("pcrs-after.yaml", &after);
        ck_assert_int_ne(memcmp(after.v[BANK_SHA256][10], f.pcrs.v[BANK_SHA256][10], 32), 0);
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len, &sel, &after,
               -EKEYREJECTED, AE_QUOTE_PCR_DIGEST);
        /* one bit of one value in either bank */
        f.pcrs.v[BANK_SHA1][10][19] ^= 1;
        expect_fx(ak, &f, -EKEYREJECTED, AE_QUOTE_PCR_DIGEST);
        f.pcrs.v[BANK_SHA1][10][19] ^= 1;
        f.pcrs.v[BANK_SHA256][3][0] ^= 1;
        expect_fx(ak, &f, -EKEYREJECTED, AE_QUOTE_PCR_DIGEST);
        f.pcrs.v[BANK_SHA256][3][0] ^= 1;
        /* values of PCRs not quoted do not matter */
        f.pcrs.have[BANK_SHA256] |= 1u << 11;
        f.pcrs.v[BANK_SHA256][11][0] = 0x77;
        expect_fx(ak, &f, 0, AE_NONE);
}
END_TEST

START_TEST(test_quote_rejects_other_selection)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct pcr_sel other;
        struct fx f;

        load("rsa", &f);
        ak = ak_of(&f);
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10", &other), 0);
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len, &other, &f.pcrs,
               -EKEYREJECTED, AE_QUOTE_PCR_SELECTION);
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha1:10,11", &other), 0);
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len, &other, &f.pcrs,
               -EKEYREJECTED, AE_QUOTE_PCR_SELECTION);
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha384:10", &other), 0);
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len, nonce, nonce_len, &other, &f.pcrs,
               -EKEYREJECTED, AE_QUOTE_PCR_SELECTION);
}
END_TEST

START_TEST(test_quote_rejects_missing_pcr_value)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct fx f;

        load("rsa", &f);
        ak = ak_of(&f);
        f.pcrs.have[BANK_SHA1] &= ~(1u << 10);
        expect_fx(ak, &f, -EBADMSG, AE_QUOTE_PCR_MISSING);
}
END_TEST

START_TEST(test_quote_rejects_other_tpms_ak)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL, *ecc = NULL;
        struct fx f, o, e;

        load("rsa", &f);
        load("other", &o);
        load("ecc", &e);
        ak = ak_of(&f);
        ecc = ak_of(&e);
        /* the second swtpm's quote is valid with its own AK, not with ours */
        {
                _cleanup_(quote_ak_freep) struct quote_ak *oak = ak_of(&o);
                expect_fx(oak, &o, 0, AE_NONE);
        }
        expect_fx(ak, &o, -EKEYREJECTED, AE_QUOTE_SIGNATURE);
        /* an RSA quote with an ECC AK; an RSAPSS signature with an RSASSA AK */
        expect_fx(ecc, &f, -EKEYREJECTED, AE_QUOTE_SIG_SCHEME);
        load("rsapss", &o);
        expect_fx(ak, &o, -EKEYREJECTED, AE_QUOTE_SIG_SCHEME);
}
END_TEST

START_TEST(test_quote_rejects_truncated_blobs)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        struct quote_ak *bad = NULL;
        struct fx f;

        load("ecc", &f);
        ak = ak_of(&f);
        for (size_t n = 0; n < f.attest_len; n++)
                expect(ak, f.attest, n, f.sig, f.sig_len, nonce, nonce_len, &sel, &f.pcrs, -EBADMSG,
                       AE_QUOTE_ATTEST_MALFORMED);
        for (size_t n = 0; n < f.sig_len; n++)
                expect(ak, f.attest, f.attest_len, f.sig, n, nonce, nonce_len, &sel, &f.pcrs,
                       -EBADMSG, AE_QUOTE_SIG_MALFORMED);
        for (size_t n = 0; n < f.ak_len; n++) {
                ck_assert_int_eq(quote_ak_parse(f.ak, n, &bad, &err), -EBADMSG);
                ck_assert_int_eq(err.code, AE_QUOTE_AK_MALFORMED);
                ck_assert_ptr_null(bad);
        }
}
END_TEST

START_TEST(test_quote_rejects_trailing_garbage)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        struct quote_ak *bad = NULL;
        struct fx f;

        load("rsa", &f);
        ak = ak_of(&f);
        f.attest[f.attest_len] = 0;
        expect(ak, f.attest, f.attest_len + 1, f.sig, f.sig_len, nonce, nonce_len, &sel, &f.pcrs,
               -EBADMSG, AE_QUOTE_ATTEST_TRAILING);
        f.sig[f.sig_len] = 0;
        expect(ak, f.attest, f.attest_len, f.sig, f.sig_len + 1, nonce, nonce_len, &sel, &f.pcrs,
               -EBADMSG, AE_QUOTE_SIG_TRAILING);
        f.ak[f.ak_len] = 0;
        ck_assert_int_eq(quote_ak_parse(f.ak, f.ak_len + 1, &bad, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_TRAILING);
        ck_assert_ptr_null(bad);
        /* a TPM2B size that does not match its TPMT_PUBLIC (tss2-mu does not check it) */
        f.ak[1]++;
        ck_assert_int_eq(quote_ak_parse(f.ak, f.ak_len, &bad, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_MALFORMED);
        f.ak[1] -= 2;
        ck_assert_int_eq(quote_ak_parse(f.ak, f.ak_len, &bad, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_MALFORMED);
        ck_assert_ptr_null(bad);
        f.ak[1]++;
        /* over the caps: refused before any decoding */
        expect(ak, f.attest, QUOTE_ATTEST_MAX + 1, f.sig, f.sig_len, nonce, nonce_len, &sel,
               &f.pcrs, -E2BIG, AE_QUOTE_ATTEST_TOO_BIG);
        expect(ak, f.attest, f.attest_len, f.sig, QUOTE_SIG_MAX + 1, nonce, nonce_len, &sel,
               &f.pcrs, -E2BIG, AE_QUOTE_SIG_TOO_BIG);
        ck_assert_int_eq(quote_ak_parse(f.ak, QUOTE_AK_MAX + 1, &bad, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_TOO_BIG);
}
END_TEST

START_TEST(test_quote_rejects_unrestricted_key)
{
        struct attest_err err = {0};
        struct quote_ak *ak = NULL;
        struct fx f;

        load("norestrict", &f);
        ck_assert_int_eq(quote_ak_parse(f.ak, f.ak_len, &ak, &err), -EKEYREJECTED);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_ATTRIBUTES);
        ck_assert_ptr_nonnull(strstr(err.msg, "restricted"));
        ck_assert_ptr_null(ak);
}
END_TEST

/* ---- quotes signed here: an OpenSSL key presented as an AK ---- */

struct synth {
        EVP_PKEY *key;
        uint8_t pub[BLOB_MAX];
        size_t pub_len;
        const char *md;
        TPM2_ALG_ID hash;
};

static const TPMA_OBJECT ak_attrs = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                                    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;

static void synth_marshal(struct synth *s, const TPM2B_PUBLIC *p)
{
        s->pub_len = 0;
        ck_assert_int_eq(Tss2_MU_TPM2B_PUBLIC_Marshal(p, s->pub, sizeof(s->pub), &s->pub_len), 0);
}

static void synth_rsa(struct synth *s, unsigned bits, TPMA_OBJECT attrs)
{
        TPM2B_PUBLIC p;
        BIGNUM *n = NULL;

        memset(&p, 0, sizeof(p));
        s->key = EVP_RSA_gen(bits);
        ck_assert_ptr_nonnull(s->key);
        ck_assert_int_eq(EVP_PKEY_get_bn_param(s->key, OSSL_PKEY_PARAM_RSA_N, &n), 1);
        p.publicArea.type = TPM2_ALG_RSA;
        p.publicArea.nameAlg = TPM2_ALG_SHA256;
        p.publicArea.objectAttributes = attrs;
        p.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
        p.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
        p.publicArea.parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
        p.publicArea.parameters.rsaDetail.keyBits = (TPMI_RSA_KEY_BITS)bits;
        p.publicArea.unique.rsa.size = (UINT16)(bits / 8);
        ck_assert_int_eq(BN_bn2binpad(n, p.publicArea.unique.rsa.buffer, (int)bits / 8),
                         (int)bits / 8);
        BN_free(n);
        s->md = "SHA256";
        s->hash = TPM2_ALG_SHA256;
        synth_marshal(s, &p);
}

static void synth_ecc(struct synth *s, const char *curve, TPM2_ECC_CURVE id, size_t fs)
{
        uint8_t pt[1 + 2 * 66];
        size_t len = 0;
        TPM2B_PUBLIC p;

        memset(&p, 0, sizeof(p));
        s->key = EVP_EC_gen(curve);
        ck_assert_ptr_nonnull(s->key);
        ck_assert_int_eq(EVP_PKEY_get_octet_string_param(s->key, OSSL_PKEY_PARAM_PUB_KEY, pt,
                                                         sizeof(pt), &len),
                         1);
        ck_assert_uint_eq(len, 1 + 2 * fs);
        p.publicArea.type = TPM2_ALG_ECC;
        p.publicArea.nameAlg = TPM2_ALG_SHA256;
        p.publicArea.objectAttributes = ak_attrs;
        p.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
        p.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
        p.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg =
                fs == 48 ? TPM2_ALG_SHA384 : TPM2_ALG_SHA256;
        p.publicArea.parameters.eccDetail.curveID = id;
        p.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
        p.publicArea.unique.ecc.x.size = (UINT16)fs;
        memcpy(p.publicArea.unique.ecc.x.buffer, pt + 1, fs);
        p.publicArea.unique.ecc.y.size = (UINT16)fs;
        memcpy(p.publicArea.unique.ecc.y.buffer, pt + 1 + fs, fs);
        s->md = fs == 48 ? "SHA384" : "SHA256";
        s->hash = fs == 48 ? TPM2_ALG_SHA384 : TPM2_ALG_SHA256;
        synth_marshal(s, &p);
}

/*
 * a marshalled into attest and signed with the synthetic key and digest md: OpenSSL's signature
 * (RSA: PKCS#1 v1.5, or PSS with salt length saltlen when pss; ECDSA: DER) into raw, its length
 * in *rl (raw's size on entry).
 */
static void synth_sign_raw(const struct synth *s, const TPMS_ATTEST *a, const char *md, bool pss,
                           int saltlen, uint8_t *attest, size_t *alen, uint8_t *raw, size_t *rl)
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pctx = NULL;

        *alen = 0;
        ck_assert_int_eq(Tss2_MU_TPMS_ATTEST_Marshal(a, attest, BLOB_MAX, alen), 0);
        ck_assert_int_eq(EVP_DigestSignInit_ex(ctx, &pctx, md, NULL, NULL, s->key, NULL), 1);
        if (pss) {
                ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING), 1);
                ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, saltlen), 1);
        }
        ck_assert_int_eq(EVP_DigestSign(ctx, raw, rl, attest, *alen), 1);
        EVP_MD_CTX_free(ctx);
}

/* An ECDSA signature's DER (OpenSSL's) as r and s of fs bytes each, the TPM's form. */
static void synth_der_rs(const uint8_t *der, size_t len, int fs, uint8_t *r, uint8_t *sv)
{
        const uint8_t *p = der;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)len);

        ck_assert_ptr_nonnull(es);
        ck_assert_int_eq(BN_bn2binpad(ECDSA_SIG_get0_r(es), r, fs), fs);
        ck_assert_int_eq(BN_bn2binpad(ECDSA_SIG_get0_s(es), sv, fs), fs);
        ECDSA_SIG_free(es);
}

/* Marshal a and sign it with the synthetic key the way a TPM would. */
static void synth_sign(const struct synth *s, const TPMS_ATTEST *a, uint8_t *attest, size_t *alen,
                       uint8_t *sig, size_t *slen)
{
        uint8_t raw[1024];
        size_t rl = sizeof(raw);
        TPMT_SIGNATURE t;

        synth_sign_raw(s, a, s->md, false, 0, attest, alen, raw, &rl);
        memset(&t, 0, sizeof(t));
        if (EVP_PKEY_get_base_id(s->key) == EVP_PKEY_RSA) {
                t.sigAlg = TPM2_ALG_RSASSA;
                t.signature.rsassa.hash = s->hash;
                t.signature.rsassa.sig.size = (UINT16)rl;
                memcpy(t.signature.rsassa.sig.buffer, raw, rl);
        } else {
                int fs = s->hash == TPM2_ALG_SHA384 ? 48 : 32;

                t.sigAlg = TPM2_ALG_ECDSA;
                t.signature.ecdsa.hash = s->hash;
                t.signature.ecdsa.signatureR.size = (UINT16)fs;
                t.signature.ecdsa.signatureS.size = (UINT16)fs;
                synth_der_rs(raw, rl, fs, t.signature.ecdsa.signatureR.buffer,
                             t.signature.ecdsa.signatureS.buffer);
        }
        *slen = 0;
        ck_assert_int_eq(Tss2_MU_TPMT_SIGNATURE_Marshal(&t, sig, BLOB_MAX, slen), 0);
}

/* The real rsa quote's TPMS_ATTEST, to be altered and re-signed. */
static void real_attest(struct fx *f, TPMS_ATTEST *a)
{
        size_t off = 0;

        load("rsa", f);
        memset(a, 0, sizeof(*a));
        ck_assert_int_eq(Tss2_MU_TPMS_ATTEST_Unmarshal(f->attest, f->attest_len, &off, a), 0);
}

/* The real rsa quote's TPMS_ATTEST and an RSA key dressed as its AK, to alter and re-sign it. */
static struct quote_ak *synth_rsa_ak(struct fx *f, TPMS_ATTEST *a, struct synth *s)
{
        struct attest_err err = {0};
        struct quote_ak *ak = NULL;

        real_attest(f, a);
        synth_rsa(s, 2048, ak_attrs);
        ck_assert_int_eq(quote_ak_parse(s->pub, s->pub_len, &ak, &err), 0);
        return ak;
}

/* pcrDigest recomputed here independently: sha256 PCRs 0-10 then sha1 PCR 10, or sha1 first. */
static void set_digest(TPMS_ATTEST *a, const struct pcr_set *pcrs, const char *md, bool sha1_first)
{
        uint8_t cat[12 * 32];
        size_t n = 0;
        unsigned dl = 0;

        if (sha1_first) {
                memcpy(cat + n, pcrs->v[BANK_SHA1][10], 20);
                n += 20;
        }
        for (int i = 0; i <= 10; i++, n += 32)
                memcpy(cat + n, pcrs->v[BANK_SHA256][i], 32);
        if (!sha1_first) {
                memcpy(cat + n, pcrs->v[BANK_SHA1][10], 20);
                n += 20;
        }
        ck_assert_int_eq(EVP_Digest(cat, n, a->attested.quote.pcrDigest.buffer, &dl,
                                    EVP_get_digestbyname(md), NULL),
                         1);
        a->attested.quote.pcrDigest.size = (UINT16)dl;
}

START_TEST(test_quote_rejects_bad_magic_and_type)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX];
        size_t alen, slen;
        struct synth s;
        TPMS_ATTEST a, b;
        struct fx f;

        ak = synth_rsa_ak(&f, &a, &s);
        /* unchanged and re-signed: valid, so what follows tests one field each */
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        b = a;
        b.magic ^= 1;
        synth_sign(&s, &b, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_MAGIC);
        b = a;
        b.type = TPM2_ST_ATTEST_TIME;
        memset(&b.attested, 0, sizeof(b.attested));
        synth_sign(&s, &b, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_TYPE);
        EVP_PKEY_free(s.key);
}
END_TEST

START_TEST(test_quote_digest_follows_tpml_order)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX];
        size_t alen, slen;
        struct synth s;
        TPMS_ATTEST a;
        TPMS_PCR_SELECTION t;
        struct fx f;

        ak = synth_rsa_ak(&f, &a, &s);
        ck_assert_uint_eq(a.attested.quote.pcrSelect.count, 2);
        ck_assert_uint_eq(a.attested.quote.pcrSelect.pcrSelections[0].hash, TPM2_ALG_SHA256);
        /* sha1 entry first: the digest must be over sha1:10 first */
        t = a.attested.quote.pcrSelect.pcrSelections[0];
        a.attested.quote.pcrSelect.pcrSelections[0] = a.attested.quote.pcrSelect.pcrSelections[1];
        a.attested.quote.pcrSelect.pcrSelections[1] = t;
        set_digest(&a, &f.pcrs, "SHA256", false);
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_PCR_DIGEST);
        set_digest(&a, &f.pcrs, "SHA256", true);
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        /* a bank listed twice */
        a.attested.quote.pcrSelect.pcrSelections[1].hash = TPM2_ALG_SHA1;
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, NULL, &f.pcrs, -EBADMSG,
               AE_QUOTE_PCR_SELECTION_MALFORMED);
        /* a hash without a bank */
        a.attested.quote.pcrSelect.pcrSelections[1].hash = TPM2_ALG_SM3_256;
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, NULL, &f.pcrs, -EOPNOTSUPP,
               AE_QUOTE_PCR_BANK);
        EVP_PKEY_free(s.key);
}
END_TEST

/* The synthetic AK with another signing scheme (TPM2_ALG_NULL: any the verifier knows). */
static void synth_set_scheme(struct synth *s, TPM2_ALG_ID scheme, TPM2_ALG_ID hash)
{
        TPM2B_PUBLIC p;
        size_t off = 0;

        memset(&p, 0, sizeof(p));
        ck_assert_int_eq(Tss2_MU_TPM2B_PUBLIC_Unmarshal(s->pub, s->pub_len, &off, &p), 0);
        if (p.publicArea.type == TPM2_ALG_RSA) {
                p.publicArea.parameters.rsaDetail.scheme.scheme = scheme;
                p.publicArea.parameters.rsaDetail.scheme.details.anySig.hashAlg = hash;
        } else {
                p.publicArea.parameters.eccDetail.scheme.scheme = scheme;
                p.publicArea.parameters.eccDetail.scheme.details.anySig.hashAlg = hash;
        }
        synth_marshal(s, &p);
}

/* Sign a with the synthetic RSA key as sig_alg (rsassa, or rsapss with salt length saltlen). */
static void synth_sign_rsa(const struct synth *s, const TPMS_ATTEST *a, TPM2_ALG_ID sig_alg,
                           const char *md, TPM2_ALG_ID hash, int saltlen, uint8_t *attest,
                           size_t *alen, uint8_t *sig, size_t *slen)
{
        uint8_t raw[1024];
        size_t rl = sizeof(raw);
        TPMT_SIGNATURE t;

        synth_sign_raw(s, a, md, sig_alg == TPM2_ALG_RSAPSS, saltlen, attest, alen, raw, &rl);
        memset(&t, 0, sizeof(t));
        t.sigAlg = sig_alg;
        t.signature.rsassa.hash = hash; /* rsapss has the same layout */
        t.signature.rsassa.sig.size = (UINT16)rl;
        memcpy(t.signature.rsassa.sig.buffer, raw, rl);
        *slen = 0;
        ck_assert_int_eq(Tss2_MU_TPMT_SIGNATURE_Marshal(&t, sig, BLOB_MAX, slen), 0);
}

/*
 * An AK without a scheme of its own takes every scheme of its type with SHA-256/384/512 (each
 * with the pcrDigest of that hash), not SHA-1; an AK with one takes only that scheme and hash.
 */
START_TEST(test_quote_ak_scheme_null_takes_each_scheme_and_hash)
{
        static const struct {
                TPM2_ALG_ID sig_alg, hash;
                const char *md;
                int saltlen;
        } rsa[] = {
                {TPM2_ALG_RSASSA, TPM2_ALG_SHA256, "SHA256", 0},
                {TPM2_ALG_RSASSA, TPM2_ALG_SHA384, "SHA384", 0},
                {TPM2_ALG_RSASSA, TPM2_ALG_SHA512, "SHA512", 0},
                {TPM2_ALG_RSAPSS, TPM2_ALG_SHA256, "SHA256", RSA_PSS_SALTLEN_DIGEST},
                {TPM2_ALG_RSAPSS, TPM2_ALG_SHA384, "SHA384", RSA_PSS_SALTLEN_MAX},
                {TPM2_ALG_RSAPSS, TPM2_ALG_SHA512, "SHA512", RSA_PSS_SALTLEN_DIGEST},
        };
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX];
        struct attest_err err = {0};
        size_t alen, slen;
        struct synth s;
        TPMS_ATTEST a;
        struct fx f;

        real_attest(&f, &a);
        synth_rsa(&s, 2048, ak_attrs);
        for (int fixed = 0; fixed < 2; fixed++)
                for (size_t i = 0; i < ARRAY_SIZE(rsa); i++) {
                        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
                        /* fixed: the AK's scheme is rsapss-sha384, the fifth entry */
                        bool ok = !fixed || i == 4;

                        if (fixed)
                                synth_set_scheme(&s, TPM2_ALG_RSAPSS, TPM2_ALG_SHA384);
                        else
                                synth_set_scheme(&s, TPM2_ALG_NULL, TPM2_ALG_NULL);
                        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), 0);
                        a.attested.quote.pcrDigest = (TPM2B_DIGEST){0};
                        set_digest(&a, &f.pcrs, rsa[i].md, false);
                        synth_sign_rsa(&s, &a, rsa[i].sig_alg, rsa[i].md, rsa[i].hash,
                                       rsa[i].saltlen, attest, &alen, sig, &slen);
                        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs,
                               ok ? 0 : -EKEYREJECTED, ok ? AE_NONE : AE_QUOTE_SIG_SCHEME);
                }
        /* SHA-1: no */
        {
                _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;

                synth_set_scheme(&s, TPM2_ALG_NULL, TPM2_ALG_NULL);
                ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), 0);
                set_digest(&a, &f.pcrs, "SHA1", false);
                synth_sign_rsa(&s, &a, TPM2_ALG_RSASSA, "SHA1", TPM2_ALG_SHA1, 0, attest, &alen,
                               sig, &slen);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EOPNOTSUPP,
                       AE_QUOTE_SIG_ALG);
        }
        EVP_PKEY_free(s.key);
        /* ECC P-256 without a scheme: ecdsa with SHA-384 and SHA-512 too */
        synth_ecc(&s, "P-256", TPM2_ECC_NIST_P256, 32);
        synth_set_scheme(&s, TPM2_ALG_NULL, TPM2_ALG_NULL);
        for (int h = 0; h < 3; h++) {
                _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
                static const char *mds[] = {"SHA256", "SHA384", "SHA512"};
                static const TPM2_ALG_ID hs[] = {TPM2_ALG_SHA256, TPM2_ALG_SHA384, TPM2_ALG_SHA512};

                ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), 0);
                s.md = mds[h];
                s.hash = hs[h];
                a.attested.quote.pcrDigest = (TPM2B_DIGEST){0};
                set_digest(&a, &f.pcrs, mds[h], false);
                synth_sign(&s, &a, attest, &alen, sig, &slen);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        }
        EVP_PKEY_free(s.key);
}
END_TEST

START_TEST(test_quote_accepts_p384_sha384)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX];
        size_t alen, slen;
        struct synth s;
        TPMS_ATTEST a;
        struct attest_err err = {0};
        struct quote_info info;
        struct fx f;

        real_attest(&f, &a);
        synth_ecc(&s, "P-384", TPM2_ECC_NIST_P384, 48);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), 0);
        set_digest(&a, &f.pcrs, "SHA384", false);
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        ck_assert_int_eq(quote_verify(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs,
                                      &info, &err),
                         0);
        ck_assert_int_eq(info.hash, BANK_SHA384);
        /* the same quote with the sha256 digest the TPM made: wrong hash for this scheme */
        a.attested.quote.pcrDigest = (TPM2B_DIGEST){0};
        set_digest(&a, &f.pcrs, "SHA256", false);
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_PCR_DIGEST);
        EVP_PKEY_free(s.key);
}
END_TEST

/* ---- ECDSA r and s as DER (quote_ecdsa_der) ---- */

/* i2d_ECDSA_SIG of the same values: the encoding OpenSSL requires (it re-encodes and compares). */
static size_t der_openssl(const uint8_t *r, size_t rn, const uint8_t *s, size_t sn, uint8_t *out)
{
        ECDSA_SIG *es = ECDSA_SIG_new();
        BIGNUM *br = BN_bin2bn(r, (int)rn, NULL), *bs = BN_bin2bn(s, (int)sn, NULL);
        uint8_t *p = out;
        int n;

        ck_assert(es && br && bs && ECDSA_SIG_set0(es, br, bs) == 1);
        n = i2d_ECDSA_SIG(es, &p);
        ck_assert_int_gt(n, 0);
        ECDSA_SIG_free(es);
        return (size_t)n;
}

static void der_same_as_openssl(const uint8_t *r, size_t rn, const uint8_t *s, size_t sn)
{
        uint8_t want[256], got[QUOTE_ECDSA_DER_MAX];
        struct wb w = WB_INIT(got, sizeof(got));
        size_t wn = der_openssl(r, rn, s, sn, want);

        ck_assert_msg(quote_ecdsa_der(r, rn, s, sn, &w) == 0, "r %zu s %zu bytes", rn, sn);
        ck_assert_uint_eq(wb_len(&w), wn);
        ck_assert_msg(memcmp(got, want, wn) == 0, "r %zu (%02x) s %zu (%02x): DER differs", rn,
                      rn ? r[0] : 0, sn, sn ? s[0] : 0);
}

START_TEST(test_quote_ecdsa_der_matches_openssl)
{
        static const uint8_t zero[QUOTE_ECDSA_INT_MAX + 16];
        uint8_t v[QUOTE_ECDSA_INT_MAX + 16], u[QUOTE_ECDSA_INT_MAX + 16];
        static const uint8_t firsts[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        /* lengths with their leading zeros: 0, 1, 31 to 33, the cap, past it with zeros only */
        static const size_t lens[] = {
                0, 1, 2, 31, 32, 33, 47, QUOTE_ECDSA_INT_MAX, QUOTE_ECDSA_INT_MAX + 16};

        /* zero in every length: the one content byte 0x00 */
        for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
                der_same_as_openssl(zero, lens[i], zero, lens[i]);
        /* first byte 0x00 (a leading zero), small, the top bit set (a 0x00 in front), all ones */
        for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
                for (size_t j = 0; j < ARRAY_SIZE(firsts); j++)
                        for (size_t z = 0; z <= 2 && z < lens[i]; z++) {
                                size_t sig = lens[i] - z; /* bytes after z leading zeros */

                                if (sig > QUOTE_ECDSA_INT_MAX)
                                        continue;
                                memset(v, 0, sizeof(v));
                                memset(v + z, 0x5a, sig);
                                if (sig)
                                        v[z] = firsts[j];
                                memset(u, 0xa5, sizeof(u));
                                der_same_as_openssl(v, lens[i], u, 32);
                                der_same_as_openssl(u, 32, v, lens[i]);
                                der_same_as_openssl(v, lens[i], v, lens[i]);
                        }
        /* random values of random lengths, with and without the top bit */
        for (int k = 0; k < 2000; k++) {
                uint8_t n[2];
                size_t rn, sn;

                ck_assert_int_eq(RAND_bytes(n, 2), 1);
                rn = n[0] % (QUOTE_ECDSA_INT_MAX + 1);
                sn = n[1] % (QUOTE_ECDSA_INT_MAX + 1);
                ck_assert_int_eq(RAND_bytes(v, sizeof(v)), 1);
                ck_assert_int_eq(RAND_bytes(u, sizeof(u)), 1);
                if (k % 3 == 0 && rn)
                        v[0] = 0;
                der_same_as_openssl(v, rn, u, sn);
        }
}
END_TEST

START_TEST(test_quote_ecdsa_der_exact_bytes)
{
        static const uint8_t r[] = {0x00, 0x00, 0x80, 0x01}, s[] = {0x7f};
        static const uint8_t want_rs[] = {0x30, 0x08, 0x02, 0x03, 0x00,
                                          0x80, 0x01, 0x02, 0x01, 0x7f};
        static const uint8_t want_zero[] = {0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00};
        uint8_t buf[QUOTE_ECDSA_DER_MAX];
        struct wb w = WB_INIT(buf, sizeof(buf));

        ck_assert_int_eq(quote_ecdsa_der(r, sizeof(r), s, sizeof(s), &w), 0);
        ck_assert_uint_eq(wb_len(&w), sizeof(want_rs));
        ck_assert_int_eq(memcmp(buf, want_rs, sizeof(want_rs)), 0);
        /* empty and all-zero values are zero */
        wb_reset(&w);
        ck_assert_int_eq(quote_ecdsa_der(NULL, 0, r, 2, &w), 0);
        ck_assert_uint_eq(wb_len(&w), sizeof(want_zero));
        ck_assert_int_eq(memcmp(buf, want_zero, sizeof(want_zero)), 0);
        wb_reset(&w);
        ck_assert_int_eq(quote_ecdsa_der(NULL, 1, s, 1, &w), -EINVAL);
        ck_assert_int_eq(quote_ecdsa_der(s, 1, NULL, 1, &w), -EINVAL);
        ck_assert_uint_eq(wb_len(&w), 0);
}
END_TEST

/* The caps: r/s of QUOTE_ECDSA_INT_MAX - 1, QUOTE_ECDSA_INT_MAX and + 1 significant bytes; a
 * writer of QUOTE_ECDSA_DER_MAX, one byte less, and one already holding bytes. */
START_TEST(test_quote_ecdsa_der_caps)
{
        uint8_t v[QUOTE_ECDSA_INT_MAX + 2], buf[QUOTE_ECDSA_DER_MAX + 8], keep[sizeof(buf)];
        struct wb w;

        memset(v, 0xff, sizeof(v)); /* top bit set: the longest encoding of each length */
        /* at the cap: exactly QUOTE_ECDSA_DER_MAX bytes */
        wb_init(&w, buf, QUOTE_ECDSA_DER_MAX);
        ck_assert_int_eq(quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX, v, QUOTE_ECDSA_INT_MAX, &w), 0);
        ck_assert_uint_eq(wb_len(&w), QUOTE_ECDSA_DER_MAX);
        ck_assert_uint_lt(buf[1], 0x80); /* short-form length */
        der_same_as_openssl(v, QUOTE_ECDSA_INT_MAX, v, QUOTE_ECDSA_INT_MAX);
        /* one below */
        wb_init(&w, buf, QUOTE_ECDSA_DER_MAX);
        ck_assert_int_eq(
                quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX - 1, v, QUOTE_ECDSA_INT_MAX - 1, &w), 0);
        ck_assert_uint_eq(wb_len(&w), QUOTE_ECDSA_DER_MAX - 2);
        /* past it: r or s one byte longer, with room to spare; w untouched */
        memset(buf, 0x5a, sizeof(buf));
        memcpy(keep, buf, sizeof(buf));
        wb_init(&w, buf, sizeof(buf));
        ck_assert_int_eq(quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX + 1, v, 1, &w), -E2BIG);
        ck_assert_int_eq(quote_ecdsa_der(v, 1, v, QUOTE_ECDSA_INT_MAX + 1, &w), -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 0);
        ck_assert_int_eq(memcmp(buf, keep, sizeof(buf)), 0);
        /* ... but leading zeros do not count */
        v[0] = 0;
        ck_assert_int_eq(quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX + 1, v, 1, &w), 0);
        v[0] = 0xff;
        /* a writer one byte short: -E2BIG, unchanged, whatever it held before */
        memcpy(buf, keep, sizeof(buf));
        wb_init(&w, buf, QUOTE_ECDSA_DER_MAX + 3 - 1);
        ck_assert_int_eq(wb_put(&w, "abc", 3), 0);
        ck_assert_int_eq(quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX, v, QUOTE_ECDSA_INT_MAX, &w),
                         -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 3);
        ck_assert_int_eq(memcmp(buf, "abc", 3), 0);
        ck_assert_int_eq(memcmp(buf + 3, keep + 3, sizeof(buf) - 3), 0);
        /* and one byte more is enough, after what it held */
        wb_init(&w, buf, QUOTE_ECDSA_DER_MAX + 3);
        ck_assert_int_eq(wb_put(&w, "abc", 3), 0);
        ck_assert_int_eq(quote_ecdsa_der(v, QUOTE_ECDSA_INT_MAX, v, QUOTE_ECDSA_INT_MAX, &w), 0);
        ck_assert_uint_eq(wb_len(&w), QUOTE_ECDSA_DER_MAX + 3);
        ck_assert_uint_eq(buf[3], 0x30);
}
END_TEST

/* The P-256 synthetic AK's signature over a, r and s as fs-byte big-endian (leading zeros kept). */
static void synth_ecdsa_rs(const struct synth *s, const TPMS_ATTEST *a, uint8_t *attest,
                           size_t *alen, uint8_t *r, uint8_t *sv)
{
        uint8_t raw[256];
        size_t rl = sizeof(raw);

        synth_sign_raw(s, a, s->md, false, 0, attest, alen, raw, &rl);
        synth_der_rs(raw, rl, 32, r, sv);
}

/* A TPMT_SIGNATURE (ECDSA-SHA256) with r and s as given, z leading zero bytes put before each. */
static size_t ecdsa_tpmt(const uint8_t *r, size_t rn, size_t rz, const uint8_t *sv, size_t sn,
                         size_t sz, uint8_t *out)
{
        TPMT_SIGNATURE t;
        size_t len = 0;

        ck_assert_uint_le(rz + rn, TPM2_MAX_ECC_KEY_BYTES);
        ck_assert_uint_le(sz + sn, TPM2_MAX_ECC_KEY_BYTES);
        memset(&t, 0, sizeof(t));
        t.sigAlg = TPM2_ALG_ECDSA;
        t.signature.ecdsa.hash = TPM2_ALG_SHA256;
        t.signature.ecdsa.signatureR.size = (UINT16)(rz + rn);
        memcpy(t.signature.ecdsa.signatureR.buffer + rz, r, rn);
        t.signature.ecdsa.signatureS.size = (UINT16)(sz + sn);
        memcpy(t.signature.ecdsa.signatureS.buffer + sz, sv, sn);
        ck_assert_int_eq(Tss2_MU_TPMT_SIGNATURE_Marshal(&t, out, BLOB_MAX, &len), 0);
        return len;
}

/*
 * Real P-256 signatures whose r and s start with 0x00 (1 in 256), with the top bit set (1 in 2)
 * and neither, each sent as the TPM does (32 bytes), without the leading zeros, and after more
 * zeros (up to the TPM's 128 bytes): all verify. r or s of zero, longer than the curve's order or
 * past QUOTE_ECDSA_INT_MAX: refused.
 */
START_TEST(test_quote_ecdsa_r_s_forms)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX], r[32], sv[32], big[QUOTE_ECDSA_INT_MAX + 1];
        static const uint8_t zero[32];
        struct attest_err err = {0};
        bool lead_r = false, lead_s = false, top_r = false, top_s = false, plain = false;
        size_t alen, slen, rz, sz;
        struct synth s;
        TPMS_ATTEST a;
        struct fx f;
        int k;

        real_attest(&f, &a);
        synth_ecc(&s, "P-256", TPM2_ECC_NIST_P256, 32);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), 0);
        for (k = 0; k < 20000 && !(lead_r && lead_s && top_r && top_s && plain); k++) {
                synth_ecdsa_rs(&s, &a, attest, &alen, r, sv);
                lead_r |= r[0] == 0;
                lead_s |= sv[0] == 0;
                top_r |= r[0] >= 0x80;
                top_s |= sv[0] >= 0x80;
                plain |= r[0] > 0 && r[0] < 0x80 && sv[0] > 0 && sv[0] < 0x80;
                /* as a TPM sends them */
                slen = ecdsa_tpmt(r, 32, 0, sv, 32, 0, sig);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
                if (!(r[0] == 0 || sv[0] == 0 || k % 16 == 0))
                        continue;
                /* minimal: no leading zeros at all */
                for (rz = 0; rz < 32 && r[rz] == 0; rz++)
                        ;
                for (sz = 0; sz < 32 && sv[sz] == 0; sz++)
                        ;
                slen = ecdsa_tpmt(r + rz, 32 - rz, 0, sv + sz, 32 - sz, 0, sig);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
                /* zeros up to the TPM's largest parameter */
                slen = ecdsa_tpmt(r, 32, TPM2_MAX_ECC_KEY_BYTES - 32, sv, 32, 1, sig);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        }
        ck_assert_msg(lead_r && lead_s && top_r && top_s && plain,
                      "after %d signatures: r/s with a leading zero %d/%d, top bit %d/%d, plain %d",
                      k, lead_r, lead_s, top_r, top_s, plain);
        /* zero, as no bytes and as 32 zero bytes */
        slen = ecdsa_tpmt(r, 0, 0, sv, 32, 0, sig);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_SIGNATURE);
        slen = ecdsa_tpmt(r, 32, 0, zero, 32, 0, sig);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_SIGNATURE);
        /* r + 2^256: longer than the order, the same value mod 2^256 */
        memset(big, 0, sizeof(big));
        big[0] = 1;
        memcpy(big + 1, r, 32);
        slen = ecdsa_tpmt(big, 33, 0, sv, 32, 0, sig);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_SIGNATURE);
        /* past QUOTE_ECDSA_INT_MAX significant bytes */
        memset(big, 0, sizeof(big));
        big[0] = 1;
        memcpy(big + sizeof(big) - 32, r, 32);
        slen = ecdsa_tpmt(r, 32, 0, big, sizeof(big), 0, sig);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EKEYREJECTED,
               AE_QUOTE_SIGNATURE);
        /* the unchanged signature still verifies */
        slen = ecdsa_tpmt(r, 32, 0, sv, 32, 0, sig);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        EVP_PKEY_free(s.key);
}
END_TEST

/*
 * The same PCRs selected with 2 or 4 octets instead of 3: the pcrDigest is the same, but no TPM
 * asked by the agent makes such a selection. The verifier (quote_verify) and the agent
 * (tpm_quote_consistent, its check of a fresh quote) run the one check and both refuse it.
 */
START_TEST(test_quote_rejects_wrong_sizeofselect)
{
        static const UINT8 sizes[] = {2, 4};
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t attest[BLOB_MAX], sig[BLOB_MAX];
        size_t alen, slen;
        struct synth s;
        TPMS_ATTEST a, b;
        struct attest_err err = {0};
        struct pcr_set moved;
        struct fx f;

        ak = synth_rsa_ak(&f, &a, &s);
        /* as made: both accept; a PCR moved after the read: the agent reads again (0) */
        synth_sign(&s, &a, attest, &alen, sig, &slen);
        expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, 0, AE_NONE);
        ck_assert_int_eq(tpm_quote_consistent(ak, attest, alen, sig, slen, nonce, nonce_len, &sel,
                                              &f.pcrs, &err),
                         1);
        moved = f.pcrs;
        moved.v[BANK_SHA256][10][0] ^= 1;
        ck_assert_int_eq(tpm_quote_consistent(ak, attest, alen, sig, slen, nonce, nonce_len, &sel,
                                              &moved, &err),
                         0);
        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                b = a;
                for (uint32_t k = 0; k < b.attested.quote.pcrSelect.count; k++) {
                        TPMS_PCR_SELECTION *e = &b.attested.quote.pcrSelect.pcrSelections[k];

                        ck_assert_uint_eq(e->pcrSelect[2], 0); /* PCRs 0-10: fits 2 octets */
                        e->sizeofSelect = sizes[i];
                        e->pcrSelect[3] = 0;
                }
                synth_sign(&s, &b, attest, &alen, sig, &slen);
                expect(ak, attest, alen, sig, slen, nonce, nonce_len, &sel, &f.pcrs, -EBADMSG,
                       AE_QUOTE_PCR_SELECTION_MALFORMED);
                memset(&err, 0, sizeof(err));
                ck_assert_int_eq(tpm_quote_consistent(ak, attest, alen, sig, slen, nonce, nonce_len,
                                                      &sel, &f.pcrs, &err),
                                 -EIO);
                ck_assert_int_eq(err.code, AE_TPM_BAD_QUOTE);
                ck_assert_msg(strstr(err.msg, "sizeofSelect") != NULL, "%s", err.msg);
        }
        EVP_PKEY_free(s.key);
}
END_TEST

START_TEST(test_quote_ak_rejects_weak_or_wrong_keys)
{
        struct attest_err err = {0};
        struct quote_ak *ak = NULL;
        struct synth s;

        synth_rsa(&s, 1024, ak_attrs);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), -EKEYREJECTED);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_WEAK);
        EVP_PKEY_free(s.key);
        synth_rsa(&s, 2048, ak_attrs | TPMA_OBJECT_DECRYPT);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), -EKEYREJECTED);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_ATTRIBUTES);
        EVP_PKEY_free(s.key);
        synth_rsa(&s, 2048, ak_attrs & ~TPMA_OBJECT_FIXEDTPM);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), -EKEYREJECTED);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_ATTRIBUTES);
        EVP_PKEY_free(s.key);
        synth_ecc(&s, "P-521", TPM2_ECC_NIST_P521, 66);
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), -EOPNOTSUPP);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_CURVE);
        EVP_PKEY_free(s.key);
        /* a P-256 point moved off the curve */
        synth_ecc(&s, "P-256", TPM2_ECC_NIST_P256, 32);
        s.pub[s.pub_len - 1] ^= 1;
        ck_assert_int_eq(quote_ak_parse(s.pub, s.pub_len, &ak, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_QUOTE_AK_KEY);
        EVP_PKEY_free(s.key);
        ck_assert_ptr_null(ak);
}
END_TEST

/* ---- PCR selections ---- */

START_TEST(test_pcr_sel_parse_and_format)
{
        static const struct {
                const char *in, *out;
        } good[] = {
                {"sha256:0-10+sha1:10", "sha1:10+sha256:0-10"},
                {"sha256:0,1,2,7", "sha256:0-2,7"},
                {"sha256:7,0", "sha256:0,7"},
                {"sha256:0+sha256:1", "sha256:0,1"},
                {"sha512:23", "sha512:23"},
                {"sha384:0-23", "sha384:0-23"},
        };
        static const char *bad[] = {
                "",          "sha256",    "sha256:",     "sha256:24", "sha256:5-3",
                "md5:1",     "sha256:1,", "sha256:1+",   "sha256:-1", "sha256:1 ",
                "sha256:a",  "sha256:1-", "sha256:1-24", ":1",        "sha256:0x1",
                "sha256:100"};
        struct pcr_sel s, t;
        char buf[PCR_SEL_TEXT_MAX];

        for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
                ck_assert_msg(pcr_sel_parse(good[i].in, &s) == 0, "%s", good[i].in);
                ck_assert_int_eq(pcr_sel_format(&s, buf, sizeof(buf)), 0);
                ck_assert_str_eq(buf, good[i].out);
                ck_assert_int_eq(pcr_sel_parse(buf, &t), 0);
                ck_assert(pcr_sel_equal(&s, &t));
        }
        memset(&t, 0x5a, sizeof(t));
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                ck_assert_msg(pcr_sel_parse(bad[i], &t) == -EINVAL, "'%s' accepted", bad[i]);
                ck_assert_uint_eq(t.mask[0], 0x5a5a5a5au); /* untouched */
        }
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha1:10", &s), 0);
        ck_assert_uint_eq(pcr_sel_count(&s), 12);
        ck_assert_int_eq(pcr_sel_format(&s, buf, 8), -E2BIG);
        ck_assert_uint_lt(strlen(buf), 8);
        /* every PCR of every bank fits the documented maximum */
        for (int b = 0; b < BANK_COUNT; b++)
                s.mask[b] = 0x555555; /* no ranges: longest text */
        ck_assert_int_eq(pcr_sel_format(&s, buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_pcr_sel_tpml_round_trip)
{
        TPML_PCR_SELECTION l;
        struct pcr_sel s, t;

        ck_assert_int_eq(pcr_sel_parse("sha256:0-10,23+sha1:10", &s), 0);
        pcr_sel_to_tpml(&s, &l);
        ck_assert_uint_eq(l.count, 2);
        ck_assert_uint_eq(l.pcrSelections[0].hash, TPM2_ALG_SHA1);
        ck_assert_uint_eq(l.pcrSelections[1].pcrSelect[2], 0x80);
        ck_assert_int_eq(pcr_sel_from_tpml(&l, &t), 0);
        ck_assert(pcr_sel_equal(&s, &t));
        l.pcrSelections[0].sizeofSelect = 4;
        l.pcrSelections[0].pcrSelect[3] = 1; /* PCR 24 */
        ck_assert_int_eq(pcr_sel_from_tpml(&l, &t), -EBADMSG);
}
END_TEST

static Suite *quote_suite(void)
{
        Suite *s = suite_create("quote");
        TCase *tc = tcase_create("swtpm");
        TCase *sy = tcase_create("synthetic");
        TCase *ps = tcase_create("pcrsel");
        TCase *der = tcase_create("ecdsa-der");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_quote_accepts_swtpm_rsa_rsassa);
        tcase_add_test(tc, test_quote_accepts_swtpm_ecc_p256);
        tcase_add_test(tc, test_quote_accepts_swtpm_rsapss);
        tcase_add_test(tc, test_quote_accepts_tpm2b_attest);
        tcase_add_test(tc, test_quote_verify_shares_ak_between_threads);
        tcase_add_test(tc, test_quote_rejects_wrong_nonce);
        tcase_add_test(tc, test_quote_rejects_flipped_attest_byte);
        tcase_add_test(tc, test_quote_rejects_flipped_signature_byte);
        tcase_add_test(tc, test_quote_rejects_pcr_changed_after_quote);
        tcase_add_test(tc, test_quote_rejects_other_selection);
        tcase_add_test(tc, test_quote_rejects_missing_pcr_value);
        tcase_add_test(tc, test_quote_rejects_other_tpms_ak);
        tcase_add_test(tc, test_quote_rejects_truncated_blobs);
        tcase_add_test(tc, test_quote_rejects_trailing_garbage);
        tcase_add_test(tc, test_quote_rejects_unrestricted_key);
        suite_add_tcase(s, tc);
        tcase_set_timeout(sy, 60);
        tcase_add_test(sy, test_quote_rejects_bad_magic_and_type);
        tcase_add_test(sy, test_quote_digest_follows_tpml_order);
        tcase_add_test(sy, test_quote_accepts_p384_sha384);
        tcase_add_test(sy, test_quote_ak_scheme_null_takes_each_scheme_and_hash);
        tcase_add_test(sy, test_quote_rejects_wrong_sizeofselect);
        tcase_add_test(sy, test_quote_ak_rejects_weak_or_wrong_keys);
        tcase_add_test(sy, test_quote_ecdsa_r_s_forms);
        suite_add_tcase(s, sy);
        tcase_add_test(der, test_quote_ecdsa_der_matches_openssl);
        tcase_add_test(der, test_quote_ecdsa_der_exact_bytes);
        tcase_add_test(der, test_quote_ecdsa_der_caps);
        suite_add_tcase(s, der);
        tcase_add_test(ps, test_pcr_sel_parse_and_format);
        tcase_add_test(ps, test_pcr_sel_tpml_round_trip);
        suite_add_tcase(s, ps);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(quote_suite());
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
