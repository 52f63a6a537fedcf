/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "evidence/ekcert.h"
#include "evidence/tpmkey.h"
#include "util/ossl.h"

static bool has_suffix(const char *s, const char *suf)
{
        size_t n = strlen(s), m = strlen(suf);

        return n > m && strcmp(s + n - m, suf) == 0;
}

/* Add every certificate of a PEM file; returns how many. */
static int add_pem(X509_STORE *st, const char *path)
{
        FILE *f = fopen(path, "re");
        X509 *c;
        int n = 0;

        if (!f)
                return -errno;
        while ((c = PEM_read_X509(f, NULL, NULL, NULL))) {
                if (X509_STORE_add_cert(st, c) == 1)
                        n++;
                X509_free(c);
        }
        ERR_clear_error();
        fclose(f);
        return n;
}

static int load_store(const char *ca, X509_STORE *st)
{
        struct stat sb;
        int total = 0;

        if (stat(ca, &sb) < 0)
                return -errno;
        if (!S_ISDIR(sb.st_mode))
                return add_pem(st, ca);
        DIR *d = opendir(ca);
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char path[4096];

                if (!has_suffix(de->d_name, ".pem") && !has_suffix(de->d_name, ".crt"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", ca, de->d_name);
                int n = add_pem(st, path);
                if (n > 0)
                        total += n;
        }
        closedir(d);
        return total;
}

int ekcert_verify(const uint8_t *der, size_t der_len, const char *ca, const uint8_t *ek_pub,
                  size_t ek_pub_len, struct attest_err *err)
{
        _cleanup_(X509_freep) X509 *cert = NULL;
        _cleanup_(X509_STORE_freep) X509_STORE *st = X509_STORE_new();
        _cleanup_(X509_STORE_CTX_freep) X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *ek = NULL;
        const unsigned char *p = der;
        TPM2B_PUBLIC pub;
        EVP_PKEY *ck;
        int x;

        if (!st || !ctx)
                return -ENOMEM;
        if (der_len == 0 || der_len > EKCERT_MAX)
                return attest_fail(err, -EBADMSG, AE_EK_CERT_MALFORMED,
                                   "EK certificate of %zu bytes", der_len);
        cert = d2i_X509(NULL, &p, (long)der_len);
        if (!cert || p != der + der_len) {
                ERR_clear_error();
                return attest_fail(err, -EBADMSG, AE_EK_CERT_MALFORMED,
                                   "EK certificate is not one DER X.509 certificate");
        }
        if ((x = load_store(ca, st)) <= 0)
                return attest_fail(err, -EINVAL, AE_EK_CA_UNREADABLE,
                                   "no CA certificate could be read from %s", ca);
        if (X509_STORE_CTX_init(ctx, st, cert, NULL) != 1)
                return -ENOMEM;
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_ANY);
        if (X509_verify_cert(ctx) != 1) {
                int e = X509_STORE_CTX_get_error(ctx);

                ERR_clear_error();
                return attest_fail(err, -EKEYREJECTED, AE_EK_CERT_UNTRUSTED,
                                   "EK certificate does not chain to the EK CA: %s",
                                   X509_verify_cert_error_string(e));
        }
        if ((x = tpmkey_unmarshal(ek_pub, ek_pub_len, &pub, err)) < 0 ||
            (x = tpmkey_pkey(&pub.publicArea, &ek, err)) < 0)
                return x;
        ck = X509_get0_pubkey(cert);
        if (!ck || EVP_PKEY_eq(ck, ek) != 1) {
                ERR_clear_error();
                return attest_fail(err, -EKEYREJECTED, AE_EK_CERT_MISMATCH,
                                   "EK certificate is for another key than the EK presented");
        }
        return 0;
}
