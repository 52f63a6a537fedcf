/* SPDX-License-Identifier: MIT */
/*
 * Sources: names and sizes from the kernel's crypto/hash_info.c (hash_algo_name[],
 * hash_digest_size[]); SM3 is "sm3" there since 5.6 (commit 6a30e1b1dcad, "crypto: rename
 * sm3-256 to sm3 in hash_algo_name"; the generic driver was always "sm3"), "sm3-256" before.
 * TPM_ALG_IDs from the TCG Algorithm Registry (SHA1 0x0004, SHA256 0x000B, SHA384 0x000C,
 * SHA512 0x000D, SM3_256 0x0012, SHA3_256 0x0027, SHA3_384 0x0028, SHA3_512 0x0029).
 * tests/unit/test-hashalg.c checks every size against OpenSSL and every name against the running
 * kernel's /proc/crypto.
 */
#include <string.h>

#include "evidence/hashalg.h"

#define P HASHALG_POLICY
#define B HASHALG_BARE_HEX
#define ROW(i, n, al, e, tpm, sz, fl)                                                              \
        [i] = {                                                                                    \
                .id = i,                                                                           \
                .name = n,                                                                         \
                .name_len = sizeof(n) - 1,                                                         \
                .alias = al,                                                                       \
                .evp = e,                                                                          \
                .tpm_alg = tpm,                                                                    \
                .size = sz,                                                                        \
                .flags = fl,                                                                       \
        }

const struct hashalg hashalg_table[HASHALG_COUNT] = {
        ROW(HASHALG_MD4, "md4", NULL, "MD4", 0, 16, 0),
        ROW(HASHALG_MD5, "md5", NULL, "MD5", 0, 16, P),
        ROW(HASHALG_SHA1, "sha1", NULL, "SHA1", 0x0004, 20, P | B),
        ROW(HASHALG_RIPE_MD_160, "rmd160", NULL, "RIPEMD160", 0, 20, 0),
        ROW(HASHALG_SHA256, "sha256", NULL, "SHA256", 0x000B, 32, P | B),
        ROW(HASHALG_SHA384, "sha384", NULL, "SHA384", 0x000C, 48, P | B),
        ROW(HASHALG_SHA512, "sha512", NULL, "SHA512", 0x000D, 64, P | B),
        ROW(HASHALG_SHA224, "sha224", NULL, "SHA224", 0, 28, P),
        ROW(HASHALG_RIPE_MD_128, "rmd128", NULL, NULL, 0, 16, 0),
        ROW(HASHALG_RIPE_MD_256, "rmd256", NULL, NULL, 0, 32, 0),
        ROW(HASHALG_RIPE_MD_320, "rmd320", NULL, NULL, 0, 40, 0),
        ROW(HASHALG_WP_256, "wp256", NULL, NULL, 0, 32, 0),
        ROW(HASHALG_WP_384, "wp384", NULL, NULL, 0, 48, 0),
        ROW(HASHALG_WP_512, "wp512", NULL, "WHIRLPOOL", 0, 64, 0),
        ROW(HASHALG_TGR_128, "tgr128", NULL, NULL, 0, 16, 0),
        ROW(HASHALG_TGR_160, "tgr160", NULL, NULL, 0, 20, 0),
        ROW(HASHALG_TGR_192, "tgr192", NULL, NULL, 0, 24, 0),
        /* "sm3-256": hash_algo_name[] before 5.6, accepted where a person writes a name */
        ROW(HASHALG_SM3_256, "sm3", "sm3-256", "SM3", 0x0012, 32, P),
        ROW(HASHALG_STREEBOG_256, "streebog256", NULL, NULL, 0, 32, 0),
        ROW(HASHALG_STREEBOG_512, "streebog512", NULL, NULL, 0, 64, 0),
        ROW(HASHALG_SHA3_256, "sha3-256", NULL, "SHA3-256", 0x0027, 32, P),
        ROW(HASHALG_SHA3_384, "sha3-384", NULL, "SHA3-384", 0x0028, 48, P),
        ROW(HASHALG_SHA3_512, "sha3-512", NULL, "SHA3-512", 0x0029, 64, P),
};

#undef ROW
#undef B
#undef P

const struct hashalg *hashalg_scan_kernel_name(const char *name, size_t len)
{
        /* the length first: it skips the memcmp() of most rows (the binary reader asks per
         * entry) */
        for (size_t i = 0; i < HASHALG_COUNT; i++)
                if (hashalg_table[i].name_len == len &&
                    memcmp(hashalg_table[i].name, name, len) == 0)
                        return &hashalg_table[i];
        return NULL;
}

const struct hashalg *hashalg_from_name(const char *name, size_t len)
{
        const struct hashalg *a = hashalg_from_kernel_name(name, len);

        if (a)
                return a;
        for (size_t i = 0; i < HASHALG_COUNT; i++) {
                const char *al = hashalg_table[i].alias;

                if (al && strlen(al) == len && memcmp(al, name, len) == 0)
                        return &hashalg_table[i];
        }
        return NULL;
}

const struct hashalg *hashalg_from_tpm_alg(uint16_t tpm_alg)
{
        if (tpm_alg == 0)
                return NULL;
        for (size_t i = 0; i < HASHALG_COUNT; i++)
                if (hashalg_table[i].tpm_alg == tpm_alg)
                        return &hashalg_table[i];
        return NULL;
}

const struct hashalg *hashalg_bare_for_size(size_t size)
{
        for (size_t i = 0; i < HASHALG_COUNT; i++)
                if ((hashalg_table[i].flags & HASHALG_BARE_HEX) && hashalg_table[i].size == size)
                        return &hashalg_table[i];
        return NULL;
}
