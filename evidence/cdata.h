/* SPDX-License-Identifier: MIT */
/*
 * Critical data: the ima-buf entries the claims come from (DESIGN §3): selinux-state,
 * selinux-policy-hash, kernel_version, and the kernel/ patch set's trusted-keys-source and
 * cfi-state. Each decoded claim remembers the log entry it came from.
 */
#ifndef ATTEST_CDATA_H
#define ATTEST_CDATA_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"
#include "evidence/ima.h"

#define CDATA_KV_MAX 64        /* pairs in one buffer */
#define CDATA_KEY_MAX 64       /* bytes in a key */
#define CDATA_BUF_MAX 4096     /* bytes of a key=value buffer */
#define CDATA_HISTORY_MAX 4096 /* selinux-state entries kept per boot */

struct cdata_kv {
        const char *key; /* borrowed from the parsed buffer, not NUL terminated */
        uint32_t key_len;
        const char *val;
        uint32_t val_len;
};

struct cdata_kvs {
        uint32_t n;
        struct cdata_kv kv[CDATA_KV_MAX];
};

/*
 * Strict key=value; parser: every pair `key=value;` with key [a-z0-9_]{1,64}, value printable
 * ASCII without ';' or '=' (may be empty), every pair ';' terminated, no duplicate keys, nothing
 * after the last ';'. Unknown keys are kept. Errors name the byte offset.
 */
int cdata_kv_parse(const uint8_t *buf, size_t len, struct cdata_kvs *ret, struct attest_err *err)
        _wur_;
/* Value of key, or NULL. */
const struct cdata_kv *cdata_kv_get(const struct cdata_kvs *kvs, const char *key);
/* A 0/1 flag: 1 or 0, -ENOENT absent, -EBADMSG not 0/1. */
int cdata_kv_bool(const struct cdata_kvs *kvs, const char *key) _wur_;

enum cdata_kind {
        CDATA_NONE,
        CDATA_SELINUX_STATE,
        CDATA_SELINUX_POLICY_HASH,
        CDATA_KERNEL_VERSION,
        CDATA_TRUSTED_KEYS,
        CDATA_CFI,
};

const char *cdata_kind_name(enum cdata_kind k);
/* Kind of an entry by its event name (ima-buf only), CDATA_NONE for others. */
enum cdata_kind cdata_kind_of(const struct ima_entry *e);

/* An owned copy of one key=value buffer with its parsed view. */
struct cdata_state {
        uint64_t entry;
        char *raw; /* NUL terminated copy; kvs point into it */
        uint32_t raw_len;
        struct cdata_kvs kvs;
};

struct cdata_claims {
        /* every selinux-state since boot, in log order (capped; overflow counted) */
        struct cdata_state *selinux;
        uint32_t n_selinux;
        uint64_t selinux_dropped;
        bool policy_hash_seen;
        uint64_t policy_hash_entry;
        uint8_t policy_hash[BANK_DIGEST_MAX];
        uint32_t policy_hash_len;
        uint32_t policy_hash_count;
        bool kernel_version_seen;
        uint64_t kernel_version_entry;
        char kernel_version[256];
        struct cdata_state trusted_keys; /* entry valid when raw != NULL */
        struct cdata_state cfi;
};

void cdata_claims_init(struct cdata_claims *c);
void cdata_claims_done(struct cdata_claims *c);
/*
 * Feed one verified log entry (number idx). Entries that are not critical data are ignored (0);
 * a critical-data entry whose buffer is malformed fails with err naming the entry.
 */
int cdata_claims_feed(struct cdata_claims *c, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err) _wur_;

#endif
