/* SPDX-License-Identifier: MIT */
/*
 * PCR banks (hash algorithms) the verifier knows, and one hashing context that fetches every
 * OpenSSL digest once and reuses a single EVP_MD_CTX (no allocation per entry).
 */
#ifndef ATTEST_BANK_H
#define ATTEST_BANK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evidence/hashalg.h"
#include "util/macro.h"

enum bank {
        BANK_SHA1,
        BANK_SHA256,
        BANK_SHA384,
        BANK_SHA512,
        BANK_COUNT,
};

#define BANK_MASK(b) (1u << (b))
#define BANK_MASK_ALL ((1u << BANK_COUNT) - 1)
#define BANK_DIGEST_MAX 64
#define PCR_COUNT 24

/* The algorithm of each bank: names, sizes and TPM_ALG_IDs are evidence/hashalg.c's. */
static inline enum hashalg_id bank_alg(enum bank b)
{
        static const enum hashalg_id id[BANK_COUNT] = {
                [BANK_SHA1] = HASHALG_SHA1,
                [BANK_SHA256] = HASHALG_SHA256,
                [BANK_SHA384] = HASHALG_SHA384,
                [BANK_SHA512] = HASHALG_SHA512,
        };

        return id[b];
}

const char *bank_name(enum bank b);
/* Digest bytes of bank b, 0 for no bank. Inline: the replay asks for every digest it makes. */
static inline size_t bank_size(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? hashalg_table[bank_alg(b)].size : 0;
}

/*
 * dst = src, bank_size(b) bytes. Each size a bank has is copied as a constant: the compiler
 * turned a copy of the inline bank_size() bytes into a rep movs that cost more than the call.
 */
static inline void bank_copy(void *dst, const void *src, enum bank b)
{
        size_t n = bank_size(b);

        switch (n) {
        case 20:
                memcpy(dst, src, 20);
                break;
        case 32:
                memcpy(dst, src, 32);
                break;
        case 48:
                memcpy(dst, src, 48);
                break;
        case 64:
                memcpy(dst, src, 64);
                break;
        default:
                memcpy(dst, src, n);
                break;
        }
}
uint16_t bank_tpm_alg(enum bank b); /* TPM_ALG_SHA1 ... */
/* Bank for a name ("sha256") of len bytes, or -EOPNOTSUPP. */
int bank_from_name(const char *name, size_t len) _wur_;
int bank_from_tpm_alg(uint16_t alg) _wur_;
/* Parse "sha1,sha256" or "all" into a bank mask; -EINVAL on an unknown name. */
int bank_mask_parse(const char *s, unsigned *ret_mask) _wur_;

struct hasher;

int hasher_new(struct hasher **ret) _wur_;
struct hasher *hasher_free(struct hasher *h);
DEFINE_CLEANUP_FUNC(struct hasher *, hasher_free)

/* Streaming digest in bank b: begin, update (any number), end into out (bank_size(b) bytes). */
int hasher_begin(struct hasher *h, enum bank b) _wur_;
int hasher_update(struct hasher *h, const void *data, size_t len) _wur_;
int hasher_end(struct hasher *h, uint8_t *out) _wur_;
/* One-shot digest. */
int hasher_digest(struct hasher *h, enum bank b, const void *data, size_t len, uint8_t *out) _wur_;
/* pcr = H_b(pcr || digest), both bank_size(b) bytes. */
int hasher_extend(struct hasher *h, enum bank b, uint8_t *pcr, const uint8_t *digest) _wur_;

#endif
