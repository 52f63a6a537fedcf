/* SPDX-License-Identifier: MIT */
/*
 * The ima.runtime section's parts shared by its files (policy/runtime.h is the interface): the
 * parsed section, the per-round context, and the helpers one part lends another.
 *
 *   runtime.c            the section: parse, release, size
 *   runtime-allowlist.c  the policy's algorithms, the allowlists as hash sets over (path,
 *                        algorithm, digest): parse and lookup
 *   runtime-keys.c       trusted keys (PEM), the IMA signature header, ima-sig signatures
 *   runtime-modsig.c     ima-modsig: the appended PKCS#7 signature
 *   runtime-excludes.c   the round's context, the excludes' matching under cost bounds, the PUT
 *                        probe
 *   runtime-eval.c       one entry judged into the runtime results
 */
#ifndef ATTEST_RUNTIME_INTERNAL_H
#define ATTEST_RUNTIME_INTERNAL_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <pcre2.h>

#include "evidence/hashalg.h"
#include "evidence/ima-keyid.h"
#include "policy/runtime.h"

/* ---- runtime-allowlist.c ---- */

struct rt_path {
        uint32_t off, len; /* in names */
};

/* the digest inline and the path's place: a lookup that passes touches the slot, this record
 * and the path's bytes, nothing else */
struct rt_digest {
        uint32_t path_off, path_len; /* in names */
        uint8_t algo, len;
        uint8_t d[RT_DIGEST_MAX];
};

struct rt_slot {
        uint64_t h;
        uint32_t ref; /* index + 1; 0: empty */
};

/* One allowlist: names with digests (digests, keyrings or ima_buf). */
struct rt_allowlist {
        bool present;
        char *names;
        size_t names_len;
        struct rt_path *paths;
        size_t npaths;
        struct rt_digest *digests;
        size_t ndigests;
        struct rt_slot *pslots, *dslots; /* power of two sizes, at most half full */
        size_t pmask, dmask;
};

/*
 * The algorithms a policy may name: the HASHALG_POLICY rows of evidence/hashalg.c, by the
 * kernel's enum hash_algo number; NULL (0) for any other. 0 stands for none (in rt_failure.algo
 * too): md4, number 0, is no policy algorithm (tests/unit/test-hashalg.c holds the table to that).
 */
static inline const struct hashalg *rt_algo_get(unsigned algo)
{
        const struct hashalg *a = algo ? hashalg_get(algo) : NULL;

        return a && (a->flags & HASHALG_POLICY) ? a : NULL;
}

/*
 * A log's or a policy's digest name ("sha256", "sm3-256"): its number, 0 when not a policy's.
 * Inline, and the kernel's names (inline for sha256 and sha1) before the aliases: asked for every
 * entry of a log.
 */
static inline unsigned rt_algo_from_name(const char *name, size_t len)
{
        const struct hashalg *a = hashalg_from_kernel_name(name, len);

        if (!a)
                a = hashalg_from_name(name, len);
        return a && rt_algo_get(a->id) ? a->id : 0;
}
void rt_allowlist_done(struct rt_allowlist *a);
/* The object o at JSON path p: names (absolute paths when abs) to digest lists. */
int rt_allowlist_parse(const json_t *o, const char *p, bool abs, struct rt_allowlist *a,
                       struct attest_err *err) _wur_;
/* 1 name listed with this digest, 0 listed without it, -1 not listed */
int rt_allowlist_check(const struct rt_allowlist *a, const char *name, size_t n, unsigned algo,
                       const uint8_t *d, size_t dn);
/*
 * The hashes of the sets, inline: the runtime check makes them for every entry before its replay
 * (rt_eval_prefetch) and the calls were a share of the cost.
 */

/* 64-bit mix (a multiply-xorshift finalizer) */
static inline uint64_t rt_hash_mix(uint64_t h)
{
        h ^= h >> 32;
        h *= 0xd6e8feb86659fd93ull;
        h ^= h >> 32;
        h *= 0xd6e8feb86659fd93ull;
        h ^= h >> 32;
        return h;
}

/* 64-bit hash of bytes, 8 at a time (not keyed: the policy's keys are the admin's, lookups only
 * probe) */
static inline uint64_t rt_hash_bytes(const void *p, size_t n)
{
        const uint8_t *b = p;
        uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

        while (n >= 8) {
                uint64_t w;

                memcpy(&w, b, 8);
                h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
                h ^= h >> 29;
                b += 8;
                n -= 8;
        }
        if (n) {
                uint64_t w = 0;

                memcpy(&w, b, n);
                h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        }
        return rt_hash_mix(h);
}

/* the digest set's key: the path's hash with the algorithm's and the digest's */
static inline uint64_t rt_digest_key(uint64_t path_hash, unsigned algo, const uint8_t *d, size_t n)
{
        return rt_hash_mix(path_hash ^ (rt_hash_bytes(d, n) + algo * 0x9e3779b97f4a7c15ull));
}

