/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "evidence/ima-keyid.h"

static void pkey_freep(EVP_PKEY **p)
{
        EVP_PKEY_free(*p);
}

static void der_freep(unsigned char **p)
{
        OPENSSL_free(*p);
}

int ima_keyid_v2(const EVP_PKEY *k, uint32_t *ret_keyid, uint8_t ret_sha1[IMA_KEYID_SHA1_SIZE])
{
        _cleanup_(pkey_freep) EVP_PKEY *dup = NULL;
        _cleanup_(der_freep) unsigned char *der = NULL;
        const EVP_PKEY *enc = k;
        unsigned char md[IMA_KEYID_SHA1_SIZE];
        unsigned mdlen = 0;
        int n;

        switch (EVP_PKEY_get_base_id(k)) {
        case EVP_PKEY_RSA:
                break;
        case EVP_PKEY_EC:
                /* a copy, set to encode its point uncompressed: the caller's key stays as read */
                if (!(dup = EVP_PKEY_dup((EVP_PKEY *)k))) {
                        ERR_clear_error();
                        return -ENOMEM;
                }
                if (EVP_PKEY_set_utf8_string_param(
                            dup, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                            OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED) != 1) {
                        ERR_clear_error();
                        return -EINVAL;
                }
                enc = dup;
                break;
        default:
                return -EOPNOTSUPP;
        }
        /* the SubjectPublicKeyInfo's key bits: RSAPublicKey or the EC point */
        n = i2d_PublicKey(enc, &der);
        if (n <= 0) {
                ERR_clear_error();
                return -EINVAL;
        }
        if (EVP_Digest(der, (size_t)n, md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen != sizeof(md)) {
                ERR_clear_error();
                return -ENOMEM;
        }
        if (ret_sha1)
                memcpy(ret_sha1, md, sizeof(md));
        *ret_keyid =
                (uint32_t)md[16] << 24 | (uint32_t)md[17] << 16 | (uint32_t)md[18] << 8 | md[19];
        return 0;
}
