/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: bytes as a binary IMA log, read little-endian, big-endian and through the
 * format auto-detection with a small entry cap; every entry replayed into every bank and fed to
 * the critical-data claims (fuzz-ima.h).
 */
#include "tests/fuzz/fuzz-ima.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ima_log_opts be = {.big_endian = true}, capped = {.max_entries = 4};
        struct ima_reader rd;

        ima_reader_init_binary(&rd, data, size, NULL);
        fuzz_ima_log(&rd, data, size);
        ima_reader_done(&rd);

        ima_reader_init_binary(&rd, data, size, &be);
        fuzz_ima_log(&rd, data, size);
        ima_reader_done(&rd);

        if (ima_reader_init_auto(&rd, data, size, &capped) == 0) {
                fuzz_ima_log(&rd, data, size);
                FUZZ_CHECK(rd.idx <= 4);
                ima_reader_done(&rd);
        }
        return 0;
}
