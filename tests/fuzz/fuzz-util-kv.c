/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: util/kv, the `key = value` config parser under the daemon's and the agent's
 * config files (fuzz-config, fuzz-agent-config fuzz those through their setters). On success
 * every pair points into the input, its key is 1..key_max bytes of [A-Za-z0-9._-], its value at
 * most value_max bytes without NUL, newline or blanks at either end, and lines increase within
 * lines_max; on failure err names the file and the parse stops for good.
 */
#include <errno.h>
#include <string.h>

#include "tests/fuzz/fuzz-util-kv.h"
#include "tests/fuzz/fuzz.h"
#include "util/kv.h"

static int blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct kv_limits lim = {.file_max = FUZZ_KV_FILE_MAX,
                                             .line_max = FUZZ_KV_LINE_MAX,
                                             .key_max = FUZZ_KV_KEY_MAX,
                                             .value_max = FUZZ_KV_VALUE_MAX,
                                             .lines_max = FUZZ_KV_LINES_MAX};
        struct attest_err err = {0};
        const char *text = (const char *)data;
        unsigned last = 0;
        struct kv_pair p;
        struct kv kv;
        int x;

        x = kv_init(&kv, text, size, "fuzz", &lim, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EINVAL && size > FUZZ_KV_FILE_MAX);
                FUZZ_CHECK(err.code == AE_CONFIG && !strncmp(err.msg, "fuzz: ", 6));
                return 0;
        }
        while ((x = kv_next(&kv, &p, &err)) > 0) {
                FUZZ_CHECK(fuzz_within(p.key.p, p.key.n, data, size));
                FUZZ_CHECK(fuzz_within(p.value.p, p.value.n, data, size));
                FUZZ_CHECK(p.key.n >= 1 && p.key.n <= FUZZ_KV_KEY_MAX);
                for (size_t i = 0; i < p.key.n; i++)
                        FUZZ_CHECK(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_.",
                                          p.key.p[i]) &&
                                   p.key.p[i] != '\0');
                FUZZ_CHECK(p.value.n <= FUZZ_KV_VALUE_MAX);
                FUZZ_CHECK(!memchr(p.value.p, '\0', p.value.n));
                FUZZ_CHECK(!memchr(p.value.p, '\n', p.value.n));
                FUZZ_CHECK(p.value.n == 0 ||
                           (!blank(p.value.p[0]) && !blank(p.value.p[p.value.n - 1])));
                /* the '=' that ends the key comes before the value */
                FUZZ_CHECK(p.value.p >= p.key.p + p.key.n + 1 || p.value.n == 0);
                FUZZ_CHECK(p.line > last && p.line <= FUZZ_KV_LINES_MAX);
                last = p.line;
        }
        if (x < 0) {
                FUZZ_CHECK(x == -EINVAL && err.code == AE_CONFIG);
                FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
                FUZZ_CHECK(!strncmp(err.msg, "fuzz:", 5));
        }
        return 0;
}
