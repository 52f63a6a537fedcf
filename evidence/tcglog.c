/* SPDX-License-Identifier: MIT */
/* The TCG2 firmware event log reader: see evidence/tcglog.h for the layout. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "evidence/tcglog.h"

#define SPECID_SIGNATURE "Spec ID Event03" /* 16 bytes with its NUL */
#define LOCALITY_SIGNATURE "StartupLocality"

/* EFI_GLOBAL_VARIABLE {8BE4DF61-93CA-11D2-AA0D-00E098032B8C} as an EFI_GUID is stored */
const uint8_t tcglog_guid_global[16] = {0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
                                        0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c};
/* EFI_IMAGE_SECURITY_DATABASE_GUID {D719B2CB-3D3A-4596-A3BC-DAD00E67656F} */
const uint8_t tcglog_guid_security[16] = {0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45,
                                          0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f};

static const struct {
        uint32_t type;
        const char *name;
} type_names[] = {
        {EV_PREBOOT_CERT, "EV_PREBOOT_CERT"},
        {EV_POST_CODE, "EV_POST_CODE"},
        {EV_UNUSED, "EV_UNUSED"},
        {EV_NO_ACTION, "EV_NO_ACTION"},
        {EV_SEPARATOR, "EV_SEPARATOR"},
        {EV_ACTION, "EV_ACTION"},
        {EV_EVENT_TAG, "EV_EVENT_TAG"},
        {EV_S_CRTM_CONTENTS, "EV_S_CRTM_CONTENTS"},
        {EV_S_CRTM_VERSION, "EV_S_CRTM_VERSION"},
        {EV_CPU_MICROCODE, "EV_CPU_MICROCODE"},
        {EV_PLATFORM_CONFIG_FLAGS, "EV_PLATFORM_CONFIG_FLAGS"},
        {EV_TABLE_OF_DEVICES, "EV_TABLE_OF_DEVICES"},
        {EV_COMPACT_HASH, "EV_COMPACT_HASH"},
        {EV_IPL, "EV_IPL"},
        {EV_IPL_PARTITION_DATA, "EV_IPL_PARTITION_DATA"},
        {EV_NONHOST_CODE, "EV_NONHOST_CODE"},
        {EV_NONHOST_CONFIG, "EV_NONHOST_CONFIG"},
        {EV_NONHOST_INFO, "EV_NONHOST_INFO"},
        {EV_OMIT_BOOT_DEVICE_EVENTS, "EV_OMIT_BOOT_DEVICE_EVENTS"},
        {EV_EFI_VARIABLE_DRIVER_CONFIG, "EV_EFI_VARIABLE_DRIVER_CONFIG"},
        {EV_EFI_VARIABLE_BOOT, "EV_EFI_VARIABLE_BOOT"},
        {EV_EFI_BOOT_SERVICES_APPLICATION, "EV_EFI_BOOT_SERVICES_APPLICATION"},
        {EV_EFI_BOOT_SERVICES_DRIVER, "EV_EFI_BOOT_SERVICES_DRIVER"},
        {EV_EFI_RUNTIME_SERVICES_DRIVER, "EV_EFI_RUNTIME_SERVICES_DRIVER"},
        {EV_EFI_GPT_EVENT, "EV_EFI_GPT_EVENT"},
        {EV_EFI_ACTION, "EV_EFI_ACTION"},
        {EV_EFI_PLATFORM_FIRMWARE_BLOB, "EV_EFI_PLATFORM_FIRMWARE_BLOB"},
        {EV_EFI_HANDOFF_TABLES, "EV_EFI_HANDOFF_TABLES"},
        {EV_EFI_PLATFORM_FIRMWARE_BLOB2, "EV_EFI_PLATFORM_FIRMWARE_BLOB2"},
        {EV_EFI_HANDOFF_TABLES2, "EV_EFI_HANDOFF_TABLES2"},
        {EV_EFI_VARIABLE_BOOT2, "EV_EFI_VARIABLE_BOOT2"},
        {EV_EFI_HCRTM_EVENT, "EV_EFI_HCRTM_EVENT"},
        {EV_EFI_VARIABLE_AUTHORITY, "EV_EFI_VARIABLE_AUTHORITY"},
        {EV_EFI_SPDM_FIRMWARE_BLOB, "EV_EFI_SPDM_FIRMWARE_BLOB"},
        {EV_EFI_SPDM_FIRMWARE_CONFIG, "EV_EFI_SPDM_FIRMWARE_CONFIG"},
};

