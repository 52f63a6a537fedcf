/* SPDX-License-Identifier: MIT */
/*
 * TPM 2.0 access over tpm2-tss ESAPI. Spec references: TPM 2.0 Library Part 3 (commands), TCG EK
 * Credential Profile 2.0 (EK templates, NV indices). TSS2_RC values are converted in tpm_fail()
 * only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "agent/tpm.h"
#include "util/file.h"
#include "evidence/quote.h"

#define TPM_DEFAULT_TCTI "device:/dev/tpmrm0"
#define AK_FILE_MAX 4096        /* a marshalled TPM2B_PUBLIC / TPM2B_PRIVATE is far smaller */
#define EK_CERT_MAX (16 * 1024) /* NV index size cap for an EK certificate */
#define QUOTE_TRIES 5           /* PCRs changing between quote and read: retries */

struct tpm {
        TSS2_TCTI_CONTEXT *tcti;
        ESYS_CONTEXT *esys;
        uint32_t nv_buffer_max; /* TPM2_PT_NV_BUFFER_MAX */
        ESYS_TR ak;             /* ESYS_TR_NONE until an AK is loaded */
        enum tpm_key_alg ak_alg;
        TPM2B_PUBLIC ak_pub;
        struct quote_ak *ak_q; /* ak_pub as the verifier sees it: quote_verify() on our quotes */
        bool have_ek_pub[TPM_KEY_ALG_COUNT];
        TPM2B_PUBLIC ek_pub[TPM_KEY_ALG_COUNT];
};

/*
 * The one place a TSS2_RC becomes an errno and a message with the Tss2_RC_Decode() text.
 * refused_errno and refused_code (NULL: "tpm_error") apply when the input was refused: by the TPM
 * (format-one response codes: a handle, parameter or session, Part 2 6.6) or by tpm2-tss MU (bytes
 * that do not unmarshal). TPM warnings (resources, retry) and other TPM errors, and the TCTI and
 * transport, are -EIO; allocation failures -ENOMEM.
 */
_printf_(5, 6) static int tpm_fail(struct attest_err *err, TSS2_RC rc, int refused_errno,
                                   enum attest_code refused_code, const char *fmt, ...)
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

static void esys_freep(void *p)
{
        Esys_Free(*(void **)p);
}

/* A transient object or session, flushed when it goes out of scope. */
struct tr {
        ESYS_CONTEXT *esys;
        ESYS_TR h;
};

static void tr_flushp(struct tr *tr)
{
        if (tr->h != ESYS_TR_NONE)
                (void)Esys_FlushContext(tr->esys, tr->h);
        tr->h = ESYS_TR_NONE;
}

/* An ESYS_TR of a TPM object this context did not create (NV index): closed, not flushed. */
static void tr_closep(struct tr *tr)
{
        if (tr->h != ESYS_TR_NONE)
                (void)Esys_TR_Close(tr->esys, &tr->h);
}

static void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
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

static bool alg_valid(enum tpm_key_alg alg)
{
        return alg == TPM_KEY_RSA2048 || alg == TPM_KEY_ECCP256;
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
        _cleanup_(esys_freep) TPMS_CAPABILITY_DATA *cap = NULL;
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
static int public_marshal(const TPM2B_PUBLIC *pub, uint8_t **ret, size_t *ret_len)
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

/* --- EK ------------------------------------------------------------------------------------ */

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
static int ek_create(struct tpm *t, enum tpm_key_alg alg, ESYS_TR *ret, struct attest_err *err)
{
        _cleanup_(esys_freep) TPM2B_PUBLIC *out = NULL;
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

        if (!alg_valid(alg))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_ALG, "unknown key algorithm %d", alg);
        if (!t->have_ek_pub[alg]) {
                struct tr ek _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};

                r = ek_create(t, alg, &ek.h, err);
                if (r < 0)
                        return r;
        }
        r = public_marshal(&t->ek_pub[alg], ret_tpm2b_public, ret_len);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_MARSHAL, "cannot marshal the EK public area");
        return 0;
}

