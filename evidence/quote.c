/* SPDX-License-Identifier: MIT */
/*
 * Quote verification. Every TSS2_RC and OpenSSL failure is converted here into -errno plus a
 * struct attest_err; nothing foreign escapes. Spec references: TPM 2.0 Library Part 2 (structures)
 * rev 1.59: TPMS_ATTEST 10.12.12, TPMS_QUOTE_INFO 10.12.4, TPMT_SIGNATURE 11.3.4, TPMT_PUBLIC
 * 12.2.4, TPMA_OBJECT 8.3; Part 1, 16 (names).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

#include "evidence/quote.h"
#include "evidence/tpmkey.h"
#include "util/ossl.h"

struct quote_ak {
        TPMT_PUBLIC pub;
        EVP_PKEY *pkey;
        EVP_MD *md[BANK_COUNT]; /* fetched once: the signature and pcrDigest hashes */
        uint8_t name[QUOTE_NAME_MAX];
        size_t name_len;
};

/* objectAttributes an AK must have set (Part 2, 8.3.2) and must have clear. */
#define AK_ATTRS_SET                                                                               \
        (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |        \
         TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT)
#define AK_ATTRS_CLEAR TPMA_OBJECT_DECRYPT

/* OpenSSL failed for a reason that is not the input's: drop its error queue, say so. */
static int ossl_fail(struct attest_err *err, const char *what)
{
        unsigned long e = ERR_peek_last_error();
        char buf[128] = "";

        if (e)
                ERR_error_string_n(e, buf, sizeof(buf));
        ERR_clear_error();
        return attest_fail(err, -EIO, AE_QUOTE_INTERNAL, "OpenSSL %s failed: %s", what,
                           *buf ? buf : "no error queued");
}

static const char *alg_name(uint16_t alg)
{
        switch (alg) {
        case TPM2_ALG_RSASSA:
                return "rsassa";
        case TPM2_ALG_RSAPSS:
                return "rsapss";
        case TPM2_ALG_ECDSA:
                return "ecdsa";
        case TPM2_ALG_NULL:
                return "null";
        case TPM2_ALG_RSA:
                return "rsa";
        case TPM2_ALG_ECC:
                return "ecc";
        case TPM2_ALG_HMAC:
                return "hmac";
        default: {
                int b = bank_from_tpm_alg(alg);

                return b >= 0 ? bank_name(b) : "unknown";
        }
        }
}

struct quote_ak *quote_ak_free(struct quote_ak *ak)
{
        if (!ak)
                return NULL;
        EVP_PKEY_free(ak->pkey);
        for (int b = 0; b < BANK_COUNT; b++)
                EVP_MD_free(ak->md[b]);
        free(ak);
        return NULL;
}

static void attrs_describe(TPMA_OBJECT a, char *out, size_t n)
{
        static const struct {
                TPMA_OBJECT bit;
                const char *name;
        } bits[] = {
                {TPMA_OBJECT_FIXEDTPM, "fixedTPM"},
                {TPMA_OBJECT_FIXEDPARENT, "fixedParent"},
                {TPMA_OBJECT_SENSITIVEDATAORIGIN, "sensitiveDataOrigin"},
                {TPMA_OBJECT_RESTRICTED, "restricted"},
                {TPMA_OBJECT_SIGN_ENCRYPT, "sign"},
        };
        size_t pos = 0;

        out[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(bits); i++) {
                if (a & bits[i].bit)
                        continue;
                int w = snprintf(out + pos, n - pos, "%s%s", pos ? "|" : "missing ", bits[i].name);
                if (w < 0 || (size_t)w >= n - pos)
                        return;
                pos += (size_t)w;
        }
        if (a & AK_ATTRS_CLEAR)
                snprintf(out + pos, n - pos, "%sdecrypt set", pos ? ", " : "");
}

