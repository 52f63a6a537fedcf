/* SPDX-License-Identifier: MIT */
/*
 * TPM 2.0 quote verification (docs/architecture.md §5.3, §8): the AK public area, the quote
 * (TPMS_ATTEST) and its signature (TPMT_SIGNATURE) are untrusted bytes; quote_verify() decodes them
 * with tpm2-tss MU, checks the signature with OpenSSL and the contents against the nonce, the
 * requested PCR selection and the PCR values. Pure: no TPM, no I/O.
 *
 * Error codes (err->code), each with one errno class:
 *   -EBADMSG      quote_ak_malformed quote_ak_trailing quote_ak_key quote_attest_malformed
 *                 quote_attest_trailing quote_sig_malformed quote_sig_trailing
 *                 quote_pcr_selection_malformed quote_pcr_missing
 *   -EOPNOTSUPP   quote_ak_alg quote_ak_name_alg quote_ak_curve quote_sig_alg quote_pcr_bank
 *   -EKEYREJECTED quote_ak_attributes quote_ak_weak quote_sig_scheme quote_signature quote_magic
 *                 quote_type quote_pcr_selection quote_pcr_digest
 *   -ESTALE       quote_nonce
 *   -E2BIG        quote_ak_too_big quote_attest_too_big quote_sig_too_big (the caps below)
 *   -EINVAL       quote_invalid_argument;  -ENOMEM / -EIO  quote_internal (OpenSSL failure)
 */
#ifndef ATTEST_QUOTE_H
#define ATTEST_QUOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "util/buf.h"
#include "util/err.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"

/* Caps on the untrusted blobs (the TPM structures are far smaller). */
#define QUOTE_AK_MAX 1024
#define QUOTE_ATTEST_MAX 2048
#define QUOTE_SIG_MAX 1024
#define QUOTE_NONCE_MAX 64 /* sizeof(TPMU_HA): the largest extraData a TPM accepts */
/* sizeofSelect of every TPMS_PCR_SELECTION in a quote: 24 PCRs (PC Client PCR_SELECT_MIN). */
#define QUOTE_PCR_SELECT_SIZE 3
/* Longest TPM name: u16 nameAlg || digest. */
#define QUOTE_NAME_MAX (2 + BANK_DIGEST_MAX)

/*
 * ECDSA signatures as OpenSSL takes them: ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }
 * (RFC 3279 2.2.3) in DER. r and s are at most QUOTE_ECDSA_INT_MAX bytes without their leading
 * zeros (the order of P-384, the largest AK curve); each INTEGER is tag, length, a 0x00 when the
 * value's top bit is set, the value: short-form lengths only.
 */
#define QUOTE_ECDSA_INT_MAX 48
#define QUOTE_ECDSA_DER_MAX (2 + 2 * (2 + 1 + QUOTE_ECDSA_INT_MAX))

/*
 * A validated attestation key: restricted signing key, RSA >= 2048 or ECC NIST P-256/P-384.
 * Immutable once parsed: threads may verify with one quote_ak at the same time.
 */
struct quote_ak;

/*
 * Decode a TPM2B_PUBLIC (what tpm2_createak -u writes) and check that it is a usable AK:
 * objectAttributes fixedTPM, fixedParent, sensitiveDataOrigin, restricted, sign set and decrypt
 * clear; RSA of at least 2048 bits or ECC P-256/P-384. The bytes must be the canonical encoding
 * (re-marshalling gives them back) with nothing after.
 */
int quote_ak_parse(const uint8_t *tpm2b_public, size_t len, struct quote_ak **ret,
                   struct attest_err *err) _wur_;
struct quote_ak *quote_ak_free(struct quote_ak *ak);
DEFINE_CLEANUP_FUNC(struct quote_ak *, quote_ak_free)

/* The TPM name: u16 nameAlg (big-endian) || H_nameAlg(TPMT_PUBLIC). -E2BIG if max is too small. */
int quote_ak_name(const struct quote_ak *ak, uint8_t *out, size_t max, size_t *ret_len) _wur_;
/* The AK as an OpenSSL public key, borrowed: valid as long as ak. */
EVP_PKEY *quote_ak_pkey(const struct quote_ak *ak);
/* TPM_ALG_RSA or TPM_ALG_ECC. */
uint16_t quote_ak_type(const struct quote_ak *ak);

/*
 * Append the DER ECDSA-Sig-Value of r and s, unsigned big-endian as a TPM gives them
 * (TPMS_SIGNATURE_ECDSA signatureR/S, any number of leading zeros) to w: each INTEGER minimal
 * (X.690 8.3.2: leading zero bytes dropped, one 0x00 in front of a first byte >= 0x80, zero as the
 * single byte 0x00), the bytes i2d_ECDSA_SIG() writes for the same values. -E2BIG when r or s is
 * longer than QUOTE_ECDSA_INT_MAX bytes without its leading zeros or w has no room for the whole
 * signature; -EINVAL for a NULL value of non-zero length. w is unchanged on error.
 */
int quote_ecdsa_der(const uint8_t *r, size_t r_len, const uint8_t *s, size_t s_len, struct wb *w)
        _wur_;

struct quote_info {
        uint64_t clock; /* TPMS_CLOCK_INFO, ms */
        uint32_t reset_count, restart_count;
        bool safe;
        uint64_t firmware_version;
        struct pcr_sel sel; /* the selection the quote covers */
        enum bank hash;     /* signature scheme's hash, also the pcrDigest's */
        uint16_t sig_alg;   /* TPM_ALG_RSASSA, TPM_ALG_RSAPSS or TPM_ALG_ECDSA */
};

/*
 * Verify a quote: the one quote check, used by the verifier on evidence and by the agent on the
 * quote its TPM just made (agent/tpm.c tpm_quote_consistent()). attest: the marshalled TPMS_ATTEST
 * (tpm2_quote -m) or a TPM2B_ATTEST (u16 size prefix, detected); sig: the marshalled TPMT_SIGNATURE
 * (tpm2_quote -s, tss format). Checks, in this order: both decode exactly (Tss2_MU, nothing
 * after); the signature over the TPMS_ATTEST bytes with the AK (RSASSA-PKCS1-v1_5, RSAPSS or
 * ECDSA, the scheme's hash: SHA-256/384/512); magic TPM_GENERATED_VALUE; type
 * TPM_ST_ATTEST_QUOTE; extraData == nonce; every entry of the quoted PCR selection has sizeofSelect
 * QUOTE_PCR_SELECT_SIZE, a known bank, no PCR >= 24, no bank twice; the selection equals *expected
 * (any selection when expected is NULL); pcrs holds every selected value; pcrDigest == H(selected
 * values in TPML_PCR_SELECTION order, ascending PCR index per entry) with the signature's hash
 * (quote_pcr_digest: the one failure that can mean "the PCRs moved after they were read").
 * Returns 0 and fills *ret (optional) only when every check passes; otherwise a negative errno and
 * err names the check with expected vs got.
 */
int quote_verify(const struct quote_ak *ak, const uint8_t *attest, size_t attest_len,
                 const uint8_t *sig, size_t sig_len, const uint8_t *nonce, size_t nonce_len,
                 const struct pcr_sel *expected, const struct pcr_set *pcrs, struct quote_info *ret,
                 struct attest_err *err) _wur_;

#endif