/* Is NV index idx defined? TPM2_GetCapability(TPM2_CAP_HANDLES) from idx. */
static int nv_defined(struct tpm *t, TPM2_HANDLE idx, struct attest_err *err)
{
        _cleanup_(esys_freep) TPMS_CAPABILITY_DATA *cap = NULL;
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
        struct tr nv _cleanup_(tr_closep) = {t->esys, ESYS_TR_NONE};
        _cleanup_(esys_freep) TPM2B_NV_PUBLIC *nvpub = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        ESYS_TR auth;
        TPMA_NV attrs;
        uint16_t size;
        size_t len;
        TSS2_RC rc;
        int r;

        if (!alg_valid(alg))
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
                _cleanup_(esys_freep) TPM2B_MAX_NV_BUFFER *data = NULL;
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

/* --- AK ------------------------------------------------------------------------------------ */

/* Restricted signing key: RSA-2048 RSASSA-SHA256 or ECC P-256 ECDSA-SHA256 (DESIGN §3 Quote). */
static void ak_template(enum tpm_key_alg alg, TPM2B_PUBLIC *ret)
{
        TPMT_PUBLIC *p = &ret->publicArea;

        memset(ret, 0, sizeof(*ret));
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                              TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                              TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
        if (alg == TPM_KEY_RSA2048) {
                TPMS_RSA_PARMS *r = &p->parameters.rsaDetail;

                p->type = TPM2_ALG_RSA;
                r->symmetric.algorithm = TPM2_ALG_NULL;
                r->scheme.scheme = TPM2_ALG_RSASSA;
                r->scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
                r->keyBits = 2048;
                r->exponent = 0;
        } else {
                TPMS_ECC_PARMS *e = &p->parameters.eccDetail;

                p->type = TPM2_ALG_ECC;
                e->symmetric.algorithm = TPM2_ALG_NULL;
                e->scheme.scheme = TPM2_ALG_ECDSA;
                e->scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
                e->curveID = TPM2_ECC_NIST_P256;
                e->kdf.scheme = TPM2_ALG_NULL;
        }
}

/* Does a loaded-from-disk public area have the AK template's type, attributes and scheme? */
static bool ak_matches_template(const TPM2B_PUBLIC *pub, enum tpm_key_alg alg)
{
        const TPMT_PUBLIC *p = &pub->publicArea;
        TPM2B_PUBLIC want;
        const TPMT_PUBLIC *w = &want.publicArea;

        ak_template(alg, &want);
        if (p->type != w->type || p->nameAlg != w->nameAlg ||
            p->objectAttributes != w->objectAttributes || p->authPolicy.size != 0)
                return false;
        if (alg == TPM_KEY_RSA2048)
                return p->parameters.rsaDetail.symmetric.algorithm == TPM2_ALG_NULL &&
                       p->parameters.rsaDetail.scheme.scheme == TPM2_ALG_RSASSA &&
                       p->parameters.rsaDetail.scheme.details.rsassa.hashAlg == TPM2_ALG_SHA256 &&
                       p->parameters.rsaDetail.keyBits == 2048 && p->unique.rsa.size == 256;
        return p->parameters.eccDetail.symmetric.algorithm == TPM2_ALG_NULL &&
               p->parameters.eccDetail.scheme.scheme == TPM2_ALG_ECDSA &&
               p->parameters.eccDetail.scheme.details.ecdsa.hashAlg == TPM2_ALG_SHA256 &&
               p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 &&
               p->unique.ecc.x.size == 32 && p->unique.ecc.y.size == 32;
}

/* A policy session satisfying the EK's policy: TPM2_StartAuthSession (Part 3, 11.1) then
 * TPM2_PolicySecret(TPM_RH_ENDORSEMENT) (Part 3, 23.4). */
static int ek_policy_session(struct tpm *t, ESYS_TR *ret, struct attest_err *err)
{
        struct tr s _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        TPMT_SYM_DEF sym = {.algorithm = TPM2_ALG_NULL};
        TSS2_RC rc;

        rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym, TPM2_ALG_SHA256, &s.h);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "starting the EK policy session");
        rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, s.h, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                               ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "PolicySecret(TPM_RH_ENDORSEMENT)");
        *ret = s.h;
        s.h = ESYS_TR_NONE;
        return 0;
}

