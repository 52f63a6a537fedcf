/* SPDX-License-Identifier: MIT */
/*
 * The ima.runtime policy section (attestd-policy(5)): which file measurements a host may show.
 *
 *   "runtime":{"digests":{"/abs/path":["sha256:HEX","HEX",...]},   bare hex: algorithm by length
 *              "excludes":["REGEX",...],        PCRE2, anchored to the whole path
 *              "keys":["PEM",...],              X.509 certificates or public keys (ima-sig v2/v3,
 *                                               ima-modsig PKCS#7)
 *              "keyrings":{".ima":["HEX"]},      key measurements (ima-buf) allowed per keyring
 *              "ima_buf":{"EVENT":["HEX"]},      other ima-buf events allowed
 *              "ignored_keyrings":["KEYRING"],
 *              "violations":"fail" | {"allow":N},
 *              "failures_max":32}
 *
 * Parsed once into an immutable struct rt_policy (shared by every round that uses the cached
 * policy): allowlists as open-addressing hash sets over (path, algorithm, digest) in flat arrays,
 * the excludes as one PCRE2 pattern (JIT when available) with match and depth limits, the keys as
 * OpenSSL public keys with their v2 key ids. Evaluation needs a per-round context (rt_ctx: the
 * PCRE2 match data) and allocates nothing per entry outside OpenSSL's signature check.
 *
 * Semantics follow Keylime's runtime-policy check: a valid signature by a trusted key passes an
 * ima-sig/ima-modsig entry; otherwise its digest must be listed for its path.
 */
#ifndef ATTEST_RUNTIME_H
#define ATTEST_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evidence/hashalg.h"
#include "evidence/ima.h"
#include "util/err.h"
#include "policy/runtime-state.h"

/* Caps: every count and size of the section. */
#define RT_PATHS_MAX 500000    /* paths in digests (and events in keyrings, ima_buf) */
#define RT_PATH_BYTES_MAX 4096 /* a path: IMA_NAME_MAX */
#define RT_DIGESTS_PER_PATH_MAX 64
#define RT_DIGESTS_MAX 1000000 /* digests in one allowlist, all paths */
#define RT_EXCLUDES_MAX 1024
#define RT_REGEX_MAX 1024 /* bytes of one exclude */
#define RT_KEYS_MAX 64
#define RT_KEY_PEM_MAX 16384 /* bytes of one PEM */
/* bytes of an ima-modsig appended PKCS#7 (sign-file writes ~0.3-1 KiB without certificates; a few
 * certificates still fit) */
#define RT_MODSIG_MAX 16384
#define RT_IGNORED_KEYRINGS_MAX 64
#define RT_KEYRING_NAME_MAX 255
#define RT_VIOLATIONS_ALLOW_MAX 1000000
#define RT_FAILURES_MAX_DEFAULT 32
/*
 * Cost bounds of the excludes (attestd-policy(5), COST BOUNDS). One path is matched under match
 * limits that grow by tiers (RT_MATCH_TIER0, RT_MATCH_TIER1, RT_MATCH_LIMIT), each tier charged in
 * full to the round's budget of units: RT_EXCL_BUDGET_UNITS, plus RT_EXCL_UNITS_PER_PATH for every
 * path matched. A unit is one PCRE2 match-limit count. PCRE2's JIT does not count the
 * backtracking of a simple repeat (".*" in "/a/.*\/.*x" costs milliseconds on a 4 KiB path within
 * a few units), so the round also has a time budget: RT_EXCL_BUDGET_NS of time spent matching
 * plus RT_EXCL_NS_PER_PATH a path, a match running only while the balance is positive. A path
 * that hits RT_MATCH_LIMIT, or finds a budget spent, is never excluded: it is judged by its
 * signature and digest, and fails (exclude_match_limit, exclude_budget_spent) when those do not
 * pass it.
 */
