/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "evidence/credential.h"
#include "evidence/tpmkey.h"
#include "util/ossl.h"

static void put_be32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
        p[3] = (uint8_t)v;
}

static void put_be16(uint8_t *p, size_t v)
{
        p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v;
}

int cred_kdfa(const char *hash, const uint8_t *key, size_t key_len, const char *label,
              const uint8_t *u, size_t u_len, const uint8_t *v, size_t v_len, uint32_t bits,
              uint8_t *out)
{
        _cleanup_(EVP_MAC_freep) EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
        _cleanup_(EVP_MAC_CTX_freep) EVP_MAC_CTX *ctx = NULL;
        size_t want = (bits + 7) / 8, done = 0;
        OSSL_PARAM params[] = {
                OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)hash, 0),
                OSSL_PARAM_END,
        };
        uint8_t ctr[4], nbits[4], block[EVP_MAX_MD_SIZE];

        if (!mac || !(ctx = EVP_MAC_CTX_new(mac)))
                return -EIO;
        put_be32(nbits, bits);
        /* K(i) = HMAC(key, [i] || Label || 0x00 || Context U || Context V || [bits]) */
        for (uint32_t i = 1; done < want; i++) {
                size_t n;

                put_be32(ctr, i);
                if (EVP_MAC_init(ctx, key, key_len, params) != 1 ||
                    EVP_MAC_update(ctx, ctr, 4) != 1 ||
                    EVP_MAC_update(ctx, (const uint8_t *)label, strlen(label) + 1) != 1 ||
                    (u_len && EVP_MAC_update(ctx, u, u_len) != 1) ||
                    (v_len && EVP_MAC_update(ctx, v, v_len) != 1) ||
                    EVP_MAC_update(ctx, nbits, 4) != 1 ||
                    EVP_MAC_final(ctx, block, &n, sizeof(block)) != 1)
                        return -EIO;
                if (n > want - done)
                        n = want - done;
                memcpy(out + done, block, n);
                done += n;
        }
        OPENSSL_cleanse(block, sizeof(block));
        return 0;
}

int cred_kdfe(const char *hash, const uint8_t *z, size_t z_len, const char *label, const uint8_t *u,
              size_t u_len, const uint8_t *v, size_t v_len, uint32_t bits, uint8_t *out)
{
        _cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        EVP_MD *md = EVP_MD_fetch(NULL, hash, NULL);
        size_t want = (bits + 7) / 8, done = 0;
        uint8_t ctr[4], block[EVP_MAX_MD_SIZE];
        int e = 0;

        if (!ctx || !md) {
                EVP_MD_free(md);
                return -EIO;
        }
        /* K(i) = H([i] || Z || Label || 0x00 || PartyUInfo || PartyVInfo) */
        for (uint32_t i = 1; done < want; i++) {
                unsigned n;

                put_be32(ctr, i);
                if (EVP_DigestInit_ex2(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, ctr, 4) != 1 ||
                    EVP_DigestUpdate(ctx, z, z_len) != 1 ||
                    EVP_DigestUpdate(ctx, label, strlen(label) + 1) != 1 ||
                    EVP_DigestUpdate(ctx, u, u_len) != 1 || EVP_DigestUpdate(ctx, v, v_len) != 1 ||
                    EVP_DigestFinal_ex(ctx, block, &n) != 1) {
                        e = -EIO;
                        break;
                }
                if (n > want - done)
                        n = (unsigned)(want - done);
                memcpy(out + done, block, n);
                done += n;
        }
        OPENSSL_cleanse(block, sizeof(block));
        EVP_MD_free(md);
        return e;
}

static const char *md_name(TPMI_ALG_HASH alg, size_t *ret_size)
{
        switch (alg) {
        case TPM2_ALG_SHA256:
                *ret_size = 32;
                return "SHA256";
        case TPM2_ALG_SHA384:
                *ret_size = 48;
                return "SHA384";
        case TPM2_ALG_SHA512:
                *ret_size = 64;
                return "SHA512";
        default:
                return NULL;
        }
}

/* RSA: seed random, encrypted with OAEP(nameAlg, label "IDENTITY"). */
static int seed_rsa(const TPMT_PUBLIC *ek, const char *md, size_t seed_len, uint8_t *seed,
                    uint8_t *enc, size_t *enc_len, struct attest_err *err)
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *pk = NULL;
        _cleanup_(EVP_PKEY_CTX_freep) EVP_PKEY_CTX *ctx = NULL;
        static const char label[] = "IDENTITY"; /* with its NUL */
        uint8_t *lab;

        if (tpmkey_pkey(ek, &pk, NULL) < 0)
                return attest_fail(err, -EBADMSG, AE_CRED_BAD_EK, "EK RSA public key unusable");
        if (RAND_bytes(seed, (int)seed_len) != 1 || !(ctx = EVP_PKEY_CTX_new(pk, NULL)) ||
            EVP_PKEY_encrypt_init(ctx) != 1 ||
            EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
            EVP_PKEY_CTX_set_rsa_oaep_md_name(ctx, md, NULL) != 1 ||
            EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, md, NULL) != 1)
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "RSA-OAEP set-up failed");
        lab = OPENSSL_memdup(label, sizeof(label));
        if (!lab || EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, lab, sizeof(label)) != 1) {
                OPENSSL_free(lab);
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "RSA-OAEP label failed");
        }
        if (EVP_PKEY_encrypt(ctx, enc, enc_len, seed, seed_len) != 1)
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "RSA-OAEP encryption failed");
        return 0;
}

