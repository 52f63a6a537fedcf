/* SPDX-License-Identifier: MIT */
/* A set of PCR values per bank, and the parser for PCR files (`N HEX` lines or tpm2_pcrread YAML).
 */
#ifndef ATTEST_PCRS_H
#define ATTEST_PCRS_H

#include <stdint.h>

#include "evidence/bank.h"
#include "util/err.h"

struct pcr_set {
        uint32_t have[BANK_COUNT]; /* bit i set: v[b][i] holds PCR i of bank b */
        uint8_t v[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX];
};

#define PCR_FILE_MAX (256 * 1024)

/*
 * Parse a PCR file: either lines `N HEX` (the bank follows from the digest length; `sha256:N HEX`
 * also accepted) or the YAML that `tpm2_pcrread` prints (`sha256:` then `  N : 0xHEX`). Blank lines
 * and `#` comments are skipped. Errors name the line.
 */
int pcrs_parse(const char *text, size_t len, struct pcr_set *ret, struct attest_err *err) _wur_;

#endif
