/* SPDX-License-Identifier: MIT */
/*
 * The "boot" section written from a known-good host's claims (attestctl policy from-host --boot):
 * what its firmware event log says, so that the same host passes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy-internal.h"
#include "util/hex.h"

static json_t *app_json(const struct boot_app *a)
{
        char text[BOOT_POLICY_APP_TEXT];
        size_t k;

        snprintf(text, sizeof(text), "%s:", bank_name((enum bank)a->bank));
        k = strlen(text);
        hex_encode(a->digest, bank_size((enum bank)a->bank), text + k);
        return json_string(text);
}

int policy_boot_from_host(const struct claims *c, json_t **ret_section)
{
        const struct boot_claims *b = &c->boot;
        json_auto_t *s = json_object();
        json_t *vars = json_object(), *loaders = json_array(), *kernels = json_array();
        int x = 0;

        if (!s || !vars || !loaders || !kernels) {
                json_decref(vars);
                json_decref(loaders);
                json_decref(kernels);
                return -ENOMEM;
        }
        if (!c->boot_present) {
                json_decref(vars);
                json_decref(loaders);
                json_decref(kernels);
                return -ENODATA;
        }
        if (c->boot_matched == 0xff)
                x |= json_object_set_new(s, "pcrs_replay", json_true());
        if (b->secureboot_seen)
                x |= json_object_set_new(s, "secureboot", json_boolean(b->secureboot));
        for (int k = 0; k < BOOT_VAR__COUNT; k++)
                if (b->vars_seen & (1u << k))
                        x |= json_object_set_new(
                                vars, boot_var_name((enum boot_var)k),
                                json_pack("[o]", policy_hex_json(b->var_sha256[k], 32)));
        for (unsigned i = 0; i < b->n_apps && b->apps_total == b->n_apps; i++)
                x |= json_array_append_new(i + 1 < b->n_apps ? loaders : kernels,
                                           app_json(&b->apps[i]));
        if (json_object_size(vars))
                x |= json_object_set_new(s, "variables", vars);
        else
                json_decref(vars);
        if (json_array_size(loaders))
                x |= json_object_set_new(s, "bootloaders", loaders);
        else
                json_decref(loaders);
        if (json_array_size(kernels))
                x |= json_object_set_new(s, "kernels", kernels);
        else
                json_decref(kernels);
        if (b->separators == 0xff)
                x |= json_object_set_new(s, "separators", json_true());
        x |= json_object_set_new(s, "startup_locality",
                                 json_pack("[i]", b->locality_seen ? b->locality : 0));
        if (x)
                return -ENOMEM;
        *ret_section = TAKE_PTR(s);
        return 0;
}
