/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/attestctl.h"

int ctl_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len)
{
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0, cap = 0;
        FILE *f = fopen(path, "rb");

        if (!f) {
                fprintf(stderr, "attestctl: %s: %s\n", path, strerror(errno));
                return -errno;
        }
        for (;;) {
                if (len == cap) {
                        size_t ncap = cap ? cap * 2 : 65536;
                        uint8_t *nb;

                        if (cap >= max + 1) {
                                fclose(f);
                                fprintf(stderr, "attestctl: %s: larger than %zu bytes\n", path,
                                        max);
                                return -E2BIG;
                        }
                        if (ncap > max + 1)
                                ncap = max + 1;
                        nb = realloc(buf, ncap + 1);
                        if (!nb) {
                                fclose(f);
                                return -ENOMEM;
                        }
                        buf = nb;
                        cap = ncap;
                }
                size_t n = fread(buf + len, 1, cap - len, f);
                if (n == 0)
                        break;
                len += n;
        }
        if (ferror(f)) {
                fclose(f);
                fprintf(stderr, "attestctl: %s: read error\n", path);
                return -EIO;
        }
        fclose(f);
        if (len > max) {
                fprintf(stderr, "attestctl: %s: larger than %zu bytes\n", path, max);
                return -E2BIG;
        }
        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[len] = '\0'; /* convenience for text files; not counted in len */
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}
