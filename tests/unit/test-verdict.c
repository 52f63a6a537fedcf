/* SPDX-License-Identifier: MIT */
/*
 * policy_eval on hand-built claims (no log, no JSON in): typed comparisons, anchored vs reported,
 * entries, status; and verdict_to_json's exact shape (docs/api.md).
 */
#include <check.h>
#include <errno.h>

#include "policy/policy.h"
#include "verify/verify.h"
#include "tests/unit/testutil.h"

static struct policy *pol(const char *json)
{
        struct policy *p = NULL;
        struct attest_err err = {0};

        ck_assert_msg(policy_parse(json, strlen(json), &p, &err) == 0, "%s: %s", json, err.msg);
        return p;
}

/* An enforcing host: selinux-state at entry 4 (enforcing since entry 2), kernel at entry 1. */
static void host(struct claims *c)
{
        memset(c, 0, sizeof(*c));
        c->selinux = (struct claim_src){true, true, 4};
        c->selinux_state = (struct cdata_selinux_state){
                .entry = 4,
                .flags_present = 1u << SELINUX_INITIALIZED | 1u << SELINUX_ENFORCING,
                .flags_value = 1u << SELINUX_INITIALIZED | 1u << SELINUX_ENFORCING,
                .caps_present = 1u << SELINUX_CAP_OPEN_PERMS,
                .caps_value = 1u << SELINUX_CAP_OPEN_PERMS};
        c->selinux_history =
                (struct cdata_selinux_history){.states = 2, .enforced = true, .first_enforcing = 2};
        c->kernel = (struct claim_src){true, true, 1};
        snprintf(c->kernel_version, sizeof(c->kernel_version), "6.1.192");
        c->trusted_keys = (struct claim_src){false, false, -1};
        c->cfi = (struct claim_src){false, false, -1};
        c->policy_hash = (struct claim_src){false, false, -1};
}

static const struct verdict_claim *find(const struct verdict *v, enum claim_id id, const char *arg)
{
        for (size_t i = 0; i < v->n_claims; i++)
                if (v->claims[i].id == id && !strcmp(v->claims[i].arg, arg ? arg : ""))
                        return &v->claims[i];
        ck_abort_msg("no claim %s %s", claim_id_name(id), arg ? arg : "");
        return NULL;
}

/* The verdict borrows its expected lists from the policy: kept until the test's end. */
static struct policy *kept[16];
static size_t n_kept;

static void eval(const char *json, const struct claims *c, struct verdict *v)
{
        struct policy *p = pol(json);

        ck_assert_int_eq(policy_eval(p, c, v), 0);
        ck_assert_uint_lt(n_kept, ARRAY_SIZE(kept));
        kept[n_kept++] = p;
}

static void release(void)
{
        while (n_kept)
                policy_free(kept[--n_kept]);
}

