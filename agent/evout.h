/* SPDX-License-Identifier: MIT */
/*
 * The evidence JSON (docs/architecture.md §4), written as a stream: the envelope before and
 * after the IMA entries is built with the bounded writer, the entries are read from the log span
 * (agent/imalog.h) and base64-encoded on the fly. The bytes are those evidence_to_json() makes
 * for the same evidence (tests/unit/test-agent.c checks it), so attestd reads them as it always
 * has; the size is known before the first byte (an HTTP Content-Length).
 *
 * Memory: the envelope (at most EVIDENCE_HEAD_MAX + EVIDENCE_TAIL_MAX) and two EVOUT_RAW-sized
 * buffers.
 */
#ifndef AGENT_EVOUT_H
#define AGENT_EVOUT_H

#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/err.h"
#include "evidence/evjson.h"
#include "agent/imalog.h"

#define EVOUT_RAW (48u * 1024) /* log bytes per read: a multiple of 3 */

struct evout {
        struct wb head, tail; /* the JSON before and after the entries' base64 */
        struct imalog_stream log;
        bool log_open;
        uint8_t *raw; /* EVOUT_RAW log bytes */
        char *b64;    /* their base64 */
        size_t b64_len, b64_pos, head_pos, tail_pos;
        uint64_t size;
        int phase;
};

/*
 * Prepare the evidence ev (its ima, ima_len must be NULL, 0: the entries come from span of l,
 * whose offset and format ev also names) for reading. -EINVAL evidence_bad_value for a host fact
 * that is not printable ASCII (facts.c never makes one), -E2BIG evidence_too_big over
 * EVIDENCE_HEAD_MAX, the log's errors.
 */
int evout_open(struct evout *o, const struct evidence *ev, const struct imalog *l,
               const struct imalog_span *span, struct attest_err *err) _wur_;
/* The whole length, known from the start. */
uint64_t evout_size(const struct evout *o);
/* The next bytes, up to n: the count, 0 at the end, or negative (the log changed: -ESTALE). */
ssize_t evout_read(struct evout *o, uint8_t *buf, size_t n, struct attest_err *err) _wur_;
void evout_close(struct evout *o);

#endif
