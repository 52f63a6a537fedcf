/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "attestctl/attestctl.h"
#include "util/file.h"

int ctl_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len)
{
        struct attest_err err = {0};
        char *buf;
        int x;

        if ((x = file_read_alloc(path, max, 0, &buf, ret_len, &err)) < 0) {
                fprintf(stderr, "attestctl: %s\n", err.msg); /* names the path and the cause */
                return x;
        }
        *ret = (uint8_t *)buf;
        return 0;
}
