/* SPDX-License-Identifier: MIT */
/* The ima.runtime trusted keys and ima-sig signatures (runtime-internal.h). */
#include <errno.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "evidence/jpath.h"
#include "policy/runtime-internal.h"

int rt_key_parse(const json_t *v, const char *p, struct rt_key *ret, struct attest_err *err)
{
        BIO *b;
        X509 *cert;
        EVP_PKEY *k = NULL;
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        n = json_string_length(v);
        if (n == 0 || n > RT_KEY_PEM_MAX)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "PEM of %zu bytes, want 1-%d", n, RT_KEY_PEM_MAX);
        if (!(b = BIO_new_mem_buf(json_string_value(v), (int)n)))
                return -ENOMEM;
        memset(ret, 0, sizeof(*ret));
        if ((cert = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
                const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(cert);

                if (skid && ASN1_STRING_length(skid) >= 4) {
                        const unsigned char *s = ASN1_STRING_get0_data(skid);
                        int l = ASN1_STRING_length(skid);

                        ret->skid = (uint32_t)s[l - 4] << 24 | (uint32_t)s[l - 3] << 16 |
                                    (uint32_t)s[l - 2] << 8 | s[l - 1];
                        ret->has_skid = true;
                }
                k = X509_get_pubkey(cert);
                ret->x509 = cert;
                ret->is_cert = true;
        } else {
                (void)BIO_reset(b);
                k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        }
        BIO_free(b);
        ERR_clear_error();
        /* from here on ret owns what it holds (rt_policy_free releases it) */
        ret->pkey = k;
        if (!k)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "not a PEM X.509 certificate or public key");
        if (EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA && EVP_PKEY_get_base_id(k) != EVP_PKEY_EC)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "not an RSA or EC key");
        if (ima_keyid_v2(k, &ret->keyid, ret->kid) < 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "key id not computable");
        if (!ret->x509 && (!(ret->x509 = X509_new()) || X509_set_pubkey(ret->x509, k) != 1)) {
                ERR_clear_error();
                return -ENOMEM;
        }
        return 0;
}

/* ---- the IMA signature header and ima-sig ---- */

int rt_sig_parse(const uint8_t *p, size_t n, struct rt_sig *ret)
{
        struct rt_sig s;

        /* u8 type | u8 version | u8 hash_algo | be32 keyid | be16 sig_size | sig */
        if (n < 9)
                return -EBADMSG;
        s.type = p[0];
        s.version = p[1];
        s.hash_algo = p[2];
        s.keyid = (uint32_t)p[3] << 24 | (uint32_t)p[4] << 16 | (uint32_t)p[5] << 8 | p[6];
        s.sig_len = (uint16_t)(p[7] << 8 | p[8]);
        /* EVM_IMA_XATTR_DIGSIG 3, IMA_VERITY_DIGSIG 6 (v3 only) */
        if (s.type != 3 && s.type != 6)
                return -EBADMSG;
        if (s.version != 2 && s.version != 3)
                return -EOPNOTSUPP;
        if (s.type == 6 && s.version != 3)
                return -EBADMSG;
        if (s.sig_len == 0 || s.sig_len != n - 9)
                return -EBADMSG;
        s.sig = p + 9;
        *ret = s;
        return 0;
}

/*
 * Check the signature of an entry's digest (algo, d) with the trusted keys: 1 good, 0 bad
 * (*ret_reason set), -ENOMEM. v2 signs the file digest; v3 signs the digest of struct
 * ima_file_id {u8 hash_type (the header's type); u8 hash_algorithm; u8 hash[digest size]}.
 */
int rt_sig_check(const struct rt_policy *p, const uint8_t *sigp, size_t sign, unsigned algo,
                 const uint8_t *d, size_t dn, enum rt_reason *ret_reason)
{
        const struct hashalg *a = rt_algo_get(algo);
        const struct rt_key *k = NULL;
        uint8_t fid[2 + RT_DIGEST_MAX], md[EVP_MAX_MD_SIZE];
        const uint8_t *tbs = d;
        size_t tbs_len = dn;
        unsigned mdlen = 0;
        struct rt_sig s;
        EVP_PKEY_CTX *ctx;
        const EVP_MD *evp;
        int r;

        *ret_reason = RT_REASON_BAD_SIGNATURE;
        if (rt_sig_parse(sigp, sign, &s) < 0)
                return 0;
        for (size_t i = 0; i < p->nkeys && !k; i++)
                if (p->keys[i].keyid == s.keyid ||
                    (p->keys[i].has_skid && p->keys[i].skid == s.keyid))
                        k = &p->keys[i];
        if (!k) {
                *ret_reason = RT_REASON_UNKNOWN_KEY;
                return 0;
        }
        /* the signature's hash must be the digest's (Keylime, the kernel) */
        if (!a || s.hash_algo != algo || !a->evp || !(evp = EVP_get_digestbyname(a->evp)))
                return 0;
        if (s.version == 3) {
                fid[0] = s.type;
                fid[1] = (uint8_t)algo;
                memcpy(fid + 2, d, dn);
                if (!EVP_Digest(fid, 2 + dn, md, &mdlen, evp, NULL))
                        return -ENOMEM;
                tbs = md;
                tbs_len = mdlen;
        }
        if (!(ctx = EVP_PKEY_CTX_new(k->pkey, NULL)))
                return -ENOMEM;
        r = EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, evp) == 1 &&
            EVP_PKEY_verify(ctx, s.sig, s.sig_len, tbs, tbs_len) == 1;
        EVP_PKEY_CTX_free(ctx);
        ERR_clear_error();
        return r;
}
