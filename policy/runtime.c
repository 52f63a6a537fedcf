/* SPDX-License-Identifier: MIT */
/* The ima.runtime policy section: parsing, the allowlist hash sets, excludes, keys, evaluation. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pcre2.h>

#include "evidence/hashalg.h"
#include "evidence/ima-keyid.h"
#include "evidence/jpath.h"
#include "policy/policy-internal.h"
#include "policy/runtime.h"
#include "util/hex.h"

/* ---- algorithms and reasons ---- */

/*
 * The algorithms a policy may name: the HASHALG_POLICY rows of evidence/hashalg.c, by the
 * kernel's enum hash_algo number. 0 stands for none (in rt_failure.algo too): md4, number 0, is
 * no policy algorithm (tests/unit/test-hashalg.c holds the table to that).
 */
static const struct hashalg *algo_get(unsigned algo)
{
        const struct hashalg *a = algo ? hashalg_get(algo) : NULL;

        return a && (a->flags & HASHALG_POLICY) ? a : NULL;
}

const char *rt_algo_name(unsigned algo)
{
        const struct hashalg *a = algo_get(algo);

        return a ? a->name : NULL;
}

/* A log's or a policy's digest name ("sha256", "sm3-256"): its number, 0 when not a policy's. */
static unsigned algo_from_name(const char *name, size_t len)
{
        const struct hashalg *a = hashalg_from_name(name, len);

        return a && algo_get(a->id) ? a->id : 0;
}

/* ---- hash sets ---- */

/* 64-bit hash of bytes, 8 at a time (a multiply-xorshift mix; not keyed: the policy's keys are
 * the admin's, lookups only probe) */
static uint64_t mix(uint64_t h)
{
        h ^= h >> 32;
        h *= 0xd6e8feb86659fd93ull;
        h ^= h >> 32;
        h *= 0xd6e8feb86659fd93ull;
        h ^= h >> 32;
        return h;
}

static uint64_t hash_bytes(const void *p, size_t n)
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
        return mix(h);
}

static uint64_t digest_key(uint64_t path_hash, unsigned algo, const uint8_t *d, size_t n)
{
        return mix(path_hash ^ (hash_bytes(d, n) + algo * 0x9e3779b97f4a7c15ull));
}

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

struct slot {
        uint64_t h;
        uint32_t ref; /* index + 1; 0: empty */
};

/* One allowlist: names with digests (digests, keyrings or ima_buf). */
struct allowlist {
        bool present;
        char *names;
        size_t names_len;
        struct rt_path *paths;
        size_t npaths;
        struct rt_digest *digests;
        size_t ndigests;
        struct slot *pslots, *dslots; /* power of two sizes, at most half full */
        size_t pmask, dmask;
};

static void allowlist_done(struct allowlist *a)
{
        free(a->names);
        free(a->paths);
        free(a->digests);
        free(a->pslots);
        free(a->dslots);
        memset(a, 0, sizeof(*a));
}

static size_t table_size(size_t n)
{
        size_t s = 16;

        while (s < 2 * n)
                s <<= 1;
        return s;
}

static const struct rt_path *path_find(const struct allowlist *a, uint64_t h, const char *s,
                                       size_t n, uint32_t *ret_idx)
{
        size_t i = h & a->pmask;

        if (!a->pslots) /* the member is absent, or lists nothing */
                return NULL;
        for (;;) {
                const struct slot *sl = &a->pslots[i];

                if (!sl->ref)
                        return NULL;
                if (sl->h == h) {
                        const struct rt_path *p = &a->paths[sl->ref - 1];

                        if (p->len == n && memcmp(a->names + p->off, s, n) == 0) {
                                if (ret_idx)
                                        *ret_idx = sl->ref - 1;
                                return p;
                        }
                }
                i = (i + 1) & a->pmask;
        }
}

static bool digest_find(const struct allowlist *a, uint64_t h, const char *path, size_t pn,
                        unsigned algo, const uint8_t *d, size_t n)
{
        size_t i = h & a->dmask;

        if (!a->dslots)
                return false;
        for (;;) {
                const struct slot *sl = &a->dslots[i];

                if (!sl->ref)
                        return false;
                if (sl->h == h) {
                        const struct rt_digest *x = &a->digests[sl->ref - 1];

                        if (x->algo == algo && x->len == n && x->path_len == pn &&
                            memcmp(x->d, d, n) == 0 &&
                            memcmp(a->names + x->path_off, path, pn) == 0)
                                return true;
                }
                i = (i + 1) & a->dmask;
        }
}

static void slot_put(struct slot *t, size_t mask, uint64_t h, uint32_t ref)
{
        size_t i = h & mask;

        while (t[i].ref)
                i = (i + 1) & mask;
        t[i].h = h;
        t[i].ref = ref;
}

/* A digest string: "algo:HEX" or bare HEX (40/64/96/128 digits: sha1/256/384/512). */
static int parse_digest(const json_t *v, const char *p, unsigned *ret_algo, uint8_t *out,
                        size_t *ret_len, struct attest_err *err)
{
        const struct hashalg *a;
        const char *s, *colon;
        size_t n, got = 0;
        unsigned algo;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        colon = memchr(s, ':', n);
        if (colon) {
                algo = algo_from_name(s, (size_t)(colon - s));
                if (!algo)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "unknown digest algorithm '%.16s'", s);
                n -= (size_t)(colon - s) + 1;
                s = colon + 1;
        } else {
                const struct hashalg *b = n % 2 == 0 ? hashalg_bare_for_size(n / 2) : NULL;

                if (!b)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                          "%zu hex digits: a bare digest has 40, 64, 96 or 128 "
                                          "(sha1, sha256, sha384, sha512); write \"algo:HEX\" "
                                          "for another",
                                          n);
                algo = b->id;
        }
        a = algo_get(algo);
        if (n != 2u * a->size || hex_decode(s, n, out, RT_DIGEST_MAX, &got) < 0 || got != a->size)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                  "not a %s digest (%u hex digits)", a->name, 2u * a->size);
        *ret_algo = algo;
        *ret_len = got;
        return 0;
}

static bool name_ok(const char *s, size_t n, bool abs)
{
        if (n == 0 || n > RT_PATH_BYTES_MAX || memchr(s, '\0', n))
                return false;
        return !abs || s[0] == '/' || (n == 14 && memcmp(s, "boot_aggregate", 14) == 0);
}

/* {"name":["digest",...],...}: abs requires absolute paths (digests), else any name. */
static int parse_allowlist(const json_t *o, const char *p, bool abs, struct allowlist *a,
                           struct attest_err *err)
{
        char q[JPATH_MAX], r[JPATH_MAX];
        const char *key;
        size_t total = 0, names = 0, ni = 0, di = 0;
        json_t *v;

