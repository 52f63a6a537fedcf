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
        /* the tcb boot: enforcing 0 -> 1 -> 0 -> 1 (README of the data) */
        ck_assert_uint_ge(c.n_selinux, 3);
        ck_assert_int_eq(cdata_kv_bool(&c.selinux[0].kvs, "enforcing"), 0);
        ck_assert_int_eq(cdata_kv_bool(&c.selinux[c.n_selinux - 1].kvs, "enforcing"), 1);
        bool saw_permissive_after_enforcing = false, enforcing_seen = false;
        for (uint32_t i = 0; i < c.n_selinux; i++) {
                int en = cdata_kv_bool(&c.selinux[i].kvs, "enforcing");
                if (en == 1)
                        enforcing_seen = true;
                else if (enforcing_seen)
                        saw_permissive_after_enforcing = true;
                /* the remembered entry really is that selinux-state */
                if (i)
                        ck_assert_uint_gt(c.selinux[i].entry, c.selinux[i - 1].entry);
        }
        ck_assert(saw_permissive_after_enforcing);
        ck_assert(c.kernel_version_seen);
        ck_assert_str_eq(c.kernel_version, "6.1.192");
        ck_assert_uint_eq(c.kernel_version_entry, 1);
        ck_assert(c.policy_hash_seen);
        ck_assert_uint_eq(c.policy_hash_len, 32);
        ck_assert_uint_eq(c.policy_hash[0], 0xc1);
        ck_assert_uint_eq(c.policy_hash[31], 0xa8);
        ck_assert_ptr_null(c.trusted_keys.raw);
        ck_assert_ptr_null(c.cfi.raw);

        /* re-read the entry each claim names and check it is the right event */
        ima_reader_init_binary(&rd, bin, len, NULL);
        while (ima_reader_next(&rd, &e, &err) > 0) {
                uint64_t idx = rd.idx - 1;
                if (idx == c.policy_hash_entry)
                        ck_assert_int_eq(cdata_kind_of(&e), CDATA_SELINUX_POLICY_HASH);
                if (idx == c.selinux[0].entry)
                        ck_assert_int_eq(cdata_kind_of(&e), CDATA_SELINUX_STATE);
        }
        cdata_claims_done(&c);
        free(bin);
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
        static const char tk[] = "source=tee;", cfi[] = "enabled=1;mode=kcfi;permissive=0;";

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", "source=tpm;", 11), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "cfi-state", cfi, strlen(cfi)), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "trusted-keys-source", tk, strlen(tk)), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), 0);
        ck_assert_ptr_nonnull(c.trusted_keys.raw);
        ck_assert_uint_eq(c.trusted_keys.entry, 2); /* the latest one */
        ck_assert_str_eq(c.trusted_keys.raw, tk);
        ck_assert_int_eq(memcmp(cdata_kv_get(&c.trusted_keys.kvs, "source")->val, "tee", 3), 0);
        ck_assert_uint_eq(c.cfi.entry, 1);
        ck_assert_int_eq(cdata_kv_bool(&c.cfi.kvs, "permissive"), 0);
        ck_assert_int_eq(cdata_kv_bool(&c.cfi.kvs, "enabled"), 1);
        cdata_claims_done(&c);
        imagen_done(&g);
}
END_TEST

START_TEST(test_malformed_critical_data_names_the_entry)
{
        struct imagen g;
        struct cdata_claims c;
        struct attest_err err = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "kernel_version", "6.1.0", 5), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", "enforcing=1", 11), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_CDATA_BAD_VALUE);
        ck_assert_msg(strstr(err.msg, "entry 1 (selinux-state)"), "%s", err.msg);
        cdata_claims_done(&c);
        imagen_done(&g);

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-policy-hash", "", 0), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_CDATA_BAD_POLICY_HASH);
        cdata_claims_done(&c);
        imagen_done(&g);

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "kernel_version", "6.1\n", 4), 0);
        cdata_claims_init(&c);
        ck_assert_int_eq(feed_all(&g, &c, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_CDATA_BAD_KERNEL_VERSION);
        cdata_claims_done(&c);
        imagen_done(&g);
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
        ck_assert_uint_eq(c.n_selinux, 0);
        ck_assert_ptr_null(c.cfi.raw);
        cdata_claims_done(&c);
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
        tcase_add_test(cl, test_patch_set_events_become_claims);
        tcase_add_test(cl, test_malformed_critical_data_names_the_entry);
        tcase_add_test(cl, test_only_measured_ima_buf_entries_are_claims);
        suite_add_tcase(s, kv);
        suite_add_tcase(s, cl);
        return s;
}

int main(void)
{
        return tu_run(cdata_suite());
}
