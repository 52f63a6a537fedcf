/* SPDX-License-Identifier: MIT */
/*
 * Bounded reader: a cursor over a byte span that every parser of untrusted bytes uses.
 *
 * Rules (OpenSSH sshbuf, tpm2-tss MU): every read checks `n > left` before touching memory, so no
 * pointer is ever formed from an untrusted length; a failed read leaves the reader unchanged;
 * getters name the byte order. Returned pointers are borrowed from the span the reader was made on.
 *
 * Errors: -EBADMSG when fewer bytes remain than asked, -E2BIG when a length prefix exceeds its cap.
 */
#ifndef ATTEST_RD_H
#define ATTEST_RD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"

struct rd {
        const uint8_t *p; /* next unread byte */
        size_t left;      /* bytes after p */
        size_t size;      /* size of the whole span, for rd_offset() */
};

#define RD_INIT(buf, len)                                                                          \
        {                                                                                          \
                .p = (const uint8_t *)(buf), .left = (len), .size = (len)                          \
        }

static inline size_t rd_offset(const struct rd *r)
{
        return r->size - r->left;
}

static inline size_t rd_left(const struct rd *r)
{
        return r->left;
}

/* Borrow n bytes. */
static inline _wur_ int rd_bytes(struct rd *r, size_t n, const uint8_t **ret)
{
        if (n > r->left)
                return -EBADMSG;
        if (ret)
                *ret = r->p;
        r->p += n;
        r->left -= n;
        return 0;
}

/* Copy n bytes into out. */
static inline _wur_ int rd_copy(struct rd *r, void *out, size_t n)
{
        if (n > r->left)
                return -EBADMSG;
        memcpy(out, r->p, n);
        r->p += n;
        r->left -= n;
        return 0;
}

static inline _wur_ int rd_u8(struct rd *r, uint8_t *ret)
{
        if (r->left < 1)
                return -EBADMSG;
        *ret = r->p[0];
        r->p++;
        r->left--;
        return 0;
}

static inline _wur_ int rd_u16be(struct rd *r, uint16_t *ret)
{
        if (r->left < 2)
                return -EBADMSG;
        *ret = (uint16_t)((uint16_t)r->p[0] << 8 | r->p[1]);
        r->p += 2;
        r->left -= 2;
        return 0;
}

static inline _wur_ int rd_u32be(struct rd *r, uint32_t *ret)
{
        if (r->left < 4)
                return -EBADMSG;
        *ret = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 |
               (uint32_t)r->p[3];
        r->p += 4;
        r->left -= 4;
        return 0;
}

static inline _wur_ int rd_u32le(struct rd *r, uint32_t *ret)
{
        if (r->left < 4)
                return -EBADMSG;
        *ret = (uint32_t)r->p[3] << 24 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[1] << 8 |
               (uint32_t)r->p[0];
        r->p += 4;
        r->left -= 4;
        return 0;
}

static inline _wur_ int rd_u16le(struct rd *r, uint16_t *ret)
{
        if (r->left < 2)
                return -EBADMSG;
        *ret = (uint16_t)((uint16_t)r->p[1] << 8 | r->p[0]);
        r->p += 2;
        r->left -= 2;
        return 0;
}

static inline _wur_ int rd_u64be(struct rd *r, uint64_t *ret)
{
        uint64_t v = 0;

        if (r->left < 8)
                return -EBADMSG;
        for (int i = 0; i < 8; i++)
                v = v << 8 | r->p[i];
        *ret = v;
        r->p += 8;
        r->left -= 8;
        return 0;
}

static inline _wur_ int rd_u64le(struct rd *r, uint64_t *ret)
{
        uint64_t v = 0;

        if (r->left < 8)
                return -EBADMSG;
        for (int i = 7; i >= 0; i--)
                v = v << 8 | r->p[i];
        *ret = v;
        r->p += 8;
        r->left -= 8;
        return 0;
}

/* Skip n bytes. */
static inline _wur_ int rd_skip(struct rd *r, size_t n)
{
        return rd_bytes(r, n, NULL);
}

/* 0 when every byte was read, -EBADMSG when some are left (trailing data). */
static inline _wur_ int rd_done(const struct rd *r)
{
        return r->left ? -EBADMSG : 0;
}

/* A u32 in the given byte order (big_endian false: little-endian). */
static inline _wur_ int rd_u32(struct rd *r, int big_endian, uint32_t *ret)
{
        return big_endian ? rd_u32be(r, ret) : rd_u32le(r, ret);
}

/*
 * A u32 length prefix in the given byte order followed by that many bytes, borrowed. -E2BIG when
 * the length exceeds max; the reader is unchanged on any failure.
 */
static inline _wur_ int rd_sized(struct rd *r, int big_endian, uint32_t max, const uint8_t **ret,
                                 uint32_t *ret_len)
{
        struct rd save = *r;
        uint32_t n;
        int e;

        if ((e = rd_u32(r, big_endian, &n)) < 0)
                return e;
        if (n > max) {
                *r = save;
                return -E2BIG;
        }
        if (n > r->left) {
                *r = save;
                return -EBADMSG;
        }
        *ret = r->p;
        *ret_len = n;
        r->p += n;
        r->left -= n;
        return 0;
}

#endif