        if (!json_is_object(o))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an object");
        if (json_object_size(o) > RT_PATHS_MAX)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu names > %d",
                                  json_object_size(o), RT_PATHS_MAX);
        json_object_foreach((json_t *)o, key, v)
        {
                size_t n = strlen(key);

                jpath_join(q, p, key);
                if (!name_ok(key, n, abs))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          abs ? "not an absolute path of 1-%d bytes"
                                              : "not a name of 1-%d bytes",
                                          RT_PATH_BYTES_MAX);
                if (!json_is_array(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not an array");
                if (json_array_size(v) == 0)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q, "empty list");
                if (json_array_size(v) > RT_DIGESTS_PER_PATH_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q, "%zu digests > %d",
                                          json_array_size(v), RT_DIGESTS_PER_PATH_MAX);
                total += json_array_size(v);
                if (total > RT_DIGESTS_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "more than %d digests in the list", RT_DIGESTS_MAX);
                names += n;
        }
        a->present = true;
        a->npaths = json_object_size(o);
        a->pmask = table_size(a->npaths) - 1;
        a->dmask = table_size(total) - 1;
        if (!(a->names = malloc(names ? names : 1)) ||
            !(a->paths = calloc(a->npaths ? a->npaths : 1, sizeof(*a->paths))) ||
            !(a->digests = calloc(total ? total : 1, sizeof(*a->digests))) ||
            !(a->pslots = calloc(a->pmask + 1, sizeof(*a->pslots))) ||
            !(a->dslots = calloc(a->dmask + 1, sizeof(*a->dslots))))
                return -ENOMEM;
        json_object_foreach((json_t *)o, key, v)
        {
                size_t n = strlen(key);
                uint64_t ph = hash_bytes(key, n);

                jpath_join(q, p, key);
                a->paths[ni] = (struct rt_path){.off = (uint32_t)a->names_len, .len = (uint32_t)n};
                memcpy(a->names + a->names_len, key, n);
                a->names_len += n;
                slot_put(a->pslots, a->pmask, ph, (uint32_t)ni + 1);
                for (size_t i = 0; i < json_array_size(v); i++) {
                        uint8_t d[RT_DIGEST_MAX];
                        unsigned algo = 0;
                        size_t len = 0;
                        uint64_t dh;
                        int x;

                        jpath_index(r, q, i);
                        if ((x = parse_digest(json_array_get(v, i), r, &algo, d, &len, err)) < 0)
                                return x;
                        dh = digest_key(ph, algo, d, len);
                        if (digest_find(a, dh, key, n, algo, d, len))
                                continue; /* listed twice: once is enough */
                        a->digests[di] = (struct rt_digest){.path_off = a->paths[ni].off,
                                                            .path_len = (uint32_t)n,
                                                            .algo = (uint8_t)algo,
                                                            .len = (uint8_t)len};
                        memcpy(a->digests[di].d, d, len);
                        slot_put(a->dslots, a->dmask, dh, (uint32_t)di + 1);
                        di++;
                }
                ni++;
        }
        a->ndigests = di;
        return 0;
}

/* Is (name, algo, digest) listed? 1 yes, 0 the name is listed without it, -1 no such name. */
static int allowlist_check(const struct allowlist *a, const char *name, size_t n, unsigned algo,
                           const uint8_t *d, size_t dn)
{
        uint64_t ph = hash_bytes(name, n);

        /* the passing case first: one probe of the digest set */
        if (digest_find(a, digest_key(ph, algo, d, dn), name, n, algo, d, dn))
                return 1;
        return path_find(a, ph, name, n, NULL) ? 0 : -1;
}

/* ---- keys ---- */

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

static int parse_key(const json_t *v, const char *p, struct rt_key *ret, struct attest_err *err)
{
        BIO *b;
        X509 *cert;
        EVP_PKEY *k = NULL;
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        n = json_string_length(v);
        if (n == 0 || n > RT_KEY_PEM_MAX)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "PEM of %zu bytes, want 1-%d", n, RT_KEY_PEM_MAX);
        if (!(b = BIO_new_mem_buf(json_string_value(v), (int)n)))
                return -ENOMEM;
        memset(ret, 0, sizeof(*ret));
        if ((cert = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
                const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(cert);

                if (skid && ASN1_STRING_length(skid) >= 4) {
                        const unsigned char *s = ASN1_STRING_get0_data(skid);
                        int l = ASN1_STRING_length(skid);

                        ret->skid = (uint32_t)s[l - 4] << 24 | (uint32_t)s[l - 3] << 16 |
                                    (uint32_t)s[l - 2] << 8 | s[l - 1];
                        ret->has_skid = true;
                }
                k = X509_get_pubkey(cert);
                ret->x509 = cert;
                ret->is_cert = true;
        } else {
                (void)BIO_reset(b);
                k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        }
        BIO_free(b);
        ERR_clear_error();
        /* from here on ret owns what it holds (rt_policy_free releases it) */
        ret->pkey = k;
        if (!k)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "not a PEM X.509 certificate or public key");
        if (EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA && EVP_PKEY_get_base_id(k) != EVP_PKEY_EC)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "not an RSA or EC key");
        if (ima_keyid_v2(k, &ret->keyid, ret->kid) < 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "key id not computable");
        if (!ret->x509 && (!(ret->x509 = X509_new()) || X509_set_pubkey(ret->x509, k) != 1)) {
                ERR_clear_error();
                return -ENOMEM;
        }
        return 0;
}

/* ---- the section ---- */

struct rt_policy {
        struct allowlist files, keyrings, ima_buf;
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

struct rt_policy *rt_policy_free(struct rt_policy *p)
{
        if (!p)
                return NULL;
        allowlist_done(&p->files);
        allowlist_done(&p->keyrings);
        allowlist_done(&p->ima_buf);
        pcre2_code_free(p->excl);
        for (size_t i = 0; i < p->nexcl; i++) {
                pcre2_code_free(p->each[i]);
                free(p->src[i]);
        }
        free(p->each);
        free(p->src);
        for (size_t i = 0; i < p->nkeys; i++) {
                EVP_PKEY_free(p->keys[i].pkey);
                X509_free(p->keys[i].x509);
        }
        free(p->keys);
        free(p->ignored);
        free(p);
        return NULL;
}

unsigned rt_policy_failures_max(const struct rt_policy *p)
{
        return p->failures_max;
}

size_t rt_policy_digest_count(const struct rt_policy *p)
{
        return p->files.ndigests;
}

static int parse_excludes(const json_t *a, const char *p, struct rt_policy *pol,
                          struct attest_err *err)
{
        char q[JPATH_MAX];
        size_t total = 0, at = 0;
        _cleanup_free_ char *all = NULL;
        int ec;
        PCRE2_SIZE eo;

