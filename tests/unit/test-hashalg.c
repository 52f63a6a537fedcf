/* SPDX-License-Identifier: MIT */
/*
 * The one hash-algorithm table (evidence/hashalg.c): every row against OpenSSL (its EVP name
 * fetched from the default or legacy provider, EVP_MD_get_size equal to the row's size) and
 * against the running kernel: a name in /proc/crypto passes; one that is not there is skipped,
 * printed and not counted, only when the kernel's config (/proc/config.gz) does not build it in
 * (CONFIG_..=y and absent fails: the table misspells it).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/provider.h>

#include "evidence/bank.h"
#include "evidence/hashalg.h"
#include "tests/unit/testutil.h"

START_TEST(test_rows_are_consistent)
{
        for (unsigned i = 0; i < HASHALG_COUNT; i++) {
                const struct hashalg *a = &hashalg_table[i];

                ck_assert_ptr_eq(hashalg_get(i), a);
                ck_assert_uint_eq(a->id, i);
                ck_assert_ptr_nonnull(a->name);
                ck_assert_uint_eq(a->name_len, strlen(a->name));
                ck_assert_uint_gt(a->size, 0);
                ck_assert_uint_le(a->size, HASHALG_SIZE_MAX);
                ck_assert_ptr_eq(hashalg_from_kernel_name(a->name, a->name_len), a);
                /* the inline lookup's names compared in place are the table's */
                ck_assert_ptr_eq(hashalg_scan_kernel_name(a->name, a->name_len), a);
                ck_assert_ptr_eq(hashalg_from_name(a->name, a->name_len), a);
                if (a->alias) {
                        /* an alias is for people: never a kernel name, so never in a log */
                        ck_assert_ptr_eq(hashalg_from_name(a->alias, strlen(a->alias)), a);
                        ck_assert_ptr_null(hashalg_from_kernel_name(a->alias, strlen(a->alias)));
                }
                if (a->tpm_alg)
                        ck_assert_ptr_eq(hashalg_from_tpm_alg(a->tpm_alg), a);
        }
        ck_assert_ptr_null(hashalg_get(HASHALG_COUNT));
        ck_assert_ptr_null(hashalg_from_tpm_alg(0));
        ck_assert_ptr_null(hashalg_from_kernel_name(LIT("SHA256")));
        ck_assert_ptr_null(hashalg_from_kernel_name(LIT("sha25")));
        ck_assert_ptr_null(hashalg_from_kernel_name(LIT("sha2566")));
        /* a prefix of a longer input is no match: the length is the caller's */
        ck_assert_ptr_null(hashalg_from_kernel_name("sha256", 5));
        /* the policy's "0 is none" (policy/runtime.c) needs md4 (0) not to be a policy's */
        ck_assert_uint_eq(hashalg_table[0].flags & HASHALG_POLICY, 0);
}
END_TEST

