/* SPDX-License-Identifier: MIT */
/*
 * Incremental IMA log reader, streaming: the entries from number N to the current end, as the
 * verifier's challenge asks (`ima_offset`), in bounded chunks and never whole in memory.
 *
 * A round scans first (imalog_scan(): entry boundaries through the bounded reader, the byte range
 * of the whole entries from N, and a SHA-256 of those bytes), then streams the same bytes out
 * (imalog_stream_*) while they are sent. Both happen after the quote. The byte offset of the last
 * end is remembered, so a round reads only what is new; the log is read from its start again only
 * when the verifier asks for an older offset.
 *
 * Memory: one IMALOG_CHUNK buffer per scan or stream, whatever the size of the increment.
 */
#ifndef AGENT_IMALOG_H
#define AGENT_IMALOG_H

#include <stdint.h>
#include <sys/types.h>

#include "evidence/bank.h"
#include "util/err.h"
#include "evidence/ima.h"

#define IMALOG_BINARY_PATH "/sys/kernel/security/integrity/ima/binary_runtime_measurements"
#define IMALOG_ASCII_PATH "/sys/kernel/security/integrity/ima/ascii_runtime_measurements"
/* fits the verifier's 16 MiB evidence cap once base64-encoded */
#define IMALOG_MAX_DEFAULT (12u * 1024 * 1024)
/* Read buffer: holds the largest entry the readers accept (IMA_ASCII_LINE_MAX, a binary entry
 * with IMA_DATA_MAX of template data), so an entry never straddles more than two reads. */
#define IMALOG_CHUNK (256u * 1024)

struct imalog {
        const char *path; /* borrowed */
        enum ima_format format;
        size_t max_bytes;
        bool cached;
        uint64_t cached_entry; /* entry number that starts at cached_off */
        off_t cached_off;
};

void imalog_init(struct imalog *l, const char *path, enum ima_format format, size_t max_bytes);

/* Whole entries [from, from + count) of the log: bytes [start, end) of the file. */
struct imalog_span {
        uint64_t from, count;
        off_t start, end;
        uint8_t sha256[32]; /* of those bytes as the scan read them */
};

/*
 * Find the entries from number `from` to the end. When the log has fewer than `from` entries (a
 * reboot the verifier does not know of yet), the span covers the whole log and its from is 0. An
 * incomplete entry at the end (still being written) is left for the next round. Errors: -E2BIG
 * imalog_too_big over max_bytes, the reader's errors for a malformed or oversized entry (err names
 * it), -EIO/-errno imalog_read.
 */
int imalog_scan(struct imalog *l, uint64_t from, struct imalog_span *ret, struct attest_err *err)
        _wur_;

/* The bytes of a span, read again in chunks; checked against the scan's SHA-256. */
struct imalog_stream {
        int fd;
        off_t pos, end;
        struct hasher *h;
        uint8_t want[32];
};

int imalog_stream_open(const struct imalog *l, const struct imalog_span *s,
                       struct imalog_stream *ret, struct attest_err *err) _wur_;
/*
 * Up to n bytes of the span into buf: the count (> 0), 0 at its end, or negative. The last bytes
 * are handed out only after the SHA-256 of the whole span matched the scan's: a log that shrank,
 * or changed under the scanned range, is -ESTALE imalog_read before its end is sent.
 */
ssize_t imalog_stream_read(struct imalog_stream *st, uint8_t *buf, size_t n, struct attest_err *err)
        _wur_;
void imalog_stream_close(struct imalog_stream *st);

#endif