        if (!json_is_array(a))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
        if (json_array_size(a) > RT_EXCLUDES_MAX)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu entries > %d",
                                  json_array_size(a), RT_EXCLUDES_MAX);
        if (json_array_size(a) == 0)
                return 0;
        if (!(pol->each = calloc(json_array_size(a), sizeof(*pol->each))) ||
            !(pol->src = calloc(json_array_size(a), sizeof(*pol->src))))
                return -ENOMEM;
        /* each one alone first: an error names its index and offset; kept, anchored as in the
         * alternation, to name the one that stops at its limit and for the PUT probe */
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                pcre2_code *c;
                size_t n;

                jpath_index(q, p, i);
                if (!json_is_string(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                n = json_string_length(v);
                if (n == 0 || n > RT_REGEX_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "regex of %zu bytes, want 1-%d", n, RT_REGEX_MAX);
                c = pcre2_compile((PCRE2_SPTR)json_string_value(v), n,
                                  PCRE2_ANCHORED | PCRE2_ENDANCHORED, &ec, &eo, NULL);
                if (!c) {
                        PCRE2_UCHAR msg[120];

                        pcre2_get_error_message(ec, msg, sizeof(msg));
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "not a regex: %s at byte %zu", (const char *)msg,
                                          (size_t)eo);
                }
                pol->each[pol->nexcl] = c;
                if (!(pol->src[pol->nexcl++] = strndup(json_string_value(v), n)))
                        return -ENOMEM;
                total += n + 6;
        }
        if (!(all = malloc(total + 1)))
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                size_t n = json_string_length(v);

                /* (?:...) keeps each alternative whole; | between */
                memcpy(all + at, i ? "|(?:" : "(?:", i ? 4 : 3);
                at += i ? 4 : 3;
                memcpy(all + at, json_string_value(v), n);
                at += n;
                all[at++] = ')';
        }
        /* anchored at both ends: the whole path must match */
        pol->excl = pcre2_compile((PCRE2_SPTR)all, at, PCRE2_ANCHORED | PCRE2_ENDANCHORED, &ec, &eo,
                                  NULL);
        if (!pol->excl)
                /* e.g. an unbalanced ')' that closes our group: refuse rather than guess */
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "the excludes do not combine into one pattern (a regex "
                                  "closes a group it did not open?)");
        /* JIT where the platform has it (all or none: the probe and the naming of a pattern
         * must count as the round does), else the interpreter */
        pol->jit = pcre2_jit_compile(pol->excl, PCRE2_JIT_COMPLETE) == 0;
        for (size_t i = 0; pol->jit && i < pol->nexcl; i++)
                pol->jit = pcre2_jit_compile(pol->each[i], PCRE2_JIT_COMPLETE) == 0;
        return 0;
}

static size_t code_size(const pcre2_code *c)
{
        size_t n = 0, j = 0;

        if (!c)
                return 0;
        (void)pcre2_pattern_info(c, PCRE2_INFO_SIZE, &n);
        (void)pcre2_pattern_info(c, PCRE2_INFO_JITSIZE, &j);
        return n + j;
}

static size_t allowlist_size(const struct allowlist *a)
{
        size_t n = a->names_len + a->npaths * sizeof(*a->paths) + a->ndigests * sizeof(*a->digests);

        if (a->pslots)
                n += (a->pmask + 1) * sizeof(struct slot);
        if (a->dslots)
                n += (a->dmask + 1) * sizeof(struct slot);
        return n;
}

/* What the parsed section holds, approximately: its arrays, the compiled excludes, and a
 * round figure for each key (OpenSSL's objects: a few KiB). */
static size_t policy_bytes(const struct rt_policy *p)
{
        size_t n = sizeof(*p) + allowlist_size(&p->files) + allowlist_size(&p->keyrings) +
                   allowlist_size(&p->ima_buf) + code_size(p->excl);

        for (size_t i = 0; i < p->nexcl; i++)
                n += code_size(p->each[i]) + strlen(p->src[i]) + 1 + 2 * sizeof(void *);
        n += p->nkeys * (sizeof(*p->keys) + 4096) + p->nignored * sizeof(*p->ignored);
        return n;
}

size_t rt_policy_size(const struct rt_policy *p)
{
        return p ? p->bytes : 0;
}

static int parse_violations(const json_t *v, const char *p, struct rt_policy *pol,
                            struct attest_err *err)
{
        static const char *const k[] = {"allow", NULL};
        char q[JPATH_MAX];
        json_t *n;
        int x;

