/* SPDX-License-Identifier: MIT */
/*
 * Test helper: writes TCG2 crypto-agile firmware event logs (evidence/tcglog.h for the layout),
 * for unit tests and fuzz seeds. Growable buffer, aborts on out-of-memory (tests only).
 */
#ifndef TESTS_TCGLOGEN_H
#define TESTS_TCGLOGEN_H

#include <stddef.h>
#include <stdint.h>

struct tlg {
        uint8_t *buf;
        size_t len, cap;
        unsigned n_algs;
        uint16_t alg[16], size[16];
};

/* The Spec ID event with these algorithms (TPM_ALG_ID, digest size); n 0: sha1 and sha256. */
void tlg_begin(struct tlg *g, const uint16_t *algs, const uint16_t *sizes, unsigned n);
void tlg_free(struct tlg *g);
void tlg_raw(struct tlg *g, const void *p, size_t n);
void tlg_u16(struct tlg *g, uint16_t v);
void tlg_u32(struct tlg *g, uint32_t v);
void tlg_u64(struct tlg *g, uint64_t v);
/* A TCG_PCR_EVENT2 whose digests are H_alg(content) (unknown algorithms: 0x11 bytes). */
void tlg_event_of(struct tlg *g, uint32_t pcr, uint32_t type, const void *data, size_t n,
                  const void *content, size_t cn);
/* ... of its own data (EV_SEPARATOR, EV_EFI_VARIABLE_*, EV_EFI_ACTION). */
void tlg_event(struct tlg *g, uint32_t pcr, uint32_t type, const void *data, size_t n);
/* UEFI_VARIABLE_DATA event with the name in UTF-16LE. */
void tlg_efi_var(struct tlg *g, uint32_t pcr, uint32_t type, const uint8_t guid[16],
                 const char *name, const void *data, size_t n);
/* EV_EFI_BOOT_SERVICES_APPLICATION on PCR 4 whose digest is H(image). */
void tlg_app(struct tlg *g, const void *image, size_t n);
/* EV_NO_ACTION StartupLocality on PCR 0. */
void tlg_locality(struct tlg *g, uint8_t locality);

#endif
