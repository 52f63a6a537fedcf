/* SPDX-License-Identifier: MIT */
/*
 * The key id of IMA/EVM signatures v2 and v3 (struct signature_v2_hdr.keyid): the last 4 bytes,
 * big-endian, of the SHA-1 of the public key bits — the content of the SubjectPublicKeyInfo's
 * BIT STRING, which is the PKCS#1 RSAPublicKey for RSA and the X9.62 point for EC. That is what
 * evmctl (ima-evm-utils' calc_keyid_v2) writes, and what the kernel finds as the end of a
 * certificate's subjectKeyIdentifier made by RFC 5280 4.2.1.2 method (1). An EC point is hashed
 * in its uncompressed form (04 | X | Y) whatever form the key was read in: the kernel takes
 * uncompressed points only, and evmctl signs with a private key whose point it encodes
 * uncompressed, so a compressed public key file of the same key still names the same id.
 */
#ifndef ATTEST_IMA_KEYID_H
#define ATTEST_IMA_KEYID_H

#include <stdint.h>

#include <openssl/types.h>

#include "util/macro.h"

#define IMA_KEYID_SHA1_SIZE 20

/*
 * The key id of k (RSA or EC; k is not changed) into *ret_keyid and, when ret_sha1 is not NULL,
 * the whole SHA-1 (RFC 5280's key identifier) into ret_sha1. -EOPNOTSUPP for another key type,
 * -EINVAL when OpenSSL cannot encode the key, -ENOMEM.
 */
int ima_keyid_v2(const EVP_PKEY *k, uint32_t *ret_keyid, uint8_t ret_sha1[IMA_KEYID_SHA1_SIZE])
        _wur_;

#endif
