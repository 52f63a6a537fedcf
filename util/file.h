/* SPDX-License-Identifier: MIT */
/*
 * Whole-file reads with a hard cap: the one way the daemon, the agent and attestctl read a config
 * file, a tokens file, a key, a certificate or an input file.
 *
 * Rules: regular files only (a FIFO, a device or a directory is refused before a byte is read, so
 * a path pointing at /dev/zero or a pipe cannot hang or flood the reader); the file's size from
 * fstat() is only a hint for the allocation and is never trusted: the read goes on until
 * read() returns 0, so a file that grows or shrinks while it is read (or a /proc file that says
 * its size is 0) is read as it is, and one that holds more than max bytes at any point is refused
 * with -E2BIG, not cut. EINTR is retried, short reads are continued.
 *
 * FILE_SECRET (keys, tokens): the file must not be accessible by group or others (mode & 077 == 0;
 * -EPERM, naming the mode), and every buffer that held its bytes is wiped before it is freed
 * (file_free_secret() for what file_read_alloc() handed out).
 *
 * Errors, with err naming the path: -errno from open/fstat/read, -EINVAL not a regular file,
 * -EPERM mode check failed, -E2BIG more than max bytes, -ENOMEM. err->code is AE_FILE; callers
 * with codes of their own (AE_TOKENS_OPEN, ...) replace it. Outputs are written only on success.
 */
#ifndef ATTEST_FILE_H
#define ATTEST_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/macro.h"

#define FILE_SECRET 1u /* refuse group/other access; wipe buffers */

/*
 * Open path for reading as the readers below do (O_CLOEXEC | O_NOCTTY, a FIFO not waited on) and
 * refuse what is not a regular file: the fd, or -errno / -EINVAL with err naming the path. For a
 * caller that reads through a bounded buffer of its own (no size cap: that is the caller's).
 */
int file_open_regular(const char *path, struct attest_err *err) _wur_;

/* Into caller storage of max bytes (not NUL terminated). */
int file_read(const char *path, void *buf, size_t max, unsigned flags, size_t *ret_len,
              struct attest_err *err) _wur_;
int file_read_fd(int fd, const char *name, void *buf, size_t max, unsigned flags, size_t *ret_len,
                 struct attest_err *err) _wur_;

/*
 * Into a new buffer of *ret_len + 1 bytes, NUL terminated (the NUL not counted; text may still
 * hold NUL bytes of its own), freed with free() or, for FILE_SECRET, file_free_secret().
 */
int file_read_alloc(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len,
                    struct attest_err *err) _wur_;
int file_read_alloc_fd(int fd, const char *name, size_t max, unsigned flags, char **ret,
                       size_t *ret_len, struct attest_err *err) _wur_;

/* Wipe len bytes (and the NUL after them) and free; NULL is fine. Returns NULL. */
char *file_free_secret(char *p, size_t len);

/*
 * Atomic whole-file writes: the one way the agent saves its id, its AK blobs and the evidence dump.
 *
 * The bytes go to ".NAME.tmp" in the target's directory (a stale one from a crash is removed
 * first, then it is created with O_EXCL | O_NOFOLLOW | O_CLOEXEC and mode, less the umask), are
 * fsync()ed, renamed over NAME, and the directory is fsync()ed so that the new entry survives a
 * power cut. EINTR is retried, short writes are continued. A target that is a symbolic link is
 * refused (-ELOOP) rather than replaced: the caller named a file, not a link. On any failure
 * before the rename the temporary file is removed and the target is left as it was.
 *
 * The bytes come from fn, called until it returns 0: > 0 bytes put in buf (at most n), or
 * -errno (with err filled) to abandon the write; http_body_fn (agent/http.h) has this shape.
 *
 * Errors, with err naming the file (code AE_FILE, unless fn set its own): -EINVAL name empty or
 * holding '/', -ENAMETOOLONG, -ELOOP, -errno from open/write/fsync/rename, fn's error.
 */
typedef ssize_t (*file_source_fn)(void *ctx, uint8_t *buf, size_t n, struct attest_err *err);

/* name (a single path component) under the directory dirfd. */
int file_write_atomic_at(int dirfd, const char *name, mode_t mode, file_source_fn fn, void *ctx,
                         struct attest_err *err) _wur_;
/* path, relative to the working directory or absolute. */
int file_write_atomic(const char *path, mode_t mode, file_source_fn fn, void *ctx,
                      struct attest_err *err) _wur_;

/* A source of bytes already in memory: file_write_atomic(p, m, file_bytes_read, &FILE_BYTES(..)) */
struct file_bytes {
        const uint8_t *p;
        size_t len, pos;
};
#define FILE_BYTES(data, n) ((struct file_bytes){.p = (const uint8_t *)(data), .len = (n)})
ssize_t file_bytes_read(void *ctx, uint8_t *buf, size_t n, struct attest_err *err);

#endif