/* TPM2_Create (Part 3, 12.1) of a new AK under the EK. */
static int ak_create(struct tpm *t, ESYS_TR ek, enum tpm_key_alg alg, TPM2B_PUBLIC *ret_pub,
                     TPM2B_PRIVATE *ret_priv, struct attest_err *err)
{
        struct tr s _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        _cleanup_(esys_freep) TPM2B_PUBLIC *pub = NULL;
        _cleanup_(esys_freep) TPM2B_PRIVATE *priv = NULL;
        TPM2B_SENSITIVE_CREATE sens = {0};
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION creation_pcr = {0};
        TPM2B_PUBLIC in;
        TSS2_RC rc;
        int r;

        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        ak_template(alg, &in);
        rc = Esys_Create(t->esys, ek, s.h, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &in, &outside,
                         &creation_pcr, &priv, &pub, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "creating the %s AK",
                                tpm_key_alg_name(alg));
        *ret_pub = *pub;
        *ret_priv = *priv;
        return 0;
}

/* TPM2_Load (Part 3, 12.2) of the AK under the EK. A TPM refusal means the blobs do not belong to
 * this TPM's EK or were altered: -EBADMSG. */
static int ak_load(struct tpm *t, ESYS_TR ek, const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv,
                   ESYS_TR *ret, struct attest_err *err)
{
        struct tr s _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        TSS2_RC rc;
        int r;

        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        rc = Esys_Load(t->esys, ek, s.h, ESYS_TR_NONE, ESYS_TR_NONE, priv, pub, ret);
        if (rc != TSS2_RC_SUCCESS) {
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_REJECTED,
                                "the TPM refused to load the AK (altered, or made by another TPM)");
        }
        return 0;
}

/* Read a whole regular file name under dirfd (util/file.h), at most max bytes. -ENOENT when
 * absent. */
static int read_at(int dirfd, const char *name, size_t max, uint8_t *buf, size_t *ret_len)
{
        int fd _cleanup_(closep) = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -errno;
        return file_read_fd(fd, name, buf, max, 0, ret_len, NULL);
}

/* Open (creating it 0700 when absent) the state directory; refuse one that is not ours or that
 * others may use: whoever can write there can swap the AK. */
static int state_dir_open(const char *dir, struct attest_err *err)
{
        struct stat st;
        int fd, e;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                e = errno;
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot create %s: %s", dir,
                                   strerror(e));
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                e = errno;
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot open %s: %s", dir,
                                   strerror(e));
        }
        if (fstat(fd, &st) < 0) {
                e = errno;
                close(fd);
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot stat %s: %s", dir,
                                   strerror(e));
        }
        if ((st.st_mode & 0077) || st.st_uid != geteuid()) {
                close(fd);
                return attest_fail(err, -EINVAL, AE_TPM_STATE_DIR,
                                   "%s (mode %04o, uid %u) must be 0700 and owned by uid %u", dir,
                                   (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                                   (unsigned)geteuid());
        }
        return fd;
}

static void ak_names(enum tpm_key_alg alg, const char **ret_pub, const char **ret_priv)
{
        *ret_pub = alg == TPM_KEY_ECCP256 ? TPM_AK_PUB_ECC : TPM_AK_PUB_RSA;
        *ret_priv = alg == TPM_KEY_ECCP256 ? TPM_AK_PRIV_ECC : TPM_AK_PRIV_RSA;
}

