/* SPDX-License-Identifier: MIT */
/* The endorsement key: its public area from the standard templates and its certificate from NV
 * (TCG EK Credential Profile 2.0). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tpm/tpm-internal.h"

#define EK_CERT_MAX (16 * 1024) /* NV index size cap for an EK certificate */

/* PolicySecret(TPM_RH_ENDORSEMENT) digest, EK Credential Profile 2.0, B.3.3 (templates L-1/L-2). */
static const uint8_t ek_policy_a[32] = {
        0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc,
        0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52,
        0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

/* EK Credential Profile 2.0, B.3.3 template L-1 (RSA 2048) and L-2 (ECC NIST P-256). */
static void ek_template(enum tpm_key_alg alg, TPM2B_PUBLIC *ret)
{
        TPMT_PUBLIC *p = &ret->publicArea;

        memset(ret, 0, sizeof(*ret));
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                              TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
                              TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
        p->authPolicy.size = sizeof(ek_policy_a);
        memcpy(p->authPolicy.buffer, ek_policy_a, sizeof(ek_policy_a));
        if (alg == TPM_KEY_RSA2048) {
                TPMS_RSA_PARMS *r = &p->parameters.rsaDetail;

                p->type = TPM2_ALG_RSA;
                r->symmetric.algorithm = TPM2_ALG_AES;
                r->symmetric.keyBits.aes = 128;
                r->symmetric.mode.aes = TPM2_ALG_CFB;
                r->scheme.scheme = TPM2_ALG_NULL;
                r->keyBits = 2048;
                r->exponent = 0;
                p->unique.rsa.size = 256; /* zero-filled */
        } else {
                TPMS_ECC_PARMS *e = &p->parameters.eccDetail;

                p->type = TPM2_ALG_ECC;
                e->symmetric.algorithm = TPM2_ALG_AES;
                e->symmetric.keyBits.aes = 128;
                e->symmetric.mode.aes = TPM2_ALG_CFB;
                e->scheme.scheme = TPM2_ALG_NULL;
                e->curveID = TPM2_ECC_NIST_P256;
                e->kdf.scheme = TPM2_ALG_NULL;
                p->unique.ecc.x.size = 32; /* zero-filled */
                p->unique.ecc.y.size = 32;
        }
}

/* TPM2_CreatePrimary (Part 3, 24.1) of the EK in the endorsement hierarchy; caches its public. */
int tpm_ek_create(struct tpm *t, enum tpm_key_alg alg, ESYS_TR *ret, struct attest_err *err)
{
        _cleanup_(tpm_esys_freep) TPM2B_PUBLIC *out = NULL;
        TPM2B_SENSITIVE_CREATE sens = {0};
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION creation_pcr = {0};
        TPM2B_PUBLIC in;
        ESYS_TR h = ESYS_TR_NONE;
        TSS2_RC rc;

        ek_template(alg, &in);
        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                ESYS_TR_NONE, &sens, &in, &outside, &creation_pcr, &h, &out, NULL,
                                NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "creating the %s EK",
                                tpm_key_alg_name(alg));
        t->ek_pub[alg] = *out;
        t->have_ek_pub[alg] = true;
        *ret = h;
        return 0;
}

int tpm_ek_public(struct tpm *t, enum tpm_key_alg alg, uint8_t **ret_tpm2b_public, size_t *ret_len,
                  struct attest_err *err)
{
        int r;

        if (!tpm_alg_valid(alg))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_ALG, "unknown key algorithm %d", alg);
        if (!t->have_ek_pub[alg]) {
                struct tpm_tr ek _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};

                r = tpm_ek_create(t, alg, &ek.h, err);
                if (r < 0)
                        return r;
        }
        r = tpm_public_marshal(&t->ek_pub[alg], ret_tpm2b_public, ret_len);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_MARSHAL, "cannot marshal the EK public area");
        return 0;
}

/* Is NV index idx defined? TPM2_GetCapability(TPM2_CAP_HANDLES) from idx. */
static int nv_defined(struct tpm *t, TPM2_HANDLE idx, struct attest_err *err)
{
        _cleanup_(tpm_esys_freep) TPMS_CAPABILITY_DATA *cap = NULL;
        TPMI_YES_NO more;
        TSS2_RC rc;

        rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                                idx, 1, &more, &cap);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "listing NV index 0x%08x", (unsigned)idx);
        return cap->data.handles.count >= 1 && cap->data.handles.handle[0] == idx;
}

/* Length of the DER SEQUENCE at the start of buf (certificate), or 0 when it is not one. NV
 * indices may be larger than the certificate and padded. */
