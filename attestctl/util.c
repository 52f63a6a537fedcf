/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static int fd_read(void *ctx, uint8_t *buf, size_t n, size_t *ret_n)
{
        const struct ctl_log *l = ctx;

        for (;;) {
                ssize_t r = read(l->fd, buf, n);

                if (r >= 0) {
                        *ret_n = (size_t)r;
                        return 0;
                }
                if (errno != EINTR)
                        return -errno;
        }
}

int ctl_log_open(const char *path, enum ima_stream_format format, const struct ima_log_opts *opts,
                 struct ctl_log *ret)
{
        struct attest_err err = {0};
        int x;

        if (strcmp(path, "-") == 0) {
                ret->fd = STDIN_FILENO;
        } else if ((ret->fd = file_open_regular(path, &err)) < 0) {
                fprintf(stderr, "attestctl: %s\n", err.msg); /* names the path and the cause */
                return ret->fd;
        } else {
                (void)posix_fadvise(ret->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        }
        if ((x = ima_stream_init(&ret->s, format, 0, fd_read, ret, opts)) < 0) {
                fprintf(stderr, "attestctl: %s: %s\n", path, strerror(-x));
                if (ret->fd != STDIN_FILENO)
                        close(ret->fd);
                return x;
        }
        return 0;
}

void ctl_log_close(struct ctl_log *l)
{
        ima_stream_done(&l->s);
        if (l->fd != STDIN_FILENO)
                close(l->fd);
}
