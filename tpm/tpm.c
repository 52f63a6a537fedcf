/* SPDX-License-Identifier: MIT */
/*
 * TPM 2.0 access over tpm2-tss ESAPI. Spec references: TPM 2.0 Library Part 3 (commands), TCG EK
 * Credential Profile 2.0 (EK templates, NV indices). TSS2_RC values are converted in tpm_fail()
 * only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "tpm/tpm-internal.h"
#include "evidence/quote.h"

#define TPM_DEFAULT_TCTI "device:/dev/tpmrm0"

/* The one TSS2_RC conversion (tpm-internal.h). */
int tpm_fail(struct attest_err *err, TSS2_RC rc, int refused_errno, enum attest_code refused_code,
             const char *fmt, ...)
{
        TSS2_RC layer = rc & TSS2_RC_LAYER_MASK, base = rc & 0xffff;
        enum attest_code code = AE_TPM_ERROR;
        char what[160];
        va_list ap;
        int e;

        if ((layer == TSS2_TPM_RC_LAYER && (rc & TPM2_RC_FMT1)) || layer == TSS2_MU_RC_LAYER)
                e = refused_errno;
        else if (layer != TSS2_TPM_RC_LAYER && base == TSS2_BASE_RC_MEMORY)
                e = -ENOMEM;
        else if (layer != TSS2_TPM_RC_LAYER &&
                 (base == TSS2_BASE_RC_BAD_REFERENCE || base == TSS2_BASE_RC_BAD_VALUE))
                e = -EINVAL;
        else
                e = -EIO;
        if (e == refused_errno && refused_code != AE_NONE)
                code = refused_code;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return attest_fail(err, e, code, "%s: 0x%x %s", what, (unsigned)rc, Tss2_RC_Decode(rc));
}

const char *tpm_key_alg_name(enum tpm_key_alg alg)
{
        return alg == TPM_KEY_ECCP256 ? "ecc" : "rsa";
}

int tpm_key_alg_from_name(const char *s, enum tpm_key_alg *ret)
{
        if (strcmp(s, "rsa") == 0)
                *ret = TPM_KEY_RSA2048;
        else if (strcmp(s, "ecc") == 0)
                *ret = TPM_KEY_ECCP256;
        else
                return -EINVAL;
        return 0;
}

struct tpm *tpm_close(struct tpm *t)
{
        if (!t)
                return NULL;
        if (t->esys) {
                if (t->ak != ESYS_TR_NONE)
                        (void)Esys_FlushContext(t->esys, t->ak);
                Esys_Finalize(&t->esys);
        }
        if (t->tcti)
                Tss2_TctiLdr_Finalize(&t->tcti);
        quote_ak_free(t->ak_q);
        free(t);
        return NULL;
}

int tpm_open(const char *tcti, struct tpm **ret, struct attest_err *err)
{
        _cleanup_(tpm_closep) struct tpm *t = NULL;
        _cleanup_(tpm_esys_freep) TPMS_CAPABILITY_DATA *cap = NULL;
        const char *conf = tcti ? tcti : TPM_DEFAULT_TCTI;
        TPMI_YES_NO more;
        TSS2_RC rc;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->ak = ESYS_TR_NONE;
        rc = Tss2_TctiLdr_Initialize(conf, &t->tcti);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "TCTI '%s'", conf);
        rc = Esys_Initialize(&t->esys, t->tcti, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "ESAPI on '%s'", conf);
        /* TPM2_GetCapability (Part 3, 30.2): also proves the TPM answers. */
        rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                TPM2_CAP_TPM_PROPERTIES, TPM2_PT_NV_BUFFER_MAX, 1, &more, &cap);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "TPM on '%s' does not answer", conf);
        if (cap->data.tpmProperties.count < 1 ||
            cap->data.tpmProperties.tpmProperty[0].property != TPM2_PT_NV_BUFFER_MAX)
                return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE,
                                   "TPM on '%s' did not report TPM2_PT_NV_BUFFER_MAX", conf);
        t->nv_buffer_max = cap->data.tpmProperties.tpmProperty[0].value;
        if (t->nv_buffer_max == 0 || t->nv_buffer_max > TPM2_MAX_NV_BUFFER_SIZE)
                t->nv_buffer_max = TPM2_MAX_NV_BUFFER_SIZE;
        *ret = TAKE_PTR(t);
        return 0;
}

/* Marshal a TPM2B_PUBLIC into a new buffer. */
int tpm_public_marshal(const TPM2B_PUBLIC *pub, uint8_t **ret, size_t *ret_len)
{
        _cleanup_free_ uint8_t *buf = malloc(sizeof(TPM2B_PUBLIC));
        size_t off = 0;

        if (!buf)
                return -ENOMEM;
        if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(TPM2B_PUBLIC), &off) != TSS2_RC_SUCCESS)
                return -EINVAL;
        *ret = TAKE_PTR(buf);
        *ret_len = off;
        return 0;
}
