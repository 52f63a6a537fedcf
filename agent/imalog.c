/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "agent/imalog.h"

void imalog_init(struct imalog *l, const char *path, enum ima_format format, size_t max_bytes)
{
        *l = (struct imalog){.path = path,
                             .format = format,
                             .max_bytes = max_bytes ? max_bytes : IMALOG_MAX_DEFAULT};
}

/* Read from byte off to EOF, at most max bytes (-E2BIG beyond). securityfs files report size 0,
 * so this reads until EOF rather than trusting st_size. */
static int read_from(const char *path, off_t off, size_t max, uint8_t **ret, size_t *ret_len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0;

        if (fd < 0)
                return -errno;
        if (off && lseek(fd, off, SEEK_SET) != off) {
                close(fd);
                return -EIO;
        }
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        size_t ncap = cap ? cap * 2 : 65536;
                        uint8_t *nb;

                        if (cap > max) {
                                free(buf);
                                close(fd);
                                return -E2BIG;
                        }
                        if (ncap > max + 1)
                                ncap = max + 1;
                        nb = realloc(buf, ncap);
                        if (!nb) {
                                free(buf);
                                close(fd);
                                return -ENOMEM;
                        }
                        buf = nb;
                        cap = ncap;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;
                        free(buf);
                        close(fd);
                        return e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max) {
                        free(buf);
                        close(fd);
                        return -E2BIG;
                }
        }
        close(fd);
        *ret = buf;
        *ret_len = len;
        return 0;
}

/*
 * Walk the entries of buf: skip `skip` of them (their end offset goes to *ret_skip_end), then
 * count the rest up to the last complete one (*ret_end). Returns the number of entries after the
 * skipped ones, or a negative errno.
 */
static int64_t walk(const struct imalog *l, const uint8_t *buf, size_t len, uint64_t skip,
                    size_t *ret_skip_end, size_t *ret_end, uint64_t *ret_skipped,
                    struct attest_err *err)
{
        struct ima_log_opts o = {.max_entries = UINT64_MAX};
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t n = 0;
        size_t end = 0, skip_end = 0;
        int x;

        if (l->format == IMA_FORMAT_ASCII) {
                if ((x = ima_reader_init_ascii(&rd, (const char *)buf, len, &o)) < 0)
                        return x;
        } else {
                ima_reader_init_binary(&rd, buf, len, &o);
        }
        while ((x = ima_reader_next(&rd, &e, err)) > 0) {
                if (rd.idx <= skip)
                        skip_end = rd_offset(&rd.r);
                else
                        n++;
                end = rd_offset(&rd.r);
        }
        ima_reader_done(&rd);
        /* an entry still being written at the end is left for the next round */
        if (x < 0 && !(err && err->code == AE_IMA_TRUNCATED))
                return x;
        *ret_skipped = rd.idx < skip ? rd.idx : skip;
        *ret_skip_end = skip_end;
        *ret_end = end;
        return (int64_t)n;
}

int imalog_read(struct imalog *l, uint64_t from, uint8_t **ret, size_t *ret_len, uint64_t *ret_from,
                uint64_t *ret_count, struct attest_err *err)
{
        uint8_t *buf = NULL;
        size_t len = 0, skip_end, end;
        uint64_t base = 0, skipped;
        off_t off = 0;
        int64_t n;
        int x;

        if (l->cached && l->cached_entry <= from) {
                base = l->cached_entry;
                off = l->cached_off;
        }
        x = read_from(l->path, off, l->max_bytes, &buf, &len);
        if (x < 0)
                return attest_fail(err, x, x == -E2BIG ? AE_IMALOG_TOO_BIG : AE_IMALOG_READ,
                                   "%s: %s", l->path,
                                   x == -E2BIG ? "log increment over the size cap" : strerror(-x));
        n = walk(l, buf, len, from - base, &skip_end, &end, &skipped, err);
        if (n < 0) {
                free(buf);
                attest_err_prefix(err, "%s", l->path);
                return (int)n;
        }
        if (base + skipped < from) {
                /* fewer entries than asked: a new boot (or a cache from one); send it all */
                free(buf);
                l->cached = false;
                if (base != 0)
                        return imalog_read(l, from, ret, ret_len, ret_from, ret_count, err);
                return imalog_read(l, 0, ret, ret_len, ret_from, ret_count, err);
        }
        memmove(buf, buf + skip_end, end - skip_end);
        *ret_len = end - skip_end;
        *ret = buf;
        *ret_from = from;
        *ret_count = (uint64_t)n;
        l->cached = true;
        l->cached_entry = from + (uint64_t)n;
        l->cached_off = off + (off_t)end;
        return 0;
}
