/* SPDX-License-Identifier: MIT */
/*
 * Policy: parse errors with their JSON paths, and evaluation on real claims (the qemu61 logs
 * replayed and decoded as verify_evidence does it, with the boots' real PCR values) plus
 * synthetic ones (imagen: cfi-state, trusted-keys-source), anchored vs host-reported facts, and
 * policies written from a host.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>

#include "util/hex.h"
#include "tests/lib/imagen.h"
#include "evidence/ima.h"
#include "policy/policy-host.h"
#include "policy/policy.h"
#include "verify/verify.h"
#include "tests/unit/testutil.h"

/* ---- parsing ---- */

static const struct bad {
        const char *json;
        enum attest_code code;
        const char *msg;
} bad[] = {
        {"{}", AE_POLICY_MISSING_FIELD, "$.name: missing"},
        {"[]", AE_POLICY_JSON, "$: not a JSON object"},
        {"{\"name\":\"a\",", AE_POLICY_JSON, "$: invalid JSON"},
        {"{\"name\":\"a b\"}", AE_POLICY_BAD_VALUE, "$.name: byte 1"},
        {"{\"name\":\"\"}", AE_POLICY_BAD_VALUE, "$.name: length 0"},
        {"{\"name\":7}", AE_POLICY_TYPE, "$.name: not a string"},
        {"{\"name\":\"a\",\"extra\":{}}", AE_POLICY_UNKNOWN_FIELD, "$.extra: unknown field"},
        {"{\"name\":\"a\",\"selinux\":{}}", AE_POLICY_EMPTY_SECTION, "$.selinux: an empty"},
        {"{\"name\":\"a\",\"selinux\":[]}", AE_POLICY_TYPE, "$.selinux: not an object"},
        {"{\"name\":\"a\",\"selinux\":{\"enforce\":true}}", AE_POLICY_UNKNOWN_FIELD,
         "$.selinux.enforce: unknown field"},
        {"{\"name\":\"a\",\"selinux\":{\"enforcing\":1}}", AE_POLICY_TYPE,
         "$.selinux.enforcing: not a boolean"},
        {"{\"name\":\"a\",\"selinux\":{\"policycaps\":{\"Open\":true}}}", AE_POLICY_BAD_VALUE,
         "$.selinux.policycaps.Open: not a capability name"},
        {"{\"name\":\"a\",\"selinux\":{\"policycaps\":{\"open_perms\":\"1\"}}}", AE_POLICY_TYPE,
         "$.selinux.policycaps.open_perms: not a boolean"},
        {"{\"name\":\"a\",\"selinux\":{\"policycaps\":{}}}", AE_POLICY_EMPTY_SECTION,
         "$.selinux.policycaps: no capability"},
        {"{\"name\":\"a\",\"selinux\":{\"policy_sha256\":[]}}", AE_POLICY_BAD_VALUE,
         "$.selinux.policy_sha256: empty list"},
        {"{\"name\":\"a\",\"selinux\":{\"policy_sha256\":\"ab\"}}", AE_POLICY_TYPE,
         "$.selinux.policy_sha256: not an array"},
        {"{\"name\":\"a\",\"selinux\":{\"policy_sha256\":[\"c128e15f\"]}}", AE_POLICY_BAD_HEX,
         "$.selinux.policy_sha256[0]: not a sha256"},
        {"{\"name\":\"a\",\"selinux\":{\"policy_sha256\":[\"c128e15f74d3dcc1d830a3658a665b4790d6d59"
         "01fdc8ddd624d632b9f5689a8\",\"x128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5"
         "689a8\"]}}",
         AE_POLICY_BAD_HEX, "$.selinux.policy_sha256[1]: not a sha256"},
        {"{\"name\":\"a\",\"selinux\":{\"policy_sha256\":[\"c128e15f74d3dcc1d830a3658a665b4790d6d59"
         "01fdc8ddd624d632b9f5689a8\",\"C128E15F74D3DCC1D830A3658A665B4790D6D5901FDC8DDD624D632B9F5"
         "689A8\"]}}",
         AE_POLICY_BAD_VALUE, "$.selinux.policy_sha256[1]: same hash as [0]"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"anchored\":true}}", AE_POLICY_MISSING_FIELD,
         "$.trusted_keys.sources: missing"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"sources\":[\"tpm\",\"t e\"]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.sources[1]: byte 1"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"sources\":[\"tpm\",\"tpm2\"]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.sources[1]: not a trusted-keys source"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"sources\":[\"tpm\"],\"anchored\":\"yes\"}}",
         AE_POLICY_TYPE, "$.trusted_keys.anchored: not a boolean"},
        {"{\"name\":\"a\",\"cfi\":{\"mode\":\"kcfi\"}}", AE_POLICY_TYPE,
         "$.cfi.mode: not an array"},
        {"{\"name\":\"a\",\"cfi\":{\"mode\":[\"kcfi\",\"cet\"]}}", AE_POLICY_BAD_VALUE,
         "$.cfi.mode[1]: not a CFI mode (kcfi, fineibt, none)"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"rng\":[\"tpm\",\"random\"]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.rng[1]: not a source of key material (tpm, tee, caam, dcp, kernel, none)"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"rng\":[\"TPM\"]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.rng[0]: not a source of key material"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"rng\":[]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.rng: empty list"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"rng\":\"tpm\"}}", AE_POLICY_TYPE,
         "$.trusted_keys.rng: not an array"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"requested\":[\"any\",\"tpm;\"]}}",
         AE_POLICY_BAD_VALUE, "$.trusted_keys.requested[1]: byte 3"},
        {"{\"name\":\"a\",\"trusted_keys\":{\"requested\":[\"none\"]}}", AE_POLICY_BAD_VALUE,
         "$.trusted_keys.requested[0]: not a trusted.source= value (any, tpm, tee, caam, dcp, "
         "other)"},
        {"{\"name\":\"a\",\"kernel\":{\"versions\":[\"6.1.[0-9]\"]}}", AE_POLICY_BAD_GLOB,
         "$.kernel.versions[0]: byte 4"},
        {"{\"name\":\"a\",\"kernel\":{\"versions\":[\"6.1.*\",\"6.**\"]}}", AE_POLICY_BAD_GLOB,
         "$.kernel.versions[1]: '**'"},
        {"{\"name\":\"a\",\"kernel\":{\"versions\":[\"\"]}}", AE_POLICY_BAD_GLOB,
         "$.kernel.versions[0]: length 0"},
        {"{\"name\":\"a\",\"kernel\":{\"versions\":[7]}}", AE_POLICY_TYPE,
         "$.kernel.versions[0]: not a string"},
        {"{\"name\":\"a\",\"tpm\":{\"pcrs\":{}}}", AE_POLICY_EMPTY_SECTION,
         "$.tpm.pcrs: no PCR listed"},
        {"{\"name\":\"a\",\"tpm\":{\"pcrs\":{\"md5\":{}}}}", AE_POLICY_UNKNOWN_FIELD,
         "$.tpm.pcrs.md5: unknown PCR bank"},
        {"{\"name\":\"a\",\"tpm\":{\"pcrs\":{\"sha256\":{\"24\":\"00\"}}}}", AE_POLICY_BAD_VALUE,
         "$.tpm.pcrs.sha256.24: not a PCR index"},
        {"{\"name\":\"a\",\"tpm\":{\"pcrs\":{\"sha1\":{\"7\":\"0000\"}}}}", AE_POLICY_BAD_HEX,
         "$.tpm.pcrs.sha1.7: not a sha1 digest (40 hex digits)"},
        {"{\"name\":\"a\",\"tpm\":{\"pcr\":{}}}", AE_POLICY_UNKNOWN_FIELD, "$.tpm.pcr: unknown"},
        {"{\"name\":\"a\",\"ima\":{\"require_boot_aggregate\":null}}", AE_POLICY_TYPE,
         "$.ima.require_boot_aggregate: not a boolean"},
        {"{\"name\":\"a\",\"name\":\"b\"}", AE_POLICY_JSON, "$: invalid JSON"},
};