        if (json_is_string(v)) {
                if (strcmp(json_string_value(v), "fail") != 0)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "not \"fail\" or {\"allow\":N}");
                pol->violations_fail = true;
                return 0;
        }
        if ((x = jpath_object(v, p, k, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        jpath_join(q, p, "allow");
        n = json_object_get(v, "allow");
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            json_integer_value(n) > RT_VIOLATIONS_ALLOW_MAX)
                return jpath_fail(err, -EBADMSG, n ? AE_POLICY_BAD_VALUE : AE_POLICY_MISSING_FIELD,
                                  q, "not an integer 0-%d", RT_VIOLATIONS_ALLOW_MAX);
        pol->violations_fail = false;
        pol->violations_allow = (uint64_t)json_integer_value(n);
        return 0;
}

int rt_policy_from_json(const json_t *o, const char *path, struct rt_policy **ret,
                        struct attest_err *err)
{
        static const char *const keys[] = {"digests",    "excludes",     "keys",
                                           "keyrings",   "ima_buf",      "ignored_keyrings",
                                           "violations", "failures_max", NULL};
        _cleanup_(rt_policy_freep) struct rt_policy *pol = NULL;
        char p[JPATH_MAX], q[JPATH_MAX];
        json_t *v;
        int x;

        if ((x = policy_section_object(o, path, keys, err)) < 0)
                return x;
        if (!(pol = calloc(1, sizeof(*pol))))
                return -ENOMEM;
        pol->violations_fail = true;
        pol->failures_max = RT_FAILURES_MAX_DEFAULT;

        if ((v = json_object_get(o, "digests"))) {
                jpath_join(p, path, "digests");
                if ((x = parse_allowlist(v, p, true, &pol->files, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "keyrings"))) {
                jpath_join(p, path, "keyrings");
                if ((x = parse_allowlist(v, p, false, &pol->keyrings, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "ima_buf"))) {
                jpath_join(p, path, "ima_buf");
                if ((x = parse_allowlist(v, p, false, &pol->ima_buf, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "excludes"))) {
                jpath_join(p, path, "excludes");
                if ((x = parse_excludes(v, p, pol, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "keys"))) {
                jpath_join(p, path, "keys");
                if (!json_is_array(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
                if (json_array_size(v) > RT_KEYS_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "%zu keys > %d",
                                          json_array_size(v), RT_KEYS_MAX);
                if (json_array_size(v) &&
                    !(pol->keys = calloc(json_array_size(v), sizeof(*pol->keys))))
                        return -ENOMEM;
                for (size_t i = 0; i < json_array_size(v); i++) {
                        jpath_index(q, p, i);
                        /* counted first: a half-parsed key is released with the policy */
                        pol->nkeys++;
                        if ((x = parse_key(json_array_get(v, i), q, &pol->keys[i], err)) < 0)
                                return x;
                }
        }
        if ((v = json_object_get(o, "ignored_keyrings"))) {
                jpath_join(p, path, "ignored_keyrings");
                if (!json_is_array(v))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not an array");
                if (json_array_size(v) > RT_IGNORED_KEYRINGS_MAX)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "%zu keyrings > %d", json_array_size(v),
                                          RT_IGNORED_KEYRINGS_MAX);
                if (json_array_size(v) &&
                    !(pol->ignored = calloc(json_array_size(v), sizeof(*pol->ignored))))
                        return -ENOMEM;
                for (size_t i = 0; i < json_array_size(v); i++) {
                        json_t *s = json_array_get(v, i);
                        size_t n;

                        jpath_index(q, p, i);
                        if (!json_is_string(s))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                        n = json_string_length(s);
                        if (!name_ok(json_string_value(s), n, false) || n > RT_KEYRING_NAME_MAX)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                                  "not a keyring name of 1-%d bytes",
                                                  RT_KEYRING_NAME_MAX);
                        memcpy(pol->ignored[i], json_string_value(s), n + 1);
                        if (n == 1 && json_string_value(s)[0] == '*')
                                pol->ignore_all = true;
                        pol->nignored++;
                }
        }
        if ((v = json_object_get(o, "violations"))) {
                jpath_join(p, path, "violations");
                if ((x = parse_violations(v, p, pol, err)) < 0)
                        return x;
        }
        if ((v = json_object_get(o, "failures_max"))) {
                jpath_join(p, path, "failures_max");
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    json_integer_value(v) > RT_FAILURES_CAP)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "not an integer 0-%d", RT_FAILURES_CAP);
                pol->failures_max = (unsigned)json_integer_value(v);
        }
        pol->bytes = policy_bytes(pol);
        *ret = TAKE_PTR(pol);
        return 0;
}

/* ---- evaluation ---- */

#define NOTE_PATH_MAX 200

struct rt_ctx {
        const struct rt_policy *p;
        pcre2_match_data *md;
        pcre2_match_context *mctx; /* the round's own: its limits change per tier */
        pcre2_jit_stack *stack;
        uint64_t budget; /* units left this round */
        int64_t ns;      /* time left this round (may go below 0: one match overran it) */
        uint64_t idx;    /* the entry being judged (the note) */
        bool noted;
        char note[192 + NOTE_PATH_MAX];
};

int rt_ctx_new(const struct rt_policy *p, struct rt_ctx **ret)
{
        _cleanup_(rt_ctx_freep) struct rt_ctx *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->p = p;
        c->budget = RT_EXCL_BUDGET_UNITS;
        c->ns = RT_EXCL_BUDGET_NS;
        if (!p->excl) {
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (!(c->md = pcre2_match_data_create_from_pattern(p->excl, NULL)) ||
            !(c->mctx = pcre2_match_context_create(NULL)))
                return -ENOMEM;
        pcre2_set_depth_limit(c->mctx, RT_DEPTH_LIMIT);
        pcre2_set_heap_limit(c->mctx, RT_HEAP_LIMIT_KIB);
        /* a JIT stack of bounded size, per round (a stack serves one thread at a time) */
        if (p->jit) {
                if (!(c->stack = pcre2_jit_stack_create(RT_JIT_STACK_MIN, RT_JIT_STACK_MAX, NULL)))
                        return -ENOMEM;
                pcre2_jit_stack_assign(c->mctx, NULL, c->stack);
        }
        *ret = TAKE_PTR(c);
        return 0;
}

struct rt_ctx *rt_ctx_free(struct rt_ctx *c)
{
        if (c) {
                pcre2_match_data_free(c->md);
                pcre2_match_context_free(c->mctx);
                pcre2_jit_stack_free(c->stack);
                free(c);
        }
        return NULL;
}

void rt_ctx_set_budget(struct rt_ctx *c, uint64_t units, int64_t ns)
{
        c->budget = units;
        c->ns = ns;
}

uint64_t rt_ctx_budget(const struct rt_ctx *c)
{
        return c->budget;
}

const char *rt_ctx_exclude_note(const struct rt_ctx *c)
{
        return c->noted ? c->note : NULL;
}

/* One match of code under limit: >= 0 matched, PCRE2_ERROR_NOMATCH, or another error (a limit).
 * jit false: the interpreter even for a JIT-compiled code. */
static int match_once(struct rt_ctx *c, const pcre2_code *code, const char *s, size_t n,
                      uint32_t limit, bool jit)
{
        pcre2_set_match_limit(c->mctx, limit);
        if (jit)
                return pcre2_jit_match(code, (PCRE2_SPTR)s, n, 0, 0, c->md, c->mctx);
        return pcre2_match(code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_JIT, c->md, c->mctx);
}

/* The coarse clock (a tick of 1-10 ms, about 5 ns a read against 40 for CLOCK_MONOTONIC on the
 * development VM): a match shorter than a tick reads 0 or one tick, in proportion to its length,
 * so the sum over a round's matches is what they took; a long match reads at least its length
 * less one tick. */
static int64_t now_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
        return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static const uint32_t tiers[] = {RT_MATCH_TIER0, RT_MATCH_TIER1, RT_MATCH_LIMIT};

/*
 * code against s by tiers, each charged in full to the budget before it runs: 1 matched, 0 not,
 * RT_EXCL_LIMIT past RT_MATCH_LIMIT (or any other error), RT_EXCL_BUDGET when the next tier is not
 * affordable. The match data must fit code (every code has fewer groups than the alternation).
 */
static int match_tiers(struct rt_ctx *c, const pcre2_code *code, const char *s, size_t n)
{
        for (size_t t = 0; t < ARRAY_SIZE(tiers); t++) {
                int m;

                if (c->budget < tiers[t])
                        return -RT_EXCL_BUDGET;
                c->budget -= tiers[t];
                m = match_once(c, code, s, n, tiers[t], c->p->jit);
                if (m >= 0)
                        return 1;
                if (m == PCRE2_ERROR_NOMATCH)
                        return 0;
                if (m != PCRE2_ERROR_MATCHLIMIT)
                        break; /* depth, heap, JIT stack: a bigger match limit does not help */
        }
        return -RT_EXCL_LIMIT;
}

/* The note: path cut at NOTE_PATH_MAX, control bytes as '?'. */
static void note(struct rt_ctx *c, const char *what, const char *path, size_t len)
{
        char shown[NOTE_PATH_MAX + 1];
        size_t n = len < NOTE_PATH_MAX ? len : NOTE_PATH_MAX;

        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)path[i];

                shown[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
        }
        shown[n] = '\0';
        snprintf(c->note, sizeof(c->note), "%s on entry %" PRIu64 ": %s%s", what, c->idx, shown,
                 len > n ? "..." : "");
        c->noted = true;
}

/* After the alternation stopped at its limit on path: which exclude alone does (each tried at
 * RT_MATCH_LIMIT while the budget lasts), for the note. */
static void name_culprit(struct rt_ctx *c, const char *path, size_t len)
{
        char what[96];

        for (size_t i = 0; i < c->p->nexcl && c->budget >= RT_MATCH_LIMIT; i++) {
                int m;

                c->budget -= RT_MATCH_LIMIT;
                m = match_once(c, c->p->each[i], path, len, RT_MATCH_LIMIT, c->p->jit);
                if (m < 0 && m != PCRE2_ERROR_NOMATCH) {
                        snprintf(what, sizeof(what),
                                 "exclude pattern %zu exceeded its match budget", i);
                        note(c, what, path, len);
                        return;
                }
        }
        note(c, "the excludes together exceeded their match budget", path, len);
}

enum rt_excl rt_exclude_match(struct rt_ctx *c, const char *path, size_t len)
{
        int64_t t0;
        int m;

        if (!c->p->excl)
                return RT_EXCL_NO;
        /* every path brings its allowance: a round of ordinary paths never runs dry */
        c->budget = c->budget > UINT64_MAX - RT_EXCL_UNITS_PER_PATH
                            ? UINT64_MAX
                            : c->budget + RT_EXCL_UNITS_PER_PATH;
        c->ns = c->ns > INT64_MAX - RT_EXCL_NS_PER_PATH ? INT64_MAX : c->ns + RT_EXCL_NS_PER_PATH;
        if (c->ns <= 0) {
                m = -RT_EXCL_BUDGET;
        } else {
                t0 = now_ns();
                m = match_tiers(c, c->p->excl, path, len);
                if (m == -RT_EXCL_LIMIT && !c->noted)
                        name_culprit(c, path, len);
                c->ns -= now_ns() - t0;
        }
        if (m >= 0)
                return m ? RT_EXCL_YES : RT_EXCL_NO;
        if (m == -RT_EXCL_BUDGET && !c->noted)
                note(c, "the excludes' match budget of the round was spent", path, len);
        return (enum rt_excl) - m;
}

bool rt_excluded(struct rt_ctx *c, const char *path, size_t len)
{
        return rt_exclude_match(c, path, len) == RT_EXCL_YES;
}

/* ---- the PUT probe ---- */

static bool probe_lit(unsigned char ch)
{
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               (ch && strchr("/._-~@%,:= ", ch));
}

#define PROBE_LITS 8
#define PROBE_PREFIX 128

/* The pattern's literal prefix (after a '^'), and up to PROBE_LITS distinct literal characters
 * and 'a' (and '/' when it has none). */
static void probe_chars(const char *re, char *prefix, size_t *ret_plen, char *lits,
                        size_t *ret_nlits)
{
        size_t n = strlen(re), i = 0, plen = 0, nl = 0;

        if (n && re[0] == '^')
                i = 1;
        for (; i < n && plen < PROBE_PREFIX && probe_lit((unsigned char)re[i]) && re[i] != '.';
             i++) {
                /* a quantified last character is not part of the prefix */
                if (i + 1 < n && strchr("*+?{", re[i + 1]))
                        break;
                prefix[plen++] = re[i];
        }
        for (i = 0; i < n && nl < PROBE_LITS; i++) {
                unsigned char ch = (unsigned char)re[i];

                if (ch == '\\') {
                        /* an escaped punctuation character is a literal; \d, \w ... are not */
                        if (i + 1 < n && probe_lit((unsigned char)re[i + 1]) &&
                            !((re[i + 1] | 0x20) >= 'a' && (re[i + 1] | 0x20) <= 'z'))
                                ch = (unsigned char)re[i + 1];
                        i++;
                        if (!probe_lit(ch) || ch == '\\')
                                continue;
                } else if (!probe_lit(ch)) {
                        continue;
                }
                if (!memchr(lits, ch, nl))
                        lits[nl++] = (char)ch;
        }
        /* classes (\w, [[:alpha:]]) name no letter: a run of 'a' stands for them */
        if (!memchr(lits, 'a', nl))
                lits[nl++] = 'a';
        if (nl == 1)
                lits[nl++] = '/';
        *ret_plen = plen;
        *ret_nlits = nl;
}

/*
 * Whether code stops at RT_MATCH_LIMIT (interpreter) on a subject of at most max bytes: prefix, a
 * run of each literal, then a tail that fails late: nothing, "\x01", "\n", or "\x01" and a
 * literal (what a required last character needs); long subjects only the tails "\x01" and
 * "\x01" with the pattern's required last character (linear patterns cost the subject's length
 * each time).
 */
static bool probe_hits(struct rt_ctx *c, const pcre2_code *code, const char *prefix, size_t plen,
                       const char *lits, size_t nl, char *buf, size_t max, bool lng)
{
        size_t run = max - plen - 2;
        uint32_t last = 0, have_last = 0;

        if (pcre2_pattern_info(code, PCRE2_INFO_LASTCODETYPE, &have_last) < 0 ||
            (have_last && pcre2_pattern_info(code, PCRE2_INFO_LASTCODEUNIT, &last) < 0))
                have_last = 0;
        for (size_t r = 0; r < nl; r++) {
                memcpy(buf, prefix, plen);
                memset(buf + plen, lits[r], run);
                for (size_t t = 0; t < 3 + nl; t++) {
                        size_t n = plen + run;
                        int m;

                        if (lng && t != 1 && t != 3)
                                continue;
                        if (t == 1 || t >= 3)
                                buf[n++] = '\x01';
                        else if (t == 2)
                                buf[n++] = '\n';
                        if (t >= 3)
                                buf[n++] = lng ? (have_last ? (char)last : lits[0]) : lits[t - 3];
                        m = match_once(c, code, buf, n, RT_MATCH_LIMIT, false);
                        if (m < 0 && m != PCRE2_ERROR_NOMATCH)
                                return true;
                }
        }
        return false;
}

int rt_policy_probe(const struct rt_policy *p, const char *path,
                    void (*warn)(void *arg, const char *msg), void *arg, struct attest_err *err)
{
        _cleanup_(rt_ctx_freep) struct rt_ctx *c = NULL;
        _cleanup_free_ char *buf = NULL;
        char q[JPATH_MAX], msg[JPATH_MAX + 256];
        int64_t t0 = now_ns();
        int x;

        if (!p || !p->nexcl)
                return 0;
        if ((x = rt_ctx_new(p, &c)) < 0)
                return x;
        if (!(buf = malloc(RT_PROBE_LONG)))
                return -ENOMEM;
        for (size_t i = 0; i < p->nexcl; i++) {
                char prefix[PROBE_PREFIX], lits[PROBE_LITS + 2];
                size_t plen, nl;

                jpath_index(q, path, i);
                if (now_ns() - t0 > RT_PROBE_NS) {
                        snprintf(msg, sizeof(msg),
                                 "%s: not probed, nor those after it (the probe stops after %d ms)",
                                 q, RT_PROBE_NS / 1000000);
                        if (warn)
                                warn(arg, msg);
                        return 0;
                }
                probe_chars(p->src[i], prefix, &plen, lits, &nl);
                if (probe_hits(c, p->each[i], prefix, plen, lits, nl, buf, RT_PROBE_SHORT + plen,
                               false))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "exceeds the match limit (%d) on a %d-byte path built "
                                          "from its own characters: catastrophic backtracking "
                                          "(nested quantifiers such as (a+)+ or (a|aa)+)",
                                          RT_MATCH_LIMIT, RT_PROBE_SHORT);
                if (warn &&
                    probe_hits(c, p->each[i], prefix, plen, lits, nl, buf, RT_PROBE_LONG, true)) {
                        snprintf(msg, sizeof(msg),
                                 "%s: exceeds the match limit (%d) on a %d-byte path built from "
                                 "its own characters (polynomial backtracking, e.g. .* twice): "
                                 "such paths fail as exclude_match_limit; [^/]* instead of .* "
                                 "avoids it",
                                 q, RT_MATCH_LIMIT, RT_PROBE_LONG);
                        warn(arg, msg);
                }
        }
        return 0;
}

int rt_sig_parse(const uint8_t *p, size_t n, struct rt_sig *ret)
{
        struct rt_sig s;

        /* u8 type | u8 version | u8 hash_algo | be32 keyid | be16 sig_size | sig */
        if (n < 9)
                return -EBADMSG;
        s.type = p[0];
        s.version = p[1];
        s.hash_algo = p[2];
        s.keyid = (uint32_t)p[3] << 24 | (uint32_t)p[4] << 16 | (uint32_t)p[5] << 8 | p[6];
        s.sig_len = (uint16_t)(p[7] << 8 | p[8]);
        /* EVM_IMA_XATTR_DIGSIG 3, IMA_VERITY_DIGSIG 6 (v3 only) */
        if (s.type != 3 && s.type != 6)
                return -EBADMSG;
        if (s.version != 2 && s.version != 3)
                return -EOPNOTSUPP;
        if (s.type == 6 && s.version != 3)
                return -EBADMSG;
        if (s.sig_len == 0 || s.sig_len != n - 9)
                return -EBADMSG;
        s.sig = p + 9;
        *ret = s;
        return 0;
}

/*
 * Check the signature of an entry's digest (algo, d) with the trusted keys: 1 good, 0 bad
 * (*ret_reason set), -ENOMEM. v2 signs the file digest; v3 signs the digest of struct
 * ima_file_id {u8 hash_type (the header's type); u8 hash_algorithm; u8 hash[digest size]}.
 */
static int sig_check(const struct rt_policy *p, const uint8_t *sigp, size_t sign, unsigned algo,
                     const uint8_t *d, size_t dn, enum rt_reason *ret_reason)
{
        const struct hashalg *a = algo_get(algo);
        const struct rt_key *k = NULL;
        uint8_t fid[2 + RT_DIGEST_MAX], md[EVP_MAX_MD_SIZE];
        const uint8_t *tbs = d;
        size_t tbs_len = dn;
        unsigned mdlen = 0;
        struct rt_sig s;
        EVP_PKEY_CTX *ctx;
        const EVP_MD *evp;
        int r;

        *ret_reason = RT_REASON_BAD_SIGNATURE;
        if (rt_sig_parse(sigp, sign, &s) < 0)
                return 0;
        for (size_t i = 0; i < p->nkeys && !k; i++)
                if (p->keys[i].keyid == s.keyid ||
                    (p->keys[i].has_skid && p->keys[i].skid == s.keyid))
                        k = &p->keys[i];
        if (!k) {
                *ret_reason = RT_REASON_UNKNOWN_KEY;
                return 0;
        }
        /* the signature's hash must be the digest's (Keylime, the kernel) */
        if (!a || s.hash_algo != algo || !a->evp || !(evp = EVP_get_digestbyname(a->evp)))
                return 0;
        if (s.version == 3) {
                fid[0] = s.type;
                fid[1] = (uint8_t)algo;
                memcpy(fid + 2, d, dn);
                if (!EVP_Digest(fid, 2 + dn, md, &mdlen, evp, NULL))
                        return -ENOMEM;
                tbs = md;
                tbs_len = mdlen;
        }
        if (!(ctx = EVP_PKEY_CTX_new(k->pkey, NULL)))
                return -ENOMEM;
        r = EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, evp) == 1 &&
            EVP_PKEY_verify(ctx, s.sig, s.sig_len, tbs, tbs_len) == 1;
        EVP_PKEY_CTX_free(ctx);
        ERR_clear_error();
        return r;
}

/* ---- ima-modsig: the appended PKCS#7 (CMS SignedData) of a signed module or file ---- */

static const char *const modsig_why_names[RT_MODSIG__COUNT] = {
        [RT_MODSIG_OK] = "ok",
        [RT_MODSIG_TOO_BIG] = "too_big",
        [RT_MODSIG_MALFORMED] = "malformed",
        [RT_MODSIG_NOT_SIGNED_DATA] = "not_signed_data",
        [RT_MODSIG_NOT_DETACHED] = "not_detached",
        [RT_MODSIG_SIGNERS] = "signers",
        [RT_MODSIG_NO_DIGEST] = "no_digest",
        [RT_MODSIG_DIGEST_LEN] = "digest_len",
        [RT_MODSIG_DIGEST_ALGO] = "digest_algo",
        [RT_MODSIG_UNKNOWN_SIGNER] = "unknown_signer",
        [RT_MODSIG_SIG_ALGO] = "sig_algo",
        [RT_MODSIG_MESSAGE_DIGEST] = "message_digest",
        [RT_MODSIG_BAD_SIGNATURE] = "bad_signature",
};

const char *rt_modsig_why_name(enum rt_modsig_why w)
{
        return (unsigned)w < RT_MODSIG__COUNT ? modsig_why_names[w] : "unknown";
}

/* The trusted key that signer si names: a certificate by issuerAndSerialNumber or its
 * subjectKeyIdentifier extension (OpenSSL's comparison), a bare key by a subjectKeyIdentifier
 * equal to the SHA-1 of its public key bits. NULL: none. */
static const struct rt_key *modsig_signer(const struct rt_policy *p, CMS_SignerInfo *si)
{
        ASN1_OCTET_STRING *kid = NULL;
        X509_NAME *issuer = NULL;
        ASN1_INTEGER *sno = NULL;

        if (CMS_SignerInfo_get0_signer_id(si, &kid, &issuer, &sno) != 1)
                return NULL;
        for (size_t i = 0; i < p->nkeys; i++) {
                const struct rt_key *k = &p->keys[i];

                if (k->is_cert && CMS_SignerInfo_cert_cmp(si, k->x509) == 0)
                        return k;
                if (!k->is_cert && kid && ASN1_STRING_length(kid) == 20 &&
                    memcmp(ASN1_STRING_get0_data(kid), k->kid, 20) == 0)
                        return k;
        }
        return NULL;
}

/* Does the SignerInfo's signature algorithm fit key k and digest md_nid? rsaEncryption or
 * sha*WithRSAEncryption for RSA (PKCS#1 v1.5), ecdsa-with-* for EC; RSA-PSS and others: no. */
static bool modsig_sig_algo_ok(const struct rt_key *k, const X509_ALGOR *alg, int md_nid)
{
        const ASN1_OBJECT *obj = NULL;
        int nid, dnid = NID_undef, pknid = NID_undef;

        X509_ALGOR_get0(&obj, NULL, NULL, alg);
        nid = OBJ_obj2nid(obj);
        if (nid == NID_rsaEncryption)
                pknid = NID_rsaEncryption;
        else if (!OBJ_find_sigid_algs(nid, &dnid, &pknid))
                return false;
        if (dnid != NID_undef && dnid != md_nid)
                return false;
        if (EVP_PKEY_get_base_id(k->pkey) == EVP_PKEY_RSA)
                return pknid == NID_rsaEncryption;
        return pknid == NID_X9_62_id_ecPublicKey;
}

/* The checks after parsing: 1 good, 0 not (*why), -ENOMEM. */
static int modsig_judge(const struct rt_policy *p, CMS_ContentInfo *cms, unsigned algo,
                        const uint8_t *d, size_t dn, enum rt_modsig_why *why)
{
        const struct hashalg *a = algo_get(algo);
        STACK_OF(CMS_SignerInfo) * sis;
        CMS_SignerInfo *si;
        const struct rt_key *k;
        X509_ALGOR *dig = NULL, *sig = NULL;
        const ASN1_OBJECT *obj = NULL;
        ASN1_OCTET_STRING **content, *sv;
        const EVP_MD *evp;
        int md_nid, r;

        if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed ||
            OBJ_obj2nid(CMS_get0_eContentType(cms)) != NID_pkcs7_data) {
                *why = RT_MODSIG_NOT_SIGNED_DATA;
                return 0;
        }
        if (!(content = CMS_get0_content(cms)) || *content) {
                *why = RT_MODSIG_NOT_DETACHED;
                return 0;
        }
        sis = CMS_get0_SignerInfos(cms);
        if (!sis || sk_CMS_SignerInfo_num(sis) != 1) {
                *why = RT_MODSIG_SIGNERS;
                return 0;
        }
        si = sk_CMS_SignerInfo_value(sis, 0);
        if (!a || !a->evp || !(evp = EVP_get_digestbyname(a->evp))) {
                *why = RT_MODSIG_NO_DIGEST;
                return 0;
        }
        if (dn != a->size) {
                *why = RT_MODSIG_DIGEST_LEN;
                return 0;
        }
        md_nid = EVP_MD_get_type(evp);
        CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, &sig);
        X509_ALGOR_get0(&obj, NULL, NULL, dig);
        if (OBJ_obj2nid(obj) != md_nid) {
                *why = RT_MODSIG_DIGEST_ALGO;
                return 0;
        }
        if (!(k = modsig_signer(p, si))) {
                *why = RT_MODSIG_UNKNOWN_SIGNER;
                return 0;
        }
        if (!modsig_sig_algo_ok(k, sig, md_nid)) {
                *why = RT_MODSIG_SIG_ALGO;
                return 0;
        }
        *why = RT_MODSIG_BAD_SIGNATURE;
        if (CMS_signed_get_attr_count(si) >= 0) {
                /* signed attributes (the kernel refuses them in a module signature, but they
                 * are a valid CMS signature): messageDigest must be d-modsig, and the
                 * signature covers the attributes */
                const ASN1_OCTET_STRING *m = CMS_signed_get0_data_by_OBJ(
                        si, OBJ_nid2obj(NID_pkcs9_messageDigest), -3, V_ASN1_OCTET_STRING);

                if (!m || (size_t)ASN1_STRING_length(m) != dn ||
                    memcmp(ASN1_STRING_get0_data(m), d, dn) != 0) {
                        *why = RT_MODSIG_MESSAGE_DIGEST;
                        return 0;
                }
                CMS_SignerInfo_set1_signer_cert(si, k->x509);
                r = CMS_SignerInfo_verify(si) == 1;
        } else {
                /* no attributes: the signature is over the content digest itself */
                EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k->pkey, NULL);

                if (!ctx)
                        return -ENOMEM;
                sv = CMS_SignerInfo_get0_signature(si);
                r = sv && EVP_PKEY_verify_init(ctx) == 1 &&
                    EVP_PKEY_CTX_set_signature_md(ctx, evp) == 1 &&
                    EVP_PKEY_verify(ctx, ASN1_STRING_get0_data(sv), (size_t)ASN1_STRING_length(sv),
                                    d, dn) == 1;
                EVP_PKEY_CTX_free(ctx);
        }
        if (r)
                *why = RT_MODSIG_OK;
        return r;
}

