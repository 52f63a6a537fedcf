/* SPDX-License-Identifier: MIT */
/*
 * One submission of evidence as the verifier sees it (DESIGN §3): the nonce, the quote with the
 * PCR values read beside it, the IMA log entries from an offset and the host facts the agent
 * reported. A plain struct: evidence/evjson.h is its JSON codec (the network edge), verify/ and
 * policy/ take this struct.
 */
#ifndef ATTEST_EVIDENCE_H
#define ATTEST_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/ima.h"
#include "evidence/pcrs.h"
#include "util/macro.h"

#define EVIDENCE_VERSION 1
#define EVIDENCE_NONCE_MAX 64
#define EVIDENCE_CMDLINE_MAX 4096
#define EVIDENCE_WORD_MAX 32 /* bytes of a host-fact word with its NUL (source, origin) */

/* What the agent reports about its host; none of it is anchored by the quote. */
struct evidence_host {
        char kernel[256]; /* "" when not reported */
        char *cmdline;    /* NULL when not reported */
        char boot_id[64];
        bool cfi_present;
        char cfi_source[EVIDENCE_WORD_MAX]; /* where the agent read it: "config", "proc-config" */
        bool cfi_enabled, cfi_permissive;
        bool tk_present;
        char tk_source[EVIDENCE_WORD_MAX]; /* trusted.source= as given: tpm, tee, ... */
        char tk_origin[EVIDENCE_WORD_MAX]; /* "cmdline" */
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

/* Frees the owned buffers and ev itself; accepts NULL and half-built evidence. */
struct evidence *evidence_free(struct evidence *ev);
DEFINE_CLEANUP_FUNC(struct evidence *, evidence_free)

#endif