START_TEST(test_parse_errors_name_the_json_path)
{
        struct policy *p = NULL;
        struct attest_err err = {0};
        int x = policy_parse(bad[_i].json, strlen(bad[_i].json), &p, &err);

        ck_assert_msg(x == -EBADMSG, "%s: %d", bad[_i].json, x);
        ck_assert_ptr_null(p);
        ck_assert_msg(err.code == bad[_i].code, "%s: code %s (%s)", bad[_i].json,
                      attest_code_name(err.code), err.msg);
        ck_assert_msg(strncmp(err.msg, bad[_i].msg, strlen(bad[_i].msg)) == 0,
                      "%s: msg '%s', want '%s'", bad[_i].json, err.msg, bad[_i].msg);
}
END_TEST

static const char *full_policy =
        "{\"name\":\"prod\", \"selinux\":{\"initialized\":true, \"enforcing\":true, "
        "\"checkreqprot\":false, \"policycaps\":{\"network_peer_controls\":true, "
        "\"open_perms\":true}, \"policy_sha256\":"
        "[\"c128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8\"], "
        "\"never_permissive\":true}, "
        "\"kernel\":{\"versions\":[\"5.15.*\", \"6.1.*\"], \"anchored\":true}, "
        "\"tpm\":{\"pcrs\":{\"sha256\":{\"0\":"
        "\"e21b703ee69c77476bccb43ec0336a9a1b2914b378944f7b00a10214ca8fea93\"}}}, "
        "\"ima\":{\"require_boot_aggregate\":true}}";

START_TEST(test_full_policy_parses)
{
        struct policy *p = NULL;
        struct attest_err err = {0};

        ck_assert_msg(policy_parse(full_policy, strlen(full_policy), &p, &err) == 0, "%s", err.msg);
        ck_assert_str_eq(policy_name(p), "prod");
        policy_free(p);
}
END_TEST

START_TEST(test_oversize_policy_is_refused)
{
        size_t n = POLICY_JSON_MAX + 1;
        char *s = malloc(n);
        struct policy *p = NULL;
        struct attest_err err = {0};

        memset(s, ' ', n);
        memcpy(s, "{\"name\":\"a\"}", 12);
        ck_assert_int_eq(policy_parse(s, n, &p, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_POLICY_TOO_BIG);
        ck_assert_int_eq(policy_parse(s, n, &p, NULL), -E2BIG);
        ck_assert_int_eq(policy_parse(s, n - 1, &p, &err), 0);
        policy_free(p);
        free(s);
}
END_TEST

START_TEST(test_glob)
{
        ck_assert(policy_glob_match("6.1.*", "6.1.192"));
        ck_assert(policy_glob_match("6.1.*", "6.1."));
        ck_assert(!policy_glob_match("6.1.*", "6.10.1"));
        ck_assert(!policy_glob_match("6.1.*", "16.1.1"));
        ck_assert(policy_glob_match("*-attest", "6.1.0-attest"));
        ck_assert(!policy_glob_match("*-attest", "6.1.0-attest2"));
        ck_assert(policy_glob_match("6.?.*", "6.1.9"));
        ck_assert(!policy_glob_match("6.?.*", "6.12.9"));
        ck_assert(policy_glob_match("6.1.192", "6.1.192"));
        ck_assert(!policy_glob_match("6.1.19", "6.1.192"));
        ck_assert(policy_glob_match("*", ""));
        ck_assert(policy_glob_match("*a*b*c", "xxaxxbxxbxc"));
}
END_TEST

/* ---- evaluation ---- */

struct host {
        struct verify_result vr;
        struct evidence ev;
        uint8_t *log;
};

static void load_pcrs(const char *boot, struct pcr_set *all)
{
        static const char *const banks[] = {"sha1", "sha256"};

        memset(all, 0, sizeof(*all));
        for (size_t i = 0; i < ARRAY_SIZE(banks); i++) {
                char rel[256];
                size_t len;
                struct pcr_set one;
                struct attest_err err = {0};

                snprintf(rel, sizeof(rel), "tests/data/%s/pcrs-%s.txt", boot, banks[i]);
                char *t = tu_read(rel, &len);
                ck_assert_ptr_nonnull(t);
                ck_assert_msg(pcrs_parse(t, len, &one, &err) == 0, "%s: %s", rel, err.msg);
                for (int b = 0; b < BANK_COUNT; b++) {
                        all->have[b] |= one.have[b];
                        for (int p = 0; p < PCR_COUNT; p++)
                                if (one.have[b] & (1u << p))
                                        memcpy(all->v[b][p], one.v[b][p], BANK_DIGEST_MAX);
                }
                free(t);
        }
}

/*
 * The claims verify_evidence would derive from a log, without the quote: every entry replayed
 * (its sha1 checked), boot_aggregate against the PCRs, critical data fed in log order.
 */
static void host_from_log(struct host *hst, const uint8_t *log, size_t len,
                          const struct pcr_set *pcrs)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct ima_replay rp;
        struct hasher *h;
        struct attest_err err = {0};
        int x;

        struct pcr_set copy = *pcrs;

        memset(hst, 0, sizeof(*hst));
        pcrs = &copy;
        replay_state_init(&hst->vr.next);
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10+sha1:10", &hst->vr.quote.sel), 0);
        hst->ev.pcrs = *pcrs;
        ck_assert_int_eq(hasher_new(&h), 0);
        ima_replay_init(&rp, h, BANK_MASK_ALL, true);
        ima_reader_init_binary(&rd, log, len, NULL);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0) {
                uint64_t idx = rd.idx - 1;

                ck_assert_msg(ima_replay_extend(&rp, &e, idx, &err) == 0, "%s", err.msg);
                if (idx == 0 && ima_entry_is_boot_aggregate(&e)) {
                        hst->vr.boot_aggregate_seen = true;
                        hst->vr.boot_aggregate_ok =
                                ima_boot_aggregate_check(h, &e, pcrs,
                                                         &hst->vr.boot_aggregate_err) == 0;
                }
                ck_assert_msg(cdata_claims_feed(&hst->vr.next.claims, &e, idx, &err) >= 0, "%s",
                              err.msg);
        }
        ck_assert_msg(x == 0, "%s", err.msg);
        ima_reader_done(&rd);
        hasher_free(h);
        hst->vr.new_entries = hst->vr.next.entries = rp.entries;
        hst->vr.next.valid = true;
}

