/* SPDX-License-Identifier: MIT */
/*
 * replay_state_decode on arbitrary bytes (the daemon reads it back from its database, which a bug
 * or an operator may have garbled): no crash, no leak, a failure leaves *ret untouched; an
 * accepted state re-encodes to the same bytes.
 */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "verify/replay-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct replay_state s, back, canary; /* ~6 KiB each, kept off the stack */
        struct attest_err err = {0};
        uint8_t *a = NULL;
        size_t alen = 0;

        memset(&s, 0x5a, sizeof(s));
        canary = s;
        if (replay_state_decode(data, size, &s, &err) < 0) {
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memcmp(&s, &canary, sizeof(s)) == 0);
                return 0;
        }
        FUZZ_CHECK(size <= REPLAY_STATE_MAX);
        FUZZ_CHECK(replay_state_encode(&s, &a, &alen) == 0);
        FUZZ_CHECK(alen == size && memcmp(a, data, size) == 0);
        FUZZ_CHECK(replay_state_decode(a, alen, &back, &err) == 0);
        free(a);
        return 0;
}
