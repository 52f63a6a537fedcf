/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: pcrs_parse, for PCR files as `N HEX`, `BANK:N HEX` or tpm2_pcrread YAML. On
 * success nothing outside the parsed PCRs may be set; a failure fills err and leaves the output
 * untouched.
 */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "evidence/pcrs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct pcr_set s, canary;
        struct attest_err err = {0};
        int x;

        memset(&s, 0xa5, sizeof(s));
        memset(&canary, 0xa5, sizeof(canary));
        x = pcrs_parse((const char *)data, size, &s, &err);
        if (x < 0) {
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memcmp(&s, &canary, sizeof(s)) == 0);
                return 0;
        }
        FUZZ_CHECK(x == 0);
        for (int b = 0; b < BANK_COUNT; b++) {
                FUZZ_CHECK((s.have[b] >> PCR_COUNT) == 0);
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        /* unset PCRs are zero, set ones are zero past the bank's size */
                        size_t from = s.have[b] & (1u << i) ? bank_size(b) : 0;

                        for (size_t k = from; k < BANK_DIGEST_MAX; k++)
                                FUZZ_CHECK(s.v[b][i][k] == 0);
                }
        }
        return 0;
}
