/* SPDX-License-Identifier: MIT */
/*
 * One submission of evidence as attestd sees it (docs/architecture.md §4): the nonce, the quote
 * with the PCR values read beside it, the IMA log entries from an offset and the host facts the
 * agent reported. A plain struct: evidence/evjson.h is its JSON codec (the network edge), verify/
 * and policy/ take this struct.
 */
#ifndef ATTEST_EVIDENCE_H
#define ATTEST_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/ima.h"
#include "evidence/pcrs.h"
#include "util/hex.h"
#include "util/macro.h"

#define EVIDENCE_VERSION 1
#define EVIDENCE_NONCE_MAX 64
#define EVIDENCE_CMDLINE_MAX 4096
#define EVIDENCE_WORD_MAX 32 /* bytes of a host-fact word with its NUL (source, origin) */
/*
 * The TCG2 firmware event log (binary_bios_measurements) travels like the IMA log: the bytes from
 * boot_offset on, at most EVIDENCE_BOOT_LOG_MAX decoded bytes per submission (a UEFI log with
 * Secure Boot is 30-60 KiB; the cap leaves room for large db/dbx variables).
 */
#define EVIDENCE_BOOT_LOG_MAX (1u << 20)

/*
 * Host identity: the host name, /etc/machine-id and the operator's labels. Reported,
 * never anchored; the daemon stores them and lists agents by them. One syntax for every reader
 * (agent config, evidence JSON, enrolment, the daemon's ?label= and ?hostname= filters):
 *   host name  1..EVIDENCE_HOSTNAME_MAX bytes of [A-Za-z0-9._-]
 *   machine id exactly EVIDENCE_MACHINE_ID_LEN lower-case hex digits
 *   label key  1..EVIDENCE_LABEL_KEY_MAX bytes of [a-z0-9._-], starting with [a-z0-9]
 *   label val  1..EVIDENCE_LABEL_VALUE_MAX bytes of [A-Za-z0-9._-]
 *   at most EVIDENCE_LABELS_MAX labels, keys distinct
 * None of these bytes needs escaping in JSON, a log line or a URL query.
 */
#define EVIDENCE_HOSTNAME_MAX 253 /* RFC 1035 name length */
#define EVIDENCE_MACHINE_ID_LEN 32
#define EVIDENCE_LABELS_MAX 32
#define EVIDENCE_LABEL_KEY_MAX 63
#define EVIDENCE_LABEL_VALUE_MAX 63
/* what a reader says a bad one is not ("not <WHAT>"), the same in every reader */
#define EVIDENCE_HOSTNAME_WHAT "a host name (1..253 of [A-Za-z0-9._-])"
#define EVIDENCE_MACHINE_ID_WHAT "32 lower-case hex digits"
#define EVIDENCE_LABEL_VALUE_WHAT "a label value (1..63 of [A-Za-z0-9._-])"
#define EVIDENCE_LABEL_KEY_WHY "label key %u: not 1..%d of [a-z0-9._-] starting with [a-z0-9]"

static inline bool evidence_hostname_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

static inline bool evidence_hostname_valid(const char *s, size_t n)
{
        if (n == 0 || n > EVIDENCE_HOSTNAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!evidence_hostname_char(s[i]))
                        return false;
        return true;
}

static inline bool evidence_machine_id_valid(const char *s, size_t n)
{
        return n == EVIDENCE_MACHINE_ID_LEN && hex_is_lower(s, n);
}

static inline bool evidence_label_key_valid(const char *s, size_t n)
{
        if (n == 0 || n > EVIDENCE_LABEL_KEY_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

                if (!alnum && (i == 0 || !(c == '.' || c == '_' || c == '-')))
                        return false;
        }
        return true;
}

static inline bool evidence_label_value_valid(const char *s, size_t n)
{
        return n > 0 && n <= EVIDENCE_LABEL_VALUE_MAX && evidence_hostname_valid(s, n);
}

struct evidence_label {
        char key[EVIDENCE_LABEL_KEY_MAX + 1];
        char value[EVIDENCE_LABEL_VALUE_MAX + 1];
};

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
        /* identity: "" / absent when not reported (older agents) */
        char hostname[EVIDENCE_HOSTNAME_MAX + 1];
        char machine_id[EVIDENCE_MACHINE_ID_LEN + 1];
        bool labels_present; /* "labels" given, maybe empty: the host has no labels now */
        unsigned n_labels;
        struct evidence_label labels[EVIDENCE_LABELS_MAX];
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
        /* the firmware event log from byte boot_offset; NULL: not sent (non-NULL when sent
         * with no new bytes: boot_log_len 0) */
        uint64_t boot_offset;
        uint8_t *boot_log;
        size_t boot_log_len;
};

/* Frees the owned buffers and ev itself; accepts NULL and half-built evidence. */
struct evidence *evidence_free(struct evidence *ev);
DEFINE_CLEANUP_FUNC(struct evidence *, evidence_free)

#endif
