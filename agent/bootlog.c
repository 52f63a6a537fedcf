/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/bootlog.h"
#include "util/file.h"

int bootlog_read(const char *path, size_t max, uint64_t offset, uint64_t *ret_from, uint8_t **ret,
                 size_t *ret_len, struct attest_err *err)
{
        char *all = NULL;
        uint8_t *out;
        size_t len, n;
        uint64_t from;
        int x;

        if (max == 0 || max > BOOTLOG_MAX)
                max = BOOTLOG_MAX;
        if ((x = file_read_alloc(path, max, 0, &all, &len, err)) < 0)
                return x;
        /* shorter than what the verifier holds: a log of another boot, sent whole */
        from = offset <= len ? offset : 0;
        n = len - (size_t)from;
        out = malloc(n ? n : 1);
        if (!out) {
                free(all);
                return attest_fail(err, -ENOMEM, AE_INTERNAL, "out of memory");
        }
        memcpy(out, all + from, n);
        free(all);
        *ret_from = from;
        *ret = out;
        *ret_len = n;
        return 0;
}