/* What a quote AK must be beyond what tpmkey_pkey() converts: schemes, sizes, curves. */
static int ak_rsa_check(const TPMT_PUBLIC *p, struct attest_err *err)
{
        const TPMS_RSA_PARMS *d = &p->parameters.rsaDetail;
        uint16_t scheme = d->scheme.scheme;

        if (scheme != TPM2_ALG_RSASSA && scheme != TPM2_ALG_RSAPSS && scheme != TPM2_ALG_NULL)
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_AK_ALG,
                                   "RSA AK scheme %s (0x%04x): expected rsassa or rsapss",
                                   alg_name(scheme), scheme);
        if (d->keyBits < 2048 || d->keyBits > 4096 || d->keyBits % 8)
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_AK_WEAK,
                                   "RSA AK of %u bits: expected 2048 to 4096", d->keyBits);
        if ((unsigned)p->unique.rsa.size * 8 != d->keyBits)
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_KEY,
                                   "RSA modulus of %u bytes, keyBits %u says %u",
                                   p->unique.rsa.size, d->keyBits, d->keyBits / 8u);
        if (!(p->unique.rsa.buffer[0] & 0x80))
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_KEY,
                                   "RSA modulus is shorter than keyBits %u", d->keyBits);
        return 0;
}

static int ak_ecc_check(const TPMT_PUBLIC *p, struct attest_err *err)
{
        const TPMS_ECC_PARMS *d = &p->parameters.eccDetail;
        size_t fs;

        if (d->scheme.scheme != TPM2_ALG_ECDSA && d->scheme.scheme != TPM2_ALG_NULL)
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_AK_ALG,
                                   "ECC AK scheme %s (0x%04x): expected ecdsa",
                                   alg_name(d->scheme.scheme), d->scheme.scheme);
        switch (d->curveID) {
        case TPM2_ECC_NIST_P256:
                fs = 32;
                break;
        case TPM2_ECC_NIST_P384:
                fs = 48;
                break;
        default:
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_AK_CURVE,
                                   "ECC AK curve 0x%04x: expected NIST P-256 (0x0003) or P-384 "
                                   "(0x0004)",
                                   d->curveID);
        }
        if (p->unique.ecc.x.size != fs || p->unique.ecc.y.size != fs)
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_KEY,
                                   "ECC point coordinates of %u and %u bytes, the curve's are %zu",
                                   p->unique.ecc.x.size, p->unique.ecc.y.size, fs);
        return 0;
}

static int ak_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct attest_err *err)
{
        _cleanup_(EVP_PKEY_CTX_freep) EVP_PKEY_CTX *check = NULL;
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *pkey = NULL;
        int e;

        e = p->type == TPM2_ALG_RSA ? ak_rsa_check(p, err) : ak_ecc_check(p, err);
        if (e < 0)
                return e;
        if ((e = tpmkey_pkey(p, &pkey, NULL)) < 0) {
                ERR_clear_error();
                if (e == -ENOMEM)
                        return attest_fail(err, e, AE_QUOTE_INTERNAL, "out of memory");
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_KEY,
                                   "AK public key (%s) rejected by OpenSSL", alg_name(p->type));
        }
        if (p->type == TPM2_ALG_ECC) {
                check = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
                if (!check)
                        return ossl_fail(err, "EC key check");
                if (EVP_PKEY_public_check(check) != 1) {
                        ERR_clear_error();
                        return attest_fail(err, -EBADMSG, AE_QUOTE_AK_KEY,
                                           "ECC public point is not a valid key on its curve");
                }
        }
        *ret = TAKE_PTR(pkey);
        return 0;
}

