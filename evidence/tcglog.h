/* SPDX-License-Identifier: MIT */
/*
 * The TCG2 firmware event log (/sys/kernel/security/tpm0/binary_bios_measurements), as the TCG
 * PC Client Platform Firmware Profile (PFP) specification defines it, little-endian throughout:
 *
 *   entry 0, TCG_PCClientPCREvent (SHA1 format):
 *     u32 pcrIndex (0) | u32 eventType (EV_NO_ACTION) | u8 digest[20] (zeros) |
 *     u32 eventDataSize | TCG_EfiSpecIDEvent:
 *       u8 signature[16] "Spec ID Event03\0" | u32 platformClass | u8 specVersionMinor |
 *       u8 specVersionMajor | u8 specErrata | u8 uintnSize | u32 numberOfAlgorithms |
 *       {u16 algorithmId, u16 digestSize}[numberOfAlgorithms] | u8 vendorInfoSize | vendorInfo
 *   entries 1.., TCG_PCR_EVENT2 (crypto agile):
 *     u32 pcrIndex | u32 eventType | TPML_DIGEST_VALUES: u32 count,
 *     {u16 hashAlg, u8 digest[size from the Spec ID event]}[count] | u32 eventSize | event
 *
 * A streaming reader over a span of the log: no allocation, events borrow the span. It may start
 * at the log's first byte, or resume at a byte offset and entry number of a log whose Spec ID
 * event was read before (the verifier's incremental rounds). Every error names the entry and the
 * byte offset in the whole log ("entry 12 at byte 2310: ..."); codes tcglog_truncated,
 * tcglog_bad_specid, tcglog_bad_digest, tcglog_bad_pcr, tcglog_too_big, tcglog_bad_event.
 */
#ifndef ATTEST_TCGLOG_H
#define ATTEST_TCGLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "util/err.h"
#include "util/macro.h"
#include "util/rd.h"

/* Caps (each tested at cap - 1, cap, cap + 1 and fuzzed at its size) */
#define TCGLOG_ENTRIES_MAX 65536u     /* entries of one log, the Spec ID event included */
#define TCGLOG_EVENT_MAX (64u * 1024) /* eventSize (a dbx of ~2000 hashes is 64 KiB) */
#define TCGLOG_ALGS_MAX 8u            /* numberOfAlgorithms, and digests per event */
#define TCGLOG_DIGEST_MAX 64u         /* digestSize (sha512) */
#define TCGLOG_VARNAME_MAX 64u        /* UTF-16 characters of a UEFI variable name we decode */
#define TCGLOG_PCR_MAX 23u            /* pcrIndex: the PC Client TPM has PCR 0-23 */

/* Event types: PFP "Events" table, names as the spec writes them */
#define EV_PREBOOT_CERT 0x00000000u
#define EV_POST_CODE 0x00000001u
#define EV_UNUSED 0x00000002u
#define EV_NO_ACTION 0x00000003u
#define EV_SEPARATOR 0x00000004u
#define EV_ACTION 0x00000005u
#define EV_EVENT_TAG 0x00000006u
#define EV_S_CRTM_CONTENTS 0x00000007u
#define EV_S_CRTM_VERSION 0x00000008u
#define EV_CPU_MICROCODE 0x00000009u
#define EV_PLATFORM_CONFIG_FLAGS 0x0000000au
#define EV_TABLE_OF_DEVICES 0x0000000bu
#define EV_COMPACT_HASH 0x0000000cu
#define EV_IPL 0x0000000du
#define EV_IPL_PARTITION_DATA 0x0000000eu
#define EV_NONHOST_CODE 0x0000000fu
#define EV_NONHOST_CONFIG 0x00000010u
#define EV_NONHOST_INFO 0x00000011u
#define EV_OMIT_BOOT_DEVICE_EVENTS 0x00000012u
#define EV_EFI_EVENT_BASE 0x80000000u
#define EV_EFI_VARIABLE_DRIVER_CONFIG 0x80000001u
#define EV_EFI_VARIABLE_BOOT 0x80000002u
#define EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003u
#define EV_EFI_BOOT_SERVICES_DRIVER 0x80000004u
#define EV_EFI_RUNTIME_SERVICES_DRIVER 0x80000005u
#define EV_EFI_GPT_EVENT 0x80000006u
#define EV_EFI_ACTION 0x80000007u
#define EV_EFI_PLATFORM_FIRMWARE_BLOB 0x80000008u
#define EV_EFI_HANDOFF_TABLES 0x80000009u
#define EV_EFI_PLATFORM_FIRMWARE_BLOB2 0x8000000au
#define EV_EFI_HANDOFF_TABLES2 0x8000000bu
#define EV_EFI_VARIABLE_BOOT2 0x8000000cu
#define EV_EFI_HCRTM_EVENT 0x80000010u
#define EV_EFI_VARIABLE_AUTHORITY 0x800000e0u
#define EV_EFI_SPDM_FIRMWARE_BLOB 0x800000e1u
#define EV_EFI_SPDM_FIRMWARE_CONFIG 0x800000e2u

