/* SPDX-License-Identifier: MIT */
/*
 * The policy's "boot" section: strict parsing with JSON paths and caps, evaluation of the boot
 * claims of a crafted UEFI firmware log (anchored only when the replay matched the quote), the
 * verdict JSON, and a section generated from a host (policy_boot_from_host) that parses and passes
 * on that host.
 */
#include <check.h>
#include <errno.h>

#include "policy/boot.h"
#include "policy/policy.h"
#include "tests/lib/tcglogen.h"
#include "tests/unit/testutil.h"
#include "util/hex.h"
#include "verify/boot.h"

/* Claims of a UEFI log: shim, grub, kernel; Secure Boot on; PCR 0-7 matched when matched. */
static void uefi_claims(struct claims *c, bool secureboot, bool matched, const char *kernel)
{
        struct tlg g;
        struct evidence ev = {0};
        struct boot_state s;
        struct boot_result r;
        struct attest_err err = {0};
        struct pcr_sel sel = {{0}};
        struct pcr_set q = {0};
        uint8_t sb = secureboot;

        tlg_begin(&g, NULL, NULL, 0);
        tlg_locality(&g, 3);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "SecureBoot", &sb, 1);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_global, "PK", "pk", 2);
        tlg_efi_var(&g, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, tcglog_guid_security, "db", "db", 2);
        for (uint32_t i = 0; i < BOOT_PCRS; i++)
                tlg_event(&g, i, EV_SEPARATOR, "\0\0\0\0", 4);
        tlg_app(&g, "shim", 4);
        tlg_app(&g, "grub", 4);
        tlg_app(&g, kernel, strlen(kernel));
        ev.boot_log = g.buf;
        ev.boot_log_len = g.len;
        ck_assert_int_eq(boot_verify(&ev, &sel, &q, NULL, &s, &r, &err), 0);
        if (matched) {
                /* quote the replayed values: now every PCR 0-7 compares */
                sel.mask[BANK_SHA256] = 0xff;
                q.have[BANK_SHA256] = 0xff;
                memcpy(q.v[BANK_SHA256], s.pcr[BANK_SHA256], sizeof(s.pcr[BANK_SHA256]));
                ck_assert_int_eq(boot_verify(&ev, &sel, &q, NULL, &s, &r, &err), 0);
        }
        memset(c, 0, sizeof(*c));
        c->boot_present = true;
        c->boot_matched = r.matched;
        c->boot_banks = r.banks_compared;
        c->boot = s.claims;
        tlg_free(&g);
}