int rt_modsig_check(const struct rt_policy *p, const struct ima_entry *e,
                    enum rt_modsig_why *ret_why)
{
        const unsigned char *q = e->modsig;
        CMS_ContentInfo *cms;
        unsigned algo = 0;
        int r;

        *ret_why = RT_MODSIG_MALFORMED;
        if (!e->modsig || !e->modsig_len)
                return 0;
        if (e->modsig_len > RT_MODSIG_MAX) {
                *ret_why = RT_MODSIG_TOO_BIG;
                return 0;
        }
        if (e->modsig_algo)
                algo = algo_from_name(e->modsig_algo, e->modsig_algo_len);
        /* the whole field is one DER (or BER: sign-file streams) ContentInfo, nothing after */
        cms = d2i_CMS_ContentInfo(NULL, &q, (long)e->modsig_len);
        if (!cms || q != e->modsig + e->modsig_len) {
                CMS_ContentInfo_free(cms);
                ERR_clear_error();
                return 0;
        }
        if (!e->modsig_digest || !e->modsig_digest_len || !algo) {
                *ret_why = RT_MODSIG_NO_DIGEST;
                r = 0;
        } else {
                r = modsig_judge(p, cms, algo, e->modsig_digest, e->modsig_digest_len, ret_why);
        }
        CMS_ContentInfo_free(cms);
        ERR_clear_error();
        return r;
}