/* The spec's name of an event type ("EV_SEPARATOR"), or NULL for one it does not define. */
const char *tcglog_event_type_name(uint32_t type);

struct tcglog_alg {
        uint16_t alg_id; /* TPM_ALG_ID */
        uint16_t size;   /* digestSize */
        int bank;        /* enum bank, or -1 for an algorithm the verifier does not replay */
};

/* TCG_EfiSpecIDEvent, validated. */
struct tcglog_specid {
        uint32_t platform_class;
        uint8_t version_minor, version_major, errata, uintn_size;
        unsigned n_algs;
        struct tcglog_alg algs[TCGLOG_ALGS_MAX];
};

struct tcglog_digest {
        uint16_t alg_id;
        int bank;         /* as in tcglog_alg */
        const uint8_t *p; /* borrowed from the span */
        uint16_t size;
};

struct tcglog_event {
        uint64_t index;  /* entry number in the log; 0 is the Spec ID event */
        uint64_t offset; /* byte offset of its first byte in the log */
        uint64_t end;    /* byte offset after its last byte */
        uint32_t pcr, type;
        unsigned n_digests; /* entry 0: one, sha1, zeros */
        struct tcglog_digest d[TCGLOG_ALGS_MAX];
        const uint8_t *data; /* event data, borrowed; NULL when size is 0 */
        uint32_t size;
};

struct tcglog_reader {
        struct rd r;
        uint64_t base;  /* log offset of the span's first byte */
        uint64_t index; /* number of the next entry */
        bool have_spec;
        struct tcglog_specid spec;
};

/* A reader over a whole log from its first byte (entry 0 must be the Spec ID event). */
void tcglog_reader_init(struct tcglog_reader *lr, const uint8_t *buf, size_t len);
/* A reader over the bytes from log offset base, entry index, of a log with Spec ID event spec. */
void tcglog_reader_resume(struct tcglog_reader *lr, const uint8_t *buf, size_t len, uint64_t base,
                          uint64_t index, const struct tcglog_specid *spec);
/*
 * The next entry into *ret: 1, 0 at the end of the span, negative on error (the reader stays at
 * the bad entry). Entry 0 comes back as an EV_NO_ACTION event whose data is the Spec ID event,
 * which lr->spec then holds.
 */
int tcglog_next(struct tcglog_reader *lr, struct tcglog_event *ret, struct attest_err *err) _wur_;
/* The digest of bank b in e, or NULL. */
const struct tcglog_digest *tcglog_event_digest(const struct tcglog_event *e, enum bank b);

/* ---- event data the boot claims use (all borrow from the event; -EBADMSG when malformed) ---- */

/* UEFI_VARIABLE_DATA (EV_EFI_VARIABLE_DRIVER_CONFIG, _BOOT, _BOOT2, _AUTHORITY) */
struct tcglog_efi_var {
        uint8_t guid[16]; /* VariableName, the vendor GUID as stored (EFI_GUID, mixed endian) */
        uint64_t name_chars, data_len;
        const uint8_t *name16; /* UnicodeName, UTF-16LE, name_chars characters */
        const uint8_t *data;   /* VariableData */
        /* the name in ASCII when every character is printable ASCII and at most
         * TCGLOG_VARNAME_MAX long; "" otherwise */
        char name[TCGLOG_VARNAME_MAX + 1];
};
int tcglog_efi_var_parse(const struct tcglog_event *e, struct tcglog_efi_var *ret) _wur_;
/* The GUIDs the boot claims need, in their stored byte order. */
extern const uint8_t tcglog_guid_global[16];   /* EFI_GLOBAL_VARIABLE: SecureBoot, PK, KEK */
extern const uint8_t tcglog_guid_security[16]; /* EFI_IMAGE_SECURITY_DATABASE: db, dbx */

/* UEFI_IMAGE_LOAD_EVENT (EV_EFI_BOOT_SERVICES_APPLICATION, _DRIVER, _RUNTIME_SERVICES_DRIVER) */
struct tcglog_efi_image {
        uint64_t location, length, link_time_address, device_path_len;
        const uint8_t *device_path;
};
int tcglog_efi_image_parse(const struct tcglog_event *e, struct tcglog_efi_image *ret) _wur_;

/* EV_NO_ACTION "StartupLocality\0" + u8 locality: 1 with *ret set, 0 for another event. */
int tcglog_startup_locality(const struct tcglog_event *e, uint8_t *ret) _wur_;

#endif