static size_t der_seq_len(const uint8_t *buf, size_t len)
{
        size_t n = 0, hdr;

        if (len < 2 || buf[0] != 0x30)
                return 0;
        if (buf[1] < 0x80)
                return 2 + (size_t)buf[1] <= len ? 2 + (size_t)buf[1] : 0;
        hdr = 2 + (size_t)(buf[1] & 0x7f);
        if ((buf[1] & 0x7f) == 0 || (buf[1] & 0x7f) > 3 || hdr > len)
                return 0;
        for (size_t i = 2; i < hdr; i++)
                n = (n << 8) | buf[i];
        if (n > len - hdr)
                return 0;
        return hdr + n;
}

int tpm_ek_cert(struct tpm *t, enum tpm_key_alg alg, uint8_t **ret_der, size_t *ret_len,
                struct attest_err *err)
{
        TPM2_HANDLE idx = alg == TPM_KEY_ECCP256 ? TPM_NV_EK_CERT_ECC : TPM_NV_EK_CERT_RSA;
        struct tpm_tr nv _cleanup_(tpm_tr_closep) = {t->esys, ESYS_TR_NONE};
        _cleanup_(tpm_esys_freep) TPM2B_NV_PUBLIC *nvpub = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        ESYS_TR auth;
        TPMA_NV attrs;
        uint16_t size;
        size_t len;
        TSS2_RC rc;
        int r;

        if (!tpm_alg_valid(alg))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_ALG, "unknown key algorithm %d", alg);
        r = nv_defined(t, idx, err);
        if (r < 0)
                return r;
        if (r == 0)
                return attest_fail(err, -ENOENT, AE_TPM_NO_EK_CERT,
                                   "no %s EK certificate: NV index 0x%08x is not defined",
                                   tpm_key_alg_name(alg), (unsigned)idx);
        rc = Esys_TR_FromTPMPublic(t->esys, idx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv.h);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "NV index 0x%08x", (unsigned)idx);
        /* TPM2_NV_ReadPublic (Part 3, 31.6) */
        rc = Esys_NV_ReadPublic(t->esys, nv.h, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nvpub,
                                NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE,
                                "reading the public area of NV index 0x%08x", (unsigned)idx);
        attrs = nvpub->nvPublic.attributes;
        size = nvpub->nvPublic.dataSize;
        if (!(attrs & TPMA_NV_WRITTEN) || size == 0)
                return attest_fail(err, -ENOENT, AE_TPM_NO_EK_CERT,
                                   "no %s EK certificate: NV index 0x%08x is empty",
                                   tpm_key_alg_name(alg), (unsigned)idx);
        if (size > EK_CERT_MAX)
                return attest_fail(err, -E2BIG, AE_TPM_EK_CERT_TOO_BIG,
                                   "NV index 0x%08x holds %u bytes > %d", (unsigned)idx, size,
                                   EK_CERT_MAX);
        if (attrs & TPMA_NV_AUTHREAD)
                auth = nv.h; /* the index's own (empty) authValue */
        else if (attrs & TPMA_NV_OWNERREAD)
                auth = ESYS_TR_RH_OWNER;
        else
                return attest_fail(err, -EIO, AE_TPM_EK_CERT_UNREADABLE,
                                   "NV index 0x%08x allows neither AUTHREAD nor OWNERREAD",
                                   (unsigned)idx);
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        /* TPM2_NV_Read (Part 3, 31.13), at most TPM2_PT_NV_BUFFER_MAX bytes per call */
        for (uint16_t off = 0; off < size;) {
                _cleanup_(tpm_esys_freep) TPM2B_MAX_NV_BUFFER *data = NULL;
                uint16_t n = (uint16_t)(size - off);

                if (n > t->nv_buffer_max)
                        n = (uint16_t)t->nv_buffer_max;
                rc = Esys_NV_Read(t->esys, auth, nv.h, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                  n, off, &data);
                if (rc != TSS2_RC_SUCCESS)
                        return tpm_fail(err, rc, -EIO, AE_NONE, "reading NV index 0x%08x at %u",
                                        (unsigned)idx, off);
                if (data->size != n)
                        return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE,
                                           "NV index 0x%08x: asked %u bytes at %u, got %u",
                                           (unsigned)idx, n, off, data->size);
                memcpy(buf + off, data->buffer, n);
                off = (uint16_t)(off + n);
        }
        len = der_seq_len(buf, size);
        if (len == 0)
                return attest_fail(err, -EBADMSG, AE_TPM_EK_CERT_NOT_DER,
                                   "NV index 0x%08x does not hold a DER certificate",
                                   (unsigned)idx);
        *ret_der = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}