/* Load the saved AK files of alg: both unmarshal exactly, and the public matches the template. */
static int ak_files_read(int dirfd, const char *dir, enum tpm_key_alg alg, TPM2B_PUBLIC *ret_pub,
                         TPM2B_PRIVATE *ret_priv, struct attest_err *err)
{
        const char *pub_name, *priv_name;
        uint8_t buf[AK_FILE_MAX];
        TPM2B_PUBLIC pub = {0};
        TPM2B_PRIVATE priv = {0};
        size_t len, off = 0;
        TSS2_RC rc;
        int r;

        ak_names(alg, &pub_name, &priv_name);
        r = read_at(dirfd, pub_name, sizeof(buf), buf, &len);
        if (r < 0)
                return attest_fail(err, r == -ENOENT ? -ENOENT : -EBADMSG, AE_TPM_AK_UNREADABLE,
                                   "%s/%s: %s", dir, pub_name, strerror(-r));
        rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_CORRUPT,
                                "%s/%s: not a marshalled TPM2B_PUBLIC (%zu bytes)", dir, pub_name,
                                len);
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: %zu bytes after the TPM2B_PUBLIC", dir, pub_name,
                                   len - off);
        if (!ak_matches_template(&pub, alg))
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: not a %s AK (type, attributes or scheme differ)", dir,
                                   pub_name, tpm_key_alg_name(alg));
        off = 0;
        r = read_at(dirfd, priv_name, sizeof(buf), buf, &len);
        if (r < 0)
                return attest_fail(err, r == -ENOENT ? -ENOENT : -EBADMSG, AE_TPM_AK_UNREADABLE,
                                   "%s/%s: %s", dir, priv_name, strerror(-r));
        rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(buf, len, &off, &priv);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_CORRUPT,
                                "%s/%s: not a marshalled TPM2B_PRIVATE (%zu bytes)", dir, priv_name,
                                len);
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: %zu bytes after the TPM2B_PRIVATE", dir, priv_name,
                                   len - off);
        *ret_pub = pub;
        *ret_priv = priv;
        return 0;
}

static int ak_files_write(int dirfd, const char *dir, enum tpm_key_alg alg, const TPM2B_PUBLIC *pub,
                          const TPM2B_PRIVATE *priv, struct attest_err *err)
{
        const char *pub_name, *priv_name;
        uint8_t buf[sizeof(TPM2B_PUBLIC) + sizeof(TPM2B_PRIVATE)];
        struct file_bytes bytes;
        size_t off = 0;
        TSS2_RC rc;
        int r;

        ak_names(alg, &pub_name, &priv_name);
        rc = Tss2_MU_TPM2B_PRIVATE_Marshal(priv, buf, sizeof(buf), &off);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EINVAL, AE_NONE, "marshalling the AK private");
        /* The private first: a crash in between leaves a pub-less state that load reports. */
        bytes = FILE_BYTES(buf, off);
        r = file_write_atomic_at(dirfd, priv_name, 0600, file_bytes_read, &bytes, NULL);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_STATE_WRITE, "%s/%s: %s", dir, priv_name,
                                   strerror(-r));
        off = 0;
        rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(buf), &off);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EINVAL, AE_NONE, "marshalling the AK public");
        bytes = FILE_BYTES(buf, off);
        r = file_write_atomic_at(dirfd, pub_name, 0600, file_bytes_read, &bytes, NULL);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_STATE_WRITE, "%s/%s: %s", dir, pub_name,
                                   strerror(-r));
        return 0;
}