START_TEST(test_selinux_flags_and_caps_compare_typed_values)
{
        struct claims c;
        struct verdict v;
        const struct verdict_claim *k;

        host(&c);
        eval("{\"name\":\"s\",\"selinux\":{\"enforcing\":true,\"checkreqprot\":false,"
             "\"policycaps\":{\"open_perms\":true,\"memfd_class\":true,\"no_such_cap\":true},"
             "\"never_permissive\":true}}",
             &c, &v);
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        k = find(&v, CLAIM_SELINUX_ENFORCING, NULL);
        ck_assert_int_eq(k->result, CLAIM_PASS);
        ck_assert(k->anchored);
        ck_assert_int_eq(k->entry, 4);
        ck_assert_int_eq(k->observed.kind, VV_BOOL);
        ck_assert(k->observed.b);
        /* no checkreqprot key in the state: missing, but anchored at the state's entry */
        k = find(&v, CLAIM_SELINUX_CHECKREQPROT, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert_int_eq(k->entry, 4);
        ck_assert_int_eq(find(&v, CLAIM_SELINUX_POLICYCAP, "open_perms")->result, CLAIM_PASS);
        ck_assert_int_eq(find(&v, CLAIM_SELINUX_POLICYCAP, "memfd_class")->result, CLAIM_MISSING);
        ck_assert_int_eq(find(&v, CLAIM_SELINUX_POLICYCAP, "no_such_cap")->result, CLAIM_MISSING);
        k = find(&v, CLAIM_SELINUX_NEVER_PERMISSIVE, NULL);
        ck_assert_int_eq(k->result, CLAIM_PASS);
        ck_assert_uint_eq(v.unchecked, ~(1u << SECTION_SELINUX) & ((1u << SECTION__COUNT) - 1));
        verdict_done(&v);

        /* the history's first lapse is the claim's entry and reason */
        c.selinux_history.lapse = SELINUX_LAPSE_UNINITIALIZED;
        c.selinux_history.lapse_entry = 3;
        eval("{\"name\":\"s\",\"selinux\":{\"never_permissive\":true}}", &c, &v);
        k = find(&v, CLAIM_SELINUX_NEVER_PERMISSIVE, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_int_eq(k->entry, 3);
        ck_assert_str_eq(k->reason, "entry 3: initialized=0 after enforcing=1 at entry 2");
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        verdict_done(&v);
}
END_TEST

START_TEST(test_trusted_keys_anchored_vs_reported)
{
        struct claims c;
        struct verdict v;
        const struct verdict_claim *k;
        static const char *p = "{\"name\":\"t\",\"trusted_keys\":{\"sources\":[\"tpm\",\"tee\"],"
                               "\"anchored\":true}}";

        host(&c);
        c.trusted_keys = (struct claim_src){true, true, 9};
        c.tk_source = TK_SOURCE_TEE;
        snprintf(c.tk_source_name, sizeof(c.tk_source_name), "tee");
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_PASS);
        k = find(&v, CLAIM_TRUSTED_KEYS_SOURCE, NULL);
        ck_assert(k->anchored);
        ck_assert_int_eq(k->entry, 9);
        ck_assert_int_eq(find(&v, CLAIM_TRUSTED_KEYS_ANCHORED, NULL)->result, CLAIM_PASS);
        verdict_done(&v);

        /* the same source only reported by the agent: accepted, but not anchored */
        c.trusted_keys = (struct claim_src){true, false, -1};
        snprintf(c.tk_origin, sizeof(c.tk_origin), "cmdline");
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        k = find(&v, CLAIM_TRUSTED_KEYS_SOURCE, NULL);
        ck_assert_int_eq(k->result, CLAIM_PASS);
        ck_assert(!k->anchored);
        ck_assert_int_eq(k->entry, -1);
        k = find(&v, CLAIM_TRUSTED_KEYS_ANCHORED, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_msg(strstr(k->reason, "only reported by the agent (from cmdline), not measured: "
                                        "the verified log has no trusted-keys-source entry"),
                      "%s", k->reason);
        verdict_done(&v);

        /* a reported source the policy does not accept: the reason says whose word it is */
        c.tk_source = TK_SOURCE_CAAM;
        snprintf(c.tk_source_name, sizeof(c.tk_source_name), "caam");
        eval(p, &c, &v);
        ck_assert_str_eq(find(&v, CLAIM_TRUSTED_KEYS_SOURCE, NULL)->reason,
                         "trusted keys are backed by 'caam' (the agent's report of "
                         "trusted.source=), which the policy does not accept");
        verdict_done(&v);

        /* a source the table does not know never matches (policies name known ones only) */
        c.trusted_keys = (struct claim_src){true, true, 9};
        c.tk_source = TK_SOURCE_UNKNOWN;
        snprintf(c.tk_source_name, sizeof(c.tk_source_name), "tpm2");
        eval(p, &c, &v);
        k = find(&v, CLAIM_TRUSTED_KEYS_SOURCE, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_str_eq(k->observed.s, "tpm2");
        verdict_done(&v);
}
END_TEST

/* A patched kernel's trusted-keys-source at entry 3, through claims_build as verify makes it. */
static void tk_measured(struct claims *c, const char *rng, const char *requested)
{
        struct cdata_claims m;

        cdata_claims_init(&m);
        m.trusted_keys_seen = true;
        m.trusted_keys.entry = 3;
        m.trusted_keys.source = TK_SOURCE_TPM;
        snprintf(m.trusted_keys.source_name, CDATA_WORD_MAX, "tpm");
        snprintf(m.trusted_keys.rng_name, CDATA_WORD_MAX, "%s", rng);
        snprintf(m.trusted_keys.requested_name, CDATA_WORD_MAX, "%s", requested);
        claims_build(&m, NULL, NULL, false, false, NULL, c);
}

START_TEST(test_trusted_keys_rng_and_requested)
{
        static const char *p = "{\"name\":\"r\",\"trusted_keys\":{\"rng\":[\"tpm\"],"
                               "\"requested\":[\"any\",\"tpm\"]}}";
        struct evidence_host h = {0};
        struct cdata_claims none;
        struct claims c;
        struct verdict v;
        const struct verdict_claim *k;

        /* pass: key material from the TPM, trusted.source= not given; no source claim asked */
        tk_measured(&c, "tpm", "any");
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_PASS);
        ck_assert_uint_eq(v.n_claims, 2);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_PASS);
        ck_assert(k->anchored);
        ck_assert_int_eq(k->entry, 3);
        ck_assert_str_eq(k->observed.s, "tpm");
        ck_assert_int_eq(k->expected.kind, VV_STRINGS);
        ck_assert_uint_eq(k->expected.n, 1);
        ck_assert_int_eq(find(&v, CLAIM_TRUSTED_KEYS_REQUESTED, NULL)->result, CLAIM_PASS);
        verdict_done(&v);

        /* fail: trusted.rng=kernel, trusted.source=tee; the entry and the value named */
        tk_measured(&c, "kernel", "tee");
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_str_eq(k->observed.s, "kernel");
        ck_assert_str_eq(k->reason, "entry 3: rng=kernel: new key material comes from 'kernel', "
                                    "which the policy does not accept");
        k = find(&v, CLAIM_TRUSTED_KEYS_REQUESTED, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_str_eq(k->reason, "entry 3: requested=tee: the command line asked for 'tee', "
                                    "which the policy does not accept");
        verdict_done(&v);

        /* missing: an entry without the keys (an older series) */
        tk_measured(&c, "", "");
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert_int_eq(k->observed.kind, VV_NULL);
        ck_assert_int_eq(k->entry, 3);
        ck_assert_str_eq(k->reason, "entry 3: trusted-keys-source has no key 'rng'");
        ck_assert_str_eq(find(&v, CLAIM_TRUSTED_KEYS_REQUESTED, NULL)->reason,
                         "entry 3: trusted-keys-source has no key 'requested'");
        verdict_done(&v);

        /* missing: only the agent's report of trusted.source= (a kernel without the series) */
        cdata_claims_init(&none);
        h.tk_present = true;
        snprintf(h.tk_source, sizeof(h.tk_source), "tpm");
        snprintf(h.tk_origin, sizeof(h.tk_origin), "cmdline");
        claims_build(&none, &h, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert(!k->anchored);
        ck_assert_int_eq(k->entry, -1);
        ck_assert_msg(strstr(k->reason, "not measured: the verified log has no "
                                        "trusted-keys-source entry") &&
                              strstr(k->reason, "(from cmdline), not rng"),
                      "%s", k->reason);
        verdict_done(&v);

        /* missing: nothing measured, nothing reported */
        claims_build(&none, NULL, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert_msg(strstr(k->reason, "attestd patch series"), "%s", k->reason);
        verdict_done(&v);

        /* hostile: a word no policy can name never passes, and bytes come out escaped */
        tk_measured(&c, "tpm_but_not_really", "any");
        eval(p, &c, &v);
        ck_assert_int_eq(find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL)->result, CLAIM_FAIL);
        verdict_done(&v);
        tk_measured(&c, "any", "any");
        snprintf(c.tk_rng, sizeof(c.tk_rng), "t\x1b[2Jpm");
        eval(p, &c, &v);
        k = find(&v, CLAIM_TRUSTED_KEYS_RNG, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_ptr_null(strchr(k->observed.s, 0x1b));
        ck_assert_ptr_null(strchr(k->reason, 0x1b));
        verdict_done(&v);
}
END_TEST

/* cfi.mode: from the measured cfi-state only. */
START_TEST(test_cfi_mode)
{
        static const char *p =
                "{\"name\":\"m\",\"cfi\":{\"mode\":[\"kcfi\"],\"enabled\":true,\"anchored\":true}}";
        struct cdata_claims m;
        struct evidence_host h = {0};
        struct claims c;
        struct verdict v;
        const struct verdict_claim *k;

        cdata_claims_init(&m);
        m.cfi_seen = true;
        m.cfi = (struct cdata_cfi){.entry = 2, .enabled = true, .mode = CFI_MODE_KCFI};
        claims_build(&m, NULL, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        ck_assert_int_eq(v.status, VERDICT_PASS);
        k = find(&v, CLAIM_CFI_MODE, NULL);
        ck_assert_int_eq(k->result, CLAIM_PASS);
        ck_assert_str_eq(k->observed.s, "kcfi");
        ck_assert_int_eq(k->entry, 2);
        verdict_done(&v);

        m.cfi.mode = CFI_MODE_FINEIBT;
        claims_build(&m, NULL, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        k = find(&v, CLAIM_CFI_MODE, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_str_eq(k->reason, "entry 2: mode=fineibt, which the policy does not accept");
        verdict_done(&v);

        m.cfi.mode = CFI_MODE_ABSENT;
        claims_build(&m, NULL, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        k = find(&v, CLAIM_CFI_MODE, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert_str_eq(k->reason, "entry 2: cfi-state has no key 'mode'");
        verdict_done(&v);

        /* the agent's report from the kernel configuration has no mode: never a pass */
        cdata_claims_init(&m);
        h.cfi_present = true;
        h.cfi_enabled = true;
        snprintf(h.cfi_source, sizeof(h.cfi_source), "config");
        claims_build(&m, &h, NULL, false, false, NULL, &c);
        eval(p, &c, &v);
        ck_assert_int_eq(find(&v, CLAIM_CFI_ENABLED, NULL)->result, CLAIM_PASS);
        k = find(&v, CLAIM_CFI_MODE, NULL);
        ck_assert_int_eq(k->result, CLAIM_MISSING);
        ck_assert(!k->anchored);
        ck_assert_msg(strstr(k->reason, "no cfi-state entry"), "%s", k->reason);
        k = find(&v, CLAIM_CFI_ANCHORED, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_msg(strstr(k->reason, "only reported by the agent (from config), not measured"),
                      "%s", k->reason);
        verdict_done(&v);
}
END_TEST

START_TEST(test_cfi_kernel_tpm_ima_from_claims)
{
        struct claims c;
        struct verdict v;
        const struct verdict_claim *k;

        host(&c);
        c.cfi = (struct claim_src){true, false, -1};
        c.cfi_enabled = true;
        c.cfi_permissive = true;
        snprintf(c.cfi_origin, sizeof(c.cfi_origin), "config");
        c.quoted.have[BANK_SHA256] = 1u << 7;
        memset(c.quoted.v[BANK_SHA256][7], 0x11, 32);
        c.boot_aggregate_seen = true;
        snprintf(c.boot_aggregate_why, sizeof(c.boot_aggregate_why), "PCR 3 differs");
        eval("{\"name\":\"x\",\"cfi\":{\"enabled\":true,\"permissive\":false},"
             "\"kernel\":{\"versions\":[\"6.1.*\"],\"anchored\":true},"
             "\"tpm\":{\"pcrs\":{\"sha256\":{\"7\":\"1111111111111111111111111111111111111111111"
             "111111111111111111111\",\"8\":\"00000000000000000000000000000000000000000000000000"
             "00000000000000\"}}},\"ima\":{\"require_boot_aggregate\":true}}",
             &c, &v);
        ck_assert_int_eq(v.status, VERDICT_FAIL);
        ck_assert_int_eq(find(&v, CLAIM_CFI_ENABLED, NULL)->result, CLAIM_PASS);
        k = find(&v, CLAIM_CFI_PERMISSIVE, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert(!k->anchored);
        ck_assert_str_eq(k->reason, "agent reported permissive=1 (from config)");
        ck_assert_int_eq(find(&v, CLAIM_KERNEL_VERSION, NULL)->result, CLAIM_PASS);
        ck_assert_int_eq(find(&v, CLAIM_KERNEL_ANCHORED, NULL)->entry, 1);
        ck_assert_int_eq(find(&v, CLAIM_TPM_PCR, "sha256.7")->result, CLAIM_PASS);
        ck_assert_int_eq(find(&v, CLAIM_TPM_PCR, "sha256.8")->result, CLAIM_MISSING);
        k = find(&v, CLAIM_IMA_BOOT_AGGREGATE, NULL);
        ck_assert_int_eq(k->result, CLAIM_FAIL);
        ck_assert_int_eq(k->entry, 0);
        ck_assert_str_eq(k->reason,
                         "boot_aggregate (entry 0) did not match the quoted PCRs: PCR 3 differs");
        ck_assert_uint_eq(v.unchecked,
                          1u << SECTION_SELINUX | 1u << SECTION_TRUSTED_KEYS | 1u << SECTION_BOOT);
        verdict_done(&v);
}
END_TEST

/* The REST shape, key order included, as the daemon stored and answered it before the types. */
START_TEST(test_verdict_json_has_the_api_shape)
{
        struct claims c;
        struct verdict v;
        json_t *j = NULL;
        char *s;

        host(&c);
        eval("{\"name\":\"prod\",\"selinux\":{\"enforcing\":false,"
             "\"policy_sha256\":["
             "\"c128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8\"]},"
             "\"kernel\":{\"versions\":[\"6.1.*\",\"5.15.*\"]}}",
             &c, &v);
        snprintf(v.policy, sizeof(v.policy), "prod@3");
        ck_assert_int_eq(verdict_to_json(&v, &j), 0);
        s = json_dumps(j, JSON_COMPACT);
        ck_assert_str_eq(
                s, "{\"claims\":[{\"name\":\"selinux.enforcing\",\"expected\":false,"
                   "\"observed\":true,\"result\":\"fail\",\"anchored\":true,\"entry\":4,"
                   "\"reason\":\"entry 4: enforcing=1\"},"
                   "{\"name\":\"selinux.policy_sha256\",\"expected\":[\"c128e15f74d3dcc1d830a365"
                   "8a665b4790d6d5901fdc8ddd624d632b9f5689a8\"],\"observed\":null,\"result\":"
                   "\"missing\",\"anchored\":false,\"reason\":\"no selinux-policy-hash entry in "
                   "the verified log\"},"
                   "{\"name\":\"kernel.version\",\"expected\":[\"6.1.*\",\"5.15.*\"],"
                   "\"observed\":\"6.1.192\",\"result\":\"pass\",\"anchored\":true,\"entry\":1}],"
                   "\"status\":\"fail\",\"policy\":\"prod@3\","
                   "\"sections_unchecked\":[\"trusted_keys\",\"cfi\",\"tpm\",\"ima\",\"boot\"]}");
        free(s);
        json_decref(j);
        verdict_done(&v);
}
END_TEST

/*
 * Hostile bytes from the log (hostile round three): a kernel release and a failed file's path
 * with invalid UTF-8, terminal escapes and a multi-byte character across the reason's cut still
 * render (jansson refused them before), escaped as util/esc.h says, cut on whole characters.
 */
START_TEST(test_hostile_bytes_render_escaped)
{
        static struct rt_state st;
        struct claims c;
        struct verdict v;
        json_t *j = NULL, *rc = NULL;
        const char *reason, *path;
        char name[300];
        size_t n;

        host(&c);
        snprintf(c.kernel_version, sizeof(c.kernel_version), "6.1\xff\x1b]0;x\x07");
        rt_state_init(&st);
        st.failed = 1;
        st.nfail = 1;
        st.fail[0].entry = 9;
        /* "/tmp/" + 194 'a' + "\xc3\xa9" x 3 + "\xff": the reason's cut falls inside a character */
        n = (size_t)snprintf(name, sizeof(name), "/tmp/");
        memset(name + n, 'a', 194);
        n += 194;
        memcpy(name + n, "\xc3\xa9\xc3\xa9\xc3\xa9\xff", 7);
        n += 7;
        memcpy(st.fail[0].path, name, n);
        st.fail[0].path_len = (uint16_t)n;
        c.runtime = &st;
        eval("{\"name\":\"prod\",\"kernel\":{\"versions\":[\"6.1.*\"]},"
             "\"ima\":{\"runtime\":{\"digests\":{}}}}",
             &c, &v);
        ck_assert_int_eq(verdict_to_json(&v, &j), 0);
        ck_assert_str_eq(json_string_value(json_object_get(
                                 json_array_get(json_object_get(j, "claims"), 0), "observed")),
                         "6.1\\xff\\x1b]0;x\\x07");
        path = json_string_value(json_object_get(
                json_array_get(json_object_get(json_object_get(j, "runtime"), "failures"), 0),
                "path"));
        ck_assert_ptr_nonnull(path);
        ck_assert(strstr(path, "\xc3\xa9\xc3\xa9\xc3\xa9\\xff") != NULL);
        for (size_t i = 0; i < json_array_size(json_object_get(j, "claims")); i++)
                if (!strcmp(json_string_value(json_object_get(
                                    json_array_get(json_object_get(j, "claims"), i), "name")),
                            "ima.runtime"))
                        rc = json_array_get(json_object_get(j, "claims"), i);
        ck_assert_ptr_nonnull(rc);
        reason = json_string_value(json_object_get(rc, "reason"));
        ck_assert_ptr_nonnull(reason);
        /* the reason's path: a prefix of the escaped path ending in "...", no half character */
        ck_assert(strstr(reason, "first: entry 9 /tmp/aaaa") != NULL);
        ck_assert(strstr(reason, "... (not_allowed)") != NULL);
        ck_assert(strstr(reason, "\xc3 ") == NULL && strstr(reason, "\xc3.") == NULL);
        json_decref(j);
        verdict_done(&v);
}
END_TEST

/* The failing claims every consumer counts (event, log, metrics, EAR): fail and missing. */
START_TEST(test_failing_claims_are_every_claim_not_passing)
{
        static const enum claim_result res[] = {CLAIM_PASS, CLAIM_FAIL, CLAIM_MISSING, CLAIM_PASS,
                                                CLAIM_MISSING};
        static const enum claim_id ids[] = {CLAIM_SELINUX_ENFORCING, CLAIM_IMA_RUNTIME,
                                            CLAIM_BOOT_VARIABLE, CLAIM_TPM_PCR,
                                            CLAIM_SELINUX_POLICYCAP};
        static const char *const args[] = {"", "", "PK", "sha256.7", "open\x1b[0m"};
        struct verdict v;
        json_t *a = NULL;
        char *text;

        verdict_init(&v);
        v.claims = calloc(ARRAY_SIZE(res), sizeof(*v.claims));
        ck_assert_ptr_nonnull(v.claims);
        v.n_claims = v.cap_claims = ARRAY_SIZE(res);
        for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
                v.claims[i].id = ids[i];
                v.claims[i].result = res[i];
                snprintf(v.claims[i].arg, sizeof(v.claims[i].arg), "%s", args[i]);
                ck_assert_int_eq(verdict_claim_failing(&v.claims[i]), res[i] != CLAIM_PASS);
        }
        ck_assert_int_eq(verdict_failing_to_json(&v, &a), 0);
        text = json_dumps(a, JSON_COMPACT);
        ck_assert_ptr_nonnull(text);
        /* in claim order; an agent-supplied byte escaped as in the verdict */
        ck_assert_str_eq(text, "[\"ima.runtime\",\"boot.variables.PK\","
                               "\"selinux.policycaps.open\\\\x1b[0m\"]");
        free(text);
        json_decref(a);
        v.n_claims = 1; /* only the passing one: an empty array */
        ck_assert_int_eq(verdict_failing_to_json(&v, &a), 0);
        ck_assert_uint_eq(json_array_size(a), 0);
        json_decref(a);
        verdict_done(&v);
}
END_TEST

START_TEST(test_eval_refuses_missing_arguments)
{
        struct claims c;
        struct verdict v;
        struct policy *p = pol("{\"name\":\"a\"}");

        host(&c);
        ck_assert_int_eq(policy_eval(NULL, &c, &v), -EINVAL);
        ck_assert_int_eq(policy_eval(p, NULL, &v), -EINVAL);
        ck_assert_int_eq(policy_eval(p, &c, &v), 0);
        ck_assert_int_eq(v.status, VERDICT_PASS);
        ck_assert_uint_eq(v.n_claims, 0);
        verdict_done(&v);
        policy_free(p);
}
END_TEST

/* claims_build: measured claims anchored at their entry, host facts only where none was measured.
 */
START_TEST(test_claims_anchored_measured_or_reported_by_the_host)
{
        struct cdata_claims m;
        struct evidence_host h = {0};
        struct claims c;

        cdata_claims_init(&m);
        m.kernel_version_seen = true;
        m.kernel_version_entry = 1;
        snprintf(m.kernel_version, sizeof(m.kernel_version), "6.1.192");
        m.cfi_seen = true;
        m.cfi = (struct cdata_cfi){.entry = 7, .enabled = true, .permissive = false};
        snprintf(h.kernel, sizeof(h.kernel), "5.15.0");
        h.cfi_present = true;
        h.cfi_enabled = false;
        h.cfi_permissive = true;
        snprintf(h.cfi_source, sizeof(h.cfi_source), "config");
        h.tk_present = true;
        snprintf(h.tk_source, sizeof(h.tk_source), "tee");
        snprintf(h.tk_origin, sizeof(h.tk_origin), "cmdline");
        claims_build(&m, &h, NULL, false, false, NULL, &c);
        /* measured wins, anchored at its entry */
        ck_assert(c.kernel.present && c.kernel.anchored);
        ck_assert_int_eq(c.kernel.entry, 1);
        ck_assert_str_eq(c.kernel_version, "6.1.192");
        ck_assert(c.cfi.anchored && c.cfi_enabled && !c.cfi_permissive);
        ck_assert_int_eq(c.cfi.entry, 7);
        /* nothing measured: the host's report, unanchored, no entry, typed */
        ck_assert(c.trusted_keys.present && !c.trusted_keys.anchored);
        ck_assert_int_eq(c.trusted_keys.entry, -1);
        ck_assert_int_eq(c.tk_source, TK_SOURCE_TEE);
        ck_assert_str_eq(c.tk_origin, "cmdline");
        ck_assert(!c.selinux.present && !c.policy_hash.present);
        ck_assert_int_eq(c.selinux.entry, -1);

        /* without measurements every host fact is used; an unknown word stays unknown */
        cdata_claims_init(&m);
        snprintf(h.tk_source, sizeof(h.tk_source), "tpm-ish");
        claims_build(&m, &h, NULL, false, false, NULL, &c);
        ck_assert(!c.kernel.anchored);
        ck_assert_str_eq(c.kernel_version, "5.15.0");
        ck_assert(!c.cfi.anchored && !c.cfi_enabled && c.cfi_permissive);
        ck_assert_str_eq(c.cfi_origin, "config");
        ck_assert_int_eq(c.tk_source, TK_SOURCE_UNKNOWN);
        ck_assert_str_eq(c.tk_source_name, "tpm-ish");
        /* and no host facts at all: nothing present */
        claims_build(&m, NULL, NULL, false, false, NULL, &c);
        ck_assert(!c.kernel.present && !c.cfi.present && !c.trusted_keys.present);
}
END_TEST

/* Only PCRs both in the verified selection and sent by the agent count as quoted. */
START_TEST(test_claims_quoted_pcrs_are_the_selection)
{
        struct verify_result vr;
        struct evidence ev;
        struct claims c;

        memset(&vr, 0, sizeof(vr));
        memset(&ev, 0, sizeof(ev));
        replay_state_init(&vr.next);
        vr.quote.sel.mask[BANK_SHA256] = 1u << 0 | 1u << 7;
        ev.pcrs.have[BANK_SHA256] = 1u << 7 | 1u << 9;
        memset(ev.pcrs.v[BANK_SHA256][7], 0x77, 32);
        memset(ev.pcrs.v[BANK_SHA256][9], 0x99, 32);
        vr.boot_aggregate_seen = true;
        vr.boot_aggregate_ok = true;
        ck_assert_int_eq(claims_from_verified(&vr, &ev, &c), 0);
        ck_assert_uint_eq(c.quoted.have[BANK_SHA256], 1u << 7);
        ck_assert_uint_eq(c.quoted.v[BANK_SHA256][7][31], 0x77);
        ck_assert_uint_eq(c.quoted.v[BANK_SHA256][9][0], 0);
        ck_assert(c.boot_aggregate_seen && c.boot_aggregate_ok);
        ck_assert_int_eq(claims_from_verified(NULL, &ev, &c), -EINVAL);
}
END_TEST

static Suite *verdict_suite(void)
{
        Suite *s = suite_create("verdict");
        TCase *tc = tcase_create("eval");

        tcase_add_checked_fixture(tc, NULL, release);

        tcase_add_test(tc, test_selinux_flags_and_caps_compare_typed_values);
        tcase_add_test(tc, test_trusted_keys_anchored_vs_reported);
        tcase_add_test(tc, test_trusted_keys_rng_and_requested);
        tcase_add_test(tc, test_cfi_mode);
        tcase_add_test(tc, test_cfi_kernel_tpm_ima_from_claims);
        tcase_add_test(tc, test_verdict_json_has_the_api_shape);
        tcase_add_test(tc, test_hostile_bytes_render_escaped);
        tcase_add_test(tc, test_failing_claims_are_every_claim_not_passing);
        tcase_add_test(tc, test_eval_refuses_missing_arguments);
        tcase_add_test(tc, test_claims_anchored_measured_or_reported_by_the_host);
        tcase_add_test(tc, test_claims_quoted_pcrs_are_the_selection);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(verdict_suite());
}
