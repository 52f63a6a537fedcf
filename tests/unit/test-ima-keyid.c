/* SPDX-License-Identifier: MIT */
/*
 * The IMA signature key id (evidence/ima-keyid.c) against evmctl's: a file signed by
 * `evmctl ima_sign --sigfile --key PRIVATE` carries evmctl's key id in bytes 3-6 of its signature
 * header (03 | 02 | hash_algo | keyid | size). An RSA key and a prime256v1 key, the EC public
 * key read from both its uncompressed and its compressed SubjectPublicKeyInfo, must give that id.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "evidence/ima-keyid.h"
#include "tests/unit/testutil.h"

extern char **environ;

/* evmctl's key id for private key k: sign a file in dir, read the .sig header */
static uint32_t evmctl_keyid(EVP_PKEY *k, const char *dir)
{
        char key[128], file[128], sig[160];
        char *argv[] = {"evmctl", "ima_sign", "--sigfile", "--key", key,
                        "-a",     "sha256",   file,        NULL};
        posix_spawn_file_actions_t fa;
        uint8_t h[9];
        FILE *f;
        pid_t pid;
        int st = 0;

        snprintf(key, sizeof(key), "%s/key.pem", dir);
        snprintf(file, sizeof(file), "%s/file", dir);
        snprintf(sig, sizeof(sig), "%s/file.sig", dir);
        ck_assert_ptr_nonnull(f = fopen(key, "w"));
        ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
        fclose(f);
        ck_assert_ptr_nonnull(f = fopen(file, "w"));
        fputs("signed by evmctl\n", f);
        fclose(f);
        unlink(sig);
        ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
        ck_assert_int_eq(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
        ck_assert_int_eq(posix_spawnp(&pid, "evmctl", &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evmctl ima_sign failed");
        ck_assert_ptr_nonnull(f = fopen(sig, "r"));
        ck_assert_uint_eq(fread(h, 1, sizeof(h), f), sizeof(h));
        fclose(f);
        /* EVM_IMA_XATTR_DIGSIG, DIGSIG_VERSION_2, HASH_ALGO_SHA256 */
        ck_assert_uint_eq(h[0], 3);
        ck_assert_uint_eq(h[1], 2);
        ck_assert_uint_eq(h[2], 4);
        unlink(sig);
        unlink(file);
        unlink(key);
        return (uint32_t)h[3] << 24 | (uint32_t)h[4] << 16 | (uint32_t)h[5] << 8 | h[6];
}

/* k's public key alone, as a SubjectPublicKeyInfo encoded in form (EC) and read back */
static EVP_PKEY *public_copy(EVP_PKEY *k, const char *form, uint8_t *ret_first)
{
        EVP_PKEY *dup = EVP_PKEY_dup(k), *pub;
        unsigned char *der = NULL, *bits = NULL;
        const unsigned char *q;
        int n;

        ck_assert_ptr_nonnull(dup);
        if (form)
                ck_assert_int_eq(EVP_PKEY_set_utf8_string_param(
                                         dup, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, form),
                                 1);
        ck_assert_int_gt(n = i2d_PUBKEY(dup, &der), 0);
        q = der;
        ck_assert_ptr_nonnull(pub = d2i_PUBKEY(NULL, &q, n));
        ck_assert_int_gt(i2d_PublicKey(pub, &bits), 0);
        *ret_first = bits[0];
        OPENSSL_free(bits);
        OPENSSL_free(der);
        EVP_PKEY_free(dup);
        return pub;
}

/* SHA-1 of the key bits exactly as read: what a key id computed without forcing the form is */
static uint32_t naive_keyid(const EVP_PKEY *k)
{
        unsigned char *der = NULL, md[20];
        int n = i2d_PublicKey(k, &der);

        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(EVP_Digest(der, (size_t)n, md, NULL, EVP_sha1(), NULL), 1);
        OPENSSL_free(der);
        return (uint32_t)md[16] << 24 | (uint32_t)md[17] << 16 | (uint32_t)md[18] << 8 | md[19];
}

static char dir[64];

static void make_dir(void)
{
        snprintf(dir, sizeof(dir), "/tmp/attestd-keyid.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

START_TEST(test_rsa_key_id_is_evmctls)
{
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048), *pub;
        uint8_t sha1[IMA_KEYID_SHA1_SIZE], first;
        uint32_t want, got = 0, got2 = 0;

        make_dir();
        ck_assert_ptr_nonnull(k);
        want = evmctl_keyid(k, dir);
        pub = public_copy(k, NULL, &first);
        ck_assert_int_eq(ima_keyid_v2(pub, &got, sha1), 0);
        ck_assert_uint_eq(got, want);
        ck_assert_uint_eq((uint32_t)sha1[16] << 24 | (uint32_t)sha1[17] << 16 |
                                  (uint32_t)sha1[18] << 8 | sha1[19],
                          want);
        ck_assert_int_eq(ima_keyid_v2(k, &got2, NULL), 0);
        ck_assert_uint_eq(got2, want);
        EVP_PKEY_free(pub);
        EVP_PKEY_free(k);
        rmdir(dir);
}
END_TEST

START_TEST(test_ec_key_id_is_evmctls_in_either_encoding)
{
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "prime256v1"), *unc, *cmp;
        uint8_t first, before, after;
        uint32_t want, got = 0;

        make_dir();
        ck_assert_ptr_nonnull(k);
        want = evmctl_keyid(k, dir);

        unc = public_copy(k, OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED, &first);
        ck_assert_uint_eq(first, 0x04);
        ck_assert_int_eq(ima_keyid_v2(unc, &got, NULL), 0);
        ck_assert_uint_eq(got, want);

        cmp = public_copy(k, OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_COMPRESSED, &before);
        ck_assert(before == 0x02 || before == 0x03);
        /* hashing the point as read would give another id: the form must be forced */
        ck_assert_uint_ne(naive_keyid(cmp), want);
        got = 0;
        ck_assert_int_eq(ima_keyid_v2(cmp, &got, NULL), 0);
        ck_assert_uint_eq(got, want);
        /* and the caller's key is left as it was read */
        {
                unsigned char *bits = NULL;

                ck_assert_int_gt(i2d_PublicKey(cmp, &bits), 0);
                after = bits[0];
                OPENSSL_free(bits);
        }
        ck_assert_uint_eq(after, before);

        EVP_PKEY_free(cmp);
        EVP_PKEY_free(unc);
        EVP_PKEY_free(k);
        rmdir(dir);
}
END_TEST

START_TEST(test_other_key_types_are_refused)
{
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
        uint32_t got = 0x12345678;

        ck_assert_ptr_nonnull(k);
        ck_assert_int_eq(ima_keyid_v2(k, &got, NULL), -EOPNOTSUPP);
        ck_assert_uint_eq(got, 0x12345678);
        EVP_PKEY_free(k);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("ima-keyid");
        TCase *tc = tcase_create("ima-keyid");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_rsa_key_id_is_evmctls);
        tcase_add_test(tc, test_ec_key_id_is_evmctls_in_either_encoding);
        tcase_add_test(tc, test_other_key_types_are_refused);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