int quote_ak_parse(const uint8_t *tpm2b_public, size_t len, struct quote_ak **ret,
                   struct attest_err *err)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        uint8_t again[QUOTE_AK_MAX];
        TPM2B_PUBLIC pub;
        size_t off = 0, n = 0;
        TSS2_RC rc;
        char why[160];
        int b, e;

        if (!tpm2b_public || !ret)
                return attest_fail(err, -EINVAL, AE_QUOTE_INVALID_ARGUMENT, "no AK given");
        if (len > QUOTE_AK_MAX)
                return attest_fail(err, -E2BIG, AE_QUOTE_AK_TOO_BIG, "AK public of %zu bytes > %d",
                                   len, QUOTE_AK_MAX);
        memset(&pub, 0, sizeof(pub));
        rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(tpm2b_public, len, &off, &pub);
        if (rc != TSS2_RC_SUCCESS)
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_MALFORMED,
                                   "AK public (%zu bytes) does not decode as TPM2B_PUBLIC "
                                   "(%s)",
                                   len, Tss2_RC_Decode(rc));
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_TRAILING,
                                   "AK public: %zu bytes after the TPM2B_PUBLIC of %zu", len - off,
                                   off);
        /* The name hashes the canonical TPMT_PUBLIC; accept only bytes that are exactly that. */
        if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, again, sizeof(again), &n) != TSS2_RC_SUCCESS ||
            n != len || memcmp(again, tpm2b_public, len) != 0)
                return attest_fail(err, -EBADMSG, AE_QUOTE_AK_MALFORMED,
                                   "AK public is not a canonical TPM2B_PUBLIC encoding");
        if (pub.publicArea.type != TPM2_ALG_RSA && pub.publicArea.type != TPM2_ALG_ECC)
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_AK_ALG,
                                   "AK type %s (0x%04x): expected rsa or ecc",
                                   alg_name(pub.publicArea.type), pub.publicArea.type);
        b = bank_from_tpm_alg(pub.publicArea.nameAlg);
        if (b < 0)
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_AK_NAME_ALG,
                                   "AK nameAlg 0x%04x: expected sha1/sha256/sha384/sha512",
                                   pub.publicArea.nameAlg);
        TPMA_OBJECT a = pub.publicArea.objectAttributes;
        if ((a & AK_ATTRS_SET) != AK_ATTRS_SET || (a & AK_ATTRS_CLEAR)) {
                attrs_describe(a, why, sizeof(why));
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_AK_ATTRIBUTES,
                                   "AK objectAttributes 0x%08x, expected fixedTPM|fixedParent|"
                                   "sensitiveDataOrigin|restricted|sign and no decrypt: %s",
                                   a, why);
        }

        ak = calloc(1, sizeof(*ak));
        if (!ak)
                return attest_fail(err, -ENOMEM, AE_QUOTE_INTERNAL, "out of memory");
        ak->pub = pub.publicArea;
        if ((e = ak_pkey(&ak->pub, &ak->pkey, err)) < 0)
                return e;
        for (int i = 0; i < BANK_COUNT; i++) {
                ak->md[i] = EVP_MD_fetch(NULL, bank_name(i), NULL);
                if (!ak->md[i])
                        return ossl_fail(err, "digest fetch");
        }
        /* name = nameAlg (u16 big-endian) || H_nameAlg(marshalled TPMT_PUBLIC), Part 1, 16 */
        unsigned int dl = 0;
        ak->name[0] = (uint8_t)(pub.publicArea.nameAlg >> 8);
        ak->name[1] = (uint8_t)pub.publicArea.nameAlg;
        if (EVP_Digest(tpm2b_public + 2, len - 2, ak->name + 2, &dl, ak->md[b], NULL) != 1)
                return ossl_fail(err, "name digest");
        ak->name_len = 2 + dl;
        *ret = TAKE_PTR(ak);
        return 0;
}

int quote_ak_name(const struct quote_ak *ak, uint8_t *out, size_t max, size_t *ret_len)
{
        if (!ak || !out || !ret_len)
                return -EINVAL;
        if (ak->name_len > max)
                return -E2BIG;
        memcpy(out, ak->name, ak->name_len);
        *ret_len = ak->name_len;
        return 0;
}

EVP_PKEY *quote_ak_pkey(const struct quote_ak *ak)
{
        return ak ? ak->pkey : NULL;
}

uint16_t quote_ak_type(const struct quote_ak *ak)
{
        return ak ? ak->pub.type : TPM2_ALG_NULL;
}

