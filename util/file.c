/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

/*
 * Read into buf[*len .. cap) until it is full or the file ends, EINTR retried, short reads
 * continued: 1 full, 0 the end came first, -errno.
 */
static int fill(int fd, char *buf, size_t cap, size_t *len)
{
        while (*len < cap) {
                ssize_t r = read(fd, buf + *len, cap - *len);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return 0;
                *len += (size_t)r;
        }
        return 1;
}

/* Once max bytes are in: is there one more? 0 no (the end), -E2BIG yes, -errno. */
static int past_max(int fd, const char *name, size_t max, struct attest_err *err)
{
        char extra;
        size_t n = 0;
        int r = fill(fd, &extra, 1, &n);

        wipe(&extra, sizeof(extra));
        if (r < 0)
                return fail_errno(err, r, name);
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
        e = fill(fd, buf, max, &len);
        if (e < 0)
                e = fail_errno(err, e, name);
        else if (e > 0)
                e = past_max(fd, name, max, err);
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

int file_open_regular(const char *path, struct attest_err *err)
{
        struct stat st;
        int fd = open_regular(path, err), e;

        if (fd < 0)
                return fd;
        if ((e = check_fd(fd, path, 0, &st, err)) < 0) {
                close(fd);
                return e;
        }
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
        /* fill, grow (doubling, never past max), fill again; at max, one more byte is too many */
        for (;;) {
                if ((e = fill(fd, b, cap, &len)) <= 0) {
                        if (e < 0)
                                e = fail_errno(err, e, name);
                        break;
                }
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

ssize_t file_bytes_read(void *ctx, uint8_t *buf, size_t n, struct attest_err *err)
{
        struct file_bytes *b = ctx;
        size_t k = b->len - b->pos < n ? b->len - b->pos : n;

        (void)err;
        memcpy(buf, b->p + b->pos, k);
        b->pos += k;
        return (ssize_t)k;
}

static int write_all(int fd, const uint8_t *buf, size_t len)
{
        for (size_t off = 0; off < len;) {
                ssize_t n = write(fd, buf + off, len - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                off += (size_t)n;
        }
        return 0;
}

static int fsync_retry(int fd)
{
        while (fsync(fd) < 0) {
                if (errno != EINTR)
                        return -errno;
        }
        return 0;
}

/* Fill the open temporary file fd from fn, then fsync and close it (always closed). */
static int fill_tmp(int fd, const char *shown, file_source_fn fn, void *ctx, struct attest_err *err)
{
        uint8_t buf[16384];
        ssize_t n;
        int e = 0;

        while (e == 0 && (n = fn(ctx, buf, sizeof(buf), err)) != 0) {
                if (n < 0)
                        e = (int)n;
                else if ((size_t)n > sizeof(buf))
                        e = attest_fail(err, -EINVAL, AE_FILE, "%s: source gave %zd > %zu bytes",
                                        shown, n, sizeof(buf));
                else if ((e = write_all(fd, buf, (size_t)n)) < 0)
                        e = fail_errno(err, e, shown);
        }
        if (e == 0 && (e = fsync_retry(fd)) < 0)
                e = fail_errno(err, e, shown);
        if (close(fd) < 0 && e == 0)
                e = fail_errno(err, -errno, shown);
        return e;
}

/* shown: how messages name the file (the caller's path, or name). */
static int write_atomic(int dirfd, const char *name, const char *shown, mode_t mode,
                        file_source_fn fn, void *ctx, struct attest_err *err)
{
        char tmp[NAME_MAX + 1];
        struct stat st;
        int fd, e;

        if (!*name || strchr(name, '/'))
                return attest_fail(err, -EINVAL, AE_FILE, "%s: not a file name", shown);
        if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= sizeof(tmp))
                return attest_fail(err, -ENAMETOOLONG, AE_FILE, "%s: name too long", shown);
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                return attest_fail(err, -ELOOP, AE_FILE, "%s: a symbolic link, not replaced",
                                   shown);
        (void)unlinkat(dirfd, tmp, 0);
        do
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
                return fail_errno(err, -errno, shown);
        e = fill_tmp(fd, shown, fn, ctx, err);
        if (e == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                e = fail_errno(err, -errno, shown);
        if (e < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return e;
        }
        if ((e = fsync_retry(dirfd)) < 0)
                return attest_fail(err, e, AE_FILE, "%s: directory fsync: %s", shown, strerror(-e));
        return 0;
}

int file_write_atomic_at(int dirfd, const char *name, mode_t mode, file_source_fn fn, void *ctx,
                         struct attest_err *err)
{
        return write_atomic(dirfd, name, name, mode, fn, ctx, err);
}

int file_write_atomic(const char *path, mode_t mode, file_source_fn fn, void *ctx,
                      struct attest_err *err)
{
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        size_t n;
        int dirfd, e;

        if (!slash) {
                memcpy(dir, ".", 2);
        } else {
                n = slash == path ? 1 : (size_t)(slash - path);
                if (n >= sizeof(dir))
                        return attest_fail(err, -ENAMETOOLONG, AE_FILE, "%s: path too long", path);
                memcpy(dir, path, n);
                dir[n] = '\0';
        }
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return fail_errno(err, -errno, path);
        e = write_atomic(dirfd, slash ? slash + 1 : path, path, mode, fn, ctx, err);
        close(dirfd);
        return e;
}
