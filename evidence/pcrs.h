/* SPDX-License-Identifier: MIT */
/* A set of PCR values per bank, and the parser for PCR files (`N HEX` lines or tpm2_pcrread YAML).
 */
#ifndef ATTEST_PCRS_H
#define ATTEST_PCRS_H

#include <stdint.h>

#include <jansson.h>

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

/* The error codes a caller's JSON format gives each failure of pcrs_from_json. */
struct pcrs_json_codes {
        enum attest_code type;  /* not an object / not a string */
        enum attest_code bank;  /* unknown bank name */
        enum attest_code index; /* not a PCR index 0-23 */
        enum attest_code hex;   /* not a digest of the bank's size */
        enum attest_code empty; /* no PCR at all */
};

/*
 * The PCR map of the evidence and policy JSON, {"sha256":{"0":"HEX", ...}, ...}: every bank known,
 * every index 0-23 in its canonical form, every value a digest of the bank's size. Errors are
 * -EBADMSG with the codes given and a message naming the JSON path (path is o's). *ret is written
 * only on success.
 */
int pcrs_from_json(const json_t *o, const char *path, const struct pcrs_json_codes *codes,
                   struct pcr_set *ret, struct attest_err *err) _wur_;
/* The same map of the PCRs in s, except those in skip (a PCR bit mask); -ENOMEM. */
int pcrs_to_json(const struct pcr_set *s, uint32_t skip, json_t **ret) _wur_;

#endif
