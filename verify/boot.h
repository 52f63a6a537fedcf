/* SPDX-License-Identifier: MIT */
/*
 * Measured boot (docs/architecture.md §5.4): the firmware event log (tcglog.h) replayed into PCR
 * 0-7 of every bank the log carries, compared with the quoted values in every bank the quote
 * covers, and the boot claims the log holds. Incremental like the IMA log: the state keeps the
 * replayed PCR 0-7, the byte offset and entry count, the Spec ID event's algorithms and the claims
 * so far; each round extends with only the new bytes (boot_log.offset == the stored offset, or 0 to
 * start over); a reboot (detected by verify_evidence) starts from an empty state.
 *
 * Errors of boot_verify (besides the tcglog_* codes of the reader, under "$.boot_log.data: "):
 *   -ESTALE  boot_offset_mismatch  boot_log.offset is neither 0 nor the stored offset
 *   -ESTALE  boot_replay_mismatch  a quoted PCR 0-7 differs from the log's replay ("PCR 4
 *                                  sha256: ...")
 *   -EBADMSG tcglog_bad_event      an event a claim comes from is malformed
 */
#ifndef ATTEST_VERIFY_BOOT_H
#define ATTEST_VERIFY_BOOT_H

#include <stdbool.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "evidence/evidence.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"
#include "evidence/tcglog.h"
#include "util/err.h"

#define BOOT_PCRS 8     /* PCR 0-7: the firmware's */
#define BOOT_APPS_MAX 8 /* EV_EFI_BOOT_SERVICES_APPLICATION digests kept (PCR 4, in order) */
#define BOOT_APP_PCR 4
#define BOOT_SB_PCR 7

enum boot_var {
        BOOT_VAR_PK,
        BOOT_VAR_KEK,
        BOOT_VAR_DB,
        BOOT_VAR_DBX,
        BOOT_VAR__COUNT,
};
const char *boot_var_name(enum boot_var v); /* "PK", "KEK", "db", "dbx" */

struct boot_app {
        uint64_t entry;
        uint8_t bank; /* the digest's bank: sha256 when the log carries it */
        uint8_t digest[BANK_DIGEST_MAX];
};

/* What the log says, so far this boot (plain values: copy by assignment). */
struct boot_claims {
        bool secureboot_seen, secureboot; /* EV_EFI_VARIABLE_DRIVER_CONFIG "SecureBoot" (PCR 7) */
        uint64_t secureboot_entry;
        uint8_t vars_seen; /* bit v: boot_var v measured (PCR 7) */
        uint64_t var_entry[BOOT_VAR__COUNT];
        uint8_t var_sha256[BOOT_VAR__COUNT][32]; /* sha256 of its VariableData */
        uint32_t apps_total;                     /* applications on PCR 4, all of them */
        uint8_t n_apps;                          /* the first BOOT_APPS_MAX kept */
        struct boot_app apps[BOOT_APPS_MAX];
        uint8_t separators;       /* bit i: an EV_SEPARATOR on PCR i */
        uint8_t separator_errors; /* bit i: ... one signalling an error (boot_separator_kind) */
        bool locality_seen;       /* EV_NO_ACTION StartupLocality */
        uint8_t locality;
        uint64_t locality_entry;
};

struct boot_state {
        bool valid; /* a log was read this boot */
        uint64_t offset, entries;
        struct tcglog_specid spec;
        unsigned banks; /* BANK_MASK of the banks the log carries (and the verifier knows) */
        uint8_t pcr[BANK_COUNT][BOOT_PCRS][BANK_DIGEST_MAX];
        struct boot_claims claims;
};

struct boot_result {
        bool sent;               /* the evidence carried a boot_log */
        bool restarted;          /* boot_log.offset 0 with a stored state: replayed from scratch */
        uint8_t matched;         /* bit i: PCR i compared with the quote in some bank, equal */
        unsigned banks_compared; /* BANK_MASK of the banks compared */
        uint64_t new_bytes, new_entries;
};

void boot_state_init(struct boot_state *s);

/*
 * An EV_SEPARATOR (TCG PC Client PFP, "Error Conditions" and the EV_SEPARATOR event): 0 a
 * delimiter (4 bytes of data, 00000000h or FFFFFFFFh as SeaBIOS writes, the digests their hash),
 * 1 one signalling an error (the digests the hash of 00000001h, the data whatever the firmware
 * recorded about the error; or bound data that is neither delimiter value), < 0 when the digests
 * in banks are the hash of neither (AE_TCGLOG_BAD_EVENT).
 */
struct hasher;
int boot_separator_kind(struct hasher *h, unsigned banks, const struct tcglog_event *e,
                        struct attest_err *err) _wur_;

/*
 * The state's section of the stored replay state (verify/replay-state.c), little-endian:
 *   u8 tag 'B' | u32 length of the rest |
 *   u64 offset | u64 entries | u8 n_algs | {u16 alg, u16 size}[n_algs] | u32 platformClass |
 *   u8 specVersionMinor | u8 specVersionMajor | u8 specErrata | u8 uintnSize |
 *   for each bank the algorithms name (enum bank order): PCR 0-7 |
 *   u8 flags (1 secureboot seen, 2 secureboot, 4 locality seen) | [u64 secureboot entry] |
 *   u8 variables seen | per variable seen: u64 entry, 32 bytes sha256 |
 *   u32 applications | u8 kept | per kept: u64 entry, u8 bank, digest |
 *   u8 separators | u8 separator errors | [u8 locality | u64 entry]
 * Only a valid state is written. Decoding checks every field as the rest of the state is checked.
 */
#define BOOT_STATE_TAG 'B'
#define BOOT_STATE_SECTION_MAX                                                                     \
        (1 + 4 + 8 + 8 + 1 + 4 * TCGLOG_ALGS_MAX + 4 + 4 + BOOT_PCRS * (20 + 32 + 48 + 64) + 1 +   \
         8 + 1 + BOOT_VAR__COUNT * (8 + 32) + 4 + 1 + BOOT_APPS_MAX * (8 + 1 + BANK_DIGEST_MAX) +  \
         1 + 1 + 1 + 8)
struct wb;
int boot_state_put(struct wb *w, const struct boot_state *s) _wur_;
/* The section's payload (after tag and length), at byte off of the whole state. */
int boot_state_get(const uint8_t *p, size_t n, size_t off, struct boot_state *ret,
                   struct attest_err *err) _wur_;
/*
 * The same, decoding in place into s, which must be empty (boot_state_init): no 3 KiB state
 * emptied and copied. On failure s holds part of the section: for a caller whose s is itself a
 * scratch it drops then (the replay-state decoder).
 */
int boot_state_get_in(const uint8_t *p, size_t n, size_t off, struct boot_state *s,
                      struct attest_err *err) _wur_;
/*
 * One round: prev is the stored state (NULL or !valid: none), sel/pcrs the verified quote's
 * selection and the PCR values it covers. *next and *res are written only on success.
 */
int boot_verify(const struct evidence *ev, const struct pcr_sel *sel, const struct pcr_set *pcrs,
                const struct boot_state *prev, struct boot_state *next, struct boot_result *res,
                struct attest_err *err) _wur_;

/*
 * The replay and claims of one event into s (offset and entries not moved): for attestctl and
 * tests. h is a hasher (evidence/bank.h).
 */
int boot_state_feed(struct boot_state *s, struct hasher *h, const struct tcglog_event *e,
                    struct attest_err *err) _wur_;
/* The PCR 0 start value for a startup locality (PFP: locality 3 or 4 in its last byte). */
void boot_pcr0_init(uint8_t *pcr, size_t size, uint8_t locality);

#endif
