/* SPDX-License-Identifier: MIT */
/*
 * replay_state_from_json on arbitrary bytes (the daemon reads it back from its database, which a
 * bug or an operator may have garbled): no crash, no leak; an accepted state re-encodes to a
 * text that decodes to the same state.
 */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "verify/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct replay_state s, back, copy;
        struct attest_err err = {0};
        char *a = NULL, *b = NULL, *c = NULL;

        if (replay_state_from_json((const char *)data, size, &s, &err) < 0) {
                FUZZ_CHECK(err.code != AE_NONE);
                return 0;
        }
        FUZZ_CHECK(s.claims.n_selinux <= CDATA_HISTORY_MAX);
        FUZZ_CHECK(replay_state_to_json(&s, &a) == 0);
        FUZZ_CHECK(replay_state_from_json(a, strlen(a), &back, &err) == 0);
        FUZZ_CHECK(replay_state_to_json(&back, &b) == 0);
        FUZZ_CHECK(strcmp(a, b) == 0);
        FUZZ_CHECK(replay_state_copy(&back, &copy) == 0);
        FUZZ_CHECK(replay_state_to_json(&copy, &c) == 0);
        FUZZ_CHECK(strcmp(a, c) == 0);
        free(a);
        free(b);
        free(c);
        replay_state_done(&copy);
        replay_state_done(&back);
        replay_state_done(&s);
        return 0;
}