#define RT_MATCH_TIER0 32
#define RT_MATCH_TIER1 1024
#define RT_MATCH_LIMIT 100000
#define RT_DEPTH_LIMIT 1000          /* interpreter only (JIT: the JIT stack) */
#define RT_HEAP_LIMIT_KIB 4096       /* interpreter only */
#define RT_JIT_STACK_MIN (32 * 1024) /* per round (rt_ctx) */
#define RT_JIT_STACK_MAX (512 * 1024)
#define RT_EXCL_BUDGET_UNITS 10000000 /* units per round beyond the per-path allowance */
#define RT_EXCL_UNITS_PER_PATH 256    /* allowance added by every path matched */
#define RT_EXCL_BUDGET_NS 250000000   /* 250 ms a round, beyond the per-path allowance */
#define RT_EXCL_NS_PER_PATH 1000      /* an ordinary path takes 0.05-0.5 us */
/* The PUT probe (rt_policy_probe): subjects of at most these many bytes */
#define RT_PROBE_SHORT 64
#define RT_PROBE_LONG 4096
#define RT_PROBE_NS 1000000000 /* a PUT's probe stops after 1 s (warned) */

struct rt_policy;
struct rt_ctx;

/* Parse the section o found at path ("$.ima.runtime"); err names the JSON path. */
int rt_policy_from_json(const json_t *o, const char *path, struct rt_policy **ret,
                        struct attest_err *err) _wur_;
struct rt_policy *rt_policy_free(struct rt_policy *p);
DEFINE_CLEANUP_FUNC(struct rt_policy *, rt_policy_free)
unsigned rt_policy_failures_max(const struct rt_policy *p);
size_t rt_policy_digest_count(const struct rt_policy *p);

/* Per-round evaluation context (the PCRE2 match data); p must outlive it. */
int rt_ctx_new(const struct rt_policy *p, struct rt_ctx **ret) _wur_;
struct rt_ctx *rt_ctx_free(struct rt_ctx *c);
DEFINE_CLEANUP_FUNC(struct rt_ctx *, rt_ctx_free)

/* What one entry came to. */
enum rt_outcome {
        RT_PASS,
        RT_PASS_SIGNED,
        RT_EXCLUDED,
        RT_VIOLATION_ALLOWED,
        RT_FAIL,
};

/*
 * Judge entry e (number idx since boot) and add it to st: counts, and the failure while fewer
 * than failures_max are named. *ret_reason (may be NULL) is set for RT_FAIL. Returns the outcome
 * (>= 0); -ENOMEM only when OpenSSL could not allocate for a signature check.
 */
int rt_eval_entry(struct rt_ctx *c, const struct ima_entry *e, uint64_t idx, struct rt_state *st,
                  enum rt_reason *ret_reason) _wur_;

/*
 * A hint, no part of the judgement: start loading the memory rt_eval_entry() will read first for
 * entry e (number idx), the digest list's slot for its path and digest, so that work done between
 * the two calls (the replay's hashes) hides the wait; the hashes made for it are kept in c for
 * rt_eval_entry() on the same entry (e unchanged in between). Calling it or not changes no result.
 */
void rt_eval_prefetch(struct rt_ctx *c, const struct ima_entry *e, uint64_t idx);

/* Approximate bytes the parsed section holds (the policy cache's budget). */
size_t rt_policy_size(const struct rt_policy *p);

/* What matching a path against the excludes came to. */
enum rt_excl {
        RT_EXCL_NO,     /* no exclude matches the whole path */
        RT_EXCL_YES,    /* excluded */
        RT_EXCL_LIMIT,  /* RT_MATCH_LIMIT (or depth, heap, JIT stack) hit: not known */
        RT_EXCL_BUDGET, /* the round's budget is spent: not tried */
};
enum rt_excl rt_exclude_match(struct rt_ctx *c, const char *path, size_t len);
/* Whether path is excluded (rt_exclude_match() says RT_EXCL_YES). */
bool rt_excluded(struct rt_ctx *c, const char *path, size_t len);
/* Set the round's budgets left (tests, tools); rt_ctx_new() starts at RT_EXCL_BUDGET_UNITS and
 * RT_EXCL_BUDGET_NS. */
void rt_ctx_set_budget(struct rt_ctx *c, uint64_t units, int64_t ns);
uint64_t rt_ctx_budget(const struct rt_ctx *c);
/*
 * The first exclude that stopped at its limit this round, as a sentence for the log: "exclude
 * pattern 3 exceeded its match budget on entry 1234: /path" (control bytes of the path shown as
 * '?', cut at 200 bytes), or "the excludes' match budget of the round was spent at entry N: ...".
 * NULL when none did. Borrowed from c.
 */
