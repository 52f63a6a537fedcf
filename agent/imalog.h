/* SPDX-License-Identifier: MIT */
/*
 * Incremental IMA log reader: the entries from number N to the current end, as the verifier's
 * challenge asks (`ima_offset`). The byte offset of the last end is remembered, so a round reads
 * only what is new; the whole log is read again only when the verifier asks for an older offset.
 */
#ifndef AGENT_IMALOG_H
#define AGENT_IMALOG_H

#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"
#include "evidence/ima.h"

#define IMALOG_BINARY_PATH "/sys/kernel/security/integrity/ima/binary_runtime_measurements"
#define IMALOG_ASCII_PATH "/sys/kernel/security/integrity/ima/ascii_runtime_measurements"
/* fits the verifier's 16 MiB evidence cap once base64-encoded */
#define IMALOG_MAX_DEFAULT (12u * 1024 * 1024)

struct imalog {
        const char *path; /* borrowed */
        enum ima_format format;
        size_t max_bytes;
        bool cached;
        uint64_t cached_entry; /* entry number that starts at cached_off */
        off_t cached_off;
};

void imalog_init(struct imalog *l, const char *path, enum ima_format format, size_t max_bytes);

/*
 * Read the entries from number `from` to the end. When the log has fewer than `from` entries (a
 * reboot the verifier does not know of yet), the whole log is returned and *ret_from is 0.
 * *ret (owned) holds *ret_count whole entries; an incomplete entry at the end is left for the
 * next round. Errors: -E2BIG over max_bytes, -EBADMSG malformed log (err names the entry), -EIO.
 */
int imalog_read(struct imalog *l, uint64_t from, uint8_t **ret, size_t *ret_len, uint64_t *ret_from,
                uint64_t *ret_count, struct attest_err *err) _wur_;

#endif
