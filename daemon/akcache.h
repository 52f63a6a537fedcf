/* SPDX-License-Identifier: MIT */
/*
 * Parsed attestation keys by agent id, so a submission does not re-import (and re-validate the
 * point of) the same stored AK every round: quote_ak_parse() was 15% of the daemon's CPU in the
 * benchmark. Entries are immutable and reference counted; an entry is keyed by the agent id and
 * checked against a hash of the stored TPM2B_PUBLIC, so a re-enrolled id never gets a stale key.
 * At most max entries (util/lru.h): a miss over the cap evicts the least recently used; an
 * evicted entry stays valid for whoever holds it.
 */
#ifndef ATTESTD_AKCACHE_H
#define ATTESTD_AKCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "evidence/quote.h"

struct akcache;
struct akcache_ref; /* a held entry */

int akcache_new(size_t max, struct akcache **ret) _wur_;
struct akcache *akcache_free(struct akcache *c);

/*
 * The parsed AK of agent id whose stored public area is pub; parsed (and cached) on a miss.
 * Errors are quote_ak_parse()'s. Release with akcache_put().
 */
int akcache_get(struct akcache *c, const char *id, const uint8_t *pub, size_t len,
                struct akcache_ref **ret, struct attest_err *err) _wur_;
const struct quote_ak *akcache_ak(const struct akcache_ref *r);
void akcache_put(struct akcache *c, struct akcache_ref *r);
/* Forget an agent (deleted). */
void akcache_drop(struct akcache *c, const char *id);

#endif
