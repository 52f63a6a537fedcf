/* SPDX-License-Identifier: MIT */
/* The replay loop of bench-ima over the IMA reader of an older commit (tests/bench/meson.build). */
#ifndef ATTEST_BENCH_IMA_PEER_H
#define ATTEST_BENCH_IMA_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "evidence/bank.h"

/* The commit the peer was built from, or NULL when the bench was built without one. */
const char *peer_rev(void);
/*
 * Read log (ascii or binary) and replay bank b as bench-ima's replay_once() does, checking every
 * logged sha1 for ascii, with the peer's own hasher. PCR 10 and the entry count back; negative
 * errno on failure.
 */
int peer_replay(const void *log, size_t len, bool ascii, enum bank b, uint8_t *ret_pcr10,
                uint64_t *ret_entries);

#endif
