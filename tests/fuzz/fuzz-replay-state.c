/* SPDX-License-Identifier: MIT */
/*
 * replay_state_decode on arbitrary bytes (the daemon reads it back from its database, which a bug
 * or an operator may have garbled): no crash, no leak, a failure leaves *ret untouched; an
 * accepted state re-encodes to the same bytes, and so does its replay_state_copy() (the used
 * prefix only) into garbage. replay_state_boot_offset, the challenge's reader, agrees with the
 * decoder on every input: the same result and error, and the decoded state's boot offset.
 */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "verify/replay-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* ~31 KiB each, kept off the stack */
        static struct replay_state s, back, canary, copy;
        struct attest_err err = {0}, oerr = {0};
        uint64_t off = 0x5a5a5a5a5a5a5a5aull;
        uint8_t *a = NULL;
        size_t alen = 0;
        int x, y;

        memset(&s, 0x5a, sizeof(s));
        canary = s;
        x = replay_state_decode(data, size, &s, &err);
        y = replay_state_boot_offset(data, size, &off, &oerr);
        FUZZ_CHECK(x == y);
        FUZZ_CHECK(oerr.code == err.code && strcmp(oerr.msg, err.msg) == 0);
        if (x < 0) {
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memcmp(&s, &canary, sizeof(s)) == 0);
                FUZZ_CHECK(off == 0x5a5a5a5a5a5a5a5aull);
                return 0;
        }
        FUZZ_CHECK(off == (s.valid && s.boot.valid ? s.boot.offset : 0));
        FUZZ_CHECK(size <= REPLAY_STATE_MAX);
        FUZZ_CHECK(replay_state_encode(&s, &a, &alen) == 0);
        FUZZ_CHECK(alen == size && memcmp(a, data, size) == 0);
        FUZZ_CHECK(replay_state_decode(a, alen, &back, &err) == 0);
        free(a);
        memset(&copy, 0xa5, sizeof(copy));
        replay_state_copy(&copy, &s);
        FUZZ_CHECK(replay_state_encode(&copy, &a, &alen) == 0);
        FUZZ_CHECK(alen == size && memcmp(a, data, size) == 0);
        free(a);
        return 0;
}
