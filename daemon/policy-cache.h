/* SPDX-License-Identifier: MIT */
/*
 * Parsed policies, cached by name@version (a policy is parsed once, validated once, on PUT).
 *
 * A stored policy version never changes (versions are never reused, deleted ones included), so
 * an entry is immutable and shared: holders keep a reference (policy_cached_unref) and may use it
 * after it left the cache. Which version is live is the store's answer (store_policy_version): a
 * deleted policy is never served, a new version is used by the next lookup. The cache holds at
 * most max entries and about max_bytes of parsed policies (policy_cached_bytes: the runtime
 * section's arrays and compiled excludes, and POLICY_CACHE_ENTRY_BASE for the rest), evicting the
 * least recently used; the entry just added or looked up stays even when it alone is over
 * max_bytes (the rounds need it; it is evicted by the next). A delete drops the name's entries.
 * Every daemon-side policy parse goes through here and is counted in the stats.
 */
#ifndef ATTESTD_POLICY_CACHE_H
#define ATTESTD_POLICY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "daemon/store/store.h"
#include "policy/policy.h"
#include "util/err.h"
#include "util/macro.h"

#define POLICY_CACHE_MAX 256                      /* entries (name@version) */
#define POLICY_CACHE_BYTES_DEFAULT (512ull << 20) /* --policy-cache-bytes */
/* what an entry holds besides its runtime section: struct policy (36 KiB) and the boot section */
#define POLICY_CACHE_ENTRY_BASE (64u * 1024)

struct policy_cache;
struct policy_cached; /* one parsed policy version, immutable, reference counted */

struct policy_cache_stats {
        uint64_t hits, misses; /* lookups of a live name@version */
        uint64_t parses;       /* policy documents parsed (PUT and misses) */
        uint64_t evictions;    /* entries pushed out by either cap */
        uint64_t entries;      /* held now */
        uint64_t bytes;        /* held now, approximately (policy_cached_bytes) */
};

/* max entries (> 0); about POLICY_CACHE_BYTES_DEFAULT until policy_cache_set_max_bytes() */
int policy_cache_new(size_t max, struct policy_cache **ret) _wur_;
/* The byte cap (> 0, else -EINVAL); entries over it are evicted at the next add. */
int policy_cache_set_max_bytes(struct policy_cache *c, uint64_t max_bytes) _wur_;
/* Frees the cache; references held elsewhere stay valid until unref'ed. */
struct policy_cache *policy_cache_free(struct policy_cache *c);
DEFINE_CLEANUP_FUNC(struct policy_cache *, policy_cache_free)

/* Validate a JSON document into a policy (counted as a parse). */
int policy_cache_parse(struct policy_cache *c, const json_t *doc, struct policy **ret,
                       struct attest_err *err) _wur_;

/*
 * Hold p (taken, also on failure) as name@version. When that version is held already (a racing
 * lookup), the held one stays and p is freed. *ret (may be NULL) is a new reference.
 */
int policy_cache_add(struct policy_cache *c, const char *name, int64_t version, struct policy *p,
                     struct policy_cached **ret) _wur_;

/*
 * The latest live version of policy name: which version is live is the store's answer, its
 * parsed form comes from the cache, else the store's text is parsed once and added (misses are
 * taken one at a time and look again first, so lookups that miss together parse once).
 * -ENOENT: no live policy of that name; -EBADMSG (err filled): the stored text does not parse;
 * -EIO, -ENOMEM.
 */
int policy_cache_get(struct policy_cache *c, struct store *s, const char *name,
                     struct policy_cached **ret, struct attest_err *err) _wur_;

/* Forget every cached version of name (after a delete); a lookup that read the store before the
 * drop does not add what it parsed. */
void policy_cache_drop(struct policy_cache *c, const char *name);

void policy_cache_stats(struct policy_cache *c, struct policy_cache_stats *ret);

const struct policy *policy_cached_policy(const struct policy_cached *e);
int64_t policy_cached_version(const struct policy_cached *e);
/* Approximate bytes the parsed policy holds. */
uint64_t policy_cached_bytes(const struct policy_cached *e);
struct policy_cached *policy_cached_unref(struct policy_cached *e);
DEFINE_CLEANUP_FUNC(struct policy_cached *, policy_cached_unref)

#endif
