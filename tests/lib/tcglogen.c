/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "tests/lib/tcglogen.h"

static void grow(struct tlg *g, size_t n)
{
        if (g->cap - g->len >= n)
                return;
        while (g->cap - g->len < n)
                g->cap = g->cap ? 2 * g->cap : 4096;
        g->buf = realloc(g->buf, g->cap);
        if (!g->buf)
                abort();
}

void tlg_raw(struct tlg *g, const void *p, size_t n)
{
        grow(g, n);
        if (n)
                memcpy(g->buf + g->len, p, n);
        g->len += n;
}

void tlg_u16(struct tlg *g, uint16_t v)
{
        uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

        tlg_raw(g, b, 2);
}

void tlg_u32(struct tlg *g, uint32_t v)
{
        uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

        tlg_raw(g, b, 4);
}

void tlg_u64(struct tlg *g, uint64_t v)
{
        tlg_u32(g, (uint32_t)v);
        tlg_u32(g, (uint32_t)(v >> 32));
}

void tlg_begin(struct tlg *g, const uint16_t *algs, const uint16_t *sizes, unsigned n)
{
        static const uint16_t da[] = {0x0004, 0x000b}, ds[] = {20, 32};
        static const uint8_t zeros[20];

        memset(g, 0, sizeof(*g));
        if (!n) {
                algs = da;
                sizes = ds;
                n = 2;
        }
        g->n_algs = n;
        for (unsigned i = 0; i < n && i < 16; i++) {
                g->alg[i] = algs[i];
                g->size[i] = sizes[i];
        }
        tlg_u32(g, 0);
        tlg_u32(g, 3); /* EV_NO_ACTION */
        tlg_raw(g, zeros, 20);
        tlg_u32(g, 16 + 4 + 4 + 4 + 4 * n + 1);
        tlg_raw(g, "Spec ID Event03", 16);
        tlg_u32(g, 0);
        tlg_raw(g, "\x00\x02\x00\x02", 4); /* minor 0, major 2, errata 0, uintnSize 2 */
        tlg_u32(g, n);
        for (unsigned i = 0; i < n; i++) {
                tlg_u16(g, algs[i]);
                tlg_u16(g, sizes[i]);
        }
        tlg_raw(g, "", 1); /* vendorInfoSize 0 */
}

void tlg_free(struct tlg *g)
{
        free(g->buf);
        memset(g, 0, sizeof(*g));
}

static const EVP_MD *md(uint16_t alg)
{
        switch (alg) {
        case 0x0004:
                return EVP_sha1();
        case 0x000b:
                return EVP_sha256();
        case 0x000c:
                return EVP_sha384();
        case 0x000d:
                return EVP_sha512();
        default:
                return NULL;
        }
}

void tlg_event_of(struct tlg *g, uint32_t pcr, uint32_t type, const void *data, size_t n,
                  const void *content, size_t cn)
{
        tlg_u32(g, pcr);
        tlg_u32(g, type);
        tlg_u32(g, g->n_algs);
        for (unsigned i = 0; i < g->n_algs; i++) {
                uint8_t d[64];
                unsigned dn = 0;
                const EVP_MD *m = md(g->alg[i]);

                memset(d, 0x11, sizeof(d));
                if (m && !EVP_Digest(content, cn, d, &dn, m, NULL))
                        abort();
                tlg_u16(g, g->alg[i]);
                tlg_raw(g, d, g->size[i] <= 64 ? g->size[i] : 64);
        }
        tlg_u32(g, (uint32_t)n);
        tlg_raw(g, data, n);
}

void tlg_event(struct tlg *g, uint32_t pcr, uint32_t type, const void *data, size_t n)
{
        tlg_event_of(g, pcr, type, data, n, data, n);
}

void tlg_efi_var(struct tlg *g, uint32_t pcr, uint32_t type, const uint8_t guid[16],
                 const char *name, const void *data, size_t n)
{
        size_t nl = strlen(name), total = 16 + 8 + 8 + 2 * nl + n;
        uint8_t *p = malloc(total), *q = p;

        if (!p)
                abort();
        memcpy(q, guid, 16);
        q += 16;
        for (int i = 0; i < 8; i++)
                *q++ = (uint8_t)((uint64_t)nl >> (8 * i));
        for (int i = 0; i < 8; i++)
                *q++ = (uint8_t)((uint64_t)n >> (8 * i));
        for (size_t i = 0; i < nl; i++) {
                *q++ = (uint8_t)name[i];
                *q++ = 0;
        }
        if (n)
                memcpy(q, data, n);
        tlg_event(g, pcr, type, p, total);
        free(p);
}

void tlg_app(struct tlg *g, const void *image, size_t n)
{
        static const uint8_t path[4] = {0x7f, 0xff, 0x04, 0x00}; /* end of device path */
        uint8_t ev[32 + sizeof(path)] = {0};

        ev[0] = 0x10;          /* ImageLocationInMemory */
        ev[8] = (uint8_t)n;    /* ImageLengthInMemory (low byte: tests only) */
        ev[24] = sizeof(path); /* LengthOfDevicePath */
        memcpy(ev + 32, path, sizeof(path));
        tlg_event_of(g, 4, 0x80000003u, ev, sizeof(ev), image, n);
}

void tlg_locality(struct tlg *g, uint8_t locality)
{
        uint8_t ev[17];
        static const uint8_t zeros[64];

        memcpy(ev, "StartupLocality", 16);
        ev[16] = locality;
        tlg_u32(g, 0);
        tlg_u32(g, 3);
        tlg_u32(g, g->n_algs);
        for (unsigned i = 0; i < g->n_algs; i++) {
                tlg_u16(g, g->alg[i]);
                tlg_raw(g, zeros, g->size[i] <= 64 ? g->size[i] : 64);
        }
        tlg_u32(g, sizeof(ev));
        tlg_raw(g, ev, sizeof(ev));
}