/* ECC: ephemeral ECDH; seed = KDFe(nameAlg, Z, "IDENTITY", Qe.x, Qs.x); enc = TPMS_ECC_POINT Qe. */
static int seed_ecc(const TPMT_PUBLIC *ek, const char *md, size_t seed_len, uint8_t *seed,
                    uint8_t *enc, size_t *enc_len, struct attest_err *err)
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *peer = NULL, *eph = NULL;
        _cleanup_(EVP_PKEY_CTX_freep) EVP_PKEY_CTX *ctx = NULL;
        const TPMS_ECC_POINT *qs = &ek->unique.ecc;
        uint8_t z[66], pt[1 + 2 * 66];
        size_t zlen = sizeof(z), ptlen, clen;
        TPMS_ECC_POINT qe = {0};
        const char *group;
        size_t off = 0;
        int x;

        if (tpmkey_curve(ek->parameters.eccDetail.curveID, &group, &clen) < 0)
                return attest_fail(err, -EOPNOTSUPP, AE_CRED_BAD_EK, "EK curve not supported");
        if (qs->x.size != clen || (x = tpmkey_pkey(ek, &peer, NULL)) < 0)
                return attest_fail(err, -EBADMSG, AE_CRED_BAD_EK, "EK ECC point unusable");
        if (!(eph = EVP_PKEY_Q_keygen(NULL, NULL, "EC", group)) ||
            !(ctx = EVP_PKEY_CTX_new(eph, NULL)) || EVP_PKEY_derive_init(ctx) != 1 ||
            EVP_PKEY_derive_set_peer(ctx, peer) != 1 || EVP_PKEY_derive(ctx, z, &zlen) != 1 ||
            zlen != clen ||
            EVP_PKEY_get_octet_string_param(eph, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &ptlen) !=
                    1 ||
            ptlen != 1 + 2 * clen || pt[0] != 0x04)
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "ECDH with the EK failed");
        qe.x.size = qe.y.size = (UINT16)clen;
        memcpy(qe.x.buffer, pt + 1, clen);
        memcpy(qe.y.buffer, pt + 1 + clen, clen);
        x = cred_kdfe(md, z, zlen, "IDENTITY", qe.x.buffer, clen, qs->x.buffer, clen,
                      (uint32_t)(8 * seed_len), seed);
        OPENSSL_cleanse(z, sizeof(z));
        if (x < 0)
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "KDFe failed");
        if (Tss2_MU_TPMS_ECC_POINT_Marshal(&qe, enc, *enc_len, &off) != TSS2_RC_SUCCESS)
                return attest_fail(err, -EIO, AE_CRED_CRYPTO, "marshalling the ECC point failed");
        *enc_len = off;
        return 0;
}

