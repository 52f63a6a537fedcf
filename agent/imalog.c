/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "agent/imalog.h"

void imalog_init(struct imalog *l, const char *path, enum ima_format format, size_t max_bytes)
{
        *l = (struct imalog){.path = path,
                             .format = format,
                             .max_bytes = max_bytes ? max_bytes : IMALOG_MAX_DEFAULT};
}

static void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

/* Read until n bytes or the end of the file; securityfs files report size 0, so st_size is never
 * trusted. The count read, or a negative errno. */
static ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
        size_t got = 0;

        while (got < n) {
                ssize_t r = read(fd, buf + got, n - got);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        break;
                got += (size_t)r;
        }
        return (ssize_t)got;
}

static int open_at(const char *path, off_t off)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (off && lseek(fd, off, SEEK_SET) != off) {
                close(fd);
                return -EIO;
        }
        return fd;
}

/* An entry still being written at the end of what was read: not an error, it is left for later. */
static bool truncated(const struct attest_err *err)
{
        return err && err->code == AE_IMA_TRUNCATED;
}

/*
 * The whole entries at the start of buf (len bytes): *ret_used is where the last one ends. Entries
 * before number `from` (counting from *idx) are skipped: *ret_skip_end is where the last skipped
 * one ends. Advances *idx.
 */
static int parse_chunk(const struct imalog *l, const uint8_t *buf, size_t len, uint64_t from,
                       uint64_t *idx, size_t *ret_skip_end, size_t *ret_used,
                       struct attest_err *err)
{
        struct ima_log_opts o = {.max_entries = UINT64_MAX};
        struct ima_reader rd;
        struct ima_entry e;
        size_t used = 0, skip_end = 0;
        int x;

        if (l->format == IMA_FORMAT_ASCII) {
                if ((x = ima_reader_init_ascii(&rd, (const char *)buf, len, &o)) < 0)
                        return attest_fail(err, x, AE_IMALOG_READ, "out of memory");
        } else {
                ima_reader_init_binary(&rd, buf, len, &o);
        }
        while ((x = ima_reader_next(&rd, &e, err)) > 0) {
                used = rd_offset(&rd.r);
                if (*idx < from)
                        skip_end = used;
                (*idx)++;
        }
        ima_reader_done(&rd);
        if (x < 0 && !truncated(err))
                return x;
        *ret_skip_end = skip_end;
        *ret_used = used;
        return 0;
}

int imalog_scan(struct imalog *l, uint64_t from, struct imalog_span *ret, struct attest_err *err)
{
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_(closep) int fd = -1;
        uint64_t base = 0, idx;
        off_t pos = 0, start = -1; /* pos: file offset of buf[0] */
        size_t have = 0;
        bool eof = false;
        int x;

        if (l->cached && l->cached_entry <= from) {
                base = l->cached_entry;
                pos = l->cached_off;
        }
        idx = base;
        if (idx == from)
                start = pos;
        if ((fd = open_at(l->path, pos)) < 0)
                return attest_fail(err, fd, AE_IMALOG_READ, "%s: %s", l->path, strerror(-fd));
        if (!(buf = malloc(IMALOG_CHUNK)) || hasher_new(&h) < 0 || hasher_begin(h, BANK_SHA256) < 0)
                return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "out of memory");
        while (!eof) {
                ssize_t n = read_full(fd, buf + have, IMALOG_CHUNK - have);
                size_t skip_end, used;

                if (n < 0)
                        return attest_fail(err, (int)n, AE_IMALOG_READ, "%s: %s", l->path,
                                           strerror((int)-n));
                eof = have + (size_t)n < IMALOG_CHUNK;
                have += (size_t)n;
                if ((x = parse_chunk(l, buf, have, from, &idx, &skip_end, &used, err)) < 0) {
                        attest_err_prefix(err, "%s", l->path);
                        return x;
                }
                if (start < 0 && idx >= from)
                        start = pos + (off_t)skip_end;
                if (start >= 0) {
                        size_t h0 = start > pos ? (size_t)(start - pos) : 0;

                        if (used > h0 && hasher_update(h, buf + h0, used - h0) < 0)
                                return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "hash failed");
                        if ((uint64_t)(pos + (off_t)used - start) > l->max_bytes)
                                return attest_fail(err, -E2BIG, AE_IMALOG_TOO_BIG,
                                                   "%s: log increment over the size cap of %zu "
                                                   "bytes",
                                                   l->path, l->max_bytes);
                }
                if (used == 0 && have == IMALOG_CHUNK) /* the readers' caps make this unreachable */
                        return attest_fail(err, -E2BIG, AE_IMALOG_TOO_BIG,
                                           "%s: an entry at byte %lld is longer than %u bytes",
                                           l->path, (long long)pos, IMALOG_CHUNK);
                memmove(buf, buf + used, have - used);
                have -= used;
                pos += (off_t)used;
        }
        if (idx < from) {
                /* fewer entries than asked: a new boot (or a cache from one); send it all */
                l->cached = false;
                return imalog_scan(l, base != 0 ? from : 0, ret, err);
        }
        *ret = (struct imalog_span){.from = from, .count = idx - from, .start = start, .end = pos};
        if (hasher_end(h, ret->sha256) < 0)
                return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "hash failed");
        l->cached = true;
        l->cached_entry = idx;
        l->cached_off = pos;
        return 0;
}

int imalog_stream_open(const struct imalog *l, const struct imalog_span *s,
                       struct imalog_stream *ret, struct attest_err *err)
{
        struct imalog_stream st = {.fd = -1, .pos = s->start, .end = s->end};

        memcpy(st.want, s->sha256, sizeof(st.want));
        if (hasher_new(&st.h) < 0 || hasher_begin(st.h, BANK_SHA256) < 0) {
                hasher_free(st.h);
                return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "out of memory");
        }
        if ((st.fd = open_at(l->path, s->start)) < 0) {
                int e = st.fd;

                hasher_free(st.h);
                return attest_fail(err, e, AE_IMALOG_READ, "%s: %s", l->path, strerror(-e));
        }
        *ret = st;
        return 0;
}

ssize_t imalog_stream_read(struct imalog_stream *st, uint8_t *buf, size_t n, struct attest_err *err)
{
        size_t want = (size_t)(st->end - st->pos);
        uint8_t got_sha[32];
        ssize_t r;

        if (want == 0)
                return 0;
        if (n < want)
                want = n;
        r = read_full(st->fd, buf, want);
        if (r < 0)
                return attest_fail(err, (int)r, AE_IMALOG_READ, "IMA log: %s", strerror((int)-r));
        if ((size_t)r < want)
                return attest_fail(err, -ESTALE, AE_IMALOG_READ,
                                   "IMA log shrank while it was sent (%lld bytes short)",
                                   (long long)(st->end - st->pos - r));
        if (hasher_update(st->h, buf, (size_t)r) < 0)
                return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "hash failed");
        st->pos += r;
        if (st->pos == st->end) {
                if (hasher_end(st->h, got_sha) < 0)
                        return attest_fail(err, -ENOMEM, AE_IMALOG_READ, "hash failed");
                if (CRYPTO_memcmp(got_sha, st->want, sizeof(got_sha)) != 0)
                        return attest_fail(err, -ESTALE, AE_IMALOG_READ,
                                           "IMA log changed under the entries being sent");
        }
        return r;
}

void imalog_stream_close(struct imalog_stream *st)
{
        if (st->fd >= 0)
                close(st->fd);
        st->fd = -1;
        st->h = hasher_free(st->h);
}
