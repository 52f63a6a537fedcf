/* SPDX-License-Identifier: MIT */
/*
 * TPM 2.0 access for the agent and attestctl, over tpm2-tss ESAPI: endorsement key (EK)
 * certificate and public area, the attestation key (AK) kept as saved blobs in a state directory,
 * quotes, and credential activation (enrolment, docs/architecture.md §3.1). The module is split:
 * tpm.c, tpm-ek.c, tpm-ak.c, tpm-quote.c (tpm-internal.h says which holds what).
 *
 * Every TSS2_RC is turned into a negative errno (-EIO for the TPM and transport) and a message
 * with the Tss2_RC_Decode() text in err; none escapes this module.
 *
 * Error codes (err->code):
 *   -EIO         tpm_error (TSS/TPM failure, Tss2_RC_Decode text), tpm_bad_response,
 *                tpm_bad_quote, tpm_pcrs_changing, tpm_ek_cert_unreadable
 *   -ENOENT      tpm_no_ek_cert
 *   -EBADMSG     tpm_ak_unreadable, tpm_ak_corrupt, tpm_ak_incomplete, tpm_ak_rejected (the TPM
 *                refuses the saved blobs), tpm_ek_cert_not_der, tpm_bad_credential
 *   -EKEYREJECTED tpm_credential_rejected (ActivateCredential refused)
 *   -EOPNOTSUPP  tpm_no_bank (a PCR bank the TPM has not allocated)
 *   -EINVAL      tpm_bad_alg, tpm_bad_nonce, tpm_bad_selection, tpm_no_ak, tpm_state_dir
 *   -E2BIG       tpm_ek_cert_too_big
 *
 * The AK's parent is the EK of the same algorithm; swtpm 0.7's swtpm_setup --ecc provisions a
 * P-384 EK (0x01c00016, high range), for which there is no TPM_KEY_ alg yet.
 */
#ifndef TPM_TPM_H
#define TPM_TPM_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/macro.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"

struct quote_ak;

struct tpm;

enum tpm_key_alg {
        TPM_KEY_RSA2048,
        TPM_KEY_ECCP256,
        TPM_KEY_ALG_COUNT,
};

/* NV indices of the EK certificates (TCG EK Credential Profile 2.0, section 2.2.1.4). */
#define TPM_NV_EK_CERT_RSA 0x01c00002
#define TPM_NV_EK_CERT_ECC 0x01c0000a

/* The largest nonce (qualifyingData) tpm_quote() accepts: a SHA-512 digest. */
#define TPM_NONCE_MAX 64

/* Names of the AK files in the state directory, per algorithm. */
#define TPM_AK_PUB_RSA "ak-rsa.pub"
#define TPM_AK_PRIV_RSA "ak-rsa.priv"
#define TPM_AK_PUB_ECC "ak-ecc.pub"
#define TPM_AK_PRIV_ECC "ak-ecc.priv"

/* "rsa" / "ecc" */
const char *tpm_key_alg_name(enum tpm_key_alg alg);
int tpm_key_alg_from_name(const char *s, enum tpm_key_alg *ret) _wur_;

/*
 * Connect through a TCTI: "device:/dev/tpmrm0" (the default when tcti is NULL),
 * "swtpm:host=127.0.0.1,port=N", "mssim:...". Asks the TPM for its properties, so an unreachable
 * TPM fails here with -EIO.
 */
int tpm_open(const char *tcti, struct tpm **ret, struct attest_err *err) _wur_;
/* Flushes the transient objects, closes ESAPI and the TCTI. Accepts NULL; returns NULL. */
struct tpm *tpm_close(struct tpm *t);
DEFINE_CLEANUP_FUNC(struct tpm *, tpm_close)

/*
 * The EK certificate (DER) from its NV index. -ENOENT when the index is not defined or not
 * written. *ret_der is malloc'ed.
 */
int tpm_ek_cert(struct tpm *t, enum tpm_key_alg alg, uint8_t **ret_der, size_t *ret_len,
                struct attest_err *err) _wur_;

/*
 * The EK created from the standard template (TCG EK Credential Profile 2.0, templates L-1 RSA
 * 2048 and L-2 ECC P-256), as a marshalled TPM2B_PUBLIC (malloc'ed).
 */
int tpm_ek_public(struct tpm *t, enum tpm_key_alg alg, uint8_t **ret_tpm2b_public, size_t *ret_len,
                  struct attest_err *err) _wur_;

