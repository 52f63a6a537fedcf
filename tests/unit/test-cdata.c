/* SPDX-License-Identifier: MIT */
/* Critical data: the strict key=value parser and the claims taken from real and synthetic logs. */
#include <check.h>
#include <errno.h>

#include "evidence/cdata.h"
#include "tests/lib/imagen.h"
#include "tests/unit/testutil.h"

static const char real_state[] =
        "initialized=1;enforcing=1;checkreqprot=0;network_peer_controls=1;open_perms=1;"
        "extended_socket_class=1;always_check_network=1;cgroup_seclabel=1;"
        "nnp_nosuid_transition=1;genfs_seclabel_symlinks=1;ioctl_skip_cloexec=1;";

START_TEST(test_kv_parses_real_selinux_state_keeping_every_key)
{
        struct cdata_kvs kvs;
        struct attest_err err = {0};

        ck_assert_int_eq(
                cdata_kv_parse((const uint8_t *)real_state, strlen(real_state), &kvs, &err), 0);
        ck_assert_uint_eq(kvs.n, 11);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "initialized"), 1);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "enforcing"), 1);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "checkreqprot"), 0);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "ioctl_skip_cloexec"), 1);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "absent"), -ENOENT);
        ck_assert_ptr_null(cdata_kv_get(&kvs, "enforc"));
}
END_TEST

START_TEST(test_kv_values_may_be_words_and_empty)
{
        static const char b[] = "source=tee;mode=kcfi;note=;";
        struct cdata_kvs kvs;
        const struct cdata_kv *kv;

        ck_assert_int_eq(cdata_kv_parse((const uint8_t *)b, strlen(b), &kvs, NULL), 0);
        ck_assert_uint_eq(kvs.n, 3);
        kv = cdata_kv_get(&kvs, "source");
        ck_assert_uint_eq(kv->val_len, 3);
        ck_assert_int_eq(memcmp(kv->val, "tee", 3), 0);
        ck_assert_uint_eq(cdata_kv_get(&kvs, "note")->val_len, 0);
        ck_assert_int_eq(cdata_kv_bool(&kvs, "mode"), -EBADMSG);
}
END_TEST

static void expect_kv_error(const char *b, size_t len, int want, enum attest_code code)
{
        struct cdata_kvs kvs;
        struct attest_err err = {0};

        ck_assert_msg(cdata_kv_parse((const uint8_t *)b, len, &kvs, &err) == want,
                      "'%.*s' not rejected with %d", (int)len, b, want);
        ck_assert_int_eq(err.code, code);
        ck_assert_msg(strstr(err.msg, "byte ") || want == -E2BIG || len == 0, "%s", err.msg);
}

