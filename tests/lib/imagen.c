/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/hex.h"
#include "tests/lib/imagen.h"

int imagen_init(struct imagen *g)
{
        memset(g, 0, sizeof(*g));
        return hasher_new(&g->h);
}

void imagen_done(struct imagen *g)
{
        free(g->bin);
        free(g->txt);
        hasher_free(g->h);
        memset(g, 0, sizeof(*g));
}

static int grow(void **p, size_t *cap, size_t need)
{
        size_t n = *cap ? *cap : 4096;
        void *q;

        if (need <= *cap)
                return 0;
        while (n < need)
                n *= 2;
        q = realloc(*p, n);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = n;
        return 0;
}

static int put_bin(struct imagen *g, const void *p, size_t n)
{
        if (grow((void **)&g->bin, &g->bin_cap, g->bin_len + n) < 0)
                return -ENOMEM;
        memcpy(g->bin + g->bin_len, p, n);
        g->bin_len += n;
        return 0;
}

static int put_u32(struct imagen *g, uint32_t v)
{
        uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

        return put_bin(g, b, 4);
}

static int put_txt(struct imagen *g, const char *p, size_t n)
{
        if (grow((void **)&g->txt, &g->txt_cap, g->txt_len + n + 1) < 0)
                return -ENOMEM;
        memcpy(g->txt + g->txt_len, p, n);
        g->txt_len += n;
        g->txt[g->txt_len] = '\0';
        return 0;
}

static int put_txt_hex(struct imagen *g, const uint8_t *p, size_t n)
{
        char *tmp = malloc(2 * n + 1);
        int e;

        if (!tmp)
                return -ENOMEM;
        hex_encode(p, n, tmp);
        e = put_txt(g, tmp, 2 * n);
        free(tmp);
        return e;
}

int imagen_fields(struct imagen *g, uint32_t pcr, const char *tmpl, const struct imagen_field *f,
                  unsigned nf, int violation)
{
        int legacy = strcmp(tmpl, "ima") == 0;
        uint8_t *data = NULL, sha1[20] = {0};
        size_t dlen = 0, cap = 0;
        char head[64];
        int e = 0;

        /* template data as hashed (legacy: digest || name padded to 256) */
        for (unsigned i = 0; i < nf; i++) {
                size_t need = dlen + 4 + (legacy ? 256 : f[i].n);

                if (grow((void **)&data, &cap, need) < 0) {
                        free(data);
                        return -ENOMEM;
                }
                if (legacy) {
                        if (f[i].id == IMA_FIELD_N) {
                                memset(data + dlen, 0, 256);
                                memcpy(data + dlen, f[i].p, f[i].n);
                                dlen += 256;
                        } else {
                                memcpy(data + dlen, f[i].p, f[i].n);
                                dlen += f[i].n;
                        }
                        continue;
                }
                uint32_t n = (uint32_t)f[i].n;
                uint8_t b[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16),
                                (uint8_t)(n >> 24)};
                memcpy(data + dlen, b, 4);
                if (f[i].n)
                        memcpy(data + dlen + 4, f[i].p, f[i].n);
                dlen += 4 + f[i].n;
        }
        if (!violation && (e = hasher_digest(g->h, BANK_SHA1, data, dlen, sha1)) < 0)
                goto out;

        /* binary entry */
        if ((e = put_u32(g, pcr)) < 0 || (e = put_bin(g, sha1, 20)) < 0 ||
            (e = put_u32(g, (uint32_t)strlen(tmpl))) < 0 ||
            (e = put_bin(g, tmpl, strlen(tmpl))) < 0)
                goto out;
        if (legacy) {
                /* digest[20] | u32 strlen(name) | name */
                for (unsigned i = 0; i < nf && e == 0; i++) {
                        size_t n = f[i].n;

                        if (f[i].id == IMA_FIELD_N) {
                                n = strnlen(f[i].p, f[i].n);
                                e = put_u32(g, (uint32_t)n);
                        }
                        if (e == 0)
                                e = put_bin(g, f[i].p, n);
                }
        } else {
                e = put_u32(g, (uint32_t)dlen);
                if (e == 0)
                        e = put_bin(g, data, dlen);
        }
        if (e < 0)
                goto out;

        /* ascii line */
        snprintf(head, sizeof(head), "%u ", pcr);
        if ((e = put_txt(g, head, strlen(head))) < 0 || (e = put_txt_hex(g, sha1, 20)) < 0 ||
            (e = put_txt(g, " ", 1)) < 0 || (e = put_txt(g, tmpl, strlen(tmpl))) < 0)
                goto out;
        for (unsigned i = 0; i < nf && e == 0; i++) {
                const uint8_t *p = f[i].p;

                if ((e = put_txt(g, " ", 1)) < 0)
                        break;
                switch (f[i].id) {
                case IMA_FIELD_D_NG:
                case IMA_FIELD_D_MODSIG: {
                        const uint8_t *nul = f[i].n ? memchr(p, '\0', f[i].n) : NULL;

                        if (!nul)
                                break;
                        e = put_txt(g, (const char *)p, (size_t)(nul - p));
                        if (e == 0)
                                e = put_txt_hex(g, nul + 1, f[i].n - (size_t)(nul - p) - 1);
                        break;
                }
                case IMA_FIELD_N:
                case IMA_FIELD_N_NG:
                        e = put_txt(g, (const char *)p, strnlen((const char *)p, f[i].n));
                        break;
                default:
                        e = put_txt_hex(g, p, f[i].n);
                        break;
                }
        }
        if (e == 0)
                e = put_txt(g, "\n", 1);
        if (e == 0)
                g->entries++;