static void host_load(struct host *hst, const char *boot)
{
        char rel[256];
        size_t len;
        struct pcr_set pcrs;

        snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boot);
        uint8_t *log = (uint8_t *)tu_read(rel, &len);
        ck_assert_ptr_nonnull(log);
        load_pcrs(boot, &pcrs);
        host_from_log(hst, log, len, &pcrs);
        hst->log = log;
}

static void host_done(struct host *hst)
{
        free(hst->ev.host.cmdline);
        free(hst->log);
}

/* The verdict as the daemon answers it: claims -> policy_eval -> verdict_to_json. */
static json_t *eval(const char *policy_json, const struct host *hst)
{
        struct policy *p = NULL;
        struct attest_err err = {0};
        struct claims c;
        struct verdict vd;
        json_t *v = NULL;

        ck_assert_msg(policy_parse(policy_json, strlen(policy_json), &p, &err) == 0, "%s: %s",
                      policy_json, err.msg);
        ck_assert_int_eq(claims_from_verified(&hst->vr, &hst->ev, &c), 0);
        ck_assert_int_eq(policy_eval(p, &c, &vd), 0);
        ck_assert_int_eq(verdict_to_json(&vd, &v), 0);
        /* the typed status is the one the JSON shows */
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")),
                         verdict_status_name(vd.status));
        verdict_done(&vd);
        policy_free(p);
        return v;
}

static int host_policy(const struct host *hst, const char *name, json_t **ret)
{
        struct claims c;

        ck_assert_int_eq(claims_from_verified(&hst->vr, &hst->ev, &c), 0);
        return policy_from_host(&c, name, ret);
}

static const char *status(const json_t *v)
{
        return json_string_value(json_object_get(v, "status"));
}

static json_t *find_claim(const json_t *v, const char *name)
{
        json_t *claims = json_object_get(v, "claims"), *c;
        size_t i;

        json_array_foreach(claims, i, c) if (strcmp(json_string_value(json_object_get(c, "name")),
                                                    name) == 0) return c;
        char *s = json_dumps(v, 0);
        ck_abort_msg("no claim %s in %s", name, s);
        return NULL;
}

static void assert_claim(const json_t *v, const char *name, const char *result, bool anchored,
                         json_int_t entry)
{
        json_t *c = find_claim(v, name);
        char *s = json_dumps(c, 0);

        ck_assert_msg(strcmp(json_string_value(json_object_get(c, "result")), result) == 0,
                      "%s: want %s", s, result);
        ck_assert_msg(json_is_true(json_object_get(c, "anchored")) == anchored, "%s: anchored", s);
        if (entry >= 0)
                ck_assert_msg(json_integer_value(json_object_get(c, "entry")) == entry &&
                                      json_object_get(c, "entry"),
                              "%s: want entry %lld", s, (long long)entry);
        else
                ck_assert_msg(!json_object_get(c, "entry"), "%s: no entry wanted", s);
        free(s);
}

static const char *reason(const json_t *v, const char *name)
{
        const char *r = json_string_value(json_object_get(find_claim(v, name), "reason"));

        return r ? r : "";
}

START_TEST(test_never_permissive_fails_on_tcb_and_passes_on_good)
{
        const char *pol = "{\"name\":\"np\",\"selinux\":{\"never_permissive\":true}}";
        struct host good, tcb;

        host_load(&good, "qemu61-good");
        host_load(&tcb, "qemu61-tcb");
        json_t *v = eval(pol, &good);
        ck_assert_str_eq(status(v), "pass");
        /* the boot-time permissive state (entry 2) before enforcing (entry 4) is allowed */
        assert_claim(v, "selinux.never_permissive", "pass", true, 4);
        json_decref(v);

        /* qemu61-tcb: enforcing 0 (entry 5) -> 1 (entry 7) -> 0 (entry 16) -> 1 (entry 18) */
        v = eval(pol, &tcb);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "selinux.never_permissive", "fail", true, 16);
        ck_assert_str_eq(reason(v, "selinux.never_permissive"),
                         "entry 16: enforcing=0 after enforcing=1 at entry 7");
        json_decref(v);
        /* yet its latest state is enforcing: only the history tells */
        v = eval("{\"name\":\"e\",\"selinux\":{\"enforcing\":true}}", &tcb);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "selinux.enforcing", "pass", true, 18);
        json_decref(v);
        host_done(&good);
        host_done(&tcb);
}
END_TEST

/* A synthetic selinux-state history on PCR 10. */
static void history(struct host *hst, const char *const *states, size_t n)
{
        struct imagen g;
        struct pcr_set pcrs = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", states[i], strlen(states[i])),
                                 0);
        host_from_log(hst, g.bin, g.bin_len, &pcrs);
        hst->log = TAKE_PTR(g.bin);
        imagen_done(&g);
}