START_TEST(test_kv_rejects_malformed_buffers)
{
        char big[CDATA_BUF_MAX + 2], many[CDATA_KV_MAX * 6 + 8];
        size_t n = 0;

        expect_kv_error("", 0, -EBADMSG, AE_CDATA_EMPTY);
        expect_kv_error("enforcing=1", 11, -EBADMSG, AE_CDATA_BAD_VALUE);
        expect_kv_error("Enforcing=1;", 12, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error("enforcing;", 10, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error("=1;", 3, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error(";", 1, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error("a=1;;", 5, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error("a=1;b", 5, -EBADMSG, AE_CDATA_BAD_KEY);
        expect_kv_error("a=1=2;", 6, -EBADMSG, AE_CDATA_BAD_VALUE);
        expect_kv_error("a=\x01;", 4, -EBADMSG, AE_CDATA_BAD_VALUE);
        expect_kv_error("a=1\0;", 5, -EBADMSG, AE_CDATA_BAD_VALUE);
        expect_kv_error("a=\x80;", 4, -EBADMSG, AE_CDATA_BAD_VALUE);
        expect_kv_error("a=1;a=0;", 8, -EBADMSG, AE_CDATA_DUPLICATE_KEY);
        memset(big, 'k', 70);
        memcpy(big + 70, "=1;", 3);
        expect_kv_error(big, 73, -EBADMSG, AE_CDATA_BAD_KEY);
        memset(big, 'a', sizeof(big));
        expect_kv_error(big, CDATA_BUF_MAX + 1, -E2BIG, AE_CDATA_TOO_LONG);
        for (int i = 0; i <= CDATA_KV_MAX; i++)
                n += (size_t)snprintf(many + n, sizeof(many) - n, "k%d=1;", i);
        expect_kv_error(many, n, -E2BIG, AE_CDATA_TOO_MANY);
}
END_TEST

/* Every cap of a key=value buffer at cap - 1, cap and cap + 1. */
START_TEST(test_kv_caps)
{
        static char b[CDATA_BUF_MAX + 2];
        struct cdata_kvs kvs;
        struct attest_err err = {0};
        size_t n;

        /* buffer size: "k=" value ";" */
        for (int d = -1; d <= 1; d++) {
                n = (size_t)(CDATA_BUF_MAX + d);
                memset(b, 'v', n);
                memcpy(b, "k=", 2);
                b[n - 1] = ';';
                err = (struct attest_err){0};
                ck_assert_int_eq(cdata_kv_parse((uint8_t *)b, n, &kvs, &err), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(kvs.kv[0].val_len, n - 3);
                else
                        ck_assert_int_eq(err.code, AE_CDATA_TOO_LONG);
        }
        /* key length */
        for (int d = -1; d <= 1; d++) {
                n = (size_t)(CDATA_KEY_MAX + d);
                memset(b, 'k', n);
                memcpy(b + n, "=1;", 3);
                err = (struct attest_err){0};
                ck_assert_int_eq(cdata_kv_parse((uint8_t *)b, n + 3, &kvs, &err),
                                 d <= 0 ? 0 : -EBADMSG);
                if (d <= 0)
                        ck_assert_uint_eq(kvs.kv[0].key_len, n);
                else
                        ck_assert_int_eq(err.code, AE_CDATA_BAD_KEY);
        }
        /* pairs */
        for (int d = -1; d <= 1; d++) {
                n = 0;
                for (int i = 0; i < CDATA_KV_MAX + d; i++)
                        n += (size_t)snprintf(b + n, sizeof(b) - n, "k%d=1;", i);
                err = (struct attest_err){0};
                ck_assert_int_eq(cdata_kv_parse((uint8_t *)b, n, &kvs, &err), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(kvs.n, (uint32_t)(CDATA_KV_MAX + d));
                else
                        ck_assert_int_eq(err.code, AE_CDATA_TOO_MANY);
        }
}
END_TEST

START_TEST(test_claims_from_real_log_remember_their_entries)
{
        size_t len;
        uint8_t *bin =
                (uint8_t *)tu_read("tests/data/qemu61-tcb/binary_runtime_measurements", &len);
        struct ima_reader rd;
        struct ima_entry e;
        struct cdata_claims c;
        struct attest_err err = {0};
        int x;

        ck_assert_ptr_nonnull(bin);
        cdata_claims_init(&c);
        ima_reader_init_binary(&rd, bin, len, NULL);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                ck_assert_int_ge(cdata_claims_feed(&c, &e, rd.idx - 1, &err), 0);
        ck_assert_int_eq(x, 0);
        /* the tcb boot: enforcing 0 (entry 5) -> 1 (7) -> 0 (16) -> 1 (18), README of the data */
        ck_assert(c.selinux_seen);
        ck_assert_uint_ge(c.history.states, 4);
        ck_assert(c.history.enforced);
        ck_assert_uint_eq(c.history.first_enforcing, 7);
        ck_assert_int_eq(c.history.lapse, SELINUX_LAPSE_PERMISSIVE);
        ck_assert_uint_eq(c.history.lapse_entry, 16);
        ck_assert_uint_eq(c.selinux.entry, 18);
        ck_assert_int_eq(cdata_selinux_flag(&c.selinux, SELINUX_ENFORCING), 1);
        ck_assert_int_eq(cdata_selinux_flag(&c.selinux, SELINUX_INITIALIZED), 1);
        ck_assert_int_eq(cdata_selinux_flag(&c.selinux, SELINUX_CHECKREQPROT), 0);
        ck_assert_int_eq(cdata_selinux_cap(&c.selinux, SELINUX_CAP_NETWORK_PEER_CONTROLS), 1);
        ck_assert(c.kernel_version_seen);
        ck_assert_str_eq(c.kernel_version, "6.1.192");
        ck_assert_uint_eq(c.kernel_version_entry, 1);
        ck_assert(c.policy_hash_seen);
        ck_assert_uint_eq(c.policy_hash_len, 32);
        ck_assert_uint_eq(c.policy_hash[0], 0xc1);
        ck_assert_uint_eq(c.policy_hash[31], 0xa8);
        ck_assert(!c.trusted_keys_seen);
        ck_assert(!c.cfi_seen);

        /* re-read the entry each claim names and check it is the right event */
        ima_reader_init_binary(&rd, bin, len, NULL);
        while (ima_reader_next(&rd, &e, &err) > 0) {
                uint64_t idx = rd.idx - 1;
                if (idx == c.policy_hash_entry)
                        ck_assert_int_eq(cdata_kind_of(&e), CDATA_SELINUX_POLICY_HASH);
                if (idx == c.selinux.entry || idx == c.history.first_enforcing ||
                    idx == c.history.lapse_entry)
                        ck_assert_int_eq(cdata_kind_of(&e), CDATA_SELINUX_STATE);
                if (idx == c.kernel_version_entry)
                        ck_assert_int_eq(cdata_kind_of(&e), CDATA_KERNEL_VERSION);
        }
        free(bin);
}
END_TEST

START_TEST(test_selinux_state_becomes_typed_flags_and_caps)
{
        struct cdata_selinux_state s;
        struct attest_err err = {0};
        static const char b[] = "initialized=1;enforcing=0;open_perms=1;memfd_class=0;"
                                "some_future_cap=1;";

        ck_assert_int_eq(
                cdata_selinux_parse((const uint8_t *)real_state, strlen(real_state), 3, &s, &err),
                0);
        ck_assert_uint_eq(s.entry, 3);
        ck_assert_uint_eq(s.flags_present, 7);
        ck_assert_uint_eq(s.flags_value, 1u << SELINUX_INITIALIZED | 1u << SELINUX_ENFORCING);
        ck_assert_uint_eq(s.caps_present, (1u << 8) - 1); /* the first eight of the table */
        ck_assert_uint_eq(s.caps_value, s.caps_present);
        ck_assert_uint_eq(s.unknown_keys, 0);
        ck_assert_int_eq(cdata_selinux_parse((const uint8_t *)b, strlen(b), 9, &s, &err), 0);
        ck_assert_int_eq(cdata_selinux_flag(&s, SELINUX_ENFORCING), 0);
        ck_assert_int_eq(cdata_selinux_flag(&s, SELINUX_CHECKREQPROT), -ENOENT);
        ck_assert_int_eq(cdata_selinux_cap(&s, SELINUX_CAP_OPEN_PERMS), 1);
        ck_assert_int_eq(cdata_selinux_cap(&s, SELINUX_CAP_MEMFD_CLASS), 0);
        ck_assert_int_eq(cdata_selinux_cap(&s, SELINUX_CAP_NETIF_WILDCARD), -ENOENT);
        ck_assert_uint_eq(s.unknown_keys, 1); /* kept as a count, not rejected */
        ck_assert_int_eq(selinux_cap_from_name("memfd_class", 11), SELINUX_CAP_MEMFD_CLASS);
        ck_assert_int_eq(selinux_cap_from_name("memfd_clas", 10), SELINUX_CAP_UNKNOWN);
        ck_assert_str_eq(selinux_cap_name(SELINUX_CAP_NETWORK_PEER_CONTROLS),
                         "network_peer_controls");
}
END_TEST

/* never_permissive's summary, fed in log order. */
START_TEST(test_history_keeps_the_first_lapse_after_enforcing)
{
        static const struct {
                const char *states[4];
                bool enforced;
                uint64_t first;
                enum selinux_lapse lapse;
                uint64_t at;
        } cases[] = {
                {{"initialized=0;enforcing=0;", "initialized=1;enforcing=0;",
                  "initialized=1;enforcing=1;"},
                 true,
                 2,
                 SELINUX_LAPSE_NONE,
                 0},
                {{"initialized=1;enforcing=1;", "initialized=0;enforcing=1;"},
                 true,
                 0,
                 SELINUX_LAPSE_UNINITIALIZED,
                 1},
                {{"initialized=1;enforcing=1;", "initialized=1;enforcing=1;",
                  "initialized=1;enforcing=0;", "initialized=1;enforcing=1;"},
                 true,
                 0,
                 SELINUX_LAPSE_PERMISSIVE,
                 2},
                {{"initialized=1;enforcing=1;", "initialized=1;"},
                 true,
                 0,
                 SELINUX_LAPSE_NO_ENFORCING,
                 1},
                {{"initialized=1;enforcing=0;", "initialized=1;enforcing=0;"},
                 false,
                 0,
                 SELINUX_LAPSE_NONE,
                 0},
                {{"enforcing=1;", "enforcing=1;"}, true, 0, SELINUX_LAPSE_NONE, 0},
                /* only the first lapse counts */
                {{"enforcing=1;", "enforcing=0;", "initialized=0;enforcing=1;"},
                 true,
                 0,
                 SELINUX_LAPSE_PERMISSIVE,
                 1},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct cdata_selinux_history h = {0};
                uint64_t n = 0;

                for (; n < 4 && cases[i].states[n]; n++) {
                        struct cdata_selinux_state s;
                        const char *b = cases[i].states[n];

                        ck_assert_int_eq(
                                cdata_selinux_parse((const uint8_t *)b, strlen(b), n, &s, NULL), 0);
                        cdata_history_feed(&h, &s);
                }
                ck_assert_uint_eq(h.states, n);
                ck_assert_msg(h.enforced == cases[i].enforced, "case %zu", i);
                ck_assert_msg(h.lapse == cases[i].lapse, "case %zu: lapse %d", i, h.lapse);
                if (h.enforced)
                        ck_assert_uint_eq(h.first_enforcing, cases[i].first);
                if (h.lapse)
                        ck_assert_uint_eq(h.lapse_entry, cases[i].at);
        }
}
END_TEST

static int feed_all(struct imagen *g, struct cdata_claims *c, struct attest_err *err)
{
        struct ima_reader rd;
        struct ima_entry e;
        int x;

        ima_reader_init_binary(&rd, g->bin, g->bin_len, NULL);
        while ((x = ima_reader_next(&rd, &e, err)) > 0)
                if ((x = cdata_claims_feed(c, &e, rd.idx - 1, err)) < 0)
                        return x;
        return x;
}

START_TEST(test_patch_set_events_become_claims)
{
        struct imagen g;
        struct cdata_claims c;
        struct attest_err err = {0};
        static const char tk[] = "source=tee;requested=any;builtin=tpm,tee;rng=kernel;error=0;",
                          cfi[] = "enabled=1;mode=kcfi;permissive=0;";

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", "source=tpm;", 11), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "cfi-state", cfi, strlen(cfi)), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", tk, strlen(tk)), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", "source=pkwm;", 12), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), 0);
        ck_assert(c.trusted_keys_seen);
        ck_assert_uint_eq(c.trusted_keys.entry, 3); /* the latest one */
        /* a source this table does not know is kept by name, never taken for another */
        ck_assert_int_eq(c.trusted_keys.source, TK_SOURCE_UNKNOWN);
        ck_assert_str_eq(c.trusted_keys.source_name, "pkwm");
        /* the latest entry had neither rng= nor requested=: nothing of the earlier one stays */
        ck_assert_str_eq(c.trusted_keys.rng_name, "");
        ck_assert_str_eq(c.trusted_keys.requested_name, "");
        ck_assert(c.cfi_seen);
        ck_assert_uint_eq(c.cfi.entry, 1);
        ck_assert(c.cfi.enabled);
        ck_assert(!c.cfi.permissive);
        ck_assert_int_eq(c.cfi.mode, CFI_MODE_KCFI);
        imagen_done(&g);

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", tk, strlen(tk)), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "cfi-state", "enabled=0;permissive=1;", 23), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), 0);
        ck_assert_int_eq(c.trusted_keys.source, TK_SOURCE_TEE);
        ck_assert_str_eq(tk_source_name(c.trusted_keys.source), "tee");
        /* where key material comes from and what the command line asked for, as measured */
        ck_assert_str_eq(c.trusted_keys.rng_name, "kernel");
        ck_assert_str_eq(c.trusted_keys.requested_name, "any");
        ck_assert(!c.cfi.enabled);
        ck_assert(c.cfi.permissive);
        ck_assert_int_eq(c.cfi.mode, CFI_MODE_ABSENT);
        imagen_done(&g);
}
END_TEST

/* A malformed payload fails at feed time, naming the entry and the field; c keeps its values. */
START_TEST(test_malformed_critical_data_names_the_entry_and_field)
{
        static const struct {
                const char *event, *buf;
                enum attest_code code;
                const char *msg;
        } cases[] = {
                {"selinux-state", "enforcing=1", AE_CDATA_BAD_VALUE, "entry 1 (selinux-state)"},
                {"selinux-state", "initialized=x;enforcing=1;", AE_CDATA_BAD_FLAG,
                 "entry 1 (selinux-state): initialized='x' is not 0 or 1"},
                {"selinux-state", "enforcing=1;open_perms=10;", AE_CDATA_BAD_FLAG,
                 "entry 1 (selinux-state): open_perms='10' is not 0 or 1"},
                {"selinux-policy-hash", "", AE_CDATA_BAD_POLICY_HASH,
                 "entry 1 (selinux-policy-hash)"},
                {"kernel_version", "6.1\n", AE_CDATA_BAD_KERNEL_VERSION,
                 "entry 1 (kernel_version): byte 3"},
                {"trusted-keys-source", "requested=tpm;", AE_CDATA_MISSING_KEY,
                 "entry 1 (trusted-keys-source): no key 'source'"},
                {"trusted-keys-source", "source=TPM;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): source is not a word"},
                {"trusted-keys-source", "source=;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): source is not a word"},
                /* rng= and requested= are optional, but words when present */
                {"trusted-keys-source", "source=tpm;rng=;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): rng is not a word"},
                {"trusted-keys-source", "source=tpm;rng=TPM;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): rng is not a word"},
                {"trusted-keys-source", "source=tpm;rng=tpm,kernel;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): rng is not a word"},
                {"trusted-keys-source", "source=tpm;rng=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;",
                 AE_CDATA_BAD_VALUE, "entry 1 (trusted-keys-source): rng is not a word"},
                {"trusted-keys-source", "source=tpm;rng=tpm;rng=kernel;", AE_CDATA_DUPLICATE_KEY,
                 "entry 1 (trusted-keys-source)"},
                {"trusted-keys-source", "source=tpm;requested=t e;", AE_CDATA_BAD_VALUE,
                 "entry 1 (trusted-keys-source): requested is not a word"},
                {"cfi-state", "enabled=2;permissive=0;", AE_CDATA_BAD_FLAG,
                 "entry 1 (cfi-state): enabled='2' is not 0 or 1"},
                {"cfi-state", "enabled=1;mode=kcfi;", AE_CDATA_MISSING_KEY,
                 "entry 1 (cfi-state): no key 'permissive'"},
                {"cfi-state", "enabled=1;permissive=0;mode=k-cfi;", AE_CDATA_BAD_VALUE,
                 "entry 1 (cfi-state): mode is not a word"},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct imagen g;
                struct cdata_claims c, before;
                struct attest_err err = {0};

                ck_assert_int_eq(imagen_init(&g), 0);
                ck_assert_int_eq(imagen_buf(&g, 10, "kernel_version", "6.1.0", 5), 0);
                ck_assert_int_eq(
                        imagen_buf(&g, 10, cases[i].event, cases[i].buf, strlen(cases[i].buf)), 0);
                cdata_claims_init(&c);
                ck_assert_int_eq(feed_all(&g, &c, &err), -EBADMSG);
                ck_assert_msg(err.code == cases[i].code, "%s: code %s (%s)", cases[i].buf,
                              attest_code_name(err.code), err.msg);
                ck_assert_msg(strstr(err.msg, cases[i].msg), "%s: '%s', want '%s'", cases[i].buf,
                              err.msg, cases[i].msg);
                /* the entry before stays, nothing of the bad one is taken */
                cdata_claims_init(&before);
                before.kernel_version_seen = true;
                before.kernel_version_entry = 0;
                snprintf(before.kernel_version, sizeof(before.kernel_version), "6.1.0");
                ck_assert_int_eq(memcmp(&c, &before, sizeof(c)), 0);
                imagen_done(&g);
        }
}
END_TEST

/* Entries other than ima-buf, and violations, never yield claims even with a claim's name. */
START_TEST(test_only_measured_ima_buf_entries_are_claims)
{
        struct imagen g;
        struct cdata_claims c;
        struct attest_err err = {0};
        uint8_t d[32] = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "selinux-state"), 0);
        ck_assert_int_eq(imagen_violation(&g, 10, "cfi-state"), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), 0);
        ck_assert(!c.selinux_seen);
        ck_assert(!c.cfi_seen);
        imagen_done(&g);
}
END_TEST

static Suite *cdata_suite(void)
{
        Suite *s = suite_create("cdata");
        TCase *kv = tcase_create("kv"), *cl = tcase_create("claims");

        tcase_add_test(kv, test_kv_parses_real_selinux_state_keeping_every_key);
        tcase_add_test(kv, test_kv_values_may_be_words_and_empty);
        tcase_add_test(kv, test_kv_rejects_malformed_buffers);
        tcase_add_test(kv, test_kv_caps);
        tcase_add_test(cl, test_claims_from_real_log_remember_their_entries);
        tcase_add_test(cl, test_selinux_state_becomes_typed_flags_and_caps);
        tcase_add_test(cl, test_history_keeps_the_first_lapse_after_enforcing);
        tcase_add_test(cl, test_patch_set_events_become_claims);
        tcase_add_test(cl, test_malformed_critical_data_names_the_entry_and_field);
        tcase_add_test(cl, test_only_measured_ima_buf_entries_are_claims);
        suite_add_tcase(s, kv);
        suite_add_tcase(s, cl);
        return s;
}

int main(void)
{
        return tu_run(cdata_suite());
}
