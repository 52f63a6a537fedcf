/* SPDX-License-Identifier: MIT */
/* A policy written from a known-good host's verified evidence (attestctl policy from-host). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/x509.h>

#include "evidence/ima.h"
#include "policy/policy-host.h"
#include "policy/policy-internal.h"
#include "util/hex.h"

static bool never_permissive_holds(const struct claims *c)
{
        return c->selinux.present && c->selinux_history.enforced &&
               c->selinux_history.lapse == SELINUX_LAPSE_NONE;
}

static bool valid_word(const char *s, size_t n)
{
        if (n == 0 || n >= WORD_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!policy_word_char(s[i]))
                        return false;
        return true;
}

/* o[k] = v, consuming v in every case; false (and nothing set) once ok is false. */
/* The words attestd-policy(5) accepts for trusted_keys.rng and .requested (policy.c refuses
 * others): a pinned value must parse. */
static bool rng_word(const char *w)
{
        return !strcmp(w, "kernel") || tk_source_from_name(w, strlen(w)) != TK_SOURCE_UNKNOWN;
}

static bool requested_word(const char *w)
{
        enum tk_source s = tk_source_from_name(w, strlen(w));

        return !strcmp(w, "any") || !strcmp(w, "other") ||
               (s != TK_SOURCE_UNKNOWN && s != TK_SOURCE_NONE);
}

static bool setn(bool ok, json_t *o, const char *k, json_t *v)
{
        if (!ok || !o || !v) {
                json_decref(v);
                return false;
        }
        return json_object_set_new(o, k, v) == 0;
}

int policy_from_host(const struct claims *c, const char *name, json_t **ret_policy)
{
        json_auto_t *pol = json_object();
        json_t *sec;
        bool ok = true;

        if (!c || !name || !ret_policy || !valid_word(name, strlen(name)) ||
            strlen(name) > POLICY_NAME_MAX)
                return -EINVAL;
        if (!pol)
                return -ENOMEM;
        ok = setn(true, pol, "name", json_string(name));

        /* selinux: the latest state, its policy capabilities, the policy hash */
        if (c->selinux.present) {
                const struct cdata_selinux_state *s = &c->selinux_state;
                json_t *caps = json_object();

                sec = json_object();
                for (unsigned f = 0; f < SELINUX_FLAG__COUNT; f++) {
                        int v = cdata_selinux_flag(s, (enum selinux_flag)f);

                        if (v >= 0)
                                ok = setn(ok, sec, selinux_flag_name((enum selinux_flag)f),
                                          json_boolean(v));
                }
                for (unsigned k = 0; k < SELINUX_CAP__COUNT; k++) {
                        int v = cdata_selinux_cap(s, (enum selinux_cap)k);

                        if (v >= 0)
                                ok = setn(ok, caps, selinux_cap_name((enum selinux_cap)k),
                                          json_boolean(v));
                }
                if (json_object_size(caps))
                        ok = setn(ok, sec, "policycaps", caps);
                else
                        json_decref(caps);
                if (c->policy_hash.present &&
                    (c->policy_hash_len == 20 || c->policy_hash_len == 32 ||
                     c->policy_hash_len == 48 || c->policy_hash_len == 64))
                        ok = setn(ok, sec, "policy_sha256",
                                  json_pack("[o]",
                                            policy_hex_json(c->policy_hash_v, c->policy_hash_len)));
                if (never_permissive_holds(c))
                        ok = setn(ok, sec, "never_permissive", json_true());
                if (json_object_size(sec))
                        ok = setn(ok, pol, "selinux", sec);
                else
                        json_decref(sec);
        }

        /* trusted keys: the measured source, else the reported one, when a policy can name it;
         * and, measured only, where key material comes from and what the boot asked for */
        if (c->trusted_keys.present && c->tk_source != TK_SOURCE_UNKNOWN) {
                json_t *tk = json_pack("{s:[s], s:b}", "sources", tk_source_name(c->tk_source),
                                       "anchored", c->trusted_keys.anchored);

                if (tk && c->trusted_keys.anchored && rng_word(c->tk_rng))
                        ok = setn(ok, tk, "rng", json_pack("[s]", c->tk_rng));
                if (tk && c->trusted_keys.anchored && requested_word(c->tk_requested))
                        ok = setn(ok, tk, "requested", json_pack("[s]", c->tk_requested));
                ok = setn(ok, pol, "trusted_keys", tk);
        }

        /* cfi; the mode only when measured */
        if (c->cfi.present) {
                json_t *cfi = json_pack("{s:b, s:b, s:b}", "enabled", c->cfi_enabled, "permissive",
                                        c->cfi_permissive, "anchored", c->cfi.anchored);

                if (cfi && c->cfi.anchored &&
                    (c->cfi_mode == CFI_MODE_KCFI || c->cfi_mode == CFI_MODE_FINEIBT ||
                     c->cfi_mode == CFI_MODE_NONE))
                        ok = setn(ok, cfi, "mode", json_pack("[s]", cfi_mode_name(c->cfi_mode)));
                ok = setn(ok, pol, "cfi", cfi);
        }

        /* kernel: the exact version, when it is a valid pattern */
        const char *ver = c->kernel.present ? c->kernel_version : "";
        bool ver_ok = ver[0] && strlen(ver) < GLOB_MAX;
        for (const char *q = ver; *q; q++)
                if (!policy_word_char(*q))
                        ver_ok = false;
        if (ver_ok)
                ok = setn(
                        ok, pol, "kernel",
                        json_pack("{s:[s], s:b}", "versions", ver, "anchored", c->kernel.anchored));

        /* tpm: every quoted PCR but the IMA one, which changes with each measurement */
        json_t *pcrs = NULL;
        if (pcrs_to_json(&c->quoted, 1u << IMA_PCR, &pcrs) < 0)
                ok = false;
        else if (json_object_size(pcrs))
                ok = setn(ok, pol, "tpm", json_pack("{s:o}", "pcrs", pcrs));
        else
                json_decref(pcrs);

        if (c->boot_aggregate_ok)
                ok = setn(ok, pol, "ima", json_pack("{s:b}", "require_boot_aggregate", 1));
        if (!ok)
                return -ENOMEM;
        *ret_policy = TAKE_PTR(pol);
        return 0;
}