int cred_make(const uint8_t *ek_pub, size_t ek_pub_len, const uint8_t *name, size_t name_len,
              const uint8_t *cred, size_t cred_len, struct credential *ret, struct attest_err *err)
{
        TPM2B_PUBLIC pub = {0};
        const TPMT_PUBLIC *ek = &pub.publicArea;
        const TPMT_SYM_DEF_OBJECT *sym;
        uint8_t seed[64], key[32], hmac_key[64], plain[2 + CRED_SECRET_MAX], enc_secret[512];
        uint8_t hmac[EVP_MAX_MD_SIZE], iv[16] = {0};
        size_t seed_len, enc_len = sizeof(enc_secret), hlen, ident_len;
        struct credential c = {0};
        const char *md;
        int x, outl = 0, finl = 0;

        if (tpmkey_unmarshal(ek_pub, ek_pub_len, &pub, NULL) < 0)
                return attest_fail(err, -EBADMSG, AE_CRED_BAD_EK,
                                   "EK public area is not a TPM2B_PUBLIC");
        if (cred_len == 0 || cred_len > CRED_SECRET_MAX)
                return attest_fail(err, -EINVAL, AE_CRED_BAD_SECRET, "credential of %zu bytes",
                                   cred_len);
        if (!(md = md_name(ek->nameAlg, &seed_len)))
                return attest_fail(err, -EOPNOTSUPP, AE_CRED_BAD_EK, "EK nameAlg 0x%04x",
                                   ek->nameAlg);
        /* the Name is the AK's (its own nameAlg); it only enters KDFa and the HMAC as bytes */
        if (name_len < 2 + 20 || name_len > 2 + 64)
                return attest_fail(err, -EINVAL, AE_CRED_BAD_NAME,
                                   "object name of %zu bytes is no TPM Name", name_len);
        const TPMA_OBJECT need = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
        if ((ek->objectAttributes & need) != need ||
            (ek->objectAttributes & TPMA_OBJECT_SIGN_ENCRYPT))
                return attest_fail(err, -EOPNOTSUPP, AE_CRED_BAD_EK,
                                   "EK is not a restricted decryption key");
        sym = ek->type == TPM2_ALG_RSA ? &ek->parameters.rsaDetail.symmetric
                                       : &ek->parameters.eccDetail.symmetric;
        if ((ek->type != TPM2_ALG_RSA && ek->type != TPM2_ALG_ECC) ||
            sym->algorithm != TPM2_ALG_AES || sym->mode.aes != TPM2_ALG_CFB ||
            (sym->keyBits.aes != 128 && sym->keyBits.aes != 256))
                return attest_fail(err, -EOPNOTSUPP, AE_CRED_BAD_EK,
                                   "EK must be RSA or ECC with AES-CFB");

        x = ek->type == TPM2_ALG_RSA ? seed_rsa(ek, md, seed_len, seed, enc_secret, &enc_len, err)
                                     : seed_ecc(ek, md, seed_len, seed, enc_secret, &enc_len, err);
        if (x < 0)
                goto out;

        /* symKey = KDFa(nameAlg, seed, "STORAGE", Name, -, keyBits); CFB with a zero IV */
        if ((x = cred_kdfa(md, seed, seed_len, "STORAGE", name, name_len, NULL, 0, sym->keyBits.aes,
                           key)) < 0 ||
            (x = cred_kdfa(md, seed, seed_len, "INTEGRITY", NULL, 0, NULL, 0,
                           (uint32_t)(8 * seed_len), hmac_key)) < 0) {
                attest_fail(err, x, AE_CRED_CRYPTO, "KDFa failed");
                goto out;
        }
        put_be16(plain, cred_len);
        memcpy(plain + 2, cred, cred_len);
        /* TPM2B_ID_OBJECT: size | TPM2B_DIGEST integrityHMAC | encIdentity */
        uint8_t *ident = c.blob + 2 + 2 + seed_len;
        ident_len = 2 + cred_len;
        {
                _cleanup_(EVP_CIPHER_CTX_freep) EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
                int ok = cc &&
                         EVP_EncryptInit_ex2(cc,
                                             sym->keyBits.aes == 128 ? EVP_aes_128_cfb()
                                                                     : EVP_aes_256_cfb(),
                                             key, iv, NULL) == 1 &&
                         EVP_EncryptUpdate(cc, ident, &outl, plain, (int)ident_len) == 1 &&
                         EVP_EncryptFinal_ex(cc, ident + outl, &finl) == 1 &&
                         (size_t)(outl + finl) == ident_len;
                if (!ok) {
                        x = attest_fail(err, -EIO, AE_CRED_CRYPTO, "AES-CFB failed");
                        goto out;
                }
        }
        /* outerHMAC = HMAC(nameAlg, HMACkey, encIdentity || Name) */
        {
                _cleanup_(EVP_MAC_freep) EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
                _cleanup_(EVP_MAC_CTX_freep) EVP_MAC_CTX *mc = mac ? EVP_MAC_CTX_new(mac) : NULL;
                OSSL_PARAM params[] = {
                        OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)md, 0),
                        OSSL_PARAM_END,
                };
                int ok = mc && EVP_MAC_init(mc, hmac_key, seed_len, params) == 1 &&
                         EVP_MAC_update(mc, ident, ident_len) == 1 &&
                         EVP_MAC_update(mc, name, name_len) == 1 &&
                         EVP_MAC_final(mc, hmac, &hlen, sizeof(hmac)) == 1 && hlen == seed_len;
                if (!ok) {
                        x = attest_fail(err, -EIO, AE_CRED_CRYPTO, "HMAC failed");
                        goto out;
                }
        }
        put_be16(c.blob, 2 + hlen + ident_len);
        put_be16(c.blob + 2, hlen);
        memcpy(c.blob + 4, hmac, hlen);
        c.blob_len = 2 + 2 + hlen + ident_len;
        put_be16(c.secret, enc_len);
        memcpy(c.secret + 2, enc_secret, enc_len);
        c.secret_len = 2 + enc_len;
        *ret = c;
        x = 0;
out:
        OPENSSL_cleanse(seed, sizeof(seed));
        OPENSSL_cleanse(key, sizeof(key));
        OPENSSL_cleanse(hmac_key, sizeof(hmac_key));
        OPENSSL_cleanse(plain, sizeof(plain));
        return x;
}