const char *tcglog_event_type_name(uint32_t type)
{
        for (size_t i = 0; i < ARRAY_SIZE(type_names); i++)
                if (type_names[i].type == type)
                        return type_names[i].name;
        return NULL;
}

void tcglog_reader_init(struct tcglog_reader *lr, const uint8_t *buf, size_t len)
{
        *lr = (struct tcglog_reader){.r = RD_INIT(buf, len)};
}

void tcglog_reader_resume(struct tcglog_reader *lr, const uint8_t *buf, size_t len, uint64_t base,
                          uint64_t index, const struct tcglog_specid *spec)
{
        *lr = (struct tcglog_reader){
                .r = RD_INIT(buf, len), .base = base, .index = index, .have_spec = true};
        lr->spec = *spec;
}

/* "entry N at byte M: why", M the log offset of the entry's first byte. */
static _printf_(5, 6) int fail(struct attest_err *err, int e, enum attest_code code,
                               const struct tcglog_event *ev, const char *fmt, ...)
{
        char why[200];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        return attest_fail(err, e, code, "entry %" PRIu64 " at byte %" PRIu64 ": %s", ev->index,
                           ev->offset, why);
}

/* The known digest size of a TPM algorithm, 0 for one the verifier does not know. */
static unsigned known_size(uint16_t alg)
{
        int b = bank_from_tpm_alg(alg);

        return b < 0 ? 0 : (unsigned)bank_size((enum bank)b);
}

/* TCG_EfiSpecIDEvent in data (the whole eventDataSize bytes). */
static int parse_specid(const struct tcglog_event *ev, const uint8_t *data, uint32_t n,
                        struct tcglog_specid *ret, struct attest_err *err)
{
        struct rd r = RD_INIT(data, n);
        struct tcglog_specid s = {0};
        const uint8_t *sig;
        uint32_t count = 0;
        uint8_t vendor = 0;

        if (rd_bytes(&r, 16, &sig) < 0 || memcmp(sig, SPECID_SIGNATURE, 16) != 0)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                            "no \"Spec ID Event03\" signature: not a crypto-agile log");
        if (rd_u32le(&r, &s.platform_class) < 0 || rd_u8(&r, &s.version_minor) < 0 ||
            rd_u8(&r, &s.version_major) < 0 || rd_u8(&r, &s.errata) < 0 ||
            rd_u8(&r, &s.uintn_size) < 0 || rd_u32le(&r, &count) < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                            "Spec ID event truncated at its byte %zu", rd_offset(&r));
        if (s.version_major != 2)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev, "specVersionMajor %u, not 2",
                            s.version_major);
        if (s.uintn_size != 1 && s.uintn_size != 2)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev, "uintnSize %u, not 1 or 2",
                            s.uintn_size);
        if (count == 0 || count > TCGLOG_ALGS_MAX)
                return fail(err, count ? -E2BIG : -EBADMSG,
                            count ? AE_TCGLOG_TOO_BIG : AE_TCGLOG_BAD_SPECID, ev,
                            "numberOfAlgorithms %" PRIu32 " not in 1-%u", count, TCGLOG_ALGS_MAX);
        for (uint32_t i = 0; i < count; i++) {
                struct tcglog_alg *a = &s.algs[i];
                unsigned want;

                if (rd_u16le(&r, &a->alg_id) < 0 || rd_u16le(&r, &a->size) < 0)
                        return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                                    "Spec ID event truncated in algorithm %" PRIu32, i);
                if (a->size == 0 || a->size > TCGLOG_DIGEST_MAX)
                        return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                                    "algorithm 0x%04x: digestSize %u not in 1-%u", a->alg_id,
                                    a->size, TCGLOG_DIGEST_MAX);
                want = known_size(a->alg_id);
                if (want && want != a->size)
                        return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                                    "algorithm 0x%04x: digestSize %u, not %u", a->alg_id, a->size,
                                    want);
                for (uint32_t j = 0; j < i; j++)
                        if (s.algs[j].alg_id == a->alg_id)
                                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                                            "algorithm 0x%04x listed twice", a->alg_id);
                a->bank = bank_from_tpm_alg(a->alg_id);
                if (a->bank < 0)
                        a->bank = -1;
        }
        s.n_algs = count;
        if (rd_u8(&r, &vendor) < 0 || rd_skip(&r, vendor) < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                            "Spec ID event truncated in vendorInfo");
        if (rd_left(&r))
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                            "%zu bytes after vendorInfo in the Spec ID event", rd_left(&r));
        *ret = s;
        return 0;
}

