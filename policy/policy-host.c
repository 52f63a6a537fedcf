/* SPDX-License-Identifier: MIT */
/* A policy written from a known-good host's verified evidence (attestctl policy from-host). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy-internal.h"

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

        /* trusted keys: the measured source, else the reported one, when a policy can name it */
        if (c->trusted_keys.present && c->tk_source != TK_SOURCE_UNKNOWN)
                ok = setn(ok, pol, "trusted_keys",
                          json_pack("{s:[s], s:b}", "sources", tk_source_name(c->tk_source),
                                    "anchored", c->trusted_keys.anchored));

        /* cfi */
        if (c->cfi.present)
                ok = setn(ok, pol, "cfi",
                          json_pack("{s:b, s:b, s:b}", "enabled", c->cfi_enabled, "permissive",
                                    c->cfi_permissive, "anchored", c->cfi.anchored));

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
