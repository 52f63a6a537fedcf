/* SPDX-License-Identifier: MIT */
/*
 * PCR selection: which PCRs of which bank a quote covers. Text form (tpm2-tools style, with
 * ranges): "sha256:0-10+sha1:10", "sha256:0,1,2,7". Conversion to and from the TPM's
 * TPML_PCR_SELECTION (TPM 2.0 Part 2, 10.9.7) for the agent (Esys_Quote) and the verifier.
 */
#ifndef ATTEST_PCRSEL_H
#define ATTEST_PCRSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

#include "evidence/bank.h"
#include "evidence/pcrs.h"

struct pcr_sel {
        uint32_t mask[BANK_COUNT]; /* bit i set: PCR i of the bank is selected (i < PCR_COUNT) */
};

/* Longest text pcr_sel_format() can produce, NUL included. */
#define PCR_SEL_TEXT_MAX 256

/*
 * Parse "BANK:LIST[+BANK:LIST...]" where LIST is "N", "N-M" items joined by ','; N < 24. A bank
 * named twice has its lists merged. -EINVAL on any syntax error, unknown bank, index out of range,
 * reversed range or an empty list. *ret is written only on success.
 */
int pcr_sel_parse(const char *s, struct pcr_sel *ret) _wur_;

/*
 * Canonical text: banks in enum bank order, ranges of 3+ consecutive PCRs as "N-M"; an empty
 * selection is "". -E2BIG when out (n bytes) is too small; out is always NUL terminated if n > 0.
 */
int pcr_sel_format(const struct pcr_sel *s, char *out, size_t n) _wur_;

bool pcr_sel_equal(const struct pcr_sel *a, const struct pcr_sel *b);
bool pcr_sel_is_empty(const struct pcr_sel *s);
/* Number of PCRs selected over all banks. */
unsigned pcr_sel_count(const struct pcr_sel *s);
/* The selection of every value present in a PCR set. */
void pcr_sel_from_set(const struct pcr_set *set, struct pcr_sel *ret);

/*
 * To a TPML_PCR_SELECTION (one entry per non-empty bank, enum bank order, sizeofSelect 3), the
 * form Esys_Quote and Esys_PCR_Read take.
 */
void pcr_sel_to_tpml(const struct pcr_sel *s, TPML_PCR_SELECTION *ret);

/*
 * From a TPML_PCR_SELECTION taken from untrusted bytes: -EOPNOTSUPP for a hash the verifier has no
 * bank for, -EBADMSG for a bit at PCR >= 24 or a bank listed twice.
 */
int pcr_sel_from_tpml(const TPML_PCR_SELECTION *l, struct pcr_sel *ret) _wur_;

#endif