/* Entry 0: TCG_PCClientPCREvent with the Spec ID event. */
static int first_event(struct tcglog_reader *lr, struct rd *r, struct tcglog_event *ev,
                       struct attest_err *err)
{
        static const uint8_t zeros[20];
        const uint8_t *digest, *data;
        uint32_t n = 0;
        int x;

        if (rd_u32le(r, &ev->pcr) < 0 || rd_u32le(r, &ev->type) < 0 || rd_bytes(r, 20, &digest) < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev, "truncated first event");
        if (ev->pcr != 0 || ev->type != EV_NO_ACTION || memcmp(digest, zeros, 20) != 0)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_SPECID, ev,
                            "first event is PCR %" PRIu32 " type 0x%08" PRIx32
                            ", not the Spec ID event (PCR 0, EV_NO_ACTION, zero digest)",
                            ev->pcr, ev->type);
        x = rd_sized(r, 0, TCGLOG_EVENT_MAX, &data, &n);
        if (x == -E2BIG)
                return fail(err, -E2BIG, AE_TCGLOG_TOO_BIG, ev, "eventDataSize > %u",
                            TCGLOG_EVENT_MAX);
        if (x < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev, "event data truncated");
        if ((x = parse_specid(ev, data, n, &lr->spec, err)) < 0)
                return x;
        ev->n_digests = 1;
        ev->d[0] = (struct tcglog_digest){
                .alg_id = bank_tpm_alg(BANK_SHA1), .bank = BANK_SHA1, .p = digest, .size = 20};
        ev->data = data;
        ev->size = n;
        lr->have_spec = true;
        return 0;
}

static const struct tcglog_alg *spec_alg(const struct tcglog_specid *s, uint16_t alg)
{
        for (unsigned i = 0; i < s->n_algs; i++)
                if (s->algs[i].alg_id == alg)
                        return &s->algs[i];
        return NULL;
}

/* Entries 1..: TCG_PCR_EVENT2. */
static int agile_event(const struct tcglog_reader *lr, struct rd *r, struct tcglog_event *ev,
                       struct attest_err *err)
{
        const struct tcglog_specid *s = &lr->spec;
        uint32_t count = 0, n = 0;
        unsigned seen = 0;
        int x;

        if (rd_u32le(r, &ev->pcr) < 0 || rd_u32le(r, &ev->type) < 0 || rd_u32le(r, &count) < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev, "truncated event header");
        if (ev->pcr > TCGLOG_PCR_MAX)
                return fail(err, -EBADMSG, AE_TCGLOG_BAD_PCR, ev, "pcrIndex %" PRIu32 " > %u",
                            ev->pcr, TCGLOG_PCR_MAX);
        if (count != s->n_algs)
                return fail(err, count > TCGLOG_ALGS_MAX ? -E2BIG : -EBADMSG,
                            count > TCGLOG_ALGS_MAX ? AE_TCGLOG_TOO_BIG : AE_TCGLOG_BAD_DIGEST, ev,
                            "%" PRIu32 " digests, the Spec ID event lists %u algorithms", count,
                            s->n_algs);
        for (uint32_t i = 0; i < count; i++) {
                struct tcglog_digest *d = &ev->d[i];
                const struct tcglog_alg *a;
                unsigned bit;

                if (rd_u16le(r, &d->alg_id) < 0)
                        return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev,
                                    "truncated in digest %" PRIu32, i);
                if (!(a = spec_alg(s, d->alg_id)))
                        return fail(err, -EBADMSG, AE_TCGLOG_BAD_DIGEST, ev,
                                    "digest %" PRIu32 ": algorithm 0x%04x not in the Spec ID event",
                                    i, d->alg_id);
                bit = 1u << (unsigned)(a - s->algs);
                if (seen & bit)
                        return fail(err, -EBADMSG, AE_TCGLOG_BAD_DIGEST, ev,
                                    "digest %" PRIu32 ": algorithm 0x%04x given twice", i,
                                    d->alg_id);
                seen |= bit;
                d->bank = a->bank;
                d->size = a->size;
                if (rd_bytes(r, a->size, &d->p) < 0)
                        return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev,
                                    "truncated in digest %" PRIu32, i);
        }
        ev->n_digests = count;
        x = rd_sized(r, 0, TCGLOG_EVENT_MAX, &ev->data, &n);
        if (x == -E2BIG)
                return fail(err, -E2BIG, AE_TCGLOG_TOO_BIG, ev, "eventSize > %u", TCGLOG_EVENT_MAX);
        if (x < 0)
                return fail(err, -EBADMSG, AE_TCGLOG_TRUNCATED, ev, "event data truncated");
        ev->size = n;
        if (!n)
                ev->data = NULL;
        return 0;
}