/* Which of the two AK files exist: bit 0 the public, bit 1 the private. */
static int ak_files_present(int dirfd, enum tpm_key_alg alg)
{
        const char *pub_name, *priv_name;
        int m = 0;

        ak_names(alg, &pub_name, &priv_name);
        if (faccessat(dirfd, pub_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                m |= 1;
        if (faccessat(dirfd, priv_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                m |= 2;
        return m;
}

/* The AK as quote_verify() takes it, so the agent checks its quotes as the verifier will. */
static int ak_verifier_view(const TPM2B_PUBLIC *pub, struct quote_ak **ret, struct attest_err *err)
{
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        int r;

        if ((r = public_marshal(pub, &buf, &len)) < 0)
                return attest_fail(err, r, AE_TPM_ERROR, "cannot marshal the AK public area");
        if ((r = quote_ak_parse(buf, len, ret, err)) < 0)
                attest_err_prefix(err, "the AK does not pass the verifier's checks");
        return r;
}

int tpm_ak_load_or_create(struct tpm *t, const char *state_dir, enum tpm_key_alg alg,
                          struct attest_err *err)
{
        struct tr ek _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        int dirfd _cleanup_(closep) = -1;
        const char *pub_name, *priv_name;
        TPM2B_PUBLIC pub;
        TPM2B_PRIVATE priv;
        ESYS_TR ak = ESYS_TR_NONE;
        struct quote_ak *q = NULL;
        int r, present = 0;

        if (!alg_valid(alg))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_ALG, "unknown key algorithm %d", alg);
        ak_names(alg, &pub_name, &priv_name);
        if (state_dir) {
                dirfd = state_dir_open(state_dir, err);
                if (dirfd < 0)
                        return dirfd;
                present = ak_files_present(dirfd, alg);
                if (present == 1 || present == 2)
                        return attest_fail(err, -EBADMSG, AE_TPM_AK_INCOMPLETE,
                                           "%s/%s exists but %s/%s is missing; not creating a "
                                           "new AK over it",
                                           state_dir, present == 1 ? pub_name : priv_name,
                                           state_dir, present == 1 ? priv_name : pub_name);
                if (present == 3) {
                        r = ak_files_read(dirfd, state_dir, alg, &pub, &priv, err);
                        if (r < 0)
                                return r;
                }
        }
        r = ek_create(t, alg, &ek.h, err);
        if (r < 0)
                return r;
        if (present == 3) {
                r = ak_load(t, ek.h, &pub, &priv, &ak, err);
                if (r < 0) {
                        attest_err_prefix(err, "%s/%s and %s", state_dir, pub_name, priv_name);
                        return r;
                }
        } else {
                r = ak_create(t, ek.h, alg, &pub, &priv, err);
                if (r < 0)
                        return r;
                if (state_dir) {
                        r = ak_files_write(dirfd, state_dir, alg, &pub, &priv, err);
                        if (r < 0)
                                return r;
                }
                r = ak_load(t, ek.h, &pub, &priv, &ak, err);
                if (r < 0)
                        return r;
        }
        OPENSSL_cleanse(&priv, sizeof(priv));
        r = ak_verifier_view(&pub, &q, err);
        if (r < 0) {
                (void)Esys_FlushContext(t->esys, ak);
                return r;
        }
        if (t->ak != ESYS_TR_NONE)
                (void)Esys_FlushContext(t->esys, t->ak);
        quote_ak_free(t->ak_q);
        t->ak = ak;
        t->ak_alg = alg;
        t->ak_pub = pub;
        t->ak_q = q;
        return 0;
}

int tpm_ak_public(struct tpm *t, uint8_t **ret_tpm2b_public, size_t *ret_len)
{
        if (t->ak == ESYS_TR_NONE)
                return -ENOENT;
        return public_marshal(&t->ak_pub, ret_tpm2b_public, ret_len);
}

/* --- Credential activation ---------------------------------------------------------------- */

int tpm_activate_credential(struct tpm *t, const uint8_t *blob, size_t blob_len,
                            const uint8_t *secret, size_t secret_len, uint8_t *ret_cred,
                            size_t *ret_len, struct attest_err *err)
{
        struct tr ek _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        struct tr s _cleanup_(tr_flushp) = {t->esys, ESYS_TR_NONE};
        _cleanup_(esys_freep) TPM2B_DIGEST *cred = NULL;
        TPM2B_ID_OBJECT id = {0};
        TPM2B_ENCRYPTED_SECRET enc = {0};
        size_t off = 0;
        TSS2_RC rc;
        int r;

        if (t->ak == ESYS_TR_NONE)
                return attest_fail(err, -EINVAL, AE_TPM_NO_AK, "no AK loaded");
        rc = Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blob_len, &off, &id);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                "credential blob (%zu bytes) is not a TPM2B_ID_OBJECT", blob_len);
        if (off != blob_len)
                return attest_fail(err, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                   "%zu bytes after the TPM2B_ID_OBJECT", blob_len - off);
        off = 0;
        rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret, secret_len, &off, &enc);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                "secret (%zu bytes) is not a TPM2B_ENCRYPTED_SECRET", secret_len);
        if (off != secret_len)
                return attest_fail(err, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                   "%zu bytes after the TPM2B_ENCRYPTED_SECRET", secret_len - off);
        r = ek_create(t, t->ak_alg, &ek.h, err);
        if (r < 0)
                return r;
        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        /* TPM2_ActivateCredential (Part 3, 12.5): the AK (ADMIN role; adminWithPolicy clear, so
         * its empty authValue) and the EK (USER role; its policy) */
        rc = Esys_ActivateCredential(t->esys, t->ak, ek.h, ESYS_TR_PASSWORD, s.h, ESYS_TR_NONE, &id,
                                     &enc, &cred);
        if (rc != TSS2_RC_SUCCESS) {
                return tpm_fail(err, rc, -EKEYREJECTED, AE_TPM_CREDENTIAL_REJECTED,
                                "ActivateCredential");
        }
        if (cred->size > TPM_CRED_MAX)
                return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE, "credential of %u bytes",
                                   cred->size);
        memcpy(ret_cred, cred->buffer, cred->size);
        *ret_len = cred->size;
        OPENSSL_cleanse(cred->buffer, cred->size);
        return 0;
}

