/* SPDX-License-Identifier: MIT */
/*
 * Bounded writer: the one way bytes rebuilt from untrusted input (template data from an ascii
 * line, a digest from hex, a value from base64) are written. The counterpart of rd.h.
 *
 * Rules (OpenSSH sshbuf_put*): the hard maximum is fixed at init and never grows; every append
 * checks `n > max - len` (no sum that can wrap) before touching memory; a failed append leaves
 * the writer unchanged, byte for byte and in length. Nothing is formed from an untrusted length
 * before it is checked. Putters name the byte order.
 *
 * Errors: -E2BIG when the append would pass the maximum, -EBADMSG when the input to a decoding
 * putter (hex, base64) is malformed, -EINVAL on a mark or offset outside the written bytes.
 */
#ifndef ATTEST_BUF_H
#define ATTEST_BUF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"

struct wb {
        uint8_t *p; /* storage, max bytes */
        size_t len; /* bytes written */
        size_t max; /* hard maximum, set at init */
        bool owned; /* p was allocated by wb_new() */
};

/* A writer over caller storage of max bytes. */
#define WB_INIT(storage, max_)                                                                     \
        {                                                                                          \
                .p = (uint8_t *)(storage), .len = 0, .max = (max_), .owned = false                 \
        }

static inline void wb_init(struct wb *w, void *storage, size_t max)
{
        *w = (struct wb)WB_INIT(storage, max);
}

/* A writer over max bytes of its own (freed by wb_free); -ENOMEM. max 0 is allowed. */
int wb_new(struct wb *w, size_t max) _wur_;
void wb_free(struct wb *w);

static inline size_t wb_len(const struct wb *w)
{
        return w->len;
}

static inline size_t wb_avail(const struct wb *w)
{
        return w->max - w->len;
}

static inline const uint8_t *wb_data(const struct wb *w)
{
        return w->p;
}

/* Forget everything written; the maximum stays. */
static inline void wb_reset(struct wb *w)
{
        w->len = 0;
}

/*
 * Marks: wb_len() before a multi-step append; wb_rollback(w, mark) undoes every append since, so a
 * composite write (a length-prefixed field) fails as a whole.
 */
int wb_rollback(struct wb *w, size_t mark) _wur_;

/*
 * Reserve n bytes at the end and hand out a pointer to them, to be filled at once by the caller
 * (the length counts them already). The only way to write in place. Inline: the ascii IMA reader
 * reserves each field of every entry.
 */
_wur_ static inline int wb_reserve(struct wb *w, size_t n, uint8_t **ret)
{
        if (n > w->max - w->len)
                return -E2BIG;
        if (ret)
                *ret = w->p + w->len;
        w->len += n;
        return 0;
}

int wb_put(struct wb *w, const void *p, size_t n) _wur_;
int wb_put_u8(struct wb *w, uint8_t v) _wur_;
int wb_put_u16be(struct wb *w, uint16_t v) _wur_;
int wb_put_u32be(struct wb *w, uint32_t v) _wur_;
int wb_put_u32le(struct wb *w, uint32_t v) _wur_;
int wb_put_u64le(struct wb *w, uint64_t v) _wur_;
/* big_endian false: little-endian. */
int wb_put_u32(struct wb *w, bool big_endian, uint32_t v) _wur_;
/* Overwrite 4 bytes already written at off (a length prefix reserved earlier). */
int wb_set_u32(struct wb *w, size_t off, bool big_endian, uint32_t v) _wur_;

/* Decode n hex digits (either case); -EBADMSG odd count or non-hex, -E2BIG past the maximum. */
int wb_put_hex(struct wb *w, const char *s, size_t n) _wur_;
/* Decode standard padded base64 (RFC 4648), canonical trailing bits only. */
int wb_put_b64(struct wb *w, const char *s, size_t n) _wur_;
/*
 * The same in one pass, for a writer over scratch storage: on -EBADMSG the bytes past wb_len() may
 * hold part of the decode (the length is unchanged, and so is everything before it). The same
 * errors in the same order: -EBADMSG for a length that is not a multiple of 4, then -E2BIG, then
 * -EBADMSG for a bad character.
 */
int wb_put_b64_scratch(struct wb *w, const char *s, size_t n) _wur_;

/*
 * A u32 length-prefixed field: wb_sized_begin() writes a zero prefix and returns its mark;
 * wb_sized_end() patches in the byte count written since. -E2BIG when the field passes limit
 * bytes (its own cap, e.g. a name max), the writer unchanged. On any failure from begin to end
 * the caller rolls back to the mark, so the field is written whole or not at all.
 */
int wb_sized_begin(struct wb *w, bool big_endian, size_t *ret_mark) _wur_;
int wb_sized_end(struct wb *w, bool big_endian, size_t mark, size_t limit) _wur_;

/*
 * A compact JSON object's text obj (n bytes: "{" members "}" with at least one member, as
 * json_dumps(JSON_COMPACT) writes it) with the integer member "key":value put in front: the bytes
 * jansson writes for the same object with that member inserted first, without parsing or
 * re-encoding obj. key: a literal that needs no escape. Nothing is checked inside obj (it was
 * written by a JSON encoder); -EINVAL when it is not "{" ... "}" with room for a member, -E2BIG
 * past the maximum (the writer unchanged).
 */
int wb_put_json_int_first(struct wb *w, const char *key, int64_t value, const char *obj, size_t n)
        _wur_;

/*
 * A compact JSON object's text obj (n bytes, "{" ... "}", as json_dumps(JSON_COMPACT) writes it)
 * with the member "key":raw appended last: the bytes jansson writes for the same object with that
 * member set last, when raw (rn bytes) is the compact text jansson wrote for its value. raw is
 * JSON text already rendered and is put as it is: neither parsed nor checked. key: a literal that
 * needs no escape. -EINVAL when obj is not "{" ... "}" or raw is empty, -E2BIG past the maximum
 * (the writer unchanged).
 */
int wb_put_json_raw_last(struct wb *w, const char *obj, size_t n, const char *key, const char *raw,
                         size_t rn) _wur_;

/*
 * s as a JSON string ("s") when every byte is printable ASCII other than '"' and '\\' (0x20..0x7e):
 * then the bytes are what any JSON encoder writes (jansson: json_dumps of json_string(s) with
 * JSON_ENCODE_ANY). -EINVAL for any other byte (the caller encodes such text with its escapes),
 * -E2BIG past the maximum; the writer unchanged on error.
 */
int wb_put_json_plain(struct wb *w, const char *s) _wur_;

#endif
