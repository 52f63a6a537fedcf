/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

#define FILE_GROW_MIN 4096

static void wipe(void *p, size_t n)
{
        if (p && n)
                explicit_bzero(p, n);
}

char *file_free_secret(char *p, size_t len)
{
        if (p) {
                wipe(p, len + 1);
                free(p);
        }
        return NULL;
}

static int fail_errno(struct attest_err *err, int e, const char *name)
{
        return attest_fail(err, e, AE_FILE, "%s: %s", name, strerror(-e));
}

/* What must hold before a byte is read: a regular file, and for secrets no group/other access. */
static int check_fd(int fd, const char *name, unsigned flags, struct stat *st,
                    struct attest_err *err)
{
        if (fstat(fd, st) < 0)
                return fail_errno(err, -errno, name);
        if (!S_ISREG(st->st_mode))
                return attest_fail(err, -EINVAL, AE_FILE, "%s: not a regular file", name);
        if ((flags & FILE_SECRET) && (st->st_mode & (S_IRWXG | S_IRWXO)))
                return attest_fail(err, -EPERM, AE_FILE,
                                   "%s: mode %04o: a secret must not be accessible by group or "
                                   "others (chmod 600)",
                                   name, (unsigned)(st->st_mode & 07777));
        return 0;
}

/* One read(), EINTR retried: bytes read, 0 at the end, -errno. */
static ssize_t read_some(int fd, void *p, size_t n)
{
        for (;;) {
                ssize_t r = read(fd, p, n);

                if (r >= 0 || errno != EINTR)
                        return r < 0 ? -errno : r;
        }
}

/* Once max bytes are in: is there one more? 0 no (the end), -E2BIG yes, -errno. */
static int past_max(int fd, const char *name, size_t max, struct attest_err *err)
{
        char extra;
        ssize_t r = read_some(fd, &extra, 1);

        if (r < 0)
                return fail_errno(err, (int)r, name);
        wipe(&extra, sizeof(extra));
        if (r > 0)
                return attest_fail(err, -E2BIG, AE_FILE, "%s: larger than %zu bytes", name, max);
        return 0;
}

int file_read_fd(int fd, const char *name, void *buf, size_t max, unsigned flags, size_t *ret_len,
                 struct attest_err *err)
{
        struct stat st;
        size_t len = 0;
        int e;

        if ((e = check_fd(fd, name, flags, &st, err)) < 0)
                return e;
        for (;;) {
                ssize_t r;

                if (len == max) {
                        e = past_max(fd, name, max, err);
                        break;
                }
                r = read_some(fd, (char *)buf + len, max - len);
                if (r < 0) {
                        e = fail_errno(err, (int)r, name);
                        break;
                }
                if (r == 0)
                        break;
                len += (size_t)r;
        }
        if (e < 0) {
                if (flags & FILE_SECRET)
                        wipe(buf, len);
                return e;
        }
        *ret_len = len;
        return 0;
}

static int open_regular(const char *path, struct attest_err *err)
{
        /* O_NONBLOCK: opening a FIFO must not wait for a writer before fstat() refuses it */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return fail_errno(err, -errno, path);
        return fd;
}

int file_read(const char *path, void *buf, size_t max, unsigned flags, size_t *ret_len,
              struct attest_err *err)
{
        int fd = open_regular(path, err), e;

        if (fd < 0)
                return fd;
        e = file_read_fd(fd, path, buf, max, flags, ret_len, err);
        close(fd);
        return e;
}

/* Grow b (cap bytes + 1 for the NUL) to ncap; a secret is copied and the old copy wiped. */
static int grow(char **b, size_t len, size_t ncap, unsigned flags)
{
        char *nb;

        if (!(flags & FILE_SECRET)) {
                nb = realloc(*b, ncap + 1);
                if (!nb)
                        return -ENOMEM;
                *b = nb;
                return 0;
        }
        nb = malloc(ncap + 1);
        if (!nb)
                return -ENOMEM;
        if (len)
                memcpy(nb, *b, len);
        file_free_secret(*b, len);
        *b = nb;
        return 0;
}

int file_read_alloc_fd(int fd, const char *name, size_t max, unsigned flags, char **ret,
                       size_t *ret_len, struct attest_err *err)
{
        struct stat st;
        char *b = NULL;
        size_t len = 0, cap, ncap;
        int e;

        if (max >= SIZE_MAX - 1)
                return attest_fail(err, -EINVAL, AE_FILE, "%s: no cap", name);
        if ((e = check_fd(fd, name, flags, &st, err)) < 0)
                return e;
        /*
         * The size is a hint: a file still at its size is read in one go plus one read that sees
         * the end (the + 1); a file that lies (/proc says 0) or grew starts small and doubles.
         */
        if (st.st_size > 0 && (uint64_t)st.st_size < max)
                cap = (size_t)st.st_size + 1;
        else if (st.st_size > 0)
                cap = max;
        else
                cap = max < FILE_GROW_MIN ? max : FILE_GROW_MIN;
        if (!(b = malloc(cap + 1)))
                return -ENOMEM;
        for (;;) {
                ssize_t r;

                if (len == cap) {
                        if (cap == max) {
                                e = past_max(fd, name, max, err);
                                break;
                        }
                        ncap = cap > max / 2 ? max : cap < FILE_GROW_MIN ? FILE_GROW_MIN : cap * 2;
                        if (ncap > max)
                                ncap = max;
                        if ((e = grow(&b, len, ncap, flags)) < 0)
                                break;
                        cap = ncap;
                }
                r = read_some(fd, b + len, cap - len);
                if (r < 0) {
                        e = fail_errno(err, (int)r, name);
                        break;
                }
                if (r == 0)
                        break;
                len += (size_t)r;
        }
        if (e < 0) {
                if (flags & FILE_SECRET)
                        file_free_secret(b, len);
                else
                        free(b);
                return e;
        }
        b[len] = '\0';
        *ret = b;
        *ret_len = len;
        return 0;
}

int file_read_alloc(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len,
                    struct attest_err *err)
{
        int fd = open_regular(path, err), e;

        if (fd < 0)
                return fd;
        e = file_read_alloc_fd(fd, path, max, flags, ret, ret_len, err);
        close(fd);
        return e;
}
