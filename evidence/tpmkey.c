/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <tss2/tss2_mu.h>

#include "evidence/tpmkey.h"
#include "util/ossl.h"

static int from_params(const char *type, OSSL_PARAM_BLD *bld, EVP_PKEY **ret)
{
        _cleanup_(OSSL_PARAM_freep) OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
        _cleanup_(EVP_PKEY_CTX_freep) EVP_PKEY_CTX *ctx = NULL;

        if (!params || !(ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL)) ||
            EVP_PKEY_fromdata_init(ctx) != 1 ||
            EVP_PKEY_fromdata(ctx, ret, EVP_PKEY_PUBLIC_KEY, params) != 1)
                return -EBADMSG;
        return 0;
}

static int rsa_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret)
{
        _cleanup_(OSSL_PARAM_BLD_freep) OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
        _cleanup_(BN_freep) BIGNUM *n = NULL, *e = BN_new();
        const TPMS_RSA_PARMS *rp = &p->parameters.rsaDetail;

        if (p->unique.rsa.size == 0 || p->unique.rsa.size * 8u != rp->keyBits)
                return -EBADMSG;
        /* exponent 0 means the default 2^16+1 (Part 2, TPMS_RSA_PARMS) */
        if (!bld || !e || !(n = BN_bin2bn(p->unique.rsa.buffer, p->unique.rsa.size, NULL)) ||
            !BN_set_word(e, rp->exponent ? rp->exponent : 65537) ||
            !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
            !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
                return -ENOMEM;
        return from_params("RSA", bld, ret);
}

int tpmkey_curve(uint16_t curve, const char **ret_group, size_t *ret_len)
{
        switch (curve) {
        case TPM2_ECC_NIST_P256:
                *ret_group = "P-256", *ret_len = 32;
                return 0;
        case TPM2_ECC_NIST_P384:
                *ret_group = "P-384", *ret_len = 48;
                return 0;
        case TPM2_ECC_NIST_P521:
                *ret_group = "P-521", *ret_len = 66;
                return 0;
        default:
                return -EOPNOTSUPP;
        }
}

static int ecc_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret)
{
        _cleanup_(OSSL_PARAM_BLD_freep) OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
        const TPMS_ECC_POINT *q = &p->unique.ecc;
        uint8_t pt[1 + 2 * 66];
        const char *group;
        size_t clen;

        if (tpmkey_curve(p->parameters.eccDetail.curveID, &group, &clen) < 0)
                return -EOPNOTSUPP;
        if (q->x.size != clen || q->y.size != clen)
                return -EBADMSG;
        pt[0] = 0x04; /* uncompressed */
        memcpy(pt + 1, q->x.buffer, clen);
        memcpy(pt + 1 + clen, q->y.buffer, clen);
        if (!bld || !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) ||
            !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, 1 + 2 * clen))
                return -ENOMEM;
        return from_params("EC", bld, ret);
}

int tpmkey_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct attest_err *err)
{
        int x;

        switch (p->type) {
        case TPM2_ALG_RSA:
                x = rsa_pkey(p, ret);
                break;
        case TPM2_ALG_ECC:
                x = ecc_pkey(p, ret);
                break;
        default:
                x = -EOPNOTSUPP;
        }
        if (x == -EOPNOTSUPP)
                return attest_fail(err, x, AE_KEY_UNSUPPORTED,
                                   "key type 0x%04x or curve unsupported", p->type);
        if (x < 0)
                return attest_fail(err, x, AE_KEY_INVALID, "public key rejected by OpenSSL");
        return 0;
}

int tpmkey_unmarshal(const uint8_t *buf, size_t len, TPM2B_PUBLIC *ret, struct attest_err *err)
{
        TPM2B_PUBLIC pub = {0};
        size_t off = 0;

        if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub) != TSS2_RC_SUCCESS)
                return attest_fail(err, -EBADMSG, AE_KEY_MALFORMED, "not a TPM2B_PUBLIC");
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_KEY_MALFORMED,
                                   "%zu bytes after the TPM2B_PUBLIC", len - off);
        /* tss2-mu does not hold the size field to the public area it read */
        if (len < 2 || (size_t)(buf[0] << 8 | buf[1]) != len - 2)
                return attest_fail(err, -EBADMSG, AE_KEY_MALFORMED,
                                   "TPM2B_PUBLIC size field disagrees with its content");
        *ret = pub;
        return 0;
}
