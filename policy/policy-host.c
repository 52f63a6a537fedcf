/* SPDX-License-Identifier: MIT */
/* A policy written from a known-good host's verified evidence (attestctl policy from-host). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy-internal.h"

static bool never_permissive_holds(const struct cdata_claims *c)
{
        uint32_t i = 0;

        if (!c->n_selinux || c->selinux_dropped)
                return false;
        while (i < c->n_selinux && cdata_kv_bool(&c->selinux[i].kvs, "enforcing") != 1)
                i++;
        if (i == c->n_selinux)
                return false;
        for (i++; i < c->n_selinux; i++)
                if (cdata_kv_bool(&c->selinux[i].kvs, "enforcing") != 1 ||
                    cdata_kv_bool(&c->selinux[i].kvs, "initialized") == 0 ||
                    cdata_kv_bool(&c->selinux[i].kvs, "initialized") == -EBADMSG)
                        return false;
        return true;
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
static bool setn(bool ok, json_t *o, const char *k, json_t *v)
{
        if (!ok || !o || !v) {
                json_decref(v);
                return false;
        }
        return json_object_set_new(o, k, v) == 0;
}

int policy_from_host(const struct verify_result *vr, const struct evidence *ev, const char *name,
                     json_t **ret_policy)
{
        json_auto_t *pol = json_object();
        const struct cdata_claims *c;
        const struct evidence_host *h;
        json_t *sec;
        bool ok = true;

        if (!vr || !ev || !name || !ret_policy || !valid_word(name, strlen(name)) ||
            strlen(name) > POLICY_NAME_MAX)
                return -EINVAL;
        if (!pol)
                return -ENOMEM;
        c = &vr->next.claims;
        h = &ev->host;
        ok = setn(true, pol, "name", json_string(name));

        /* selinux: the latest state, its policy capabilities, the policy hash */
        if (c->n_selinux) {
                const struct cdata_state *s = &c->selinux[c->n_selinux - 1];
                json_t *caps = json_object();

                sec = json_object();
                for (uint32_t i = 0; i < s->kvs.n; i++) {
                        const struct cdata_kv *kv = &s->kvs.kv[i];
                        char key[CDATA_KEY_MAX + 1];

                        if (kv->val_len != 1 || (kv->val[0] != '0' && kv->val[0] != '1'))
                                continue;
                        snprintf(key, sizeof(key), "%.*s", (int)kv->key_len, kv->key);
                        json_t *b = json_boolean(kv->val[0] == '1');
                        if (!strcmp(key, "initialized") || !strcmp(key, "enforcing") ||
                            !strcmp(key, "checkreqprot"))
                                ok = setn(ok, sec, key, b);
                        else
                                ok = setn(ok, caps, key, b);
                }
                if (json_object_size(caps))
                        ok = setn(ok, sec, "policycaps", caps);
                else
                        json_decref(caps);
                if (c->policy_hash_seen && (c->policy_hash_len == 20 || c->policy_hash_len == 32 ||
                                            c->policy_hash_len == 48 || c->policy_hash_len == 64))
                        ok = setn(ok, sec, "policy_sha256",
                                  json_pack("[o]",
                                            policy_hex_json(c->policy_hash, c->policy_hash_len)));
                if (never_permissive_holds(c))
                        ok = setn(ok, sec, "never_permissive", json_true());
                if (json_object_size(sec))
                        ok = setn(ok, pol, "selinux", sec);
                else
                        json_decref(sec);
        }

        /* trusted keys: the measured source, else the reported one */
        const struct cdata_kv *tk =
                c->trusted_keys.raw ? cdata_kv_get(&c->trusted_keys.kvs, "source") : NULL;
        if (tk && valid_word(tk->val, tk->val_len))
                ok = setn(ok, pol, "trusted_keys",
                          json_pack("{s:[s%], s:b}", "sources", tk->val, (size_t)tk->val_len,
                                    "anchored", 1));
        else if (h->tk_present)
                ok = setn(ok, pol, "trusted_keys",
                          json_pack("{s:[s], s:b}", "sources", h->tk_source, "anchored", 0));

        /* cfi */
        int en = c->cfi.raw ? cdata_kv_bool(&c->cfi.kvs, "enabled") : -1;
        int pe = c->cfi.raw ? cdata_kv_bool(&c->cfi.kvs, "permissive") : -1;
        if (c->cfi.raw && (en >= 0 || pe >= 0)) {
                sec = json_pack("{s:b}", "anchored", 1);
                if (en >= 0)
                        ok = setn(ok, sec, "enabled", json_boolean(en));
                if (pe >= 0)
                        ok = setn(ok, sec, "permissive", json_boolean(pe));
                ok = setn(ok, pol, "cfi", sec);
        } else if (h->cfi_present) {
                ok = setn(ok, pol, "cfi",
                          json_pack("{s:b, s:b, s:b}", "enabled", h->cfi_enabled, "permissive",
                                    h->cfi_permissive, "anchored", 0));
        }

        /* kernel: the exact version, when it is a valid pattern */
        const char *ver = c->kernel_version_seen ? c->kernel_version : h->kernel;
        bool ver_ok = ver[0] && strlen(ver) < GLOB_MAX;
        for (const char *q = ver; *q; q++)
                if (!policy_word_char(*q))
                        ver_ok = false;
        if (ver_ok)
                ok = setn(ok, pol, "kernel",
                          json_pack("{s:[s], s:b}", "versions", ver, "anchored",
                                    c->kernel_version_seen));

        /* tpm: every quoted PCR but the IMA one, which changes with each measurement */
        json_t *pcrs = json_object();
        for (int b = 0; b < BANK_COUNT && pcrs; b++) {
                json_t *bank = NULL;

                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char idx[4];

                        if (i == IMA_PCR || !(vr->quote.sel.mask[b] & ev->pcrs.have[b] & (1u << i)))
                                continue;
                        if (!bank && !(bank = json_object()))
                                break;
                        snprintf(idx, sizeof(idx), "%u", i);
                        ok = setn(ok, bank, idx, policy_hex_json(ev->pcrs.v[b][i], bank_size(b)));
                }
                if (bank)
                        ok = setn(ok, pcrs, bank_name(b), bank);
        }
        if (pcrs && json_object_size(pcrs))
                ok = setn(ok, pol, "tpm", json_pack("{s:o}", "pcrs", pcrs));
        else
                json_decref(pcrs);

        if (vr->boot_aggregate_ok)
                ok = setn(ok, pol, "ima", json_pack("{s:b}", "require_boot_aggregate", 1));
        if (!ok)
                return -ENOMEM;
        *ret_policy = TAKE_PTR(pol);
        return 0;
}