START_TEST(test_never_permissive_rules)
{
        static const struct {
                const char *states[4];
                const char *result;
                json_int_t entry;
                const char *reason;
        } cases[] = {
                /* permissive boot, then enforcing: allowed */
                {{"initialized=0;enforcing=0;", "initialized=1;enforcing=0;",
                  "initialized=1;enforcing=1;"},
                 "pass",
                 2,
                 NULL},
                /* de-initialised after enforcing */
                {{"initialized=1;enforcing=1;", "initialized=0;enforcing=1;"},
                 "fail",
                 1,
                 "entry 1: initialized=0 after enforcing=1 at entry 0"},
                {{"initialized=1;enforcing=1;", "initialized=1;enforcing=1;",
                  "initialized=1;enforcing=0;", "initialized=1;enforcing=1;"},
                 "fail",
                 2,
                 "entry 2: enforcing=0 after enforcing=1 at entry 0"},
                {{"initialized=1;enforcing=1;", "initialized=1;"},
                 "fail",
                 1,
                 "entry 1: no enforcing key after enforcing=1 at entry 0"},
                /* never enforcing at all */
                {{"initialized=1;enforcing=0;", "initialized=1;enforcing=0;"},
                 "fail",
                 1,
                 "no selinux-state since boot had enforcing=1"},
                /* kernels without initialized= */
                {{"enforcing=1;"}, "pass", 0, NULL},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct host h;
                size_t n = 0;

                while (n < 4 && cases[i].states[n])
                        n++;
                history(&h, cases[i].states, n);
                json_t *v = eval("{\"name\":\"np\",\"selinux\":{\"never_permissive\":true}}", &h);
                assert_claim(v, "selinux.never_permissive", cases[i].result, true, cases[i].entry);
                if (cases[i].reason)
                        ck_assert_str_eq(reason(v, "selinux.never_permissive"), cases[i].reason);
                /* from_host pins it exactly when it holds */
                json_t *p = NULL;
                ck_assert_int_eq(host_policy(&h, "h", &p), 0);
                ck_assert_int_eq(json_is_true(json_object_get(json_object_get(p, "selinux"),
                                                              "never_permissive")),
                                 strcmp(cases[i].result, "pass") == 0);
                json_decref(p);
                json_decref(v);
                host_done(&h);
        }
}
END_TEST

START_TEST(test_full_policy_on_a_real_boot)
{
        struct host good;

        host_load(&good, "qemu61-good");
        json_t *v = eval(full_policy, &good);
        char *s = json_dumps(v, 0);

        ck_assert_msg(strcmp(status(v), "pass") == 0, "%s", s);
        ck_assert_str_eq(json_string_value(json_object_get(v, "policy")), "prod");
        assert_claim(v, "selinux.initialized", "pass", true, 4);
        assert_claim(v, "selinux.enforcing", "pass", true, 4);
        assert_claim(v, "selinux.checkreqprot", "pass", true, 4);
        assert_claim(v, "selinux.policycaps.network_peer_controls", "pass", true, 4);
        assert_claim(v, "selinux.policy_sha256", "pass", true, 5);
        assert_claim(v, "kernel.version", "pass", true, 1);
        assert_claim(v, "kernel.anchored", "pass", true, 1);
        assert_claim(v, "tpm.pcrs.sha256.0", "pass", true, -1);
        /* the real boot_aggregate against the real PCRs 0-9 */
        assert_claim(v, "ima.boot_aggregate", "pass", true, 0);
        ck_assert_str_eq(
                json_string_value(json_object_get(find_claim(v, "kernel.version"), "observed")),
                "6.1.192");
        json_t *un = json_object_get(v, "sections_unchecked");
        ck_assert_uint_eq(json_array_size(un), 3);
        ck_assert_str_eq(json_string_value(json_array_get(un, 0)), "trusted_keys");
        ck_assert_str_eq(json_string_value(json_array_get(un, 1)), "cfi");
        ck_assert_str_eq(json_string_value(json_array_get(un, 2)), "boot");
        free(s);
        json_decref(v);
        host_done(&good);
}
END_TEST

START_TEST(test_mismatches_fail_with_reasons)
{
        struct host good;

        host_load(&good, "qemu61-good");
        json_t *v = eval("{\"name\":\"x\",\"selinux\":{\"checkreqprot\":true,\"policy_sha256\":"
                         "[\"0000000000000000000000000000000000000000000000000000000000000001\"],"
                         "\"policycaps\":{\"open_perms\":false,\"no_such_cap\":true}},"
                         "\"kernel\":{\"versions\":[\"5.15.*\"]},"
                         "\"tpm\":{\"pcrs\":{\"sha256\":{\"7\":\"000000000000000000000000000000000"
                         "0000000000000000000000000000000\",\"16\":\"0000000000000000000000000000"
                         "000000000000000000000000000000000000\"}}}}",
                         &good);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "selinux.checkreqprot", "fail", true, 4);
        /* an unknown policy hash */
        assert_claim(v, "selinux.policy_sha256", "fail", true, 5);
        ck_assert_str_eq(json_string_value(json_object_get(find_claim(v, "selinux.policy_sha256"),
                                                           "observed")),
                         "c128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8");
        ck_assert_str_eq(reason(v, "selinux.policy_sha256"),
                         "entry 5: the loaded policy's hash is not in the accepted list");
        assert_claim(v, "selinux.policycaps.open_perms", "fail", true, 4);
        assert_claim(v, "selinux.policycaps.no_such_cap", "missing", true, 4);
        assert_claim(v, "kernel.version", "fail", true, 1);
        ck_assert_str_eq(reason(v, "kernel.version"),
                         "measured '6.1.192' matches no accepted version");
        assert_claim(v, "tpm.pcrs.sha256.7", "fail", true, -1);
        assert_claim(v, "tpm.pcrs.sha256.16", "missing", false, -1);
        ck_assert_str_eq(reason(v, "tpm.pcrs.sha256.16"), "PCR not in the quote's selection");
        json_decref(v);
        host_done(&good);
}
END_TEST

START_TEST(test_boot_aggregate_fails_against_other_pcrs)
{
        struct host good;

        host_load(&good, "qemu61-good");
        ck_assert(good.vr.boot_aggregate_ok);
        /* the same log with PCR 3 changed: not the PCRs the kernel aggregated at boot */
        struct pcr_set other = good.ev.pcrs;
        other.v[BANK_SHA256][3][0] ^= 1;
        size_t len;
        uint8_t *log =
                (uint8_t *)tu_read("tests/data/qemu61-good/binary_runtime_measurements", &len);

        host_done(&good);
        host_from_log(&good, log, len, &other);
        good.log = log;
        ck_assert(!good.vr.boot_aggregate_ok);
        json_t *v = eval("{\"name\":\"b\",\"ima\":{\"require_boot_aggregate\":true}}", &good);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "ima.boot_aggregate", "fail", true, 0);
        ck_assert_msg(strstr(reason(v, "ima.boot_aggregate"), "!= H(sha256 PCR0-9)"), "%s",
                      reason(v, "ima.boot_aggregate"));
        json_decref(v);
        host_done(&good);
}
END_TEST

/* A synthetic boot with the kernel/ patch set's measurements. */
static void synth(struct host *hst, const char *tk, const char *cfi)
{
        struct imagen g;
        struct pcr_set pcrs = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "kernel_version", "6.1.0-attest", 12), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", "initialized=1;enforcing=1;", 26), 0);
        if (tk)
                ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", tk, strlen(tk)), 0);
        if (cfi)
                ck_assert_int_eq(imagen_buf(&g, 10, "cfi-state", cfi, strlen(cfi)), 0);
        host_from_log(hst, g.bin, g.bin_len, &pcrs);
        hst->log = TAKE_PTR(g.bin);
        imagen_done(&g);
}