/* The signature's scheme must fit the key; returns the hash's bank. */
static int sig_scheme(const struct quote_ak *ak, const TPMT_SIGNATURE *s, struct attest_err *err)
{
        uint16_t key_scheme, key_hash = TPM2_ALG_NULL, hash;
        int b;

        switch (s->sigAlg) {
        case TPM2_ALG_RSASSA:
        case TPM2_ALG_RSAPSS:
                if (ak->pub.type != TPM2_ALG_RSA)
                        return attest_fail(err, -EKEYREJECTED, AE_QUOTE_SIG_SCHEME,
                                           "signature scheme %s with an %s AK", alg_name(s->sigAlg),
                                           alg_name(ak->pub.type));
                hash = s->signature.rsassa.hash; /* rsapss has the same layout */
                key_scheme = ak->pub.parameters.rsaDetail.scheme.scheme;
                if (key_scheme != TPM2_ALG_NULL)
                        key_hash = ak->pub.parameters.rsaDetail.scheme.details.anySig.hashAlg;
                break;
        case TPM2_ALG_ECDSA:
                if (ak->pub.type != TPM2_ALG_ECC)
                        return attest_fail(err, -EKEYREJECTED, AE_QUOTE_SIG_SCHEME,
                                           "signature scheme ecdsa with an %s AK",
                                           alg_name(ak->pub.type));
                hash = s->signature.ecdsa.hash;
                key_scheme = ak->pub.parameters.eccDetail.scheme.scheme;
                if (key_scheme != TPM2_ALG_NULL)
                        key_hash = ak->pub.parameters.eccDetail.scheme.details.anySig.hashAlg;
                break;
        default:
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_SIG_ALG,
                                   "signature algorithm %s (0x%04x): expected rsassa, rsapss or "
                                   "ecdsa",
                                   alg_name(s->sigAlg), s->sigAlg);
        }
        if (key_scheme != TPM2_ALG_NULL && (key_scheme != s->sigAlg || key_hash != hash))
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_SIG_SCHEME,
                                   "signature scheme %s-%s, the AK's is %s-%s", alg_name(s->sigAlg),
                                   alg_name(hash), alg_name(key_scheme), alg_name(key_hash));
        b = bank_from_tpm_alg(hash);
        if (b < 0 || b == BANK_SHA1)
                return attest_fail(err, -EOPNOTSUPP, AE_QUOTE_SIG_ALG,
                                   "signature hash %s (0x%04x): expected sha256, sha384 or sha512",
                                   alg_name(hash), hash);
        return b;
}

/* An unsigned big-endian value as a DER INTEGER's contents: v without its leading zeros, after
 * one 0x00 when pad. */
struct der_uint {
        const uint8_t *v;
        size_t n;
        bool pad;
};

static int der_uint(const uint8_t *v, size_t n, struct der_uint *ret)
{
        if (!v && n)
                return -EINVAL;
        while (n > 0 && v[0] == 0) {
                v++;
                n--;
        }
        if (n > QUOTE_ECDSA_INT_MAX)
                return -E2BIG;
        /* zero is the one content byte 0x00; a first byte >= 0x80 would read as negative */
        *ret = (struct der_uint){.v = v, .n = n, .pad = n == 0 || (v[0] & 0x80)};
        return 0;
}

/* Tag, short-form length and contents of d; the caller checked the room. */
static int der_put_uint(struct wb *w, const struct der_uint *d)
{
        int e;

        if ((e = wb_put_u8(w, 0x02)) < 0 || (e = wb_put_u8(w, (uint8_t)(d->pad + d->n))) < 0 ||
            (d->pad && (e = wb_put_u8(w, 0x00)) < 0) || (e = wb_put(w, d->v, d->n)) < 0)
                return e;
        return 0;
}

int quote_ecdsa_der(const uint8_t *r, size_t r_len, const uint8_t *s, size_t s_len, struct wb *w)
{
        struct der_uint dr, ds;
        size_t mark, body;
        int e;

        if (!w)
                return -EINVAL;
        if ((e = der_uint(r, r_len, &dr)) < 0 || (e = der_uint(s, s_len, &ds)) < 0)
                return e;
        /* at most 2 * (2 + 1 + QUOTE_ECDSA_INT_MAX) = 102 < 128: short-form lengths throughout */
        body = 2 + dr.pad + dr.n + 2 + ds.pad + ds.n;
        if (2 + body > wb_avail(w))
                return -E2BIG;
        mark = wb_len(w);
        if ((e = wb_put_u8(w, 0x30)) < 0 || (e = wb_put_u8(w, (uint8_t)body)) < 0 ||
            (e = der_put_uint(w, &dr)) < 0 || (e = der_put_uint(w, &ds)) < 0) {
                if (wb_rollback(w, mark) < 0)
                        return -EINVAL;
                return e;
        }
        return 0;
}

