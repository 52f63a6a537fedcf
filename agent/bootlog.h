/* SPDX-License-Identifier: MIT */
/*
 * The TCG2 firmware event log (measured boot, docs/architecture.md §5.4): the bytes of
 * /sys/kernel/security/tpm0/binary_bios_measurements from the offset the verifier's challenge
 * names (`boot_offset`, the bytes it already holds for this boot) to the end, for the evidence's
 * "boot_log" (evidence/evidence.h: boot_offset, boot_log, boot_log_len).
 *
 * The firmware stops logging at ExitBootServices, so the log is complete before the agent starts:
 * the first round of a boot sends it whole (offset 0) and later rounds send nothing (an empty
 * "data"). A log shorter than the offset asked for belongs to a boot the verifier does not know of
 * yet: it is sent whole, from 0. The file is read whole every round, with a hard cap
 * (BOOTLOG_MAX, the evidence's EVIDENCE_BOOT_LOG_MAX: a larger log is refused, never cut), by the
 * bounded file reader (regular files only).
 *
 * The agent parses nothing here: the verifier parses and replays the log against the quote.
 */
#ifndef AGENT_BOOTLOG_H
#define AGENT_BOOTLOG_H

#include <stddef.h>
#include <stdint.h>

#include "evidence/evidence.h"
#include "util/err.h"

#define BOOTLOG_PATH "/sys/kernel/security/tpm0/binary_bios_measurements"
#define BOOTLOG_MAX EVIDENCE_BOOT_LOG_MAX

/*
 * Read path (at most max bytes, 0: BOOTLOG_MAX) and hand out its bytes from `offset`: *ret_from is
 * offset, or 0 when the log is shorter than offset (another boot); *ret (malloc'ed, non-NULL even
 * for no bytes) holds *ret_len bytes. Errors, with err naming the path: -ENOENT when there is no
 * such file (no TPM, or firmware without an event log: nothing to send), -E2BIG over the cap,
 * -errno/-EINVAL from util/file.h (unreadable, not a regular file), -ENOMEM. Outputs are written
 * only on success.
 */
int bootlog_read(const char *path, size_t max, uint64_t offset, uint64_t *ret_from, uint8_t **ret,
                 size_t *ret_len, struct attest_err *err) _wur_;

#endif