START_TEST(test_trusted_keys_anchored_and_unanchored)
{
        const char *pol = "{\"name\":\"tk\",\"trusted_keys\":{\"sources\":[\"tpm\",\"tee\"],"
                          "\"anchored\":true}}";
        const char *loose = "{\"name\":\"tk\",\"trusted_keys\":{\"sources\":[\"tpm\"]}}";
        struct host h;

        /* measured by the patched kernel: entry 2 */
        synth(&h, "source=tpm;", NULL);
        json_t *v = eval(pol, &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "trusted_keys.source", "pass", true, 2);
        assert_claim(v, "trusted_keys.anchored", "pass", true, 2);
        json_decref(v);
        host_done(&h);

        synth(&h, "source=caam;", NULL);
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "trusted_keys.source", "fail", true, 2);
        ck_assert_str_eq(reason(v, "trusted_keys.source"),
                         "trusted keys are backed by 'caam', which the policy does not accept");
        json_decref(v);
        host_done(&h);

        /* mainline kernel: no entry, no host fact -> missing */
        synth(&h, NULL, NULL);
        v = eval(loose, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "trusted_keys.source", "missing", false, -1);
        json_decref(v);
        /* the agent reports trusted.source=tpm from the command line: unanchored */
        h.ev.host.tk_present = true;
        snprintf(h.ev.host.tk_source, sizeof(h.ev.host.tk_source), "tpm");
        snprintf(h.ev.host.tk_origin, sizeof(h.ev.host.tk_origin), "cmdline");
        v = eval(loose, &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "trusted_keys.source", "pass", false, -1);
        json_decref(v);
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "trusted_keys.source", "pass", false, -1);
        assert_claim(v, "trusted_keys.anchored", "fail", false, -1);
        ck_assert_str_eq(reason(v, "trusted_keys.anchored"),
                         "only reported by the agent (from cmdline), not measured: the verified "
                         "log has no trusted-keys-source entry (only a kernel with the attestd "
                         "patch series measures it, at boot, if the boot IMA policy has a "
                         "CRITICAL_DATA rule), and an agent's report is not covered by the TPM "
                         "quote");
        json_decref(v);
        /* a compromised host's longest origin word (EVIDENCE_WORD_MAX - 1 bytes) still leaves the
         * longest reason whole: nothing cut from its end by VERDICT_REASON_MAX */
        memset(h.ev.host.tk_origin, 'o', sizeof(h.ev.host.tk_origin) - 1);
        h.ev.host.tk_origin[sizeof(h.ev.host.tk_origin) - 1] = '\0';
        v = eval(pol, &h);
        {
                const char *r = reason(v, "trusted_keys.anchored");
                const char *tail = "an agent's report is not covered by the TPM quote";

                ck_assert_uint_lt(strlen(r), VERDICT_REASON_MAX);
                ck_assert_ptr_nonnull(strstr(r, "(from ooooooooooooooooooooooooooooooo)"));
                ck_assert_str_eq(r + strlen(r) - strlen(tail), tail);
        }
        json_decref(v);
        host_done(&h);
}
END_TEST

/*
 * trusted_keys.rng and .requested from the log through the whole path: the record as the patched
 * kernel writes it (a boot with trusted.rng=kernel), fed, replayed, claimed, judged.
 */
START_TEST(test_trusted_keys_rng_from_the_log)
{
        const char *pol = "{\"name\":\"rng\",\"trusted_keys\":{\"sources\":[\"tpm\"],"
                          "\"rng\":[\"tpm\"],\"requested\":[\"any\"],\"anchored\":true}}";
        struct host h;
        json_t *v;

        synth(&h, "source=tpm;requested=any;builtin=tpm,tee;rng=kernel;error=0;", NULL);
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "trusted_keys.source", "pass", true, 2);
        assert_claim(v, "trusted_keys.requested", "pass", true, 2);
        assert_claim(v, "trusted_keys.anchored", "pass", true, 2);
        assert_claim(v, "trusted_keys.rng", "fail", true, 2);
        ck_assert_str_eq(reason(v, "trusted_keys.rng"),
                         "entry 2: rng=kernel: new key material comes from 'kernel', which the "
                         "policy does not accept");
        json_decref(v);
        host_done(&h);

        synth(&h, "source=tpm;requested=any;builtin=tpm,tee;rng=tpm;error=0;", NULL);
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "trusted_keys.rng", "pass", true, 2);
        json_decref(v);
        host_done(&h);

        /* trusted.source=tee asked for, the TEE never came up */
        synth(&h, "source=none;requested=tee;builtin=tpm,tee;rng=none;error=19;", NULL);
        v = eval(pol, &h);
        assert_claim(v, "trusted_keys.source", "fail", true, 2);
        assert_claim(v, "trusted_keys.rng", "fail", true, 2);
        assert_claim(v, "trusted_keys.requested", "fail", true, 2);
        json_decref(v);
        host_done(&h);

        /* a record without rng= (an earlier series): missing, naming the key */
        synth(&h, "source=tpm;", NULL);
        v = eval(pol, &h);
        assert_claim(v, "trusted_keys.rng", "missing", true, 2);
        ck_assert_str_eq(reason(v, "trusted_keys.rng"),
                         "entry 2: trusted-keys-source has no key 'rng'");
        json_decref(v);
        host_done(&h);

        /* a kernel without the series: missing, not measured */
        synth(&h, NULL, NULL);
        v = eval(pol, &h);
        assert_claim(v, "trusted_keys.rng", "missing", false, -1);
        json_decref(v);
        host_done(&h);
}
END_TEST

START_TEST(test_cfi_permissive_and_anchoring)
{
        const char *pol = "{\"name\":\"cfi\",\"cfi\":{\"enabled\":true,\"permissive\":false,"
                          "\"anchored\":true}}";
        struct host h;

        synth(&h, NULL, "enabled=1;mode=kcfi;permissive=0;");
        json_t *v = eval(pol, &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "cfi.enabled", "pass", true, 2);
        assert_claim(v, "cfi.permissive", "pass", true, 2);
        assert_claim(v, "cfi.anchored", "pass", true, 2);
        json_decref(v);
        host_done(&h);

        /* CFI_PERMISSIVE kernel: measured permissive=1 */
        synth(&h, NULL, "enabled=1;mode=kcfi;permissive=1;");
        /* the agent claims otherwise from a config file; the measurement wins */
        h.ev.host.cfi_present = true;
        h.ev.host.cfi_enabled = true;
        h.ev.host.cfi_permissive = false;
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "cfi.enabled", "pass", true, 2);
        assert_claim(v, "cfi.permissive", "fail", true, 2);
        ck_assert_str_eq(reason(v, "cfi.permissive"), "entry 2: permissive=1");
        json_decref(v);
        host_done(&h);

        /* mainline: only /boot/config says so */
        synth(&h, NULL, NULL);
        h.ev.host.cfi_present = true;
        h.ev.host.cfi_enabled = true;
        snprintf(h.ev.host.cfi_source, sizeof(h.ev.host.cfi_source), "config");
        v = eval(pol, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "cfi.enabled", "pass", false, -1);
        assert_claim(v, "cfi.permissive", "pass", false, -1);
        assert_claim(v, "cfi.anchored", "fail", false, -1);
        json_decref(v);
        v = eval("{\"name\":\"c\",\"cfi\":{\"enabled\":true}}", &h);
        ck_assert_str_eq(status(v), "pass");
        json_decref(v);
        host_done(&h);
}
END_TEST

