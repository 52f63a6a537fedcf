/* SPDX-License-Identifier: MIT */
/*
 * The stored replay state (verify/replay-state.h with the runtime results as its observer
 * section, policy/runtime-state.h) decoded from arbitrary bytes (the daemon reads it back from its
 * database, which a bug or an operator may have garbled): no crash, no leak, a failure leaves the
 * outputs untouched; an accepted state re-encodes to the same bytes, and so does its copy
 * (replay_state_copy(), rt_state_copy(): the value only) into garbage. The boot offset readers
 * (rt_state_stored_boot_offset, the challenge's; replay_state_boot_offset, verify's) agree with
 * their decoders on every input: the same result and error, and the decoded state's boot offset.
 */
#include <string.h>

#include "policy/runtime-state.h"
#include "tests/fuzz/fuzz.h"
#include "verify/replay-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* tens of KiB each, kept off the stack */
        static struct replay_state s, back, canary, copy;
        static struct rt_state rt, rt_back, rt_canary, rt_copy;
        struct replay_observer_section sec = {0}, osec = {0};
        struct attest_err err = {0}, oerr = {0};
        uint64_t off = 0x5a5a5a5a5a5a5a5aull;
        uint8_t *a = NULL;
        size_t alen = 0;
        int x, y;

        /* verify's part alone: the decoder and its boot offset reader agree */
        x = replay_state_decode(data, size, NULL, &sec, &err);
        y = replay_state_boot_offset(data, size, &off, &osec, &oerr);
        FUZZ_CHECK(x == y);
        FUZZ_CHECK(oerr.code == err.code && strcmp(oerr.msg, err.msg) == 0);
        FUZZ_CHECK(x < 0 || (sec.p == osec.p && sec.len == osec.len && sec.off == osec.off &&
                             sec.entries == osec.entries));
        FUZZ_CHECK(x == 0 || err.code != AE_NONE);

        /* the whole stored state */
        memset(&err, 0, sizeof(err));
        memset(&oerr, 0, sizeof(oerr));
        off = 0x5a5a5a5a5a5a5a5aull;
        memset(&s, 0x5a, sizeof(s));
        memset(&rt, 0x5a, sizeof(rt));
        canary = s;
        rt_canary = rt;
        x = rt_state_stored_decode(data, size, &s, &rt, &err);
        y = rt_state_stored_boot_offset(data, size, &off, &oerr);
        FUZZ_CHECK(x == y);
        FUZZ_CHECK(oerr.code == err.code && strcmp(oerr.msg, err.msg) == 0);
        if (x < 0) {
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memcmp(&s, &canary, sizeof(s)) == 0);
                FUZZ_CHECK(memcmp(&rt, &rt_canary, sizeof(rt)) == 0);
                FUZZ_CHECK(off == 0x5a5a5a5a5a5a5a5aull);
                return 0;
        }
        FUZZ_CHECK(off == (s.valid && s.boot.valid ? s.boot.offset : 0));
        FUZZ_CHECK(size <= REPLAY_STATE_MAX);
        FUZZ_CHECK(rt_state_stored_encode(&s, &rt, &a, &alen) == 0);
        FUZZ_CHECK(alen == size && memcmp(a, data, size) == 0);
        FUZZ_CHECK(rt_state_stored_decode(a, alen, &back, &rt_back, &err) == 0);
        free(a);
        memset(&copy, 0xa5, sizeof(copy));
        memset(&rt_copy, 0xa5, sizeof(rt_copy));
        replay_state_copy(&copy, &s);
        rt_state_copy(&rt_copy, &rt);
        FUZZ_CHECK(rt_state_stored_encode(&copy, &rt_copy, &a, &alen) == 0);
        FUZZ_CHECK(alen == size && memcmp(a, data, size) == 0);
        free(a);
        return 0;
}