static int sig_check(const struct quote_ak *ak, const TPMT_SIGNATURE *s, enum bank b,
                     const uint8_t *msg, size_t len, struct attest_err *err)
{
        _cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pctx = NULL; /* owned by ctx */
        uint8_t der[QUOTE_ECDSA_DER_MAX];
        const uint8_t *sb;
        size_t sl;
        int r;

        if (!ctx)
                return attest_fail(err, -ENOMEM, AE_QUOTE_INTERNAL, "out of memory");
        if (EVP_DigestVerifyInit(ctx, &pctx, ak->md[b], NULL, ak->pkey) != 1)
                return ossl_fail(err, "verify init");
        switch (s->sigAlg) {
        case TPM2_ALG_RSASSA:
                sb = s->signature.rsassa.sig.buffer;
                sl = s->signature.rsassa.sig.size;
                if (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1)
                        return ossl_fail(err, "RSA padding");
                break;
        case TPM2_ALG_RSAPSS:
                sb = s->signature.rsapss.sig.buffer;
                sl = s->signature.rsapss.sig.size;
                /* TPMs use a salt of the digest size (Part 1, B.7) or the maximum: accept both */
                if (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) != 1)
                        return ossl_fail(err, "RSA-PSS parameters");
                break;
        default: { /* ECDSA: OpenSSL wants the DER SEQUENCE { r, s } */
                struct wb w = WB_INIT(der, sizeof(der));
                const TPMS_SIGNATURE_ECDSA *es = &s->signature.ecdsa;

                if (quote_ecdsa_der(es->signatureR.buffer, es->signatureR.size,
                                    es->signatureS.buffer, es->signatureS.size, &w) < 0)
                        return attest_fail(err, -EKEYREJECTED, AE_QUOTE_SIGNATURE,
                                           "ECDSA r (%u bytes) / s (%u bytes) do not fit the key",
                                           es->signatureR.size, es->signatureS.size);
                sb = wb_data(&w);
                sl = wb_len(&w);
                break;
        }
        }
        r = EVP_DigestVerify(ctx, sb, sl, msg, len);
        if (r != 1) {
                ERR_clear_error();
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_SIGNATURE,
                                   "%s-%s signature (%zu bytes) over the %zu attest bytes does "
                                   "not verify with the AK",
                                   alg_name(s->sigAlg), bank_name(b), sl, len);
        }
        return 0;
}

static void hex_short(const uint8_t *p, size_t n, char *out, size_t max)
{
        size_t i, pos = 0;

        out[0] = '\0';
        for (i = 0; i < n && pos + 3 <= max; i++, pos += 2)
                snprintf(out + pos, max - pos, "%02x", p[i]);
        if (i < n && max >= 4)
                memcpy(out + max - 4, "...", 4);
}

/* pcrDigest = H(values of the selected PCRs, TPML order, ascending index per entry). */
static int pcr_digest(const struct quote_ak *ak, enum bank h, const TPML_PCR_SELECTION *l,
                      const struct pcr_set *pcrs, uint8_t *out, struct attest_err *err)
{
        _cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();

        if (!ctx || EVP_DigestInit_ex2(ctx, ak->md[h], NULL) != 1)
                return ossl_fail(err, "digest init");
        for (uint32_t k = 0; k < l->count; k++) {
                int b = bank_from_tpm_alg(l->pcrSelections[k].hash);

                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        if (i / 8 >= l->pcrSelections[k].sizeofSelect ||
                            !(l->pcrSelections[k].pcrSelect[i / 8] & (1u << (i % 8))))
                                continue;
                        if (EVP_DigestUpdate(ctx, pcrs->v[b][i], bank_size(b)) != 1)
                                return ossl_fail(err, "digest");
                }
        }
        if (EVP_DigestFinal_ex(ctx, out, NULL) != 1)
                return ossl_fail(err, "digest");
        return 0;
}

