/* SPDX-License-Identifier: MIT */
/*
 * Critical data: the ima-buf entries the claims come from (docs/architecture.md §5.2):
 * selinux-state, selinux-policy-hash, kernel_version, and the kernel/ patch set's
 * trusted-keys-source and cfi-state. Each decoded claim remembers the log entry it came from.
 */
#ifndef ATTEST_CDATA_H
#define ATTEST_CDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "evidence/ima.h"

#define CDATA_KV_MAX 64    /* pairs in one buffer */
#define CDATA_KEY_MAX 64   /* bytes in a key */
#define CDATA_BUF_MAX 4096 /* bytes of a key=value buffer */

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

/*
 * Typed payloads. Every measured key=value buffer is parsed once, when its entry is fed, into the
 * values below; a malformed one fails with err naming the entry and the key. Keys a payload does
 * not use are counted, not kept (unknown keys are not rejected: newer kernels may add keys).
 */

/* SELinux policy capabilities (the kernel's selinux_policycap_names[], in its order). */
#define SELINUX_CAPS(X)                                                                            \
        X(SELINUX_CAP_NETWORK_PEER_CONTROLS, "network_peer_controls")                              \
        X(SELINUX_CAP_OPEN_PERMS, "open_perms")                                                    \
        X(SELINUX_CAP_EXTENDED_SOCKET_CLASS, "extended_socket_class")                              \
        X(SELINUX_CAP_ALWAYS_CHECK_NETWORK, "always_check_network")                                \
        X(SELINUX_CAP_CGROUP_SECLABEL, "cgroup_seclabel")                                          \
        X(SELINUX_CAP_NNP_NOSUID_TRANSITION, "nnp_nosuid_transition")                              \
        X(SELINUX_CAP_GENFS_SECLABEL_SYMLINKS, "genfs_seclabel_symlinks")                          \
        X(SELINUX_CAP_IOCTL_SKIP_CLOEXEC, "ioctl_skip_cloexec")                                    \
        X(SELINUX_CAP_USERSPACE_INITIAL_CONTEXT, "userspace_initial_context")                      \
        X(SELINUX_CAP_NETLINK_XPERM, "netlink_xperm")                                              \
        X(SELINUX_CAP_NETIF_WILDCARD, "netif_wildcard")                                            \
        X(SELINUX_CAP_GENFS_SECLABEL_WILDCARD, "genfs_seclabel_wildcard")                          \
        X(SELINUX_CAP_FUNCTIONFS_SECLABEL, "functionfs_seclabel")                                  \
        X(SELINUX_CAP_MEMFD_CLASS, "memfd_class")

enum selinux_cap {
#define SELINUX_CAP_ENUM(id, name) id,
        SELINUX_CAPS(SELINUX_CAP_ENUM)
#undef SELINUX_CAP_ENUM
                SELINUX_CAP__COUNT,
        SELINUX_CAP_UNKNOWN = SELINUX_CAP__COUNT, /* a name this table does not know */
};

const char *selinux_cap_name(enum selinux_cap c);
/* The capability of a name of len bytes, SELINUX_CAP_UNKNOWN for any other. */
enum selinux_cap selinux_cap_from_name(const char *name, size_t len);

/* The 0/1 flags of a selinux-state besides the capabilities. */
enum selinux_flag {
        SELINUX_INITIALIZED,
        SELINUX_ENFORCING,
        SELINUX_CHECKREQPROT,
        SELINUX_FLAG__COUNT,
};

const char *selinux_flag_name(enum selinux_flag f);

/* One selinux-state entry: bit i of *_present says key i was there, bit i of *_value its 0/1. */
struct cdata_selinux_state {
        uint64_t entry;
        uint8_t flags_present, flags_value; /* enum selinux_flag bits */
        uint32_t caps_present, caps_value;  /* enum selinux_cap bits */
        uint32_t unknown_keys;              /* keys neither a flag nor a known capability */
};

/* A flag or capability of a state: 1 or 0, -ENOENT when the entry did not have it. */
int cdata_selinux_flag(const struct cdata_selinux_state *s, enum selinux_flag f);
int cdata_selinux_cap(const struct cdata_selinux_state *s, enum selinux_cap c);

/* What never_permissive needs of the whole history since boot, kept as it is fed (O(1)). */
enum selinux_lapse {
        SELINUX_LAPSE_NONE,
        SELINUX_LAPSE_PERMISSIVE,    /* enforcing=0 */
        SELINUX_LAPSE_NO_ENFORCING,  /* no enforcing key */
        SELINUX_LAPSE_UNINITIALIZED, /* initialized=0 */
        SELINUX_LAPSE__COUNT,
};

