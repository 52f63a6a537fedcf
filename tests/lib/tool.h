/* SPDX-License-Identifier: MIT */
/* Shared bits of the test tools and tests: whole-file reads through util/file. */
#ifndef TESTS_LIB_TOOL_H
#define TESTS_LIB_TOOL_H

#include <errno.h>
#include <stdint.h>

#include "util/file.h"

#define TOOL_READ_MAX (256u * 1024 * 1024)

/* The whole file at path (at most TOOL_READ_MAX) in a new NUL-terminated buffer (free()), its
 * size in *ret_len; NULL with errno set when it cannot be read. */
static inline uint8_t *tool_read(const char *path, size_t *ret_len)
{
        char *buf = NULL;
        int e = file_read_alloc(path, TOOL_READ_MAX, 0, &buf, ret_len, NULL);

        if (e < 0) {
                errno = -e;
                return NULL;
        }
        return (uint8_t *)buf;
}

#endif
