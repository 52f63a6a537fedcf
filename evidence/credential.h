/* SPDX-License-Identifier: MIT */
/*
 * TPM2 MakeCredential done by the verifier in software (TPM 2.0 Library Part 1, "Credential
 * Protection"; Part 3, TPM2_MakeCredential): a secret is wrapped so that only the TPM holding the
 * EK can recover it, and only for the key whose Name is given (the AK). ActivateCredential on the
 * agent's TPM returning the secret proves the AK lives beside the EK.
 */
#ifndef ATTEST_CREDENTIAL_H
#define ATTEST_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define CRED_SECRET_MAX 64      /* credential (TPM2B_DIGEST) bytes */
#define CRED_BLOB_MAX 256       /* TPM2B_ID_OBJECT, marshalled with its size */
#define CRED_ENC_SECRET_MAX 520 /* TPM2B_ENCRYPTED_SECRET, marshalled with its size */

struct credential {
        uint8_t blob[CRED_BLOB_MAX]; /* TPM2B_ID_OBJECT */
        size_t blob_len;
        uint8_t secret[CRED_ENC_SECRET_MAX]; /* TPM2B_ENCRYPTED_SECRET */
        size_t secret_len;
};

/*
 * Wrap cred (1..CRED_SECRET_MAX bytes) for the EK whose marshalled TPM2B_PUBLIC is ek_pub and the
 * object whose TPM Name (nameAlg || digest) is name. The EK must be a restricted decryption key
 * with an AES-CFB symmetric and an RSA (OAEP, label "IDENTITY") or ECC (ECDH, KDFe) scheme.
 * -EBADMSG on a malformed EK, -EOPNOTSUPP on an unsupported one, -EIO on a crypto failure.
 */
int cred_make(const uint8_t *ek_pub, size_t ek_pub_len, const uint8_t *name, size_t name_len,
              const uint8_t *cred, size_t cred_len, struct credential *ret, struct attest_err *err)
        _wur_;

/* KDFa and KDFe of Part 1 §11.4.10, exposed for the tests; hash is "SHA256" etc. */
int cred_kdfa(const char *hash, const uint8_t *key, size_t key_len, const char *label,
              const uint8_t *u, size_t u_len, const uint8_t *v, size_t v_len, uint32_t bits,
              uint8_t *out) _wur_;
int cred_kdfe(const char *hash, const uint8_t *z, size_t z_len, const char *label, const uint8_t *u,
              size_t u_len, const uint8_t *v, size_t v_len, uint32_t bits, uint8_t *out) _wur_;

#endif
