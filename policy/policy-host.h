/* SPDX-License-Identifier: MIT */
/*
 * The ima.runtime section of a policy written from a known-good host's IMA log (attestctl policy
 * from-host --runtime), the way Keylime's create_runtime_policy reads a log: every file entry's
 * path with the digests seen for it, key measurements (ima-buf entries whose buffer is an X.509
 * certificate) per keyring, the other ima-buf events by name. Violation entries are counted, not
 * listed. Lives apart from policy.h so the runtime evaluator's header stays its own.
 */
#ifndef ATTEST_POLICY_HOST_H
#define ATTEST_POLICY_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/err.h"

#define POLICY_RUNTIME_DIGESTS_PER_PATH 64 /* distinct digests kept for one path */

struct policy_runtime_stats {
        uint64_t entries;        /* entries read */
        uint64_t files;          /* file entries listed (path + digest) */
        uint64_t boot_aggregate; /* boot_aggregate entries (left to require_boot_aggregate) */
        uint64_t keys, bufs;     /* ima-buf entries listed as keyring keys, as events */
        uint64_t violations;     /* violation entries (not listed) */
        uint64_t excluded;       /* entries the caller's exclude matched (not listed) */
        uint64_t not_utf8;       /* paths JSON cannot hold (not listed, will fail) */
        uint64_t opaque;         /* entries of templates without a digest and name (not listed) */
        uint64_t over_cap;       /* digests past POLICY_RUNTIME_DIGESTS_PER_PATH (not listed) */
};

/* Whether the caller excludes a path (n bytes, not NUL terminated); ctx is the caller's. */
typedef bool (*policy_exclude_fn)(void *ctx, const char *path, size_t n);

/*
 * Read an IMA log (binary or ascii, whole, from entry 0) into *ret_runtime, the ima.runtime
 * object {"digests":{...}, "keyrings":{...}, "ima_buf":{...}} (sections only when non-empty).
 * exclude may be NULL. Digests are written "alg:hex". -EBADMSG etc. from the log reader (err
 * names the entry), -ENOMEM.
 */
int policy_runtime_from_log(const uint8_t *log, size_t len, policy_exclude_fn exclude, void *ctx,
                            json_t **ret_runtime, struct policy_runtime_stats *ret_stats,
                            struct attest_err *err) _wur_;

struct ima_entry;
/*
 * The same one entry at a time, for a caller that reads the log itself (attestctl streams it:
 * evidence/ima.h, ima_stream): feed every entry the reader yields, in log order from entry 0,
 * into runtime (an object of the caller's, json_object() to begin with) and *st (zeroed to begin
 * with); the result is then what policy_runtime_from_log() gives for the same log. 0, -ENOMEM.
 */
int policy_runtime_add_entry(json_t *runtime, const struct ima_entry *e, policy_exclude_fn exclude,
                             void *ctx, struct policy_runtime_stats *st) _wur_;

/*
 * Add one digest (raw bytes, n of them, algorithm alg: "sha256") for path to runtime's
 * "digests", unless it is there already. 1 added, 0 already there, -ENOSPC the path has
 * POLICY_RUNTIME_DIGESTS_PER_PATH already, -EINVAL a path JSON cannot hold (not UTF-8), -ENOMEM.
 */
int policy_runtime_add_digest(json_t *runtime, const char *path, size_t path_len, const char *alg,
                              const uint8_t *digest, size_t n) _wur_;

#endif
