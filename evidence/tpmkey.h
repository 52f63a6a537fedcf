/* SPDX-License-Identifier: MIT */
/* TPM public areas (TPMT_PUBLIC) as OpenSSL keys: the one conversion every module uses. */
#ifndef ATTEST_TPMKEY_H
#define ATTEST_TPMKEY_H

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "util/err.h"
#include "util/ossl.h"

/*
 * The public key of an RSA or ECC (NIST P-256/P-384/P-521) TPMT_PUBLIC. -EOPNOTSUPP for another
 * type or curve, -EBADMSG for a key OpenSSL refuses (e.g. a point not on the curve).
 */
int tpmkey_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct attest_err *err) _wur_;

/* OpenSSL group name and coordinate size of a TPM NIST curve; -EOPNOTSUPP for others. */
int tpmkey_curve(uint16_t curve, const char **ret_group, size_t *ret_len) _wur_;

/* Unmarshal a TPM2B_PUBLIC that must fill len exactly. */
int tpmkey_unmarshal(const uint8_t *buf, size_t len, TPM2B_PUBLIC *ret, struct attest_err *err)
        _wur_;

#endif
