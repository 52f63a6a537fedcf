/* SPDX-License-Identifier: MIT */
/* Quotes with the AK over a PCR selection, the PCR reads that go with them, and PCR extends (for
 * tests and tools). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "tpm/tpm-internal.h"
#include "evidence/quote.h"

#define QUOTE_TRIES 5 /* PCRs changing between quote and read: retries */

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
                _cleanup_(tpm_esys_freep) TPML_PCR_SELECTION *got = NULL;
                _cleanup_(tpm_esys_freep) TPML_DIGEST *vals = NULL;
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
                _cleanup_(tpm_esys_freep) TPM2B_ATTEST *quoted = NULL;
                _cleanup_(tpm_esys_freep) TPMT_SIGNATURE *sig = NULL;
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