int tcglog_next(struct tcglog_reader *lr, struct tcglog_event *ret, struct attest_err *err)
{
        struct tcglog_event ev = {.index = lr->index, .offset = lr->base + rd_offset(&lr->r)};
        struct rd r = lr->r;
        int x;

        if (!rd_left(&lr->r))
                return 0;
        if (lr->index >= TCGLOG_ENTRIES_MAX)
                return fail(err, -E2BIG, AE_TCGLOG_TOO_BIG, &ev, "more than %u entries",
                            TCGLOG_ENTRIES_MAX);
        if (lr->index == 0)
                x = first_event(lr, &r, &ev, err);
        else if (!lr->have_spec)
                x = fail(err, -EINVAL, AE_TCGLOG_BAD_SPECID, &ev, "no Spec ID event to resume");
        else
                x = agile_event(lr, &r, &ev, err);
        if (x < 0)
                return x;
        ev.end = lr->base + rd_offset(&r);
        lr->r = r;
        lr->index++;
        *ret = ev;
        return 1;
}

const struct tcglog_digest *tcglog_event_digest(const struct tcglog_event *e, enum bank b)
{
        for (unsigned i = 0; i < e->n_digests; i++)
                if (e->d[i].bank == (int)b)
                        return &e->d[i];
        return NULL;
}

int tcglog_efi_var_parse(const struct tcglog_event *e, struct tcglog_efi_var *ret)
{
        struct rd r = RD_INIT(e->data, e->size);
        struct tcglog_efi_var v = {0};
        bool ascii = true;

        if (rd_copy(&r, v.guid, 16) < 0 || rd_u64le(&r, &v.name_chars) < 0 ||
            rd_u64le(&r, &v.data_len) < 0)
                return -EBADMSG;
        /* both lengths are bounded by the event (TCGLOG_EVENT_MAX) before any product */
        if (v.name_chars > rd_left(&r) / 2 || rd_bytes(&r, (size_t)v.name_chars * 2, &v.name16) < 0)
                return -EBADMSG;
        if (v.data_len != rd_left(&r) || rd_bytes(&r, (size_t)v.data_len, &v.data) < 0)
                return -EBADMSG;
        if (v.name_chars > TCGLOG_VARNAME_MAX)
                ascii = false;
        for (uint64_t i = 0; ascii && i < v.name_chars; i++) {
                uint16_t c = (uint16_t)(v.name16[2 * i] | v.name16[2 * i + 1] << 8);

                if (c < 0x21 || c > 0x7e)
                        ascii = false;
                else
                        v.name[i] = (char)c;
        }
        if (!ascii)
                memset(v.name, 0, sizeof(v.name));
        *ret = v;
        return 0;
}

int tcglog_efi_image_parse(const struct tcglog_event *e, struct tcglog_efi_image *ret)
{
        struct rd r = RD_INIT(e->data, e->size);
        struct tcglog_efi_image m = {0};

        if (rd_u64le(&r, &m.location) < 0 || rd_u64le(&r, &m.length) < 0 ||
            rd_u64le(&r, &m.link_time_address) < 0 || rd_u64le(&r, &m.device_path_len) < 0)
                return -EBADMSG;
        if (m.device_path_len != rd_left(&r) ||
            rd_bytes(&r, (size_t)m.device_path_len, &m.device_path) < 0)
                return -EBADMSG;
        *ret = m;
        return 0;
}

int tcglog_startup_locality(const struct tcglog_event *e, uint8_t *ret)
{
        if (e->type != EV_NO_ACTION || e->index == 0 || e->size < 16 ||
            memcmp(e->data, LOCALITY_SIGNATURE, 16) != 0)
                return 0;
        if (e->size != 17)
                return -EBADMSG;
        *ret = e->data[16];
        return 1;
}