/*
 * Load the AK of alg from state_dir (TPM_AK_PUB_* and TPM_AK_PRIV_*: marshalled TPM2B_PUBLIC and
 * TPM2B_PRIVATE) under the EK of the same algorithm, or create it there when neither file exists
 * (dir created 0700, files 0600, written atomically). A restricted signing key: RSA-2048 RSASSA-
 * SHA256 or ECC P-256 ECDSA-SHA256, fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth|
 * restricted|sign. A missing, unreadable or corrupt file is an error naming it (-EBADMSG when
 * malformed); the AK is never recreated over existing files. state_dir NULL: an ephemeral AK.
 * Loading another AK replaces the current one.
 */
int tpm_ak_load_or_create(struct tpm *t, const char *state_dir, enum tpm_key_alg alg,
                          struct attest_err *err) _wur_;

/* The loaded AK as a marshalled TPM2B_PUBLIC (malloc'ed); -ENOENT before tpm_ak_load_or_create().
 */
int tpm_ak_public(struct tpm *t, uint8_t **ret_tpm2b_public, size_t *ret_len) _wur_;

/*
 * Quote sel with the AK, qualifyingData = nonce (1..TPM_NONCE_MAX bytes), with the values of the
 * same PCRs read just before the quote or, when they changed, just after it. The quote and values
 * pass tpm_quote_consistent() (the PCR update counter must not move between reads); when the
 * PCRs changed both before and after the quote, it is retried a few times (tpm_pcrs_changing).
 * ret_attest: the marshalled TPMS_ATTEST the signature covers; ret_sig: marshalled TPMT_SIGNATURE;
 * both malloc'ed. ret_pcrs: the quoted PCR values.
 */
int tpm_quote(struct tpm *t, const struct pcr_sel *sel, const uint8_t *nonce, size_t nonce_len,
              uint8_t **ret_attest, size_t *ret_attest_len, uint8_t **ret_sig, size_t *ret_sig_len,
              struct pcr_set *ret_pcrs, struct attest_err *err) _wur_;

/*
 * The agent's check of a quote its TPM just made against the PCR values it read: quote_verify()
 * (evidence/quote.h, the verifier's own check) with the AK, the nonce and the selection asked.
 * 1 when it passes; 0 when only the pcrDigest differs (a PCR was extended between the read and
 * the quote: read again); -EIO tpm_bad_quote (err carries quote_verify's message) otherwise.
 * Pure: no TPM access.
 */
int tpm_quote_consistent(const struct quote_ak *ak, const uint8_t *attest, size_t attest_len,
                         const uint8_t *sig, size_t sig_len, const uint8_t *nonce, size_t nonce_len,
                         const struct pcr_sel *sel, const struct pcr_set *pcrs,
                         struct attest_err *err) _wur_;

/* The largest credential tpm_activate_credential() returns (a TPM2B_DIGEST). */
#define TPM_CRED_MAX 64

/*
 * TPM2_ActivateCredential with the loaded AK and its parent EK: recover the credential a verifier
 * wrapped for this TPM's EK and the AK's name (TPM2_MakeCredential, evidence/credential.h
 * cred_make()). blob: marshalled TPM2B_ID_OBJECT, secret: marshalled TPM2B_ENCRYPTED_SECRET (each
 * with its size prefix). ret_cred holds TPM_CRED_MAX bytes. -EKEYREJECTED (tpm_credential_rejected)
 * when the TPM refuses: wrapped for another EK or another AK, or altered. Secret: wipe it after
 * use.
 */
int tpm_activate_credential(struct tpm *t, const uint8_t *blob, size_t blob_len,
                            const uint8_t *secret, size_t secret_len, uint8_t *ret_cred,
                            size_t *ret_len, struct attest_err *err) _wur_;

/* Extend PCR pcr of bank b with digest (bank_size(b) bytes). For tests and tools. */
int tpm_pcr_extend(struct tpm *t, unsigned pcr, enum bank b, const uint8_t *digest,
                   struct attest_err *err) _wur_;
/* Extend PCR pcr of every bank in banks (BANK_MASK()s) with digests[b], in one TPM2_PCR_Extend
 * as the kernel's IMA does. For tests and tools. */
int tpm_pcr_extend_banks(struct tpm *t, unsigned pcr, unsigned banks,
                         const uint8_t digests[BANK_COUNT][BANK_DIGEST_MAX], struct attest_err *err)
        _wur_;

#endif