const char *rt_ctx_exclude_note(const struct rt_ctx *c);

/*
 * The PUT-time probe: each exclude alone against subjects built from its own characters (its
 * literal prefix, runs of each literal character, a tail that fails late), up to RT_PROBE_SHORT
 * and RT_PROBE_LONG bytes, under RT_MATCH_LIMIT, with the interpreter (which, unlike the JIT,
 * counts every backtrack: the verdict is the same on every machine). A pattern that hits the
 * limit on a short subject backtracks exponentially: -EBADMSG, err names path[i]
 * ("$.ima.runtime.excludes[3]"). One that hits it only on a long subject (polynomial) is accepted
 * and warn(arg, message) called (warn may be NULL); so is the probe's end when it ran past
 * RT_PROBE_NS (later excludes not probed). 0 when every exclude passed (or there are none).
 */
int rt_policy_probe(const struct rt_policy *p, const char *path,
                    void (*warn)(void *arg, const char *msg), void *arg, struct attest_err *err)
        _wur_;

/*
 * "sha256" for HASHALG_SHA256 (evidence/hashalg.h): the name of an algorithm a policy may name,
 * NULL for 0 (none) or any other number.
 */
const char *rt_algo_name(unsigned algo);

/*
 * The IMA signature header (struct signature_v2_hdr, big-endian: u8 type | u8 version |
 * u8 hash_algo | u32 keyid | u16 sig_size | sig), as the sig or modsig field carries it.
 * 0 with *ret filled (sig borrowed); -EBADMSG malformed, -EOPNOTSUPP version not 2 or 3.
 */
struct rt_sig {
        uint8_t type, version, hash_algo;
        uint32_t keyid;
        const uint8_t *sig;
        uint16_t sig_len;
};
int rt_sig_parse(const uint8_t *p, size_t n, struct rt_sig *ret) _wur_;

/*
 * ima-modsig: the modsig field (a CMS/PKCS#7 SignedData, detached, as the kernel's sign-file
 * writes it) checked against d-modsig with the trusted keys. Exactly one SignerInfo, named by
 * issuerAndSerialNumber or subjectKeyIdentifier (a certificate's, or for a bare public key the
 * SHA-1 of its key bits); its digest algorithm must be d-modsig's; without signed attributes the
 * signature is over d-modsig (PKCS#1 v1.5 or ECDSA), with them messageDigest must equal d-modsig
 * and the signature covers the attributes. Returns 1 good, 0 not (*ret_why says why), -ENOMEM.
 */
enum rt_modsig_why {
        RT_MODSIG_OK,
        RT_MODSIG_TOO_BIG,         /* more than RT_MODSIG_MAX bytes */
        RT_MODSIG_MALFORMED,       /* empty, not one CMS ContentInfo, or bytes after it */
        RT_MODSIG_NOT_SIGNED_DATA, /* not SignedData over id-data */
        RT_MODSIG_NOT_DETACHED,    /* the content is inside */
        RT_MODSIG_SIGNERS,         /* not exactly one SignerInfo */
        RT_MODSIG_NO_DIGEST,       /* d-modsig empty or of an algorithm we do not know */
        RT_MODSIG_DIGEST_LEN,      /* d-modsig not of its algorithm's size */
        RT_MODSIG_DIGEST_ALGO,     /* the SignerInfo's digest algorithm is not d-modsig's */
        RT_MODSIG_UNKNOWN_SIGNER,  /* no trusted key is the signer */
        RT_MODSIG_SIG_ALGO,        /* signature algorithm not PKCS#1 v1.5/ECDSA of the key */
        RT_MODSIG_MESSAGE_DIGEST,  /* signed attributes: messageDigest missing or not d-modsig */
        RT_MODSIG_BAD_SIGNATURE,   /* the signature does not verify */
        RT_MODSIG__COUNT,
};
int rt_modsig_check(const struct rt_policy *p, const struct ima_entry *e,
                    enum rt_modsig_why *ret_why) _wur_;
const char *rt_modsig_why_name(enum rt_modsig_why w);

#endif
