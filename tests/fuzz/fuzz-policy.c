/* SPDX-License-Identifier: MIT */
/*
 * policy_parse on arbitrary bytes: no crash, no leak. An accepted policy is evaluated against a
 * fixed host (selinux history, policy hash, kernel version, trusted keys, CFI, PCRs) and the
 * verdict must be well formed: pass exactly when every claim passes, and every absent section
 * listed as unchecked.
 */
#include <string.h>

#include <jansson.h>

#include "tests/fuzz/fuzz.h"
#include "policy/policy.h"

static const char *const bufs[][2] = {
        {"selinux-state", "initialized=1;enforcing=0;checkreqprot=0;open_perms=1;"},
        {"selinux-state", "initialized=1;enforcing=1;checkreqprot=0;open_perms=1;"},
        {"kernel_version", "6.1.192"},
        {"trusted-keys-source", "source=tpm;"},
        {"cfi-state", "enabled=1;mode=kcfi;permissive=0;"},
};

static void feed(struct cdata_claims *c, const char *name, const char *buf, uint64_t idx)
{
        struct ima_entry e = {.pcr = 10,
                              .name = name,
                              .name_len = (uint32_t)strlen(name),
                              .buf = (const uint8_t *)buf,
                              .buf_len = (uint32_t)strlen(buf)};

        FUZZ_CHECK(cdata_claims_feed(c, &e, idx, NULL) >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct policy *p = NULL;
        struct attest_err err = {0};
        struct verify_result vr = {0};
        struct evidence ev = {0};
        json_t *v = NULL, *c;
        bool all_pass = true;
        size_t i;

        if (policy_parse((const char *)data, size, &p, &err) < 0) {
                FUZZ_CHECK(p == NULL && err.code != AE_NONE);
                return 0;
        }
        FUZZ_CHECK(policy_name(p)[0] != '\0');
        replay_state_init(&vr.next);
        for (i = 0; i < ARRAY_SIZE(bufs); i++)
                feed(&vr.next.claims, bufs[i][0], bufs[i][1], i + 1);
        uint8_t hash[32] = {0xc1, 0x28};
        struct ima_entry ph = {.pcr = 10,
                               .name = "selinux-policy-hash",
                               .name_len = 19,
                               .buf = hash,
                               .buf_len = 32};
        FUZZ_CHECK(cdata_claims_feed(&vr.next.claims, &ph, 9, NULL) == 1);
        vr.boot_aggregate_seen = true;
        vr.quote.sel.mask[BANK_SHA256] = 0x7ff;
        ev.pcrs.have[BANK_SHA256] = 0x7ff;
        snprintf(ev.host.kernel, sizeof(ev.host.kernel), "6.1.0");

        FUZZ_CHECK(policy_eval(p, &vr, &ev, &v) == 0);
        json_array_foreach(json_object_get(v, "claims"), i, c)
        {
                const char *r = json_string_value(json_object_get(c, "result"));

                FUZZ_CHECK(r && json_is_string(json_object_get(c, "name")));
                FUZZ_CHECK(json_is_boolean(json_object_get(c, "anchored")));
                if (strcmp(r, "pass") != 0)
                        all_pass = false;
        }
        FUZZ_CHECK(strcmp(json_string_value(json_object_get(v, "status")),
                          all_pass ? "pass" : "fail") == 0);
        FUZZ_CHECK(json_is_array(json_object_get(v, "sections_unchecked")));
        /* a policy written from this host parses and passes on it */
        json_t *pol = NULL;
        FUZZ_CHECK(policy_from_host(&vr, &ev, "fuzz", &pol) == 0);
        char *s = json_dumps(pol, 0);
        struct policy *p2 = NULL;
        json_t *v2 = NULL;
        FUZZ_CHECK(s && policy_parse(s, strlen(s), &p2, &err) == 0);
        FUZZ_CHECK(policy_eval(p2, &vr, &ev, &v2) == 0);
        FUZZ_CHECK(strcmp(json_string_value(json_object_get(v2, "status")), "pass") == 0);
        free(s);
        json_decref(v2);
        json_decref(pol);
        policy_free(p2);
        json_decref(v);
        verify_result_done(&vr);
        policy_free(p);
        return 0;
}