static bool ignored_keyring(const struct rt_policy *p, const char *name, size_t n)
{
        if (p->ignore_all)
                return true;
        for (size_t i = 0; i < p->nignored; i++)
                if (strlen(p->ignored[i]) == n && memcmp(p->ignored[i], name, n) == 0)
                        return true;
        return false;
}

/* Does buf hold a DER public key or certificate (what the kernel measures for a key)? */
static bool is_key(const uint8_t *b, size_t n)
{
        const unsigned char *q = b;
        EVP_PKEY *k;
        X509 *c;

        if (n < 2 || b[0] != 0x30) /* a DER SEQUENCE at least */
                return false;
        if ((k = d2i_PUBKEY(NULL, &q, (long)n))) {
                EVP_PKEY_free(k);
                return true;
        }
        q = b;
        if ((c = d2i_X509(NULL, &q, (long)n))) {
                X509_free(c);
                return true;
        }
        ERR_clear_error();
        return false;
}

static void record(const struct rt_ctx *c, struct rt_state *st, const struct ima_entry *e,
                   uint64_t idx, unsigned algo, enum rt_reason why)
{
        struct rt_failure *f;
        size_t n;

        st->failed++;
        if (st->nfail >= c->p->failures_max || st->nfail >= RT_FAILURES_CAP)
                return;
        f = &st->fail[st->nfail++];
        memset(f, 0, sizeof(*f));
        f->entry = idx;
        f->reason = (uint8_t)why;
        f->algo = (uint8_t)algo;
        if (e->digest && e->digest_len <= RT_DIGEST_MAX) {
                f->digest_len = (uint8_t)e->digest_len;
                memcpy(f->digest, e->digest, e->digest_len);
        }
        n = e->name ? e->name_len : 0;
        f->path_cut = n > RT_FAIL_PATH_MAX;
        if (f->path_cut) {
                const unsigned char *p = (const unsigned char *)e->name;

                /* cut before a UTF-8 character the limit would split (continuation bytes) */
                n = RT_FAIL_PATH_MAX;
                for (unsigned k = 0; k < 3 && (p[n] & 0xc0) == 0x80; k++)
                        n--;
        }
        if (n)
                memcpy(f->path, e->name, n);
        f->path[n] = '\0';
        f->path_len = (uint16_t)n;
}

