/* SPDX-License-Identifier: MIT */
/*
 * The evidence JSON of DESIGN §3, version 1 (agent -> daemon):
 *
 *   {"version":1, "nonce":"HEX",
 *    "quote":{"attest":"B64", "signature":"B64", "pcrs":{"sha256":{"0":"HEX", ...}, ...}},
 *    "ima":{"offset":N, "format":"binary"|"ascii", "entries":"B64"},
 *    "host":{"kernel":"6.1.0", "cmdline":"...", "boot_id":"UUID",
 *            "cfi":{"source":"config", "enabled":true, "permissive":false},
 *            "trusted_keys":{"source":"tpm", "origin":"cmdline"}}}
 *
 * Every field is bounded and validated and unknown fields are rejected at every level; "host" and
 * its members are optional, the rest is required. Errors are -EBADMSG (-E2BIG over a cap) with
 * err->code one of evidence_json, evidence_type, evidence_missing_field, evidence_unknown_field,
 * evidence_version, evidence_bad_hex, evidence_bad_b64, evidence_bad_value, evidence_too_big,
 * and err->msg naming the JSON path ("$.quote.pcrs.sha256.10: not hex").
 */
#ifndef ATTEST_EVJSON_H
#define ATTEST_EVJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "evidence/ima.h"
#include "evidence/pcrs.h"

#define EVIDENCE_VERSION 1
#define EVIDENCE_NONCE_MAX 64
#define EVIDENCE_CMDLINE_MAX 4096
#define EVIDENCE_JSON_MAX (16u * 1024 * 1024) /* DESIGN §5: evidence body cap */

struct evidence_host {
        char kernel[256]; /* "" when not reported */
        char *cmdline;    /* NULL when not reported */
        char boot_id[64];
        bool cfi_present;
        char cfi_source[32];
        bool cfi_enabled, cfi_permissive;
        bool tk_present;
        char tk_source[32];
        char tk_origin[32];
};

struct evidence {
        uint8_t nonce[EVIDENCE_NONCE_MAX];
        size_t nonce_len;
        uint8_t *attest; /* TPMS_ATTEST as the TPM signed it */
        size_t attest_len;
        uint8_t *sig; /* TPMT_SIGNATURE */
        size_t sig_len;
        struct pcr_set pcrs; /* the PCR values the agent read with the quote */
        uint64_t ima_offset; /* number of the first entry in ima */
        enum ima_format ima_format;
        uint8_t *ima; /* log entries from ima_offset; NULL when none */
        size_t ima_len;
        struct evidence_host host;
};

/*
 * Decode and validate. max_ima caps the decoded log bytes (0: no log accepted). *ret is written
 * only on success.
 */
int evidence_from_json(const char *buf, size_t len, size_t max_ima, struct evidence **ret,
                       struct attest_err *err) _wur_;
/* Encode (agent side and tests); *ret is a NUL terminated compact JSON text, free() it. */
int evidence_to_json(const struct evidence *ev, char **ret) _wur_;
struct evidence *evidence_free(struct evidence *ev);
DEFINE_CLEANUP_FUNC(struct evidence *, evidence_free)

#endif