/* ---- ima.runtime from a known-good log ---- */

/* {..., key: [...]} : the array at key, created when absent; NULL when key is not UTF-8. */
static json_t *list_at(json_t *o, const char *key, size_t n, int *ret)
{
        json_t *a = json_object_getn(o, key, n);

        *ret = 0;
        if (a)
                return a;
        if (!(a = json_array())) {
                *ret = -ENOMEM;
                return NULL;
        }
        if (json_object_setn_new(o, key, n, a) < 0) {
                /* jansson refuses keys that are not UTF-8 (and then frees a) */
                *ret = -EINVAL;
                return NULL;
        }
        return a;
}

/* Append s (a NUL terminated digest string) to a unless there: 1, 0 there, -ENOSPC a is full,
 * -ENOMEM. */
static int list_add(json_t *a, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach(a, i, v) if (strcmp(json_string_value(v), s) == 0) return 0;
        if (json_array_size(a) >= POLICY_RUNTIME_DIGESTS_PER_PATH)
                return -ENOSPC;
        return json_array_append_new(a, json_string(s)) == 0 ? 1 : -ENOMEM;
}

static json_t *section_of(json_t *rt, const char *key)
{
        json_t *o = json_object_get(rt, key);

        if (o)
                return o;
        o = json_object();
        if (o && json_object_set_new(rt, key, o) < 0)
                return NULL;
        return o;
}

/* s = [alg ":"] hex(d); out holds "sha512:" + 128 digits + NUL. */
static int digest_str(const char *alg, size_t alg_len, const uint8_t *d, size_t n, char *out,
                      size_t size)
{
        if (n == 0 || n > BANK_DIGEST_MAX || alg_len > 15 || alg_len + 1 + 2 * n + 1 > size)
                return -EINVAL;
        if (alg_len) {
                memcpy(out, alg, alg_len);
                out[alg_len++] = ':';
        }
        hex_encode(d, n, out + alg_len);
        out[alg_len + 2 * n] = '\0';
        return 0;
}