out:
        free(data);
        return e;
}

static size_t make_dng(uint8_t *out, const char *algo, const uint8_t *d, size_t dlen)
{
        size_t a = strlen(algo);

        memcpy(out, algo, a);
        out[a] = ':';
        out[a + 1] = '\0';
        memcpy(out + a + 2, d, dlen);
        return a + 2 + dlen;
}

int imagen_ng(struct imagen *g, uint32_t pcr, const char *algo, const uint8_t *d, size_t dlen,
              const char *name)
{
        uint8_t dng[96];
        struct imagen_field f[2] = {
                {IMA_FIELD_D_NG, dng, make_dng(dng, algo, d, dlen)},
                {IMA_FIELD_N_NG, name, strlen(name) + 1},
        };

        return imagen_fields(g, pcr, "ima-ng", f, 2, 0);
}

int imagen_sig(struct imagen *g, uint32_t pcr, const uint8_t *d32, const char *name,
               const uint8_t *sig, size_t siglen)
{
        uint8_t dng[96];
        struct imagen_field f[3] = {
                {IMA_FIELD_D_NG, dng, make_dng(dng, "sha256", d32, 32)},
                {IMA_FIELD_N_NG, name, strlen(name) + 1},
                {IMA_FIELD_SIG, sig, siglen},
        };

        return imagen_fields(g, pcr, "ima-sig", f, 3, 0);
}

int imagen_buf(struct imagen *g, uint32_t pcr, const char *name, const void *buf, size_t len)
{
        uint8_t dng[96], d[32];
        int e = hasher_digest(g->h, BANK_SHA256, buf, len, d);
        struct imagen_field f[3] = {
                {IMA_FIELD_D_NG, dng, make_dng(dng, "sha256", d, 32)},
                {IMA_FIELD_N_NG, name, strlen(name) + 1},
                {IMA_FIELD_BUF, buf, len},
        };

        if (e < 0)
                return e;
        return imagen_fields(g, pcr, "ima-buf", f, 3, 0);
}

int imagen_modsig(struct imagen *g, uint32_t pcr, const uint8_t *d32, const char *name,
                  const uint8_t *sig, size_t siglen)
{
        uint8_t dng[96], dmod[96];
        struct imagen_field f[5] = {
                {IMA_FIELD_D_NG, dng, make_dng(dng, "sha256", d32, 32)},
                {IMA_FIELD_N_NG, name, strlen(name) + 1},
                {IMA_FIELD_SIG, NULL, 0},
                {IMA_FIELD_D_MODSIG, dmod, make_dng(dmod, "sha256", d32, 32)},
                {IMA_FIELD_MODSIG, sig, siglen},
        };

        return imagen_fields(g, pcr, "ima-modsig", f, 5, 0);
}

int imagen_legacy(struct imagen *g, uint32_t pcr, const uint8_t *d20, const char *name)
{
        struct imagen_field f[2] = {
                {IMA_FIELD_D, d20, 20},
                {IMA_FIELD_N, name, strlen(name) + 1},
        };

        return imagen_fields(g, pcr, "ima", f, 2, 0);
}

int imagen_violation(struct imagen *g, uint32_t pcr, const char *name)
{
        uint8_t dng[96], zero[32] = {0};
        struct imagen_field f[2] = {
                {IMA_FIELD_D_NG, dng, make_dng(dng, "sha256", zero, 32)},
                {IMA_FIELD_N_NG, name, strlen(name) + 1},
        };

        return imagen_fields(g, pcr, "ima-ng", f, 2, 1);
}