START_TEST(test_host_kernel_version_is_unanchored)
{
        struct host h;

        synth(&h, NULL, NULL);
        /* measured kernel_version wins over the reported one */
        snprintf(h.ev.host.kernel, sizeof(h.ev.host.kernel), "5.15.0");
        json_t *v = eval("{\"name\":\"k\",\"kernel\":{\"versions\":[\"6.1.*\"]}}", &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "kernel.version", "pass", true, 0);
        json_decref(v);
        /* no measurement: the reported one, unanchored */
        replay_state_init(&h.vr.next);
        v = eval("{\"name\":\"k\",\"kernel\":{\"versions\":[\"5.15.*\"]}}", &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "kernel.version", "pass", false, -1);
        json_decref(v);
        v = eval("{\"name\":\"k\",\"kernel\":{\"versions\":[\"5.15.*\"],\"anchored\":true}}", &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "kernel.anchored", "fail", false, -1);
        json_decref(v);
        host_done(&h);
}
END_TEST

START_TEST(test_absent_sections_are_listed_unchecked)
{
        struct host h;

        synth(&h, NULL, NULL);
        json_t *v = eval("{\"name\":\"empty\"}", &h);
        ck_assert_str_eq(status(v), "pass");
        ck_assert_uint_eq(json_array_size(json_object_get(v, "claims")), 0);
        ck_assert_uint_eq(json_array_size(json_object_get(v, "sections_unchecked")), 7);
        json_decref(v);
        /* a missing selinux-state makes the selinux claims "missing", which fails */
        replay_state_init(&h.vr.next);
        v = eval("{\"name\":\"s\",\"selinux\":{\"enforcing\":true,\"never_permissive\":true}}", &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "selinux.enforcing", "missing", false, -1);
        assert_claim(v, "selinux.never_permissive", "missing", false, -1);
        json_decref(v);
        host_done(&h);
}
END_TEST

START_TEST(test_policy_hash_of_the_loaded_policy_file)
{
        static const char *const boots[] = {"ima-sig-sha512", "custom-fmt", "ima-buf-runtime"};

        for (size_t i = 0; i < ARRAY_SIZE(boots); i++) {
                char rel[256], hex[129], pol[512];
                struct host h;
                struct hasher *hs;
                uint8_t d[64];
                size_t len;

                /* /sys/fs/selinux/policy of that boot: what selinux-policy-hash hashes */
                snprintf(rel, sizeof(rel), "tests/data/%s/selinux_policy", boots[i]);
                char *file = tu_read(rel, &len);
                ck_assert_msg(file != NULL, "%s", rel);
                host_load(&h, boots[i]);
                /* hashed with the boot's ima_hash (sha512 in ima-sig-sha512, sha384 in custom-fmt)
                 */
                int b = -1;
                for (int k = 0; k < BANK_COUNT; k++)
                        if (bank_size(k) == h.vr.next.claims.policy_hash_len)
                                b = k;
                ck_assert_int_ge(b, 0);
                ck_assert_int_eq(hasher_new(&hs), 0);
                ck_assert_int_eq(hasher_digest(hs, b, file, len, d), 0);
                hasher_free(hs);
                free(file);
                hex_encode(d, bank_size(b), hex);
                snprintf(pol, sizeof(pol),
                         "{\"name\":\"ph\",\"selinux\":{\"policy_sha256\":[\"%s\"]}}", hex);
                json_t *v = eval(pol, &h);
                ck_assert_msg(strcmp(status(v), "pass") == 0, "%s: %s vs %s", boots[i], hex,
                              json_string_value(json_object_get(
                                      find_claim(v, "selinux.policy_sha256"), "observed")));
                json_decref(v);
                if (b == BANK_SHA512) {
                        v = eval("{\"name\":\"ph\",\"selinux\":{\"policy_sha256\":[\"c128e15f"
                                 "74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8\"]}}",
                                 &h);
                        ck_assert_str_eq(status(v), "fail");
                        ck_assert_msg(strstr(reason(v, "selinux.policy_sha256"), "has 64 bytes"),
                                      "%s", reason(v, "selinux.policy_sha256"));
                        json_decref(v);
                }
                host_done(&h);
        }
}
END_TEST

static json_t *from_host(const struct host *h, const char *name)
{
        json_t *p = NULL;

        ck_assert_int_eq(host_policy(h, name, &p), 0);
        return p;
}

static json_t *eval_json(const json_t *pol, const struct host *h)
{
        char *s = json_dumps(pol, 0);
        json_t *v = eval(s, h);

        free(s);
        return v;
}

START_TEST(test_from_host_pins_the_host)
{
        struct host good, tcb;

        host_load(&good, "qemu61-good");
        host_load(&tcb, "qemu61-tcb");
        json_t *p = from_host(&good, "good");
        char *s = json_dumps(p, JSON_SORT_KEYS);

        /* it pins the measured state */
        json_t *se = json_object_get(p, "selinux");
        ck_assert_msg(json_is_true(json_object_get(se, "enforcing")), "%s", s);
        ck_assert(json_is_true(json_object_get(se, "never_permissive")));
        ck_assert(json_is_true(json_object_get(json_object_get(se, "policycaps"), "open_perms")));
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(se, "policy_sha256"), 0)),
                         "c128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8");
        ck_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(json_object_get(p, "kernel"), "versions"), 0)),
                         "6.1.192");
        json_t *pcrs =
                json_object_get(json_object_get(json_object_get(p, "tpm"), "pcrs"), "sha256");
        ck_assert_uint_eq(json_object_size(pcrs), 10); /* 0-9; never 10 */
        ck_assert_ptr_null(json_object_get(pcrs, "10"));
        ck_assert(
                json_is_true(json_object_get(json_object_get(p, "ima"), "require_boot_aggregate")));
        /* and it passes there */
        json_t *v = eval_json(p, &good);
        ck_assert_msg(strcmp(status(v), "pass") == 0, "%s", s);
        json_decref(v);
        /* but not on the tcb boot (permissive again at entry 16, other PCRs) */
        v = eval_json(p, &tcb);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "selinux.never_permissive", "fail", true, 16);
        json_decref(v);
        /* the tcb host's own history does not satisfy never_permissive: not pinned */
        json_t *pt = from_host(&tcb, "tcb");
        ck_assert_ptr_null(json_object_get(json_object_get(pt, "selinux"), "never_permissive"));
        v = eval_json(pt, &tcb);
        ck_assert_str_eq(status(v), "pass");
        json_decref(v);
        json_decref(pt);
        free(s);
        json_decref(p);
        host_done(&good);
        host_done(&tcb);
}
END_TEST