int policy_runtime_add_digest(json_t *rt, const char *path, size_t path_len, const char *alg,
                              const uint8_t *digest, size_t n)
{
        char s[16 + 2 * BANK_DIGEST_MAX + 2];
        json_t *digests, *a;
        int x;

        if (!rt || !path || path_len == 0 || !alg)
                return -EINVAL;
        if ((x = digest_str(alg, strlen(alg), digest, n, s, sizeof(s))) < 0)
                return x;
        if (!(digests = section_of(rt, "digests")))
                return -ENOMEM;
        if (!(a = list_at(digests, path, path_len, &x)))
                return x;
        return list_add(a, s);
}

/* A key measurement (func=KEY_CHECK): the buffer is one DER X.509 certificate. */
static bool buf_is_certificate(const uint8_t *p, size_t n)
{
        const unsigned char *q = p;
        X509 *x;
        bool whole;

        if (n == 0 || n > LONG_MAX)
                return false;
        x = d2i_X509(NULL, &q, (long)n);
        whole = x && q == p + n;
        X509_free(x);
        return whole;
}

int policy_runtime_add_entry(json_t *rt, const struct ima_entry *e, policy_exclude_fn exclude,
                             void *ctx, struct policy_runtime_stats *st)
{
        char s[16 + 2 * BANK_DIGEST_MAX + 2];
        json_t *sec, *a;
        bool key;
        int x;

        st->entries++;
        if (e->violation) {
                st->violations++;
                return 0;
        }
        if (!e->digest || !e->name) {
                st->opaque++;
                return 0;
        }
        if (ima_entry_is_boot_aggregate(e)) {
                st->boot_aggregate++;
                return 0;
        }
        if (exclude && exclude(ctx, e->name, e->name_len)) {
                st->excluded++;
                return 0;
        }
        if (!e->buf || e->buf_len == 0) {
                /* a file: path -> "alg:hex" ('ima' has no algorithm field: sha1) */
                char alg[16] = "sha1";

                if (e->algo_len) {
                        if (e->algo_len >= sizeof(alg)) {
                                st->opaque++;
                                return 0;
                        }
                        memcpy(alg, e->algo, e->algo_len);
                        alg[e->algo_len] = '\0';
                }
                x = policy_runtime_add_digest(rt, e->name, e->name_len, alg, e->digest,
                                              e->digest_len);
                if (x == -EINVAL)
                        st->not_utf8++;
                else if (x == -ENOSPC)
                        st->over_cap++;
                else if (x < 0)
                        return x;
                else
                        st->files++;
                return 0;
        }
        /* ima-buf: a key for its keyring, else an event by name; bare hex */
        key = buf_is_certificate(e->buf, e->buf_len);
        if (!(sec = section_of(rt, key ? "keyrings" : "ima_buf")) ||
            digest_str("", 0, e->digest, e->digest_len, s, sizeof(s)) < 0)
                return -ENOMEM;
        if (!(a = list_at(sec, e->name, e->name_len, &x))) {
                if (x != -EINVAL)
                        return x;
                st->not_utf8++;
                return 0;
        }
        if ((x = list_add(a, s)) == -ENOSPC) {
                st->over_cap++;
                return 0;
        }
        if (x < 0)
                return x;
        if (key)
                st->keys++;
        else
                st->bufs++;
        return 0;
}

static int read_entries(struct ima_reader *rd, json_t *rt, policy_exclude_fn exclude, void *ctx,
                        struct policy_runtime_stats *st, struct attest_err *err)
{
        struct ima_entry e;
        int x;

        while ((x = ima_reader_next(rd, &e, err)) == 1)
                if ((x = policy_runtime_add_entry(rt, &e, exclude, ctx, st)) < 0)
                        return x;
        return x;
}

int policy_runtime_from_log(const uint8_t *log, size_t len, policy_exclude_fn exclude, void *ctx,
                            json_t **ret_runtime, struct policy_runtime_stats *ret_stats,
                            struct attest_err *err)
{
        json_auto_t *rt = json_object();
        struct policy_runtime_stats st = {0};
        struct ima_reader rd;
        int x;

        if (!rt)
                return -ENOMEM;
        if ((x = ima_reader_init_auto(&rd, log, len, NULL)) < 0)
                return attest_fail(err, x, AE_IMA_BAD_LINE, "cannot read the log");
        x = read_entries(&rd, rt, exclude, ctx, &st, err);
        ima_reader_done(&rd);
        if (x < 0)
                return x;
        if (ret_stats)
                *ret_stats = st;
        *ret_runtime = TAKE_PTR(rt);
        return 0;
}
