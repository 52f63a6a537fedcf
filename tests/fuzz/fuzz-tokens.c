/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: attestd's tokens file parser (auth_parse, daemon/auth.c). On success at most
 * AUTH_TOKENS_MAX tokens were read and the empty token has no role; a failure fills err and
 * returns no table.
 */
#include <errno.h>
#include <string.h>

#include "daemon/auth.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct auth_tokens *t = NULL;
        struct attest_err err = {0};
        int x;

        x = auth_parse((const char *)data, size, "fuzz", &t, &err);
        if (x < 0) {
                FUZZ_CHECK(t == NULL);
                FUZZ_CHECK(x == -EINVAL || x == -E2BIG || x == -ENOMEM);
                FUZZ_CHECK(err.code != AE_NONE || x == -ENOMEM);
                return 0;
        }
        FUZZ_CHECK(x == 0 && t != NULL && size <= AUTH_FILE_MAX);
        FUZZ_CHECK(auth_count(t) <= AUTH_TOKENS_MAX);
        FUZZ_CHECK(auth_lookup(t, "", 0) == AUTH_NONE);
        auth_free(t);
        return 0;
}
