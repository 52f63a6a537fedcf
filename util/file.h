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

#include "util/err.h"
#include "util/macro.h"

#define FILE_SECRET 1u /* refuse group/other access; wipe buffers */

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

#endif