START_TEST(test_from_host_keeps_anchoring)
{
        struct host h;

        synth(&h, "source=tpm;", "enabled=1;mode=kcfi;permissive=0;");
        json_t *p = from_host(&h, "patched");
        ck_assert(json_is_true(json_object_get(json_object_get(p, "trusted_keys"), "anchored")));
        ck_assert(json_is_true(json_object_get(json_object_get(p, "cfi"), "anchored")));
        /* no rng= or requested= in this record: nothing pinned for them */
        ck_assert_ptr_null(json_object_get(json_object_get(p, "trusted_keys"), "rng"));
        ck_assert_ptr_null(json_object_get(json_object_get(p, "trusted_keys"), "requested"));
        json_t *v = eval_json(p, &h);
        ck_assert_str_eq(status(v), "pass");
        json_decref(v);
        json_decref(p);
        host_done(&h);

        /* every measured key is pinned: rng, requested and the CFI mode; and the policy passes
         * its own host but not one whose key material comes from the kernel's RNG */
        synth(&h, "source=tpm;requested=any;builtin=tpm,tee;rng=tpm;error=0;",
              "enabled=1;mode=kcfi;permissive=0;");
        p = from_host(&h, "patched");
        json_t *tk = json_object_get(p, "trusted_keys");
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(tk, "rng"), 0)), "tpm");
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(tk, "requested"), 0)),
                         "any");
        ck_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(json_object_get(p, "cfi"), "mode"), 0)),
                         "kcfi");
        v = eval_json(p, &h);
        ck_assert_str_eq(status(v), "pass");
        assert_claim(v, "trusted_keys.rng", "pass", true, 2);
        assert_claim(v, "cfi.mode", "pass", true, 3);
        json_decref(v);
        host_done(&h);
        synth(&h, "source=tpm;requested=any;builtin=tpm,tee;rng=kernel;error=0;",
              "enabled=1;mode=kcfi;permissive=0;");
        v = eval_json(p, &h);
        ck_assert_str_eq(status(v), "fail");
        assert_claim(v, "trusted_keys.rng", "fail", true, 2);
        json_decref(v);
        json_decref(p);
        host_done(&h);

        synth(&h, NULL, NULL);
        h.ev.host.tk_present = true;
        snprintf(h.ev.host.tk_source, sizeof(h.ev.host.tk_source), "tee");
        snprintf(h.ev.host.tk_origin, sizeof(h.ev.host.tk_origin), "cmdline");
        p = from_host(&h, "mainline");
        ck_assert(json_is_false(json_object_get(json_object_get(p, "trusted_keys"), "anchored")));
        v = eval_json(p, &h);
        ck_assert_str_eq(status(v), "pass");
        json_decref(v);
        json_decref(p);
        ck_assert_int_eq(host_policy(&h, "bad name", &p), -EINVAL);
        host_done(&h);
}
END_TEST

/*
 * ---- from-host --runtime: the section built entry by entry over a stream ----
 * attestctl policy from-host --ima-log reads the log through ima_stream and feeds each entry to
 * policy_runtime_add_entry(); the evidence's log goes whole to policy_runtime_from_log(). Both
 * must give the same section, the same counts and, on a malformed log, the same error.
 */

/* A log in memory handed out in reads of `step` bytes (0: as much as asked). */
struct log_src {
        const uint8_t *p;
        size_t len, pos, step;
};

static int log_src_read(void *ctx, uint8_t *buf, size_t n, size_t *ret_n)
{
        struct log_src *m = ctx;
        size_t k = m->step && m->step < n ? m->step : n;

        if (k > m->len - m->pos)
                k = m->len - m->pos;
        memcpy(buf, m->p + m->pos, k);
        m->pos += k;
        *ret_n = k;
        return 0;
}

/* an exclude of the caller's: paths with "hello" or under /usr/lib/gen/1 */
static bool excl_some(void *ctx, const char *p, size_t n)
{
        (void)ctx;
        return memmem(p, n, "hello", 5) || (n > 14 && memcmp(p, "/usr/lib/gen/1", 14) == 0);
}

/*
 * The section of log, whole and streamed (a window of twice the lookahead, so a log of a few
 * hundred KiB slides it several times; reads of step): the same.
 */
static int section_whole_vs_stream(const uint8_t *log, size_t len, size_t step,
                                   policy_exclude_fn ex, const char *what)
{
        struct policy_runtime_stats sw = {0}, ss = {0};
        struct attest_err ew = {0}, es = {0};
        struct log_src m = {.p = log, .len = len, .step = step};
        struct ima_stream st;
        struct ima_entry e;
        json_t *jw = NULL, *js = json_object();
        int xw, xs;

        ck_assert_ptr_nonnull(js);
        xw = policy_runtime_from_log(log, len, ex, NULL, &jw, &sw, &ew);
        ck_assert_int_eq(ima_stream_init(&st, IMA_STREAM_AUTO, 2 * IMA_STREAM_WINDOW_MIN,
                                         log_src_read, &m, NULL),
                         0);
        while ((xs = ima_stream_next(&st, &e, &es)) > 0)
                if ((xs = policy_runtime_add_entry(js, &e, ex, NULL, &ss)) < 0)
                        break;
        ima_stream_done(&st);
        ck_assert_msg(xs == xw, "%s: streamed %d, whole %d (%s / %s)", what, xs, xw, es.msg,
                      ew.msg);
        if (xw == 0) {
                char *a = json_dumps(jw, JSON_COMPACT), *b = json_dumps(js, JSON_COMPACT);

                ck_assert_ptr_nonnull(a);
                ck_assert_ptr_nonnull(b);
                /* the same bytes: keys in the same order, digests in the order seen */
                ck_assert_msg(strcmp(a, b) == 0, "%s: the sections differ", what);
                ck_assert_msg(memcmp(&sw, &ss, sizeof(sw)) == 0, "%s: the counts differ", what);
                free(a);
                free(b);
        } else {
                ck_assert_int_eq(es.code, ew.code);
                ck_assert_str_eq(es.msg, ew.msg);
        }
        json_decref(jw);
        json_decref(js);
        return xw;
}