/* --- Quote --------------------------------------------------------------------------------- */

/* Validate a selection and convert it for Esys_Quote / Esys_PCR_Read. */
static int sel_to_tpml(const struct pcr_sel *sel, TPML_PCR_SELECTION *ret)
{
        if (pcr_sel_is_empty(sel))
                return -EINVAL;
        for (int b = 0; b < BANK_COUNT; b++)
                if (sel->mask[b] >> PCR_COUNT)
                        return -EINVAL;
        pcr_sel_to_tpml(sel, ret);
        return 0;
}

static bool tpml_empty(const TPML_PCR_SELECTION *l)
{
        for (uint32_t i = 0; i < l->count; i++)
                for (unsigned j = 0; j < l->pcrSelections[i].sizeofSelect; j++)
                        if (l->pcrSelections[i].pcrSelect[j])
                                return false;
        return true;
}

/* TPM2_PCR_Read (Part 3, 22.4) of every PCR in want, in as many calls as needed (the TPM returns
 * at most 8 digests per call). -EAGAIN when the update counter moved between calls. */
static int pcrs_read(struct tpm *t, const TPML_PCR_SELECTION *want, struct pcr_set *ret,
                     uint32_t *ret_counter, struct attest_err *err)
{
        TPML_PCR_SELECTION left = *want;
        struct pcr_set s;
        uint32_t first = 0;
        bool have_first = false;

        memset(&s, 0, sizeof(s));
        while (!tpml_empty(&left)) {
                _cleanup_(esys_freep) TPML_PCR_SELECTION *got = NULL;
                _cleanup_(esys_freep) TPML_DIGEST *vals = NULL;
                uint32_t counter, k = 0;
                TSS2_RC rc;

                rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &left,
                                   &counter, &got, &vals);
                if (rc != TSS2_RC_SUCCESS)
                        return tpm_fail(err, rc, -EIO, AE_NONE, "reading PCRs");
                if (have_first && counter != first)
                        return -EAGAIN;
                first = counter;
                have_first = true;
                if (tpml_empty(got) || vals->count == 0) {
                        for (uint32_t i = 0; i < left.count; i++)
                                if (left.pcrSelections[i].pcrSelect[0] |
                                    left.pcrSelections[i].pcrSelect[1] |
                                    left.pcrSelections[i].pcrSelect[2]) {
                                        int b = bank_from_tpm_alg(left.pcrSelections[i].hash);

                                        return attest_fail(err, -EOPNOTSUPP, AE_TPM_NO_BANK,
                                                           "the TPM has no %s PCR bank active",
                                                           b >= 0 ? bank_name(b) : "?");
                                }
                }
                for (uint32_t i = 0; i < got->count; i++) {
                        const TPMS_PCR_SELECTION *g = &got->pcrSelections[i];
                        TPMS_PCR_SELECTION *l = NULL;
                        int b = bank_from_tpm_alg(g->hash);

                        for (uint32_t j = 0; j < left.count; j++)
                                if (left.pcrSelections[j].hash == g->hash)
                                        l = &left.pcrSelections[j];
                        if (b < 0 || !l || g->sizeofSelect > QUOTE_PCR_SELECT_SIZE)
                                return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE,
                                                   "PCR_Read returned a bank not asked for");
                        for (unsigned p = 0; p < PCR_COUNT; p++) {
                                uint8_t bit = (uint8_t)(1u << (p % 8));

                                if (p / 8 >= g->sizeofSelect || !(g->pcrSelect[p / 8] & bit))
                                        continue;
                                if (!(l->pcrSelect[p / 8] & bit) || k >= vals->count ||
                                    vals->digests[k].size != bank_size(b))
                                        return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE,
                                                           "PCR_Read returned an unexpected "
                                                           "%s PCR %u",
                                                           bank_name(b), p);
                                memcpy(s.v[b][p], vals->digests[k].buffer, bank_size(b));
                                s.have[b] |= 1u << p;
                                l->pcrSelect[p / 8] &= (uint8_t)~bit;
                                k++;
                        }
                }
                if (k != vals->count)
                        return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE,
                                           "PCR_Read returned %u digests for %u PCRs", vals->count,
                                           k);
        }
        *ret = s;
        *ret_counter = first;
        return 0;
}

