/* SPDX-License-Identifier: MIT */
/* ima-modsig against the ima.runtime trusted keys (policy/runtime.h: rt_modsig_check). */
#include <errno.h>
#include <string.h>

#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include "policy/runtime-internal.h"

/* ---- ima-modsig: the appended PKCS#7 (CMS SignedData) of a signed module or file ---- */

static const char *const modsig_why_names[RT_MODSIG__COUNT] = {
        [RT_MODSIG_OK] = "ok",
        [RT_MODSIG_TOO_BIG] = "too_big",
        [RT_MODSIG_MALFORMED] = "malformed",
        [RT_MODSIG_NOT_SIGNED_DATA] = "not_signed_data",
        [RT_MODSIG_NOT_DETACHED] = "not_detached",
        [RT_MODSIG_SIGNERS] = "signers",
        [RT_MODSIG_NO_DIGEST] = "no_digest",
        [RT_MODSIG_DIGEST_LEN] = "digest_len",
        [RT_MODSIG_DIGEST_ALGO] = "digest_algo",
        [RT_MODSIG_UNKNOWN_SIGNER] = "unknown_signer",
        [RT_MODSIG_SIG_ALGO] = "sig_algo",
        [RT_MODSIG_MESSAGE_DIGEST] = "message_digest",
        [RT_MODSIG_BAD_SIGNATURE] = "bad_signature",
};

const char *rt_modsig_why_name(enum rt_modsig_why w)
{
        return (unsigned)w < RT_MODSIG__COUNT ? modsig_why_names[w] : "unknown";
}

/* The trusted key that signer si names: a certificate by issuerAndSerialNumber or its
 * subjectKeyIdentifier extension (OpenSSL's comparison), a bare key by a subjectKeyIdentifier
 * equal to the SHA-1 of its public key bits. NULL: none. */
static const struct rt_key *modsig_signer(const struct rt_policy *p, CMS_SignerInfo *si)
{
        ASN1_OCTET_STRING *kid = NULL;
        X509_NAME *issuer = NULL;
        ASN1_INTEGER *sno = NULL;

        if (CMS_SignerInfo_get0_signer_id(si, &kid, &issuer, &sno) != 1)
                return NULL;
        for (size_t i = 0; i < p->nkeys; i++) {
                const struct rt_key *k = &p->keys[i];

                if (k->is_cert && CMS_SignerInfo_cert_cmp(si, k->x509) == 0)
                        return k;
                if (!k->is_cert && kid && ASN1_STRING_length(kid) == 20 &&
                    memcmp(ASN1_STRING_get0_data(kid), k->kid, 20) == 0)
                        return k;
        }
        return NULL;
}

/* Does the SignerInfo's signature algorithm fit key k and digest md_nid? rsaEncryption or
 * sha*WithRSAEncryption for RSA (PKCS#1 v1.5), ecdsa-with-* for EC; RSA-PSS and others: no. */
static bool modsig_sig_algo_ok(const struct rt_key *k, const X509_ALGOR *alg, int md_nid)
{
        const ASN1_OBJECT *obj = NULL;
        int nid, dnid = NID_undef, pknid = NID_undef;

        X509_ALGOR_get0(&obj, NULL, NULL, alg);
        nid = OBJ_obj2nid(obj);
        if (nid == NID_rsaEncryption)
                pknid = NID_rsaEncryption;
        else if (!OBJ_find_sigid_algs(nid, &dnid, &pknid))
                return false;
        if (dnid != NID_undef && dnid != md_nid)
                return false;
        if (EVP_PKEY_get_base_id(k->pkey) == EVP_PKEY_RSA)
                return pknid == NID_rsaEncryption;
        return pknid == NID_X9_62_id_ecPublicKey;
}

