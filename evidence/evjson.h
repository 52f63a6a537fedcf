/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec of struct evidence (evidence/evidence.h): docs/architecture.md §4, version 1:
 *
 *   {"version":1, "nonce":"HEX",
 *    "quote":{"attest":"B64", "signature":"B64", "pcrs":{"sha256":{"0":"HEX", ...}, ...}},
 *    "ima":{"offset":N, "format":"binary"|"ascii", "entries":"B64"},
 *    "boot_log":{"offset":N, "data":"B64"},
 *    "host":{"kernel":"6.1.0", "cmdline":"...", "boot_id":"UUID",
 *            "cfi":{"source":"config", "enabled":true, "permissive":false},
 *            "trusted_keys":{"source":"tpm", "origin":"cmdline"},
 *            "hostname":"web1", "machine_id":"32 HEX", "labels":{"role":"web"}}}
 *
 * Every field is bounded and validated and unknown fields are rejected at every level; "host" and
 * its members are optional, the rest is required. Errors are -EBADMSG (-E2BIG over a cap) with
 * err->code one of evidence_json, evidence_type, evidence_missing_field, evidence_unknown_field,
 * evidence_version, evidence_bad_hex, evidence_bad_b64, evidence_bad_value, evidence_too_big,
 * and err->msg naming the JSON path ("$.quote.pcrs.sha256.10: not hex").
 * Decoding: evidence/evjson-read.c (the pull reader of util/json-rd.h, no jansson tree); encoding:
 * evidence/evjson-write.c.
 */
#ifndef ATTEST_EVJSON_H
#define ATTEST_EVJSON_H

#include <stddef.h>

#include <jansson.h>

#include "evidence/evidence.h"
#include "util/buf.h"
#include "util/err.h"

#define EVIDENCE_JSON_MAX (16u * 1024 * 1024) /* docs/architecture.md §4.3: the document cap */
#define EVIDENCE_HEAD_MAX (64u * 1024) /* JSON before the entries: PCRs of 4 banks, the blobs */
#define EVIDENCE_TAIL_MAX (16u * 1024) /* JSON after them: the host facts */

/*
 * Decode and validate. max_ima caps the decoded log bytes (0: no log accepted). *ret is written
 * only on success.
 */
int evidence_from_json(const char *buf, size_t len, size_t max_ima, struct evidence **ret,
                       struct attest_err *err) _wur_;
/*
 * Encode: *ret is a NUL terminated compact JSON text (free() it), the bytes jansson's compact dump
 * of the same document would be. Written as head + base64 of ev->ima + tail so the agent can
 * stream its log in between (agent/evout.c): head ends inside "entries":" and tail starts with
 * the closing quote. Host facts must be printable ASCII (-EINVAL); -E2BIG past the writer's cap.
 */
int evidence_to_json(const struct evidence *ev, char **ret) _wur_;
/*
 * The identity members alone ("hostname", "machine_id", "labels"; any other member is
 * evidence_unknown_field), decoded into h as in "host": the daemon's enrolment body. o is a
 * borrowed jansson object; path names it in errors ("$.host").
 */
int evidence_host_identity_from_json(const json_t *o, const char *path, struct evidence_host *h,
                                     struct attest_err *err) _wur_;
/* The same, without the check for other members (a reader that checked them itself). */
int evidence_host_identity_members(const json_t *o, const char *path, struct evidence_host *h,
                                   struct attest_err *err) _wur_;
/*
 * The identity members of h alone as a JSON object text (NUL terminated, free() it), written by
 * the same code as evidence "host"'s: the agent's enrolment body. -EINVAL: not printable ASCII.
 */
int evidence_host_identity_to_json(const struct evidence_host *h, char **ret) _wur_;
/*
 * The head holds the firmware event log (ev->boot_log, at most EVIDENCE_BOOT_LOG_MAX bytes, else
 * -E2BIG): a writer for it needs evidence_json_head_max(ev) bytes, EVIDENCE_HEAD_MAX without one.
 */
size_t evidence_json_head_max(const struct evidence *ev);
int evidence_json_head(const struct evidence *ev, struct wb *w) _wur_;
int evidence_json_tail(const struct evidence_host *h, struct wb *w) _wur_;

#endif
