/* SPDX-License-Identifier: MIT */
/*
 * EK certificates: the chain to the TPM manufacturer CAs the verifier trusts, and the binding of
 * the certificate's key to the EK public area the agent presents.
 */
#ifndef ATTEST_EKCERT_H
#define ATTEST_EKCERT_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define EKCERT_MAX 8192

/*
 * Verify the DER certificate against ca (a PEM file, or a directory whose *.pem / *.crt files
 * are all trusted), then check that its public key is the EK of ek_pub (TPM2B_PUBLIC). TCG EK
 * certificates carry no extended key usage; any purpose is accepted. Errors:
 * -EBADMSG malformed certificate, -EKEYREJECTED chain or key mismatch (err says which), -EINVAL
 * unreadable CA bundle.
 */
int ekcert_verify(const uint8_t *der, size_t der_len, const char *ca, const uint8_t *ek_pub,
                  size_t ek_pub_len, struct attest_err *err) _wur_;

#endif
