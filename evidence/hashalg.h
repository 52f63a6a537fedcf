/* SPDX-License-Identifier: MIT */
/*
 * The one table of hash algorithms: every name the kernel's hash_algo_name[] gives (the IMA
 * "d-ng" prefix, "sha256:" in an ima-ng line; also the kernel crypto API's name of the generic
 * driver, as /proc/crypto lists it), its number in the kernel's enum hash_algo (the hash_algo
 * byte of an IMA signature header), its TCG TPM_ALG_ID, OpenSSL's EVP name and the digest size.
 * PCR banks (evidence/bank.h), the IMA parsers, the ima.runtime policy and the Keylime importer
 * all look algorithms up here; none keeps a list of its own.
 */
#ifndef ATTEST_HASHALG_H
#define ATTEST_HASHALG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"

/* The kernel's enum hash_algo (include/uapi/linux/hash_info.h): these numbers, never others. */
enum hashalg_id {
        HASHALG_MD4 = 0,
        HASHALG_MD5 = 1,
        HASHALG_SHA1 = 2,
        HASHALG_RIPE_MD_160 = 3,
        HASHALG_SHA256 = 4,
        HASHALG_SHA384 = 5,
        HASHALG_SHA512 = 6,
        HASHALG_SHA224 = 7,
        HASHALG_RIPE_MD_128 = 8,
        HASHALG_RIPE_MD_256 = 9,
        HASHALG_RIPE_MD_320 = 10,
        HASHALG_WP_256 = 11,
        HASHALG_WP_384 = 12,
        HASHALG_WP_512 = 13,
        HASHALG_TGR_128 = 14,
        HASHALG_TGR_160 = 15,
        HASHALG_TGR_192 = 16,
        HASHALG_SM3_256 = 17,
        HASHALG_STREEBOG_256 = 18,
        HASHALG_STREEBOG_512 = 19,
        HASHALG_SHA3_256 = 20,
        HASHALG_SHA3_384 = 21,
        HASHALG_SHA3_512 = 22,
        HASHALG_COUNT,
};

#define HASHALG_SIZE_MAX 64 /* the largest digest in the table (sha512, wp512, ...) */

/* flags */
#define HASHALG_POLICY 0x1u   /* an ima.runtime policy may name it (attestd-policy(5)) */
#define HASHALG_BARE_HEX 0x2u /* a bare hex digest of 2 * size digits means this algorithm */

struct hashalg {
        enum hashalg_id id;
        const char *name;  /* hash_algo_name[] (kernel >= 5.6) and the /proc/crypto name */
        uint8_t name_len;  /* strlen(name) */
        const char *alias; /* another spelling accepted in policy text, or NULL */
        const char *evp;   /* OpenSSL's EVP_MD name, or NULL: OpenSSL has none */
        uint16_t tpm_alg;  /* TCG Algorithm Registry TPM_ALG_ID, or 0: none */
        uint8_t size;      /* digest bytes */
        uint8_t flags;     /* HASHALG_POLICY, HASHALG_BARE_HEX */
};

/* Every row, indexed by enum hashalg_id (row i has id i). */
extern const struct hashalg hashalg_table[HASHALG_COUNT];

/* The row of id, or NULL for a number outside the kernel's enum. */
static inline const struct hashalg *hashalg_get(unsigned id)
{
        return id < HASHALG_COUNT ? &hashalg_table[id] : NULL;
}
/* hashalg_from_kernel_name() through the whole table */
const struct hashalg *hashalg_scan_kernel_name(const char *name, size_t len);
/*
 * The row whose kernel name is exactly name (len bytes, not NUL-terminated): what a log's d-ng
 * prefix may be. NULL when none. Inline with the names logs carry nearly always (sha256, sha1)
 * compared first in place: the IMA readers and the runtime policy ask for every entry.
 */
static inline const struct hashalg *hashalg_from_kernel_name(const char *name, size_t len)
{
        if (len == 6 && memcmp(name, "sha256", 6) == 0)
                return &hashalg_table[HASHALG_SHA256];
        if (len == 4 && memcmp(name, "sha1", 4) == 0)
                return &hashalg_table[HASHALG_SHA1];
        return hashalg_scan_kernel_name(name, len);
}
/* As hashalg_from_kernel_name(), also taking each row's alias: for names a person wrote. */
const struct hashalg *hashalg_from_name(const char *name, size_t len);
const struct hashalg *hashalg_from_tpm_alg(uint16_t tpm_alg);
/* The HASHALG_BARE_HEX row of a digest of size bytes (20 sha1, 32 sha256, ...), or NULL. */
const struct hashalg *hashalg_bare_for_size(size_t size);

#endif
