/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: bytes as an ascii IMA log, with the template data rebuilt in both byte
 * orders; every entry replayed into every bank (the sha1 bank checks the logged template hash
 * against the rebuilt data) and fed to the critical-data claims (fuzz-ima.h).
 */
#include "tests/fuzz/fuzz-ima.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ima_log_opts le = {.max_entries = 0}, be = {.big_endian = true};
        struct ima_reader rd;

        if (ima_reader_init_ascii(&rd, (const char *)data, size, &le) == 0) {
                fuzz_ima_log(&rd, data, size);
                ima_reader_done(&rd);
        }
        if (ima_reader_init_ascii(&rd, (const char *)data, size, &be) == 0) {
                fuzz_ima_log(&rd, data, size);
                ima_reader_done(&rd);
        }
        return 0;
}