int tpm_quote_consistent(const struct quote_ak *ak, const uint8_t *attest, size_t attest_len,
                         const uint8_t *sig, size_t sig_len, const uint8_t *nonce, size_t nonce_len,
                         const struct pcr_sel *sel, const struct pcr_set *pcrs,
                         struct attest_err *err)
{
        struct attest_err qe = {0};
        int r;

        r = quote_verify(ak, attest, attest_len, sig, sig_len, nonce, nonce_len, sel, pcrs, NULL,
                         &qe);
        if (r == 0)
                return 1;
        if (qe.code == AE_QUOTE_PCR_DIGEST)
                return 0;
        return attest_fail(err, -EIO, AE_TPM_BAD_QUOTE,
                           "the TPM's quote fails the verifier's check: %s", qe.msg);
}

int tpm_quote(struct tpm *t, const struct pcr_sel *sel, const uint8_t *nonce, size_t nonce_len,
              uint8_t **ret_attest, size_t *ret_attest_len, uint8_t **ret_sig, size_t *ret_sig_len,
              struct pcr_set *ret_pcrs, struct attest_err *err)
{
        TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_NULL}; /* the AK's own scheme */
        TPML_PCR_SELECTION tpml;
        TPM2B_DATA qualifying = {0};

        if (t->ak == ESYS_TR_NONE)
                return attest_fail(err, -EINVAL, AE_TPM_NO_AK, "no AK loaded");
        if (nonce_len == 0 || nonce_len > TPM_NONCE_MAX)
                return attest_fail(err, -EINVAL, AE_TPM_BAD_NONCE,
                                   "nonce of %zu bytes (must be 1..%d)", nonce_len, TPM_NONCE_MAX);
        if (sel_to_tpml(sel, &tpml) < 0)
                return attest_fail(err, -EINVAL, AE_TPM_BAD_SELECTION,
                                   "empty PCR selection or PCR index >= %d", PCR_COUNT);
        qualifying.size = (uint16_t)nonce_len;
        memcpy(qualifying.buffer, nonce, nonce_len);

        for (int attempt = 0; attempt < QUOTE_TRIES; attempt++) {
                _cleanup_(esys_freep) TPM2B_ATTEST *quoted = NULL;
                _cleanup_(esys_freep) TPMT_SIGNATURE *sig = NULL;
                _cleanup_free_ uint8_t *attest_buf = NULL, *sig_buf = NULL;
                struct pcr_set pcrs;
                uint32_t counter;
                size_t sig_len = 0;
                TSS2_RC rc;
                int r;

                /* The values read just before the quote serve when nothing was extended in
                 * between, those read just after when nothing was extended since: on a host
                 * that keeps measuring, one of the two windows is often quiet. */
                r = pcrs_read(t, &tpml, &pcrs, &counter, err);
                if (r < 0 && r != -EAGAIN)
                        return r;
                bool before = r == 0;
                /* TPM2_Quote (Part 3, 18.4) */
                rc = Esys_Quote(t->esys, t->ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                &qualifying, &scheme, &tpml, &quoted, &sig);
                if (rc != TSS2_RC_SUCCESS)
                        return tpm_fail(err, rc, -EIO, AE_NONE, "quoting");
                attest_buf = malloc(quoted->size ? quoted->size : 1);
                sig_buf = malloc(sizeof(TPMT_SIGNATURE));
                if (!attest_buf || !sig_buf)
                        return -ENOMEM;
                memcpy(attest_buf, quoted->attestationData, quoted->size);
                rc = Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sig_buf, sizeof(TPMT_SIGNATURE), &sig_len);
                if (rc != TSS2_RC_SUCCESS)
                        return tpm_fail(err, rc, -EIO, AE_TPM_BAD_QUOTE,
                                        "marshalling the TPM's TPMT_SIGNATURE");
                r = before ? tpm_quote_consistent(t->ak_q, attest_buf, quoted->size, sig_buf,
                                                  sig_len, nonce, nonce_len, sel, &pcrs, err)
                           : 0;
                if (r < 0)
                        return r;
                if (r == 0) { /* extended between read and quote: read again */
                        r = pcrs_read(t, &tpml, &pcrs, &counter, err);
                        if (r == -EAGAIN)
                                continue;
                        if (r < 0)
                                return r;
                        r = tpm_quote_consistent(t->ak_q, attest_buf, quoted->size, sig_buf,
                                                 sig_len, nonce, nonce_len, sel, &pcrs, err);
                        if (r < 0)
                                return r;
                }
                if (r == 0)
                        continue; /* extended before and after the quote */
                *ret_attest = TAKE_PTR(attest_buf);
                *ret_attest_len = quoted->size;
                *ret_sig = TAKE_PTR(sig_buf);
                *ret_sig_len = sig_len;
                *ret_pcrs = pcrs;
                return 0;
        }
        return attest_fail(err, -EIO, AE_TPM_PCRS_CHANGING,
                           "PCRs changed between quote and read %d times in a row", QUOTE_TRIES);
}