/* The hashes rt_allowlist_check() looks (name, algo, digest) up by, made once: the same for
 * every allowlist (the tables differ, not the keys). */
struct rt_key_hash {
        uint64_t ph, dh; /* the path's, and the path's with the digest's */
};

static inline void rt_allowlist_key(const char *name, size_t n, unsigned algo, const uint8_t *d,
                                    size_t dn, struct rt_key_hash *ret)
{
        ret->ph = rt_hash_bytes(name, n);
        ret->dh = rt_digest_key(ret->ph, algo, d, dn);
}

/* rt_allowlist_check() with k from rt_allowlist_key() for the same arguments */
int rt_allowlist_check_key(const struct rt_allowlist *a, const struct rt_key_hash *k,
                           const char *name, size_t n, unsigned algo, const uint8_t *d, size_t dn);

/*
 * Start loading the slot rt_allowlist_check_key() probes first for k, ahead of it: the table is
 * far larger than the caches and the probe lands anywhere in it, so the lookup would otherwise
 * wait on memory. Reads nothing, judges nothing: no effect on any result.
 */
static inline void rt_allowlist_prefetch(const struct rt_allowlist *a, const struct rt_key_hash *k)
{
        if (a->dslots)
                __builtin_prefetch(&a->dslots[k->dh & a->dmask]);
}
size_t rt_allowlist_size(const struct rt_allowlist *a);
/* A name of 1-RT_PATH_BYTES_MAX bytes without NUL (absolute: starting with '/'). */
bool rt_name_ok(const char *s, size_t n, bool abs);

/* ---- runtime-keys.c ---- */

struct rt_key {
        EVP_PKEY *pkey;
        uint32_t keyid; /* IMA signature key id (evidence/ima-keyid.h) */
        uint32_t skid;  /* a certificate's subject key identifier's last 4 bytes */
        bool has_skid;
        /* modsig: the certificate (its issuer, serial and SKID name a CMS signer), or for a bare
         * key an empty X509 holding only the key (OpenSSL's CMS verify takes the key from one) */
        X509 *x509;
        bool is_cert;
        uint8_t kid[IMA_KEYID_SHA1_SIZE]; /* SHA-1 of the public key bits: RFC 5280 4.2.1.2 (1) */
};

/* The PEM at JSON path p into *ret; on failure *ret holds what rt_policy_free releases. */
int rt_key_parse(const json_t *v, const char *p, struct rt_key *ret, struct attest_err *err) _wur_;
/*
 * The ima-sig signature (sigp, sign bytes) of digest d (algo) by a trusted key: 1 good, 0 not
 * (*ret_reason set), -ENOMEM.
 */
int rt_sig_check(const struct rt_policy *p, const uint8_t *sigp, size_t sign, unsigned algo,
                 const uint8_t *d, size_t dn, enum rt_reason *ret_reason) _wur_;

/* ---- runtime.c ---- */

struct rt_policy {
        struct rt_allowlist files, keyrings, ima_buf;
        pcre2_code *excl;  /* the excludes as one alternation; NULL: none */
        pcre2_code **each; /* each exclude alone, anchored the same: names the one that
                              stopped at its limit, and the PUT probe */
        char **src;        /* each exclude's text (the probe builds its subjects from it) */
        size_t nexcl;
        bool jit;     /* excl and each[] JIT-compiled */
        size_t bytes; /* rt_policy_size() */
        struct rt_key *keys;
        size_t nkeys;
        char (*ignored)[RT_KEYRING_NAME_MAX + 1];
        size_t nignored;
        bool ignore_all;      /* "*" in ignored_keyrings */
        bool violations_fail; /* "fail" (default) */
        uint64_t violations_allow;
        unsigned failures_max;
};

/* ---- runtime-excludes.c ---- */

#define NOTE_PATH_MAX 200

struct rt_ctx {
        const struct rt_policy *p;
        pcre2_match_data *md;
        pcre2_match_context *mctx; /* the round's own: its limits change per tier */
        pcre2_jit_stack *stack;
        uint32_t limit;  /* the match limit mctx holds (0: not set yet) */
        uint64_t budget; /* units left this round */
        int64_t ns;      /* time left this round (may go below 0: one match overran it) */
        uint64_t idx;    /* the entry being judged (the note) */
        bool noted;
        char note[192 + NOTE_PATH_MAX];
        /* rt_eval_prefetch()'s work for entry idx, taken by rt_eval_entry() for that entry when
         * it has the same name, digest and algorithm (the same pointers and lengths) */
        struct rt_prefetched {
                bool set;
                uint64_t idx;
                const char *name, *algo_name;
                const uint8_t *digest;
                uint32_t name_len, digest_len, algo_name_len;
                unsigned algo;
                struct rt_key_hash k;
        } pf;
};

#endif
