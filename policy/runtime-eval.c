/* SPDX-License-Identifier: MIT */
/* One IMA entry judged against the ima.runtime section (policy/runtime.h: rt_eval_entry). */
#include <errno.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "policy/runtime-internal.h"

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

void rt_eval_prefetch(struct rt_ctx *c, const struct ima_entry *e, uint64_t idx)
{
        const struct rt_policy *p = c->p;
        struct rt_prefetched *pf = &c->pf;

        pf->set = false;
        /* only the common case: a file's digest, looked up in the digest list */
        if (e->violation || !e->name || !e->digest || !e->algo || !p->files.present ||
            (e->buf && e->buf_len))
                return;
        if (!(pf->algo = rt_algo_from_name(e->algo, e->algo_len)))
                return;
        rt_allowlist_key(e->name, e->name_len, pf->algo, e->digest, e->digest_len, &pf->k);
        rt_allowlist_prefetch(&p->files, &pf->k);
        pf->set = true;
        pf->idx = idx;
        pf->name = e->name;
        pf->name_len = e->name_len;
        pf->digest = e->digest;
        pf->digest_len = e->digest_len;
        pf->algo_name = e->algo;
        pf->algo_name_len = e->algo_len;
}

/* rt_eval_prefetch()'s keys when they were made for this entry, else NULL; used once */
static const struct rt_prefetched *prefetched(struct rt_ctx *c, const struct ima_entry *e,
                                              uint64_t idx)
{
        const struct rt_prefetched *pf = &c->pf;

        if (!pf->set)
                return NULL;
        c->pf.set = false;
        if (pf->idx != idx || pf->name != e->name || pf->name_len != e->name_len ||
            pf->digest != e->digest || pf->digest_len != e->digest_len ||
            pf->algo_name != e->algo || pf->algo_name_len != e->algo_len)
                return NULL;
        return pf;
}

int rt_eval_entry(struct rt_ctx *c, const struct ima_entry *e, uint64_t idx, struct rt_state *st,
                  enum rt_reason *ret_reason)
{
        const struct rt_policy *p = c->p;
        const struct rt_prefetched *pf = prefetched(c, e, idx);
        enum rt_excl excl;
        unsigned algo = 0;
        int r;

        if (pf)
                algo = pf->algo;
        else if (e->algo)
                algo = rt_algo_from_name(e->algo, e->algo_len);
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
                        r = rt_allowlist_check(&p->keyrings, name, n, algo, e->digest,
                                               e->digest_len);
                        if (r == 1)
                                goto pass;
                }
                if (ignored_keyring(p, name, n) && is_key(e->buf, e->buf_len))
                        goto excluded;
                if (p->ima_buf.present) {
                        r = rt_allowlist_check(&p->ima_buf, name, n, algo, e->digest,
                                               e->digest_len);
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
            rt_allowlist_check(&p->files, e->name, e->name_len, algo, e->digest, e->digest_len) < 0)
                goto excluded; /* judged by ima.require_boot_aggregate */
        c->idx = idx;
        excl = rt_exclude_match(c, e->name, e->name_len);
        if (excl == RT_EXCL_YES)
                goto excluded;
        {
                enum rt_reason sig_why = RT_REASON__COUNT;

                if (e->sig && e->sig_len && p->nkeys) {
                        r = rt_sig_check(p, e->sig, e->sig_len, algo, e->digest, e->digest_len,
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
                if (!p->files.present)
                        r = -1;
                else if (pf)
                        r = rt_allowlist_check_key(&p->files, &pf->k, e->name, e->name_len, algo,
                                                   e->digest, e->digest_len);
                else
                        r = rt_allowlist_check(&p->files, e->name, e->name_len, algo, e->digest,
                                               e->digest_len);
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