int tpm_pcr_extend(struct tpm *t, unsigned pcr, enum bank b, const uint8_t *digest,
                   struct attest_err *err)
{
        TPML_DIGEST_VALUES v;
        TSS2_RC rc;

        if (pcr >= PCR_COUNT || b >= BANK_COUNT)
                return attest_fail(err, -EINVAL, AE_TPM_BAD_PCR, "no PCR %u in bank %d", pcr, b);
        memset(&v, 0, sizeof(v));
        v.count = 1;
        v.digests[0].hashAlg = bank_tpm_alg(b);
        memcpy(&v.digests[0].digest, digest, bank_size(b));
        /* TPM2_PCR_Extend (Part 3, 22.2) */
        rc = Esys_PCR_Extend(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                             ESYS_TR_NONE, &v);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "extending %s PCR %u", bank_name(b), pcr);
        return 0;
}

int tpm_pcr_extend_banks(struct tpm *t, unsigned pcr, unsigned banks,
                         const uint8_t digests[BANK_COUNT][BANK_DIGEST_MAX], struct attest_err *err)
{
        TPML_DIGEST_VALUES v;
        TSS2_RC rc;

        if (pcr >= PCR_COUNT || banks == 0 || (banks & ~BANK_MASK_ALL))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_PCR, "no PCR %u in banks 0x%x", pcr,
                                   banks);
        memset(&v, 0, sizeof(v));
        for (enum bank b = 0; b < BANK_COUNT; b++) {
                if (!(banks & BANK_MASK(b)))
                        continue;
                v.digests[v.count].hashAlg = bank_tpm_alg(b);
                memcpy(&v.digests[v.count].digest, digests[b], bank_size(b));
                v.count++;
        }
        /* TPM2_PCR_Extend (Part 3, 22.2): every bank in one command, as the kernel does */
        rc = Esys_PCR_Extend(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                             ESYS_TR_NONE, &v);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "extending PCR %u", pcr);
        return 0;
}