int quote_verify(const struct quote_ak *ak, const uint8_t *attest, size_t attest_len,
                 const uint8_t *sig, size_t sig_len, const uint8_t *nonce, size_t nonce_len,
                 const struct pcr_sel *expected, const struct pcr_set *pcrs, struct quote_info *ret,
                 struct attest_err *err)
{
        TPMS_ATTEST a;
        TPMT_SIGNATURE s;
        struct pcr_sel got;
        uint8_t dig[BANK_DIGEST_MAX];
        char t1[PCR_SEL_TEXT_MAX], t2[PCR_SEL_TEXT_MAX];
        size_t off = 0;
        TSS2_RC rc;
        int h, e;

        if (!ak || !attest || !sig || (!nonce && nonce_len) || !pcrs)
                return attest_fail(err, -EINVAL, AE_QUOTE_INVALID_ARGUMENT,
                                   "quote_verify needs an AK, attest, signature and PCR values");
        if (attest_len > QUOTE_ATTEST_MAX)
                return attest_fail(err, -E2BIG, AE_QUOTE_ATTEST_TOO_BIG, "attest of %zu bytes > %d",
                                   attest_len, QUOTE_ATTEST_MAX);
        if (sig_len > QUOTE_SIG_MAX)
                return attest_fail(err, -E2BIG, AE_QUOTE_SIG_TOO_BIG, "signature of %zu bytes > %d",
                                   sig_len, QUOTE_SIG_MAX);
        /* A TPM2B_ATTEST: u16 size == the rest, then the TPMS_ATTEST (starting with its magic). */
        if (attest_len >= 6 && ((size_t)attest[0] << 8 | attest[1]) == attest_len - 2 &&
            attest[2] == 0xff && attest[3] == 'T' && attest[4] == 'C' && attest[5] == 'G') {
                attest += 2;
                attest_len -= 2;
        }
        memset(&a, 0, sizeof(a));
        rc = Tss2_MU_TPMS_ATTEST_Unmarshal(attest, attest_len, &off, &a);
        if (rc != TSS2_RC_SUCCESS)
                return attest_fail(err, -EBADMSG, AE_QUOTE_ATTEST_MALFORMED,
                                   "attest (%zu bytes) does not decode as TPMS_ATTEST (%s)",
                                   attest_len, Tss2_RC_Decode(rc));
        if (off != attest_len)
                return attest_fail(err, -EBADMSG, AE_QUOTE_ATTEST_TRAILING,
                                   "attest: %zu bytes after the TPMS_ATTEST of %zu",
                                   attest_len - off, off);
        off = 0;
        memset(&s, 0, sizeof(s));
        rc = Tss2_MU_TPMT_SIGNATURE_Unmarshal(sig, sig_len, &off, &s);
        if (rc != TSS2_RC_SUCCESS)
                return attest_fail(err, -EBADMSG, AE_QUOTE_SIG_MALFORMED,
                                   "signature (%zu bytes) does not decode as TPMT_SIGNATURE "
                                   "(%s)",
                                   sig_len, Tss2_RC_Decode(rc));
        if (off != sig_len)
                return attest_fail(err, -EBADMSG, AE_QUOTE_SIG_TRAILING,
                                   "signature: %zu bytes after the TPMT_SIGNATURE of %zu",
                                   sig_len - off, off);

