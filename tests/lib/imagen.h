/* SPDX-License-Identifier: MIT */
/*
 * Test-side IMA log writer: appends entries to a binary log and the matching ascii log at once,
 * with the sha1 template hash computed as the kernel does. Used by unit tests, fuzz seeds and
 * benchmarks to make synthetic logs; real logs live in tests/data/.
 */
#ifndef IMAGEN_H
#define IMAGEN_H

#include <stddef.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "evidence/ima.h"

struct imagen {
        uint8_t *bin;
        size_t bin_len, bin_cap;
        char *txt;
        size_t txt_len, txt_cap;
        struct hasher *h;
        uint64_t entries;
};

/* A field's value as the kernel stores it (d-ng: "algo:\0" digest; n-ng: name with its NUL). */
struct imagen_field {
        enum ima_field id;
        const void *p;
        size_t n;
};

int imagen_init(struct imagen *g);
void imagen_done(struct imagen *g);

/* Generic: template tmpl with the given fields; violation writes an all-zero sha1 hash. */
int imagen_fields(struct imagen *g, uint32_t pcr, const char *tmpl, const struct imagen_field *f,
                  unsigned nf, int violation);
/* ima-ng with a digest of algo (e.g. "sha256") over name. */
int imagen_ng(struct imagen *g, uint32_t pcr, const char *algo, const uint8_t *d, size_t dlen,
              const char *name);
int imagen_sig(struct imagen *g, uint32_t pcr, const uint8_t *d32, const char *name,
               const uint8_t *sig, size_t siglen);
/* ima-buf with a sha256 digest of buf. */
int imagen_buf(struct imagen *g, uint32_t pcr, const char *name, const void *buf, size_t len);
int imagen_modsig(struct imagen *g, uint32_t pcr, const uint8_t *d32, const char *name,
                  const uint8_t *sig, size_t siglen);
/* Template 'ima' (legacy): sha1 digest and a name of at most 255 bytes. */
int imagen_legacy(struct imagen *g, uint32_t pcr, const uint8_t *d20, const char *name);
/* An ima-ng violation entry (zero hash, zero digest). */
int imagen_violation(struct imagen *g, uint32_t pcr, const char *name);

#endif