/* b = a + n bytes of p */
static void append(uint8_t **b, size_t *len, const void *p, size_t n)
{
        ck_assert_ptr_nonnull(*b = realloc(*b, *len + n + 1));
        memcpy(*b + *len, p, n);
        *len += n;
}

/*
 * Synthetic entries for every branch of the section: unique paths, one path with more digests
 * than are kept, a name that is not UTF-8, template 'ima', violations, ima-buf events near the
 * data cap (so entries straddle the window's end), sha1/sha512 digests, excluded paths.
 */
static void make_section_log(struct imagen *g)
{
        static uint8_t big[60000];
        uint8_t d[64];
        char name[64];

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (uint8_t)(i * 13);
        ck_assert_int_eq(imagen_init(g), 0);
        for (unsigned i = 0; i < 2400; i++) {
                memset(d, (int)(i * 7), sizeof(d));
                d[0] = (uint8_t)(i >> 8);
                snprintf(name, sizeof(name), "/usr/lib/gen/%u", i % 1700);
                if (i % 97 == 5)
                        ck_assert_int_eq(imagen_buf(g, 10, "big-event", big, sizeof(big) - i % 7),
                                         0);
                else if (i % 89 == 7)
                        ck_assert_int_eq(imagen_violation(g, 10, name), 0);
                else if (i % 83 == 9)
                        ck_assert_int_eq(imagen_legacy(g, 10, d, name), 0);
                else if (i % 79 == 11)
                        ck_assert_int_eq(imagen_ng(g, 10, "sha512", d, 64, name), 0);
                else if (i % 71 == 13)
                        ck_assert_int_eq(imagen_ng(g, 10, "sha256", d, 32, "/bad/\xff\xfe"), 0);
                else if (i % 3 == 0)
                        ck_assert_int_eq(imagen_ng(g, 10, "sha256", d, 32, "/usr/bin/many"), 0);
                else
                        ck_assert_int_eq(imagen_ng(g, 10, "sha1", d, 20, name), 0);
        }
}

START_TEST(test_runtime_section_streamed_is_the_whole_ones)
{
        char **boots = tu_boots();
        uint8_t *bin = NULL, *txt = NULL;
        size_t bin_len = 0, txt_len = 0, n;
        struct imagen g;
        unsigned cases = 0, failed = 0;

        /* every real log alone, then all of them after one another (keys, events, violations,
         * the real templates) and the synthetic entries: a log of several windows */
        for (size_t i = 0; boots[i]; i++) {
                for (int f = 0; f < 2; f++) {
                        char rel[256];
                        char *b;

                        snprintf(rel, sizeof(rel), "tests/data/%s/%s_runtime_measurements",
                                 boots[i], f ? "ascii" : "binary");
                        if (!(b = tu_read(rel, &n)))
                                continue;
                        ck_assert_int_eq(section_whole_vs_stream((uint8_t *)b, n, 0, NULL, rel), 0);
                        ck_assert_int_eq(
                                section_whole_vs_stream((uint8_t *)b, n, 7, excl_some, rel), 0);
                        if (f)
                                append(&txt, &txt_len, b, n);
                        else
                                append(&bin, &bin_len, b, n);
                        free(b);
                        cases += 2;
                }
        }
        make_section_log(&g);
        append(&bin, &bin_len, g.bin, g.bin_len);
        append(&txt, &txt_len, g.txt, g.txt_len);
        imagen_done(&g);
        ck_assert_uint_gt(bin_len, 6 * IMA_STREAM_WINDOW_MIN);
        ck_assert_uint_gt(txt_len, 6 * IMA_STREAM_WINDOW_MIN);
        for (int f = 0; f < 2; f++) {
                const uint8_t *log = f ? txt : bin;
                size_t len = f ? txt_len : bin_len;
                const size_t steps[] = {0, 1, 4093};

                for (size_t k = 0; k < ARRAY_SIZE(steps); k++) {
                        ck_assert_int_eq(section_whole_vs_stream(log, len, steps[k], NULL, "all"),
                                         0);
                        ck_assert_int_eq(
                                section_whole_vs_stream(log, len, steps[k], excl_some, "all"), 0);
                        cases += 2;
                }
                /* cut anywhere, and a bit flipped anywhere: the same section or the same error */
                uint8_t *mod = malloc(len);
                uint64_t r = 0x2545f4914f6cdd1dull;

                ck_assert_ptr_nonnull(mod);
                for (int t = 0; t < 24; t++) {
                        size_t at;

                        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                        at = (size_t)(r % len);
                        failed += section_whole_vs_stream(log, at, 4093, excl_some, "cut") < 0;
                        memcpy(mod, log, len);
                        mod[at] ^= (uint8_t)(1u << (r >> 40) % 8);
                        failed += section_whole_vs_stream(mod, len, 0, NULL, "flip") < 0;
                        cases += 2;
                }
                free(mod);
        }
        /* the cuts and flips did reach the error path */
        ck_assert_uint_gt(failed, 12);
        ck_assert_uint_gt(cases, 100);
        free(bin);
        free(txt);
        tu_boots_free(boots);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("policy");

        tcase_add_loop_test(tc, test_parse_errors_name_the_json_path, 0, ARRAY_SIZE(bad));
        tcase_add_test(tc, test_full_policy_parses);
        tcase_add_test(tc, test_oversize_policy_is_refused);
        tcase_add_test(tc, test_glob);
        tcase_add_test(tc, test_never_permissive_fails_on_tcb_and_passes_on_good);
        tcase_add_test(tc, test_never_permissive_rules);
        tcase_add_test(tc, test_full_policy_on_a_real_boot);
        tcase_add_test(tc, test_mismatches_fail_with_reasons);
        tcase_add_test(tc, test_boot_aggregate_fails_against_other_pcrs);
        tcase_add_test(tc, test_trusted_keys_anchored_and_unanchored);
        tcase_add_test(tc, test_trusted_keys_rng_from_the_log);
        tcase_add_test(tc, test_cfi_permissive_and_anchoring);
        tcase_add_test(tc, test_host_kernel_version_is_unanchored);
        tcase_add_test(tc, test_absent_sections_are_listed_unchecked);
        tcase_add_test(tc, test_policy_hash_of_the_loaded_policy_file);
        tcase_add_test(tc, test_from_host_pins_the_host);
        tcase_add_test(tc, test_from_host_keeps_anchoring);
        tcase_add_test(tc, test_runtime_section_streamed_is_the_whole_ones);
        tcase_set_timeout(tc, 120); /* the streamed section: logs of a few MB, ASan, loaded */
        suite_add_tcase(s, tc);
        return tu_run(s);
}
