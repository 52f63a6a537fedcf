/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "evidence/bank.h"

/* TCG Algorithm Registry: TPM_ALG_SHA1 0x0004, SHA256 0x000B, SHA384 0x000C, SHA512 0x000D. */
static const struct {
        const char *name;
        size_t size;
        uint16_t tpm_alg;
} banks[BANK_COUNT] = {
        [BANK_SHA1] = {"sha1", 20, 0x0004},
        [BANK_SHA256] = {"sha256", 32, 0x000B},
        [BANK_SHA384] = {"sha384", 48, 0x000C},
        [BANK_SHA512] = {"sha512", 64, 0x000D},
};

struct hasher {
        EVP_MD *md[BANK_COUNT];
        EVP_MD_CTX *ctx;
        enum bank cur;
};

const char *bank_name(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? banks[b].name : "?";
}

size_t bank_size(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? banks[b].size : 0;
}

uint16_t bank_tpm_alg(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? banks[b].tpm_alg : 0;
}

int bank_from_name(const char *name, size_t len)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if (strlen(banks[b].name) == len && memcmp(banks[b].name, name, len) == 0)
                        return b;
        return -EOPNOTSUPP;
}

int bank_from_tpm_alg(uint16_t alg)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if (banks[b].tpm_alg == alg)
                        return b;
        return -EOPNOTSUPP;
}

int bank_mask_parse(const char *s, unsigned *ret_mask)
{
        unsigned mask = 0;

        if (strcmp(s, "all") == 0) {
                *ret_mask = BANK_MASK_ALL;
                return 0;
        }
        while (*s) {
                size_t n = strcspn(s, ",");
                int b = bank_from_name(s, n);

                if (b < 0)
                        return -EINVAL;
                mask |= BANK_MASK(b);
                s += n;
                if (*s == ',')
                        s++;
        }
        if (!mask)
                return -EINVAL;
        *ret_mask = mask;
        return 0;
}

struct hasher *hasher_free(struct hasher *h)
{
        if (!h)
                return NULL;
        for (int b = 0; b < BANK_COUNT; b++)
                EVP_MD_free(h->md[b]);
        EVP_MD_CTX_free(h->ctx);
        free(h);
        return NULL;
}

int hasher_new(struct hasher **ret)
{
        _cleanup_(hasher_freep) struct hasher *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        for (int b = 0; b < BANK_COUNT; b++) {
                h->md[b] = EVP_MD_fetch(NULL, banks[b].name, NULL);
                if (!h->md[b])
                        return -EOPNOTSUPP;
        }
        h->ctx = EVP_MD_CTX_new();
        if (!h->ctx)
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}

int hasher_begin(struct hasher *h, enum bank b)
{
        if ((unsigned)b >= BANK_COUNT)
                return -EINVAL;
        if (EVP_DigestInit_ex2(h->ctx, h->md[b], NULL) != 1)
                return -EIO;
        h->cur = b;
        return 0;
}

int hasher_update(struct hasher *h, const void *data, size_t len)
{
        return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : -EIO;
}

int hasher_end(struct hasher *h, uint8_t *out)
{
        return EVP_DigestFinal_ex(h->ctx, out, NULL) == 1 ? 0 : -EIO;
}

int hasher_digest(struct hasher *h, enum bank b, const void *data, size_t len, uint8_t *out)
{
        int e;

        if ((e = hasher_begin(h, b)) < 0 || (e = hasher_update(h, data, len)) < 0)
                return e;
        return hasher_end(h, out);
}

int hasher_extend(struct hasher *h, enum bank b, uint8_t *pcr, const uint8_t *digest)
{
        int e;

        if ((e = hasher_begin(h, b)) < 0 || (e = hasher_update(h, pcr, banks[b].size)) < 0 ||
            (e = hasher_update(h, digest, banks[b].size)) < 0)
                return e;
        return hasher_end(h, pcr);
}