static json_t *eval(const char *pol, const struct claims *c)
{
        struct policy *p = NULL;
        struct attest_err err = {0};
        struct verdict v;
        json_t *j = NULL;

        ck_assert_msg(policy_parse(pol, strlen(pol), &p, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(policy_eval(p, c, &v), 0);
        ck_assert_int_eq(verdict_to_json(&v, &j), 0);
        verdict_done(&v);
        policy_free(p);
        return j;
}

static json_t *find(json_t *v, const char *name)
{
        json_t *a = json_object_get(v, "claims"), *c;
        size_t i;

        json_array_foreach(
                a, i, c) if (!strcmp(json_string_value(json_object_get(c, "name")), name)) return c;
        ck_abort_msg("no claim %s", name);
        return NULL;
}

static void expect_claim(json_t *v, const char *name, const char *result, bool anchored)
{
        json_t *c = find(v, name);

        ck_assert_msg(!strcmp(json_string_value(json_object_get(c, "result")), result), "%s: %s",
                      name, json_string_value(json_object_get(c, "result")));
        ck_assert_msg(json_is_true(json_object_get(c, "anchored")) == anchored, "%s anchored",
                      name);
}

static const struct {
        const char *boot;
        enum attest_code code;
        const char *msg;
} bad[] = {
        {"{}", AE_POLICY_EMPTY_SECTION, "$.boot: an empty section"},
        {"[]", AE_POLICY_TYPE, "$.boot: "},
        {"{\"secure_boot\":true}", AE_POLICY_UNKNOWN_FIELD, "$.boot.secure_boot: "},
        {"{\"secureboot\":1}", AE_POLICY_TYPE, "$.boot.secureboot: not a boolean"},
        {"{\"pcrs_replay\":\"yes\"}", AE_POLICY_TYPE, "$.boot.pcrs_replay: not a boolean"},
        {"{\"separators\":null}", AE_POLICY_TYPE, "$.boot.separators: not a boolean"},
        {"{\"variables\":{}}", AE_POLICY_EMPTY_SECTION, "$.boot.variables: no variable"},
        {"{\"variables\":{\"MOK\":[]}}", AE_POLICY_UNKNOWN_FIELD, "$.boot.variables.MOK: "},
        {"{\"variables\":{\"db\":[]}}", AE_POLICY_BAD_VALUE, "$.boot.variables.db: empty list"},
        {"{\"variables\":{\"db\":\"00\"}}", AE_POLICY_TYPE, "$.boot.variables.db: not an array"},
        {"{\"variables\":{\"dbx\":[\"00\"]}}", AE_POLICY_BAD_HEX,
         "$.boot.variables.dbx[0]: not a sha256 digest"},
        {"{\"variables\":{\"PK\":[7]}}", AE_POLICY_TYPE, "$.boot.variables.PK[0]: not a string"},
        {"{\"bootloaders\":[\"md5:00\"]}", AE_POLICY_BAD_VALUE,
         "$.boot.bootloaders[0]: not \"sha1:\""},
        {"{\"bootloaders\":[\"ab\"]}", AE_POLICY_BAD_VALUE, "$.boot.bootloaders[0]: "},
        {"{\"kernels\":[\"sha256:00\"]}", AE_POLICY_BAD_HEX,
         "$.boot.kernels[0]: not a sha256 digest (64 hex digits)"},
        {"{\"kernels\":[\"sha1:0000000000000000000000000000000000000000\","
         "\"sha1:0000000000000000000000000000000000000000\"]}",
         AE_POLICY_BAD_VALUE, "$.boot.kernels[1]: same digest as [0]"},
        {"{\"startup_locality\":[5]}", AE_POLICY_BAD_VALUE,
         "$.boot.startup_locality[0]: not a locality 0-4"},
        {"{\"startup_locality\":[\"3\"]}", AE_POLICY_TYPE,
         "$.boot.startup_locality[0]: not an integer"},
        {"{\"startup_locality\":[0,0]}", AE_POLICY_BAD_VALUE,
         "$.boot.startup_locality[1]: same as [0]"},
};

START_TEST(test_bad_sections_are_named_by_path)
{
        char doc[512];
        struct policy *p = NULL;
        struct attest_err err = {0};

        snprintf(doc, sizeof(doc), "{\"name\":\"b\",\"boot\":%s}", bad[_i].boot);
        ck_assert_int_eq(policy_parse(doc, strlen(doc), &p, &err), -EBADMSG);
        ck_assert_msg(err.code == bad[_i].code, "%s: %s", bad[_i].boot, attest_code_name(err.code));
        ck_assert_msg(strncmp(err.msg, bad[_i].msg, strlen(bad[_i].msg)) == 0, "%s: '%s'",
                      bad[_i].boot, err.msg);
        ck_assert_ptr_null(p);
}
END_TEST

/* 64 digests per list pass, 65 do not. */
START_TEST(test_digest_list_cap)
{
        for (unsigned n = BOOT_POLICY_DIGESTS_MAX - 1; n <= BOOT_POLICY_DIGESTS_MAX + 1; n++) {
                size_t cap = 64 + n * 80;
                char *doc = malloc(cap);
                size_t k = (size_t)snprintf(doc, cap, "{\"name\":\"b\",\"boot\":{\"kernels\":[");
                struct policy *p = NULL;
                struct attest_err err = {0};
                int x;

                for (unsigned i = 0; i < n; i++)
                        k += (size_t)snprintf(doc + k, cap - k, "%s\"sha256:%064x\"", i ? "," : "",
                                              i);
                snprintf(doc + k, cap - k, "]}}");
                x = policy_parse(doc, strlen(doc), &p, &err);
                if (n > BOOT_POLICY_DIGESTS_MAX) {
                        ck_assert_int_eq(x, -EBADMSG);
                        ck_assert_str_eq(err.msg, "$.boot.kernels: 65 entries > 64");
                } else {
                        ck_assert_msg(x == 0, "%u: %s", n, err.msg);
                }
                policy_free(p);
                free(doc);
        }
}
END_TEST

/* The section a host generates parses and passes on it, anchored; a change of each claim fails. */
START_TEST(test_from_host_passes_and_each_change_fails)
{
        struct claims c, other;
        json_t *sec = NULL, *v;
        json_auto_t *doc = json_pack("{s:s}", "name", "b");
        char *text;

        uefi_claims(&c, true, true, "kernel 6.1");
        ck_assert_int_eq(policy_boot_from_host(&c, &sec), 0);
        json_object_set_new(doc, "boot", sec);
        text = json_dumps(doc, JSON_COMPACT);
        /* every member present */
        for (const char *const *k =
                     (const char *const[]){"secureboot", "pcrs_replay", "variables", "bootloaders",
                                           "kernels", "separators", "startup_locality", NULL};
             *k; k++)
                ck_assert_msg(json_object_get(sec, *k), "no %s in %s", *k, text);
        v = eval(text, &c);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "pass");
        expect_claim(v, "boot.secureboot", "pass", true);
        expect_claim(v, "boot.pcrs_replay", "pass", true);
        expect_claim(v, "boot.variables.PK", "pass", true);
        expect_claim(v, "boot.variables.db", "pass", true);
        expect_claim(v, "boot.bootloaders.0", "pass", true);
        expect_claim(v, "boot.bootloaders.1", "pass", true);
        expect_claim(v, "boot.kernels", "pass", true);
        expect_claim(v, "boot.separators", "pass", true);
        expect_claim(v, "boot.startup_locality", "pass", true);
        ck_assert_int_eq(json_integer_value(json_object_get(find(v, "boot.kernels"), "entry")), 15);
        json_decref(v);
        /* Secure Boot off */
        uefi_claims(&other, false, true, "kernel 6.1");
        v = eval(text, &other);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "fail");
        expect_claim(v, "boot.secureboot", "fail", true);
        json_decref(v);
        /* another kernel */
        uefi_claims(&other, true, true, "kernel 6.2");
        v = eval(text, &other);
        expect_claim(v, "boot.kernels", "fail", true);
        expect_claim(v, "boot.bootloaders.1", "pass", true);
        json_decref(v);
        /* another db */
        other = c;
        other.boot.var_sha256[BOOT_VAR_DB][0] ^= 1;
        v = eval(text, &other);
        expect_claim(v, "boot.variables.db", "fail", true);
        json_decref(v);
        /* a separator missing */
        other = c;
        other.boot.separators = 0x7f;
        v = eval(text, &other);
        expect_claim(v, "boot.separators", "fail", true);
        json_decref(v);
        /* locality 0 */
        other = c;
        other.boot.locality_seen = false;
        v = eval(text, &other);
        expect_claim(v, "boot.startup_locality", "fail", true);
        json_decref(v);
        /* the same log, not replayed against a quote: unanchored, and pcrs_replay fails */
        uefi_claims(&other, true, false, "kernel 6.1");
        v = eval(text, &other);
        expect_claim(v, "boot.pcrs_replay", "fail", true);
        expect_claim(v, "boot.secureboot", "pass", false);
        expect_claim(v, "boot.kernels", "pass", false);
        json_decref(v);
        /* compared in sha1 only: the sha256 digests of the applications are not anchored */
        other = c;
        other.boot_banks = BANK_MASK(BANK_SHA1);
        v = eval(text, &other);
        expect_claim(v, "boot.kernels", "pass", false);
        expect_claim(v, "boot.secureboot", "pass", true);
        json_decref(v);
        /* no firmware log at all: one missing claim */
        memset(&other, 0, sizeof(other));
        v = eval(text, &other);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "fail");
        ck_assert_uint_eq(json_array_size(json_object_get(v, "claims")), 1);
        expect_claim(v, "boot.pcrs_replay", "missing", false);
        json_decref(v);
        ck_assert_int_eq(policy_boot_from_host(&other, &sec), -ENODATA);
        free(text);
}
END_TEST

