/* SPDX-License-Identifier: MIT */
/*
 * policy_parse on arbitrary bytes: no crash, no leak. An accepted policy is evaluated against the
 * typed claims of a fixed host (selinux history, policy hash, kernel version, trusted keys, CFI,
 * PCRs) and the verdict must be well formed: pass exactly when every claim passes, every absent
 * section listed as unchecked, and its JSON in the shape docs/api.md gives.
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

static void check_verdict(const struct verdict *v)
{
        bool all_pass = true;
        json_t *j = NULL, *c;
        size_t i;

        for (i = 0; i < v->n_claims; i++)
                if (v->claims[i].result != CLAIM_PASS)
                        all_pass = false;
        FUZZ_CHECK(v->status == (all_pass ? VERDICT_PASS : VERDICT_FAIL));
        FUZZ_CHECK(verdict_to_json(v, &j) == 0);
        FUZZ_CHECK(json_array_size(json_object_get(j, "claims")) == v->n_claims);
        json_array_foreach(json_object_get(j, "claims"), i, c)
        {
                FUZZ_CHECK(json_is_string(json_object_get(c, "result")));
                FUZZ_CHECK(json_is_string(json_object_get(c, "name")));
                FUZZ_CHECK(json_is_boolean(json_object_get(c, "anchored")));
        }
        FUZZ_CHECK(strcmp(json_string_value(json_object_get(j, "status")),
                          all_pass ? "pass" : "fail") == 0);
        FUZZ_CHECK(json_is_array(json_object_get(j, "sections_unchecked")));
        json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct policy *p = NULL;
        struct attest_err err = {0};
        struct cdata_claims m;
        struct evidence_host host = {0};
        struct pcr_set quoted = {0};
        struct claims c;
        struct verdict v, v2;
        size_t i;

        if (policy_parse((const char *)data, size, &p, &err) < 0) {
                FUZZ_CHECK(p == NULL && err.code != AE_NONE);
                return 0;
        }
        FUZZ_CHECK(policy_name(p)[0] != '\0');
        cdata_claims_init(&m);
        for (i = 0; i < ARRAY_SIZE(bufs); i++)
                feed(&m, bufs[i][0], bufs[i][1], i + 1);
        uint8_t hash[32] = {0xc1, 0x28};
        struct ima_entry ph = {.pcr = 10,
                               .name = "selinux-policy-hash",
                               .name_len = 19,
                               .buf = hash,
                               .buf_len = 32};
        FUZZ_CHECK(cdata_claims_feed(&m, &ph, 9, NULL) == 1);
        quoted.have[BANK_SHA256] = 0x7ff;
        snprintf(host.kernel, sizeof(host.kernel), "6.1.0");
        claims_build(&m, &host, &quoted, true, false, "", &c);

        FUZZ_CHECK(policy_eval(p, &c, &v) == 0);
        check_verdict(&v);
        /* a policy written from this host parses and passes on it */
        json_t *pol = NULL;
        FUZZ_CHECK(policy_from_host(&c, "fuzz", &pol) == 0);
        char *s = json_dumps(pol, 0);
        struct policy *p2 = NULL;
        FUZZ_CHECK(s && policy_parse(s, strlen(s), &p2, &err) == 0);
        FUZZ_CHECK(policy_eval(p2, &c, &v2) == 0);
        FUZZ_CHECK(v2.status == VERDICT_PASS);
        free(s);
        verdict_done(&v2);
        verdict_done(&v);
        json_decref(pol);
        policy_free(p2);
        policy_free(p);
        return 0;
}