START_TEST(test_known_values)
{
        /* SM3: "sm3" in hash_algo_name[] since 5.6, "sm3-256" accepted from people */
        ck_assert_ptr_eq(hashalg_from_kernel_name(LIT("sm3")), &hashalg_table[HASHALG_SM3_256]);
        ck_assert_ptr_eq(hashalg_from_name(LIT("sm3-256")), &hashalg_table[HASHALG_SM3_256]);
        ck_assert_uint_eq(hashalg_table[HASHALG_SM3_256].tpm_alg, 0x0012);
        ck_assert_uint_eq(hashalg_table[HASHALG_SHA1].tpm_alg, 0x0004);
        ck_assert_uint_eq(hashalg_table[HASHALG_SHA256].tpm_alg, 0x000B);
        ck_assert_uint_eq(hashalg_table[HASHALG_SHA384].tpm_alg, 0x000C);
        ck_assert_uint_eq(hashalg_table[HASHALG_SHA512].tpm_alg, 0x000D);
        ck_assert_uint_eq(hashalg_table[HASHALG_SHA3_256].tpm_alg, 0x0027);
        /* bare hex: sha1, sha256, sha384, sha512 and no other */
        ck_assert_ptr_eq(hashalg_bare_for_size(20), &hashalg_table[HASHALG_SHA1]);
        ck_assert_ptr_eq(hashalg_bare_for_size(32), &hashalg_table[HASHALG_SHA256]);
        ck_assert_ptr_eq(hashalg_bare_for_size(48), &hashalg_table[HASHALG_SHA384]);
        ck_assert_ptr_eq(hashalg_bare_for_size(64), &hashalg_table[HASHALG_SHA512]);
        ck_assert_ptr_null(hashalg_bare_for_size(16));
        ck_assert_ptr_null(hashalg_bare_for_size(28));
        /* the banks are rows of the table */
        for (int b = 0; b < BANK_COUNT; b++) {
                const struct hashalg *a =
                        hashalg_from_kernel_name(bank_name(b), strlen(bank_name(b)));

                ck_assert_ptr_nonnull(a);
                ck_assert_uint_eq(bank_size(b), a->size);
                ck_assert_uint_eq(bank_tpm_alg(b), a->tpm_alg);
                ck_assert_int_eq(bank_from_tpm_alg(a->tpm_alg), b);
                ck_assert_int_eq(bank_from_name(a->name, a->name_len), b);
        }
        ck_assert_int_eq(bank_from_name(LIT("sm3")), -EOPNOTSUPP);
        ck_assert_int_eq(bank_from_tpm_alg(0x0012), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_sizes_match_openssl)
{
        OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();
        OSSL_PROVIDER *def, *legacy;
        unsigned checked = 0;

        ck_assert_ptr_nonnull(lib);
        /* MD4 and WHIRLPOOL live in the legacy provider (installed with libssl3) */
        def = OSSL_PROVIDER_load(lib, "default");
        legacy = OSSL_PROVIDER_load(lib, "legacy");
        ck_assert_ptr_nonnull(def);
        ck_assert_msg(legacy, "OpenSSL's legacy provider is not installed");
        for (unsigned i = 0; i < HASHALG_COUNT; i++) {
                const struct hashalg *a = &hashalg_table[i];
                EVP_MD *md;

                if (!a->evp) {
                        printf("hashalg: %s has no OpenSSL digest (none in OpenSSL 3)\n", a->name);
                        continue;
                }
                md = EVP_MD_fetch(lib, a->evp, NULL);
                ck_assert_msg(md, "%s: OpenSSL has no digest %s", a->name, a->evp);
                ck_assert_msg(EVP_MD_get_size(md) == a->size, "%s: OpenSSL size %d, table %u",
                              a->name, EVP_MD_get_size(md), a->size);
                EVP_MD_free(md);
                checked++;
        }
        printf("hashalg: %u sizes checked against OpenSSL\n", checked);
        ck_assert_uint_ge(checked, 13);
        OSSL_PROVIDER_unload(legacy);
        OSSL_PROVIDER_unload(def);
        OSSL_LIB_CTX_free(lib);
}
END_TEST

/* Is name one of /proc/crypto's "name : X" values? */
static bool proc_crypto_has(const char *name)
{
        _cleanup_free_ char *buf = malloc(1 << 20);
        FILE *f = fopen("/proc/crypto", "r");
        size_t n;
        bool found = false;

        ck_assert_ptr_nonnull(buf);
        ck_assert_msg(f, "/proc/crypto: %s", strerror(errno));
        n = fread(buf, 1, (1 << 20) - 1, f);
        fclose(f);
        buf[n] = '\0';
        for (char *line = buf; line && *line && !found;) {
                char *end = strchr(line, '\n'), *colon;

                if (end)
                        *end = '\0';
                if (strncmp(line, "name", 4) == 0 && (colon = strchr(line, ':'))) {
                        colon++;
                        while (*colon == ' ')
                                colon++;
                        found = strcmp(colon, name) == 0;
                }
                line = end ? end + 1 : NULL;
        }
        return found;
}

/*
 * The kernel option that builds each row's generic driver (crypto/Kconfig; rmd128/256/320 and
 * tgr* were removed in 5.10, their options stay unset).
 */
static const char *const kconfig[HASHALG_COUNT] = {
        [HASHALG_MD4] = "CRYPTO_MD4",
        [HASHALG_MD5] = "CRYPTO_MD5",
        [HASHALG_SHA1] = "CRYPTO_SHA1",
        [HASHALG_RIPE_MD_160] = "CRYPTO_RMD160",
        [HASHALG_SHA256] = "CRYPTO_SHA256",
        [HASHALG_SHA384] = "CRYPTO_SHA512",
        [HASHALG_SHA512] = "CRYPTO_SHA512",
        [HASHALG_SHA224] = "CRYPTO_SHA256",
        [HASHALG_RIPE_MD_128] = "CRYPTO_RMD128",
        [HASHALG_RIPE_MD_256] = "CRYPTO_RMD256",
        [HASHALG_RIPE_MD_320] = "CRYPTO_RMD320",
        [HASHALG_WP_256] = "CRYPTO_WP512",
        [HASHALG_WP_384] = "CRYPTO_WP512",
        [HASHALG_WP_512] = "CRYPTO_WP512",
        [HASHALG_TGR_128] = "CRYPTO_TGR192",
        [HASHALG_TGR_160] = "CRYPTO_TGR192",
        [HASHALG_TGR_192] = "CRYPTO_TGR192",
        [HASHALG_SM3_256] = "CRYPTO_SM3_GENERIC",
        [HASHALG_STREEBOG_256] = "CRYPTO_STREEBOG",
        [HASHALG_STREEBOG_512] = "CRYPTO_STREEBOG",
        [HASHALG_SHA3_256] = "CRYPTO_SHA3",
        [HASHALG_SHA3_384] = "CRYPTO_SHA3",
        [HASHALG_SHA3_512] = "CRYPTO_SHA3",
};

/* The running kernel's value of CONFIG_opt ('y', 'm'), 'n' when unset, 0 with no config. */
static char kconfig_value(const char *opt)
{
        char line[512], want[128];
        FILE *f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r");
        char v = 'n';
        size_t n;
        bool any = false;

        ck_assert_ptr_nonnull(f);
        n = (size_t)snprintf(want, sizeof(want), "CONFIG_%s=", opt);
        while (fgets(line, sizeof(line), f)) {
                any = true;
                if (strncmp(line, want, n) == 0)
                        v = line[n];
        }
        pclose(f);
        return any ? v : 0;
}

START_TEST(test_names_are_the_kernels)
{
        unsigned found = 0, lacking = 0;

        for (unsigned i = 0; i < HASHALG_COUNT; i++) {
                const struct hashalg *a = &hashalg_table[i];
                char v;

                ck_assert_ptr_nonnull(kconfig[i]);
                if (proc_crypto_has(a->name)) {
                        found++;
                        continue;
                }
                v = kconfig_value(kconfig[i]);
                /* built in: the kernel has it, so /proc/crypto must list it under this name */
                ck_assert_msg(v != 'y', "%s: CONFIG_%s=y but no such name in /proc/crypto", a->name,
                              kconfig[i]);
                printf("hashalg: skipped %s: not in /proc/crypto, CONFIG_%s=%c (%s)\n", a->name,
                       kconfig[i], v ? v : '?',
                       v == 'm'   ? "a module not loaded"
                       : v == 'n' ? "the running kernel lacks it"
                                  : "no /proc/config.gz");
                lacking++;
        }
        printf("hashalg: %u names found in /proc/crypto, %u skipped (not counted as passes)\n",
               found, lacking);
        /* the PCR banks' algorithms are in any kernel that runs IMA */
        ck_assert_uint_ge(found, BANK_COUNT);
        /* the old name of SM3 is no kernel crypto name */
        ck_assert(!proc_crypto_has("sm3-256"));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("hashalg");
        TCase *tc = tcase_create("hashalg");

        tcase_add_test(tc, test_rows_are_consistent);
        tcase_add_test(tc, test_known_values);
        tcase_add_test(tc, test_sizes_match_openssl);
        tcase_add_test(tc, test_names_are_the_kernels);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
