/* SPDX-License-Identifier: MIT */
/*
 * The firmware event log reader (evidence/tcglog.c) and the boot replay (verify/boot.c) on
 * arbitrary bytes: no crash, no leak; every event's data and digests lie inside the input and
 * its byte range moves forward; an error names an entry; a log accepted whole gives the same
 * state when it comes in two rounds split at an entry boundary (the verifier's incremental path).
 */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "verify/boot.h"

static void check_event(const struct tcglog_event *e, const uint8_t *data, size_t size)
{
        struct tcglog_efi_var v;
        struct tcglog_efi_image img;
        uint8_t loc;

        FUZZ_CHECK(e->end > e->offset && e->end <= size);
        FUZZ_CHECK(e->n_digests <= TCGLOG_ALGS_MAX);
        FUZZ_CHECK(!e->size || fuzz_within(e->data, e->size, data, size));
        for (unsigned i = 0; i < e->n_digests; i++)
                FUZZ_CHECK(fuzz_within(e->d[i].p, e->d[i].size, data, size));
        if (tcglog_efi_var_parse(e, &v) == 0) {
                FUZZ_CHECK(fuzz_within(v.name16, (size_t)v.name_chars * 2, data, size));
                FUZZ_CHECK(!v.data_len || fuzz_within(v.data, (size_t)v.data_len, data, size));
                FUZZ_CHECK(strlen(v.name) <= TCGLOG_VARNAME_MAX);
        }
        if (tcglog_efi_image_parse(e, &img) == 0)
                FUZZ_CHECK(!img.device_path_len ||
                           fuzz_within(img.device_path, (size_t)img.device_path_len, data, size));
        if (tcglog_startup_locality(e, &loc) > 0)
                FUZZ_CHECK(e->type == EV_NO_ACTION && e->size == 17 && loc == e->data[16]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct boot_state whole, a, b; /* a few KiB each, off the stack */
        struct pcr_sel sel = {{0}};
        struct pcr_set none = {0};
        struct boot_result r;
        struct attest_err err = {0};
        struct tcglog_reader lr;
        struct tcglog_event e;
        uint64_t mid = 0, n = 0, last = 0;
        struct evidence ev = {.boot_log = (uint8_t *)data, .boot_log_len = size};
        int x;

        tcglog_reader_init(&lr, data, size);
        while ((x = tcglog_next(&lr, &e, &err)) > 0) {
                FUZZ_CHECK(e.offset == last);
                last = e.end;
                check_event(&e, data, size);
                if (++n == 3)
                        mid = e.end;
        }
        if (x < 0) {
                FUZZ_CHECK(err.code != AE_NONE && strncmp(err.msg, "entry ", 6) == 0);
                FUZZ_CHECK(lr.index < TCGLOG_ENTRIES_MAX + 1);
        } else {
                FUZZ_CHECK(last == size);
        }
        if (!size)
                return 0;
        if (boot_verify(&ev, &sel, &none, NULL, &whole, &r, &err) < 0 || !mid || mid >= size)
                return 0;
        /* two rounds: the first three entries, then the rest */
        ev.boot_log_len = (size_t)mid;
        FUZZ_CHECK(boot_verify(&ev, &sel, &none, NULL, &a, &r, &err) == 0);
        ev.boot_offset = mid;
        ev.boot_log = (uint8_t *)data + mid;
        ev.boot_log_len = size - (size_t)mid;
        FUZZ_CHECK(boot_verify(&ev, &sel, &none, &a, &b, &r, &err) == 0);
        FUZZ_CHECK(b.offset == whole.offset && b.entries == whole.entries);
        FUZZ_CHECK(memcmp(b.pcr, whole.pcr, sizeof(b.pcr)) == 0);
        FUZZ_CHECK(memcmp(&b.claims, &whole.claims, sizeof(b.claims)) == 0);
        return 0;
}