        /* Authenticate first, then interpret. */
        if ((h = sig_scheme(ak, &s, err)) < 0)
                return h;
        if ((e = sig_check(ak, &s, h, attest, attest_len, err)) < 0)
                return e;
        if (a.magic != TPM2_GENERATED_VALUE)
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_MAGIC,
                                   "attest magic 0x%08x, expected TPM_GENERATED_VALUE 0x%08x",
                                   a.magic, TPM2_GENERATED_VALUE);
        if (a.type != TPM2_ST_ATTEST_QUOTE)
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_TYPE,
                                   "attest type 0x%04x, expected TPM_ST_ATTEST_QUOTE 0x%04x",
                                   a.type, TPM2_ST_ATTEST_QUOTE);
        if (a.extraData.size != nonce_len ||
            (nonce_len && CRYPTO_memcmp(a.extraData.buffer, nonce, nonce_len) != 0)) {
                /* a nonce is public; still, print only its first bytes (STYLE "Logging") */
                hex_short(nonce, nonce_len > 4 ? 4 : nonce_len, t1, sizeof(t1));
                hex_short(a.extraData.buffer, a.extraData.size > 4 ? 4 : a.extraData.size, t2,
                          sizeof(t2));
                return attest_fail(err, -ESTALE, AE_QUOTE_NONCE,
                                   "extraData of %u bytes (%s...) is not the nonce of %zu bytes "
                                   "(%s...)",
                                   a.extraData.size, t2, nonce_len, t1);
        }

        const TPML_PCR_SELECTION *l = &a.attested.quote.pcrSelect;
        /* TPM 2.0 Part 2, 10.6.1: a PC Client TPM's selections are PCR_SELECT_MIN (3) octets;
         * the agent asks with exactly that, so any other size is not the quote it asked for. */
        for (uint32_t k = 0; k < l->count && k < TPM2_NUM_PCR_BANKS; k++)
                if (l->pcrSelections[k].sizeofSelect != QUOTE_PCR_SELECT_SIZE)
                        return attest_fail(err, -EBADMSG, AE_QUOTE_PCR_SELECTION_MALFORMED,
                                           "quoted PCR selection entry %u has sizeofSelect %u, "
                                           "expected %d",
                                           k, l->pcrSelections[k].sizeofSelect,
                                           QUOTE_PCR_SELECT_SIZE);
        e = pcr_sel_from_tpml(l, &got);
        if (e == -EOPNOTSUPP)
                return attest_fail(
                        err, e, AE_QUOTE_PCR_BANK,
                        "quoted PCR selection names a hash the verifier has no bank for");
        if (e < 0)
                return attest_fail(err, e, AE_QUOTE_PCR_SELECTION_MALFORMED,
                                   "quoted PCR selection selects PCR >= %d or names a bank twice",
                                   PCR_COUNT);
        if (expected && !pcr_sel_equal(expected, &got)) {
                if (pcr_sel_format(expected, t1, sizeof(t1)) < 0 ||
                    pcr_sel_format(&got, t2, sizeof(t2)) < 0)
                        return attest_fail(err, -EKEYREJECTED, AE_QUOTE_PCR_SELECTION,
                                           "quoted PCR selection differs from the requested one");
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_PCR_SELECTION,
                                   "quoted PCR selection '%s', expected '%s'", t2, t1);
        }
        for (int b = 0; b < BANK_COUNT; b++) {
                uint32_t miss = got.mask[b] & ~pcrs->have[b];

                if (miss)
                        return attest_fail(err, -EBADMSG, AE_QUOTE_PCR_MISSING,
                                           "no value for quoted PCR %d of %s", __builtin_ctz(miss),
                                           bank_name(b));
        }
        if ((e = pcr_digest(ak, h, l, pcrs, dig, err)) < 0)
                return e;
        if (a.attested.quote.pcrDigest.size != bank_size(h) ||
            CRYPTO_memcmp(a.attested.quote.pcrDigest.buffer, dig, bank_size(h)) != 0) {
                hex_short(dig, bank_size(h), t1, 24);
                hex_short(a.attested.quote.pcrDigest.buffer, a.attested.quote.pcrDigest.size, t2,
                          24);
                return attest_fail(err, -EKEYREJECTED, AE_QUOTE_PCR_DIGEST,
                                   "pcrDigest %s (%u bytes) != %s of the PCR values %s", t2,
                                   a.attested.quote.pcrDigest.size, bank_name(h), t1);
        }

        if (ret) {
                ret->clock = a.clockInfo.clock;
                ret->reset_count = a.clockInfo.resetCount;
                ret->restart_count = a.clockInfo.restartCount;
                ret->safe = a.clockInfo.safe == TPM2_YES;
                ret->firmware_version = a.firmwareVersion;
                ret->sel = got;
                ret->hash = h;
                ret->sig_alg = s.sigAlg;
        }
        return 0;
}