struct cdata_selinux_history {
        uint64_t states;          /* selinux-state entries since boot */
        bool enforced;            /* one of them had enforcing=1 ... */
        uint64_t first_enforcing; /* ... the first at this entry */
        enum selinux_lapse lapse; /* the first lapse after it (NONE: none) ... */
        uint64_t lapse_entry;     /* ... at this entry */
};

/* Trust sources of trusted keys as kernel/patches/{6.1,6.12}/0001 measure them ("source="). */
enum tk_source {
        TK_SOURCE_NONE, /* no source initialised, or the chosen one has no device */
        TK_SOURCE_TPM,
        TK_SOURCE_TEE,
        TK_SOURCE_CAAM,
        TK_SOURCE_DCP,
        TK_SOURCE_UNKNOWN, /* a word this table does not know (a newer kernel, or a host fact) */
        TK_SOURCE__COUNT,
};

const char *tk_source_name(enum tk_source s);
/* The source of a word of len bytes, TK_SOURCE_UNKNOWN for any other. */
enum tk_source tk_source_from_name(const char *name, size_t len);

#define CDATA_WORD_MAX 32 /* bytes of a word value (source, mode) with its NUL */

/*
 * One trusted-keys-source entry. source is required; rng (where new key material comes from: a
 * source name, "kernel" or "none") and requested (trusted.source= reduced to a known name: "any",
 * a source name or "other") are kept as measured, "" when the entry has no such key.
 */
struct cdata_trusted_keys {
        uint64_t entry;
        enum tk_source source;
        char source_name[CDATA_WORD_MAX];    /* the word as measured ([a-z0-9_]) */
        char rng_name[CDATA_WORD_MAX];       /* "" when absent */
        char requested_name[CDATA_WORD_MAX]; /* "" when absent */
};

/* cfi-state's mode= (kernel/patches: kcfi, fineibt on 6.12 x86, none). Stored by number in the
 * replay state: new modes go at the end. */
enum cfi_mode {
        CFI_MODE_NONE,
        CFI_MODE_KCFI,
        CFI_MODE_UNKNOWN, /* a word this table does not know */
        CFI_MODE_ABSENT,  /* no mode key */
        CFI_MODE_FINEIBT,
        CFI_MODE__COUNT,
};

/* "none", "kcfi", "fineibt", "unknown", "absent". */
const char *cfi_mode_name(enum cfi_mode m);
/* The measured mode of a word of len bytes: CFI_MODE_UNKNOWN for a word this table does not know
 * (never CFI_MODE_ABSENT). */
enum cfi_mode cfi_mode_from_name(const char *name, size_t len);

struct cdata_cfi {
        uint64_t entry;
        bool enabled, permissive;
        enum cfi_mode mode;
};

#define CDATA_KERNEL_VERSION_MAX 256 /* with the NUL */

/* The measured claims of one boot's accepted PCR 10 entries, in log order. No pointers. */
struct cdata_claims {
        bool selinux_seen;
        struct cdata_selinux_state selinux; /* the latest */
        struct cdata_selinux_history history;
        bool policy_hash_seen; /* the latest selinux-policy-hash */
        uint64_t policy_hash_entry;
        uint8_t policy_hash[BANK_DIGEST_MAX];
        uint32_t policy_hash_len;
        uint32_t policy_hash_count;
        bool kernel_version_seen;
        uint64_t kernel_version_entry;
        char kernel_version[CDATA_KERNEL_VERSION_MAX]; /* printable, no spaces */
        bool trusted_keys_seen;
        struct cdata_trusted_keys trusted_keys; /* the latest */
        bool cfi_seen;
        struct cdata_cfi cfi; /* the latest */
};

void cdata_claims_init(struct cdata_claims *c);
/* Parse one selinux-state buffer (entry idx) into *ret; errors name the entry and the key. */
int cdata_selinux_parse(const uint8_t *buf, size_t len, uint64_t idx,
                        struct cdata_selinux_state *ret, struct attest_err *err) _wur_;
/* Account one parsed state in the history (in log order). */
void cdata_history_feed(struct cdata_selinux_history *h, const struct cdata_selinux_state *s);
/*
 * Feed one verified log entry (number idx). Entries that are not critical data are ignored (0);
 * a critical-data entry is parsed into its typed claim (1), and one whose buffer is malformed
 * fails with err naming the entry and the field. *c is unchanged on failure.
 */
int cdata_claims_feed(struct cdata_claims *c, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err) _wur_;

#endif