/* More boot applications than are kept: judged a failure, never silently passed. */
START_TEST(test_too_many_applications_fail)
{
        struct claims c;
        json_t *v;
        char pol[256];
        char hex[65];

        uefi_claims(&c, true, true, "k");
        hex_encode(c.boot.apps[2].digest, 32, hex);
        snprintf(pol, sizeof(pol), "{\"name\":\"b\",\"boot\":{\"kernels\":[\"sha256:%s\"]}}", hex);
        v = eval(pol, &c);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "pass");
        json_decref(v);
        /* 9 applications: the 8th kept is the accepted kernel, the 9th is unknown */
        c.boot.apps_total = 9;
        c.boot.n_apps = BOOT_APPS_MAX;
        c.boot.apps[BOOT_APPS_MAX - 1] = c.boot.apps[2];
        v = eval(pol, &c);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "fail");
        json_decref(v);
}
END_TEST

/*
 * A log without boot applications (SeaBIOS, or a firmware that measured none): bootloaders and
 * kernels missing, each showing the policy's list as expected (not null).
 */
START_TEST(test_missing_applications_show_the_list)
{
        static const char pol[] =
                "{\"name\":\"b\",\"boot\":{\"bootloaders\":[\"sha256:"
                "1111111111111111111111111111111111111111111111111111111111111111\",\"sha256:"
                "2222222222222222222222222222222222222222222222222222222222222222\"],"
                "\"kernels\":[\"sha256:"
                "3333333333333333333333333333333333333333333333333333333333333333\"]}}";
        struct claims c;
        json_t *v, *exp;

        uefi_claims(&c, true, true, "k");
        c.boot.n_apps = 0;
        c.boot.apps_total = 0;
        v = eval(pol, &c);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "fail");
        expect_claim(v, "boot.bootloaders", "missing", false);
        expect_claim(v, "boot.kernels", "missing", false);
        exp = json_object_get(find(v, "boot.bootloaders"), "expected");
        ck_assert_msg(json_is_array(exp) && json_array_size(exp) == 2, "%s",
                      json_dumps(find(v, "boot.bootloaders"), 0));
        ck_assert_str_eq(json_string_value(json_array_get(exp, 1)),
                         "sha256:2222222222222222222222222222222222222222222222222222222222222222");
        exp = json_object_get(find(v, "boot.kernels"), "expected");
        ck_assert(json_is_array(exp) && json_array_size(exp) == 1);
        ck_assert_str_eq(json_string_value(json_array_get(exp, 0)),
                         "sha256:3333333333333333333333333333333333333333333333333333333333333333");
        json_decref(v);
        /* more applications than are kept: the kernels claim fails, also showing its list */
        uefi_claims(&c, true, true, "k");
        c.boot.apps_total = 9;
        c.boot.n_apps = BOOT_APPS_MAX;
        v = eval(pol, &c);
        exp = json_object_get(find(v, "boot.kernels"), "expected");
        ck_assert(json_is_array(exp) && json_array_size(exp) == 1);
        json_decref(v);
}
END_TEST

static Suite *policy_boot_suite(void)
{
        Suite *s = suite_create("policy-boot");
        TCase *tc = tcase_create("boot");

        tcase_add_loop_test(tc, test_bad_sections_are_named_by_path, 0, ARRAY_SIZE(bad));
        tcase_add_test(tc, test_digest_list_cap);
        tcase_add_test(tc, test_from_host_passes_and_each_change_fails);
        tcase_add_test(tc, test_too_many_applications_fail);
        tcase_add_test(tc, test_missing_applications_show_the_list);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(policy_boot_suite());
}