/* The checks after parsing: 1 good, 0 not (*why), -ENOMEM. */
static int modsig_judge(const struct rt_policy *p, CMS_ContentInfo *cms, unsigned algo,
                        const uint8_t *d, size_t dn, enum rt_modsig_why *why)
{
        const struct hashalg *a = rt_algo_get(algo);
        STACK_OF(CMS_SignerInfo) * sis;
        CMS_SignerInfo *si;
        const struct rt_key *k;
        X509_ALGOR *dig = NULL, *sig = NULL;
        const ASN1_OBJECT *obj = NULL;
        ASN1_OCTET_STRING **content, *sv;
        const EVP_MD *evp;
        int md_nid, r;

        if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed ||
            OBJ_obj2nid(CMS_get0_eContentType(cms)) != NID_pkcs7_data) {
                *why = RT_MODSIG_NOT_SIGNED_DATA;
                return 0;
        }
        if (!(content = CMS_get0_content(cms)) || *content) {
                *why = RT_MODSIG_NOT_DETACHED;
                return 0;
        }
        sis = CMS_get0_SignerInfos(cms);
        if (!sis || sk_CMS_SignerInfo_num(sis) != 1) {
                *why = RT_MODSIG_SIGNERS;
                return 0;
        }
        si = sk_CMS_SignerInfo_value(sis, 0);
        if (!a || !a->evp || !(evp = EVP_get_digestbyname(a->evp))) {
                *why = RT_MODSIG_NO_DIGEST;
                return 0;
        }
        if (dn != a->size) {
                *why = RT_MODSIG_DIGEST_LEN;
                return 0;
        }
        md_nid = EVP_MD_get_type(evp);
        CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, &sig);
        X509_ALGOR_get0(&obj, NULL, NULL, dig);
        if (OBJ_obj2nid(obj) != md_nid) {
                *why = RT_MODSIG_DIGEST_ALGO;
                return 0;
        }
        if (!(k = modsig_signer(p, si))) {
                *why = RT_MODSIG_UNKNOWN_SIGNER;
                return 0;
        }
        if (!modsig_sig_algo_ok(k, sig, md_nid)) {
                *why = RT_MODSIG_SIG_ALGO;
                return 0;
        }
        *why = RT_MODSIG_BAD_SIGNATURE;
        if (CMS_signed_get_attr_count(si) >= 0) {
                /* signed attributes (the kernel refuses them in a module signature, but they
                 * are a valid CMS signature): messageDigest must be d-modsig, and the
                 * signature covers the attributes */
                const ASN1_OCTET_STRING *m = CMS_signed_get0_data_by_OBJ(
                        si, OBJ_nid2obj(NID_pkcs9_messageDigest), -3, V_ASN1_OCTET_STRING);

                if (!m || (size_t)ASN1_STRING_length(m) != dn ||
                    memcmp(ASN1_STRING_get0_data(m), d, dn) != 0) {
                        *why = RT_MODSIG_MESSAGE_DIGEST;
                        return 0;
                }
                CMS_SignerInfo_set1_signer_cert(si, k->x509);
                r = CMS_SignerInfo_verify(si) == 1;
        } else {
                /* no attributes: the signature is over the content digest itself */
                EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k->pkey, NULL);

                if (!ctx)
                        return -ENOMEM;
                sv = CMS_SignerInfo_get0_signature(si);
                r = sv && EVP_PKEY_verify_init(ctx) == 1 &&
                    EVP_PKEY_CTX_set_signature_md(ctx, evp) == 1 &&
                    EVP_PKEY_verify(ctx, ASN1_STRING_get0_data(sv), (size_t)ASN1_STRING_length(sv),
                                    d, dn) == 1;
                EVP_PKEY_CTX_free(ctx);
        }
        if (r)
                *why = RT_MODSIG_OK;
        return r;
}

int rt_modsig_check(const struct rt_policy *p, const struct ima_entry *e,
                    enum rt_modsig_why *ret_why)
{
        const unsigned char *q = e->modsig;
        CMS_ContentInfo *cms;
        unsigned algo = 0;
        int r;

        *ret_why = RT_MODSIG_MALFORMED;
        if (!e->modsig || !e->modsig_len)
                return 0;
        if (e->modsig_len > RT_MODSIG_MAX) {
                *ret_why = RT_MODSIG_TOO_BIG;
                return 0;
        }
        if (e->modsig_algo)
                algo = rt_algo_from_name(e->modsig_algo, e->modsig_algo_len);
        /* the whole field is one DER (or BER: sign-file streams) ContentInfo, nothing after */
        cms = d2i_CMS_ContentInfo(NULL, &q, (long)e->modsig_len);
        if (!cms || q != e->modsig + e->modsig_len) {
                CMS_ContentInfo_free(cms);
                ERR_clear_error();
                return 0;
        }
        if (!e->modsig_digest || !e->modsig_digest_len || !algo) {
                *ret_why = RT_MODSIG_NO_DIGEST;
                r = 0;
        } else {
                r = modsig_judge(p, cms, algo, e->modsig_digest, e->modsig_digest_len, ret_why);
        }
        CMS_ContentInfo_free(cms);
        ERR_clear_error();
        return r;
}
