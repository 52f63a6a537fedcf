/* SPDX-License-Identifier: MIT */
/*
 * What the files of tpm/ share and nobody else sees: the context, the one TSS2_RC conversion
 * (tpm_fail), and the cleanup helpers for ESAPI memory and transient objects.
 * tpm.c: open, close, algorithms, the TSS2_RC conversion; tpm-ek.c: the EK and its certificate;
 * tpm-ak.c: the AK (create, load, its files) and credential activation; tpm-quote.c: quotes,
 * PCR reads and extends.
 */
#ifndef TPM_INTERNAL_H
#define TPM_INTERNAL_H

#include <stdbool.h>
#include <unistd.h>

#include <tss2/tss2_esys.h>

#include "tpm/tpm.h"

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
 * refused_errno and refused_code (AE_NONE: "tpm_error") apply when the input was refused: by the
 * TPM (format-one response codes: a handle, parameter or session, Part 2 6.6) or by tpm2-tss MU
 * (bytes that do not unmarshal). TPM warnings (resources, retry) and other TPM errors, and the
 * TCTI and transport, are -EIO; allocation failures -ENOMEM.
 */
_printf_(5, 6) int tpm_fail(struct attest_err *err, TSS2_RC rc, int refused_errno,
                            enum attest_code refused_code, const char *fmt, ...);

static inline void tpm_esys_freep(void *p)
{
        Esys_Free(*(void **)p);
}

/* A transient object or session, flushed when it goes out of scope. */
struct tpm_tr {
        ESYS_CONTEXT *esys;
        ESYS_TR h;
};

static inline void tpm_tr_flushp(struct tpm_tr *tr)
{
        if (tr->h != ESYS_TR_NONE)
                (void)Esys_FlushContext(tr->esys, tr->h);
        tr->h = ESYS_TR_NONE;
}

/* An ESYS_TR of a TPM object this context did not create (NV index): closed, not flushed. */
static inline void tpm_tr_closep(struct tpm_tr *tr)
{
        if (tr->h != ESYS_TR_NONE)
                (void)Esys_TR_Close(tr->esys, &tr->h);
}

static inline bool tpm_alg_valid(enum tpm_key_alg alg)
{
        return alg == TPM_KEY_RSA2048 || alg == TPM_KEY_ECCP256;
}

/* Marshal a TPM2B_PUBLIC into a new buffer (tpm.c). */
int tpm_public_marshal(const TPM2B_PUBLIC *pub, uint8_t **ret, size_t *ret_len);

/* TPM2_CreatePrimary of the EK of alg; caches its public area in t (tpm-ek.c). */
int tpm_ek_create(struct tpm *t, enum tpm_key_alg alg, ESYS_TR *ret, struct attest_err *err);

#endif
