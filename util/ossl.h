/* SPDX-License-Identifier: MIT */
/*
 * _cleanup_ helpers for the OpenSSL objects the tree holds: _cleanup_(EVP_PKEY_freep) EVP_PKEY *k
 * = NULL; each calls the OpenSSL free function when the pointer is not NULL. The one place they
 * are defined: a module adds a type here rather than writing its own wrapper. Header only (static
 * inline, emitted only where used), so util itself does not link OpenSSL.
 */
#ifndef ATTEST_OSSL_H
#define ATTEST_OSSL_H

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "util/macro.h"

DEFINE_CLEANUP_FUNC(BIO *, BIO_free)
DEFINE_CLEANUP_FUNC(BIGNUM *, BN_free)
DEFINE_CLEANUP_FUNC(EVP_PKEY *, EVP_PKEY_free)
DEFINE_CLEANUP_FUNC(EVP_PKEY_CTX *, EVP_PKEY_CTX_free)
DEFINE_CLEANUP_FUNC(EVP_MD_CTX *, EVP_MD_CTX_free)
DEFINE_CLEANUP_FUNC(EVP_MAC *, EVP_MAC_free)
DEFINE_CLEANUP_FUNC(EVP_MAC_CTX *, EVP_MAC_CTX_free)
DEFINE_CLEANUP_FUNC(EVP_CIPHER_CTX *, EVP_CIPHER_CTX_free)
DEFINE_CLEANUP_FUNC(OSSL_PARAM_BLD *, OSSL_PARAM_BLD_free)
DEFINE_CLEANUP_FUNC(OSSL_PARAM *, OSSL_PARAM_free)
DEFINE_CLEANUP_FUNC(X509 *, X509_free)
DEFINE_CLEANUP_FUNC(X509_STORE *, X509_STORE_free)
DEFINE_CLEANUP_FUNC(X509_STORE_CTX *, X509_STORE_CTX_free)

#endif
