/* SPDX-License-Identifier: MIT */
/* Shared bits of the test tools and tests: whole-file reads. */
#ifndef TESTS_LIB_TOOL_H
#define TESTS_LIB_TOOL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file at path in a new NUL-terminated buffer (free()), its size in *ret_len; NULL
 * with errno set when it cannot be opened or read. */
static inline uint8_t *tool_read(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL, *nb;
        size_t len = 0, cap = 0, n;
        int e;

        *ret_len = 0;
        if (!f)
                return NULL;
        for (;;) {
                if (len + 4096 + 1 > cap) {
                        cap = cap ? 2 * cap : 65536;
                        nb = realloc(buf, cap);
                        if (!nb)
                                goto fail;
                        buf = nb;
                }
                n = fread(buf + len, 1, cap - len - 1, f);
                if (n == 0)
                        break;
                len += n;
        }
        if (ferror(f))
                goto fail;
        fclose(f);
        buf[len] = '\0';
        *ret_len = len;
        return buf;
fail:
        e = ferror(f) ? EIO : ENOMEM;
        fclose(f);
        free(buf);
        errno = e;
        return NULL;
}

/* Up to max bytes of the file at path into buf; the byte count. A file that cannot be opened
 * ends the tool (exit 2, the usage status). */
static inline size_t tool_slurp(const char *path, uint8_t *buf, size_t max)
{
        FILE *f = fopen(path, "rb");
        size_t n;

        if (!f) {
                perror(path);
                exit(2);
        }
        n = fread(buf, 1, max, f);
        fclose(f);
        return n;
}

#endif
