/* SPDX-License-Identifier: MIT */
/* The ima.runtime allowlists (runtime-internal.h): the policy's algorithms, hash sets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/jpath.h"
#include "policy/runtime-internal.h"
#include "util/hex.h"

/* ---- algorithms ---- */

const char *rt_algo_name(unsigned algo)
{
        const struct hashalg *a = rt_algo_get(algo);

        return a ? a->name : NULL;
}

/* ---- hash sets ---- */

void rt_allowlist_done(struct rt_allowlist *a)
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

static const struct rt_path *path_find(const struct rt_allowlist *a, uint64_t h, const char *s,
                                       size_t n, uint32_t *ret_idx)
{
        size_t i = h & a->pmask;

        if (!a->pslots) /* the member is absent, or lists nothing */
                return NULL;
        for (;;) {
                const struct rt_slot *sl = &a->pslots[i];

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

/*
 * a[0..n) == b[0..n), 8 bytes at a time in registers (the last word overlapping the one before
 * when n is no multiple of 8): the short keys of a lookup (a digest, a path) do not pay
 * memcmp()'s call and vector set-up.
 */
static inline bool bytes_eq(const void *a, const void *b, size_t n)
{
        const uint8_t *x = a, *y = b;
        uint64_t u, v, acc = 0;

        if (n < 8) {
                for (size_t i = 0; i < n; i++)
                        acc |= (uint64_t)(x[i] ^ y[i]);
                return acc == 0;
        }
        for (size_t i = 0; i + 8 < n; i += 8) {
                memcpy(&u, x + i, 8);
                memcpy(&v, y + i, 8);
                acc |= u ^ v;
        }
        memcpy(&u, x + n - 8, 8);
        memcpy(&v, y + n - 8, 8);
        return (acc | (u ^ v)) == 0;
}

static bool digest_find(const struct rt_allowlist *a, uint64_t h, const char *path, size_t pn,
                        unsigned algo, const uint8_t *d, size_t n)
{
        size_t i = h & a->dmask;

        if (!a->dslots)
                return false;
        for (;;) {
                const struct rt_slot *sl = &a->dslots[i];

                if (!sl->ref)
                        return false;
                if (sl->h == h) {
                        const struct rt_digest *x = &a->digests[sl->ref - 1];

                        if (x->algo == algo && x->len == n && x->path_len == pn &&
                            bytes_eq(x->d, d, n) && bytes_eq(a->names + x->path_off, path, pn))
                                return true;
                }
                i = (i + 1) & a->dmask;
        }
}

static void slot_put(struct rt_slot *t, size_t mask, uint64_t h, uint32_t ref)
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
                algo = rt_algo_from_name(s, (size_t)(colon - s));
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
        a = rt_algo_get(algo);
        if (n != 2u * a->size || hex_decode(s, n, out, RT_DIGEST_MAX, &got) < 0 || got != a->size)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                  "not a %s digest (%u hex digits)", a->name, 2u * a->size);
        *ret_algo = algo;
        *ret_len = got;
        return 0;
}

bool rt_name_ok(const char *s, size_t n, bool abs)
{
        if (n == 0 || n > RT_PATH_BYTES_MAX || memchr(s, '\0', n))
                return false;
        return !abs || s[0] == '/' || (n == 14 && memcmp(s, "boot_aggregate", 14) == 0);
}

/* {"name":["digest",...],...}: abs requires absolute paths (digests), else any name. */
int rt_allowlist_parse(const json_t *o, const char *p, bool abs, struct rt_allowlist *a,
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
                if (!rt_name_ok(key, n, abs))
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
                uint64_t ph = rt_hash_bytes(key, n);

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
                        dh = rt_digest_key(ph, algo, d, len);
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

int rt_allowlist_check_key(const struct rt_allowlist *a, const struct rt_key_hash *k,
                           const char *name, size_t n, unsigned algo, const uint8_t *d, size_t dn)
{
        /* the passing case first: one probe of the digest set */
        if (digest_find(a, k->dh, name, n, algo, d, dn))
                return 1;
        return path_find(a, k->ph, name, n, NULL) ? 0 : -1;
}

/* Is (name, algo, digest) listed? 1 yes, 0 the name is listed without it, -1 no such name. */
int rt_allowlist_check(const struct rt_allowlist *a, const char *name, size_t n, unsigned algo,
                       const uint8_t *d, size_t dn)
{
        struct rt_key_hash k;

        rt_allowlist_key(name, n, algo, d, dn, &k);
        return rt_allowlist_check_key(a, &k, name, n, algo, d, dn);
}

size_t rt_allowlist_size(const struct rt_allowlist *a)
{
        size_t n = a->names_len + a->npaths * sizeof(*a->paths) + a->ndigests * sizeof(*a->digests);

        if (a->pslots)
                n += (a->pmask + 1) * sizeof(struct rt_slot);
        if (a->dslots)
                n += (a->dmask + 1) * sizeof(struct rt_slot);
        return n;
}
