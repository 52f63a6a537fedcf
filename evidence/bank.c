/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "evidence/bank.h"
#include "evidence/hashalg.h"

static const struct hashalg *bank_hashalg(enum bank b)
{
        return &hashalg_table[bank_alg(b)];
}

/*
 * The digest functions of the provider that EVP_MD_fetch() chose for a bank, called directly on
 * one provider context made once. OpenSSL 3.0's EVP_DigestInit_ex2() looks for an ENGINE and
 * frees and allocates provider state on every call, which cost about as much as the SHA-1 of a
 * typical IMA entry (two digests per entry in a replay); this skips nothing but that bookkeeping:
 * the same provider (default, FIPS, ...) computes the digest. A bank whose provider does not
 * hand out its functions goes through EVP.
 */
struct prov_digest {
        void *ctx; /* NULL: use EVP */
        OSSL_FUNC_digest_init_fn *init;
        OSSL_FUNC_digest_update_fn *update;
        OSSL_FUNC_digest_final_fn *final;
        OSSL_FUNC_digest_freectx_fn *freectx;
};

struct hasher {
        EVP_MD *md[BANK_COUNT]; /* also keeps the providers of pd[] loaded */
        struct prov_digest pd[BANK_COUNT];
        EVP_MD_CTX *ctx;
        enum bank cur;
};

const char *bank_name(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? bank_hashalg(b)->name : "?";
}

uint16_t bank_tpm_alg(enum bank b)
{
        return (unsigned)b < BANK_COUNT ? bank_hashalg(b)->tpm_alg : 0;
}

static int bank_of(const struct hashalg *a)
{
        if (a)
                for (int b = 0; b < BANK_COUNT; b++)
                        if (bank_alg((enum bank)b) == a->id)
                                return b;
        return -EOPNOTSUPP;
}

/* the kernel's names only: a bank is named as the IMA log and /proc/crypto name it */
int bank_from_name(const char *name, size_t len)
{
        return bank_of(hashalg_from_kernel_name(name, len));
}

int bank_from_tpm_alg(uint16_t alg)
{
        return bank_of(hashalg_from_tpm_alg(alg));
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

/* Does the ':'-separated name list of a provider algorithm hold name (any case)? */
static bool names_have(const char *names, const char *name)
{
        size_t n = strlen(name);

        for (const char *p = names; p && *p;) {
                size_t len = strcspn(p, ":");

                if (len == n && strncasecmp(p, name, n) == 0)
                        return true;
                p += len;
                if (*p == ':')
                        p++;
        }
        return false;
}

/* Find md's functions in its provider; on any miss pd stays empty and EVP is used. */
static void prov_digest_init(struct prov_digest *pd, const EVP_MD *md)
{
        const OSSL_PROVIDER *prov = EVP_MD_get0_provider(md);
        const char *name = EVP_MD_get0_name(md);
        const OSSL_ALGORITHM *algs;
        OSSL_FUNC_digest_newctx_fn *newctx = NULL;
        struct prov_digest d = {0};
        int no_cache = 0;

        if (!prov || !name)
                return;
        algs = OSSL_PROVIDER_query_operation(prov, OSSL_OP_DIGEST, &no_cache);
        for (const OSSL_ALGORITHM *a = algs; a && a->algorithm_names; a++) {
                if (!names_have(a->algorithm_names, name))
                        continue;
                for (const OSSL_DISPATCH *f = a->implementation; f && f->function_id; f++) {
                        switch (f->function_id) {
                        case OSSL_FUNC_DIGEST_NEWCTX:
                                newctx = OSSL_FUNC_digest_newctx(f);
                                break;
                        case OSSL_FUNC_DIGEST_INIT:
                                d.init = OSSL_FUNC_digest_init(f);
                                break;
                        case OSSL_FUNC_DIGEST_UPDATE:
                                d.update = OSSL_FUNC_digest_update(f);
                                break;
                        case OSSL_FUNC_DIGEST_FINAL:
                                d.final = OSSL_FUNC_digest_final(f);
                                break;
                        case OSSL_FUNC_DIGEST_FREECTX:
                                d.freectx = OSSL_FUNC_digest_freectx(f);
                                break;
                        }
                }
                break;
        }
        if (algs)
                OSSL_PROVIDER_unquery_operation(prov, OSSL_OP_DIGEST, algs);
        if (!newctx || !d.init || !d.update || !d.final || !d.freectx)
                return;
        d.ctx = newctx(OSSL_PROVIDER_get0_provider_ctx(prov));
        if (d.ctx)
                *pd = d;
}

struct hasher *hasher_free(struct hasher *h)
{
        if (!h)
                return NULL;
        for (int b = 0; b < BANK_COUNT; b++) {
                if (h->pd[b].ctx)
                        h->pd[b].freectx(h->pd[b].ctx);
                EVP_MD_free(h->md[b]);
        }
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
                h->md[b] = EVP_MD_fetch(NULL, bank_hashalg(b)->evp, NULL);
                if (!h->md[b])
                        return -EOPNOTSUPP;
                prov_digest_init(&h->pd[b], h->md[b]);
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
        h->cur = b;
        if (h->pd[b].ctx)
                return h->pd[b].init(h->pd[b].ctx, NULL) == 1 ? 0 : -EIO;
        if (EVP_DigestInit_ex2(h->ctx, h->md[b], NULL) != 1)
                return -EIO;
        return 0;
}

int hasher_update(struct hasher *h, const void *data, size_t len)
{
        const struct prov_digest *pd = &h->pd[h->cur];

        if (pd->ctx)
                return len == 0 || pd->update(pd->ctx, data, len) == 1 ? 0 : -EIO;
        return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : -EIO;
}

int hasher_end(struct hasher *h, uint8_t *out)
{
        const struct prov_digest *pd = &h->pd[h->cur];
        size_t n = 0;

        if (pd->ctx) {
                if (pd->final(pd->ctx, out, &n, bank_size(h->cur)) != 1 || n != bank_size(h->cur))
                        return -EIO;
                return 0;
        }
        return EVP_DigestFinal_ex(h->ctx, out, NULL) == 1 ? 0 : -EIO;
}

/*
 * One digest through the provider's functions without hasher_begin/update/end between: the
 * replay makes two per entry (template hash, extend), each a few hundred bytes at most, so the
 * calls around them are a share of the cost.
 */
int hasher_digest(struct hasher *h, enum bank b, const void *data, size_t len, uint8_t *out)
{
        const struct prov_digest *pd;
        size_t n = 0;
        int e;

        if ((unsigned)b >= BANK_COUNT)
                return -EINVAL;
        pd = &h->pd[b];
        if (!pd->ctx) {
                if ((e = hasher_begin(h, b)) < 0 || (e = hasher_update(h, data, len)) < 0)
                        return e;
                return hasher_end(h, out);
        }
        h->cur = b;
        if (pd->init(pd->ctx, NULL) != 1 || (len && pd->update(pd->ctx, data, len) != 1) ||
            pd->final(pd->ctx, out, &n, bank_size(b)) != 1 || n != bank_size(b))
                return -EIO;
        return 0;
}

/* pcr || digest in one buffer: one update of 2 * size bytes, not two. */
int hasher_extend(struct hasher *h, enum bank b, uint8_t *pcr, const uint8_t *digest)
{
        uint8_t buf[2 * BANK_DIGEST_MAX];
        size_t n;

        if ((unsigned)b >= BANK_COUNT)
                return -EINVAL;
        n = bank_size(b);
        bank_copy(buf, pcr, b);
        bank_copy(buf + n, digest, b);
        return hasher_digest(h, b, buf, 2 * n, pcr);
}
