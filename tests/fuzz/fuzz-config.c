/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: attestd's configuration file parser (config_parse, daemon/config.c). On
 * success every string option is NUL terminated within CONFIG_STR_MAX and every number within
 * its flag's range; a failure fills err.
 */
#include <errno.h>
#include <string.h>

#include "daemon/config.h"
#include "tests/fuzz/fuzz.h"

static void check_str(const char *s)
{
        FUZZ_CHECK(memchr(s, '\0', CONFIG_STR_MAX) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct config c;
        struct attest_err err = {0};
        int x;

        memset(&c, 0, sizeof(c));
        x = config_parse((const char *)data, size, "fuzz", &c, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EINVAL);
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
                return 0;
        }
        FUZZ_CHECK(x == 0 && size <= CONFIG_FILE_MAX);
        check_str(c.listen);
        check_str(c.tls_cert);
        check_str(c.tls_key);
        check_str(c.db);
        check_str(c.tokens);
        check_str(c.pcr_selection);
        check_str(c.ek_ca);
        FUZZ_CHECK(c.config_file[0] == '\0'); /* "config" is refused in the file */
        FUZZ_CHECK(c.threads <= 1024 && c.db_connections <= 1024);
        FUZZ_CHECK(c.retain <= 1000000 && c.nonce_ttl <= 3600);
        FUZZ_CHECK(c.max_body <= 16777216 && c.max_evidence <= 1073741824);
        FUZZ_CHECK(c.db_mode == CONFIG_DB_WRITER || c.db_mode == CONFIG_DB_POOL);
        return 0;
}