static int fail(const struct rt_ctx *c, struct rt_state *st, const struct ima_entry *e,
                uint64_t idx, unsigned algo, enum rt_reason why, enum rt_reason *ret_reason)
{
        record(c, st, e, idx, algo, why);
        if (ret_reason)
                *ret_reason = why;
        return RT_FAIL;
}

int rt_eval_entry(struct rt_ctx *c, const struct ima_entry *e, uint64_t idx, struct rt_state *st,
                  enum rt_reason *ret_reason)
{
        const struct rt_policy *p = c->p;
        enum rt_excl excl;
        unsigned algo = 0;
        int r;

        if (e->algo)
                algo = algo_from_name(e->algo, e->algo_len);
        if (e->violation) {
                st->violations++;
                if (!p->violations_fail && st->violations <= p->violations_allow)
                        return RT_VIOLATION_ALLOWED;
                return fail(c, st, e, idx, algo, RT_REASON_VIOLATION, ret_reason);
        }
        if (!e->tmpl.known || !e->name || !e->digest || !algo)
                return fail(c, st, e, idx, algo, RT_REASON_UNSUPPORTED, ret_reason);
        /* ima-buf: the event name is a keyring or an event, the digest that of the buffer */
        if (e->buf && e->buf_len && !e->sig) {
                const char *name = e->name;
                size_t n = e->name_len;

                if (p->keyrings.present) {
                        r = allowlist_check(&p->keyrings, name, n, algo, e->digest, e->digest_len);
                        if (r == 1)
                                goto pass;
                }
                if (ignored_keyring(p, name, n) && is_key(e->buf, e->buf_len))
                        goto excluded;
                if (p->ima_buf.present) {
                        r = allowlist_check(&p->ima_buf, name, n, algo, e->digest, e->digest_len);
                        if (r == 1)
                                goto pass;
                }
                if (is_key(e->buf, e->buf_len))
                        return fail(c, st, e, idx, algo, RT_REASON_KEYRING_NOT_ALLOWED, ret_reason);
                /* critical data the policy does not list: its own sections judge it */
                if (!p->ima_buf.present)
                        goto excluded;
                return fail(c, st, e, idx, algo, RT_REASON_BUF_NOT_ALLOWED, ret_reason);
        }
        if (idx == 0 && ima_entry_is_boot_aggregate(e) &&
            allowlist_check(&p->files, e->name, e->name_len, algo, e->digest, e->digest_len) < 0)
                goto excluded; /* judged by ima.require_boot_aggregate */
        c->idx = idx;
        excl = rt_exclude_match(c, e->name, e->name_len);
        if (excl == RT_EXCL_YES)
                goto excluded;
        {
                enum rt_reason sig_why = RT_REASON__COUNT;

                if (e->sig && e->sig_len && p->nkeys) {
                        r = sig_check(p, e->sig, e->sig_len, algo, e->digest, e->digest_len,
                                      &sig_why);
                        if (r < 0)
                                return r;
                        if (r == 1)
                                goto signed_ok;
                }
                /* ima-modsig: the appended signature, judged like sig; a bad signature by a
                 * trusted key outranks an unknown signer when both fields fail */
                if (e->modsig && e->modsig_len && p->nkeys) {
                        enum rt_modsig_why mw;

                        r = rt_modsig_check(p, e, &mw);
                        if (r < 0)
                                return r;
                        if (r == 1)
                                goto signed_ok;
                        if (sig_why != RT_REASON_BAD_SIGNATURE)
                                sig_why = mw == RT_MODSIG_UNKNOWN_SIGNER ? RT_REASON_UNKNOWN_KEY
                                                                         : RT_REASON_BAD_SIGNATURE;
                }
                r = p->files.present ? allowlist_check(&p->files, e->name, e->name_len, algo,
                                                       e->digest, e->digest_len)
                                     : -1;
                if (r == 1)
                        goto pass;
                /* an exclude that stopped at its limit (or was not tried) excludes nothing: the
                 * entry fails, and says why, rather than passing or failing for another cause */
                if (excl == RT_EXCL_LIMIT || excl == RT_EXCL_BUDGET)
                        return fail(c, st, e, idx, algo,
                                    excl == RT_EXCL_LIMIT ? RT_REASON_EXCLUDE_LIMIT
                                                          : RT_REASON_EXCLUDE_BUDGET,
                                    ret_reason);
                if (sig_why != RT_REASON__COUNT)
                        return fail(c, st, e, idx, algo, sig_why, ret_reason);
                return fail(c, st, e, idx, algo,
                            r == 0 ? RT_REASON_DIGEST_MISMATCH : RT_REASON_NOT_ALLOWED, ret_reason);
        }
signed_ok:
        st->signed_ok++;
        st->passed++;
        return RT_PASS_SIGNED;
pass:
        st->passed++;
        return RT_PASS;
excluded:
        st->excluded++;
        return RT_EXCLUDED;
}
