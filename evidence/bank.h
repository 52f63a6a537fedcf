/* SPDX-License-Identifier: MIT */
/*
 * PCR banks (hash algorithms) the verifier knows, and one hashing context that fetches every
 * OpenSSL digest once and reuses a single EVP_MD_CTX (no allocation per entry).
 */
#ifndef ATTEST_BANK_H
#define ATTEST_BANK_H

#include <stddef.h>
#include <stdint.h>

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

const char *bank_name(enum bank b);
size_t bank_size(enum bank b);
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
