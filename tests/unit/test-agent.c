/* SPDX-License-Identifier: MIT */
/* Agent collectors: host facts from files, the incremental IMA log reader. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/facts.h"
#include "tests/lib/imagen.h"
#include "agent/imalog.h"
#include "agent/outcome.h"
#include "tests/unit/testutil.h"

static char tmpdir[] = "/tmp/test-agent.XXXXXX";

static void put(const char *name, const void *data, size_t len, const char *mode)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, mode);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        fclose(f);
}

static const char *at(const char *name)
{
        static char bufs[8][256];
        static int i;
        char *p = bufs[i++ % 8];

        snprintf(p, 256, "%s/%s", tmpdir, name);
        return p;
}

START_TEST(test_facts_from_boot_config_and_cmdline)
{
        struct facts_paths p = {at("osrelease"), at("boot_id"), at("cmdline"), tmpdir,
                                at("config.gz")};
        struct facts f;
        struct attest_err err = {0};
        static const char cfg[] = "CONFIG_FOO=y\nCONFIG_CFI_CLANG=y\n# CONFIG_CFI_PERMISSIVE is "
                                  "not set\n";

        put("osrelease", "6.1.0-attest\n", 13, "w");
        put("boot_id", "0b6cf2b2-1a5e-4d7b-9a38-0f5a3e2a0001\n", 37, "w");
        put("cmdline", "ro trusted.source=tpm quiet trusted.source=tee\n", 47, "w");
        put("config-6.1.0-attest", cfg, strlen(cfg), "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.kernel, "6.1.0-attest");
        ck_assert_str_eq(f.boot_id, "0b6cf2b2-1a5e-4d7b-9a38-0f5a3e2a0001");
        ck_assert(f.cfi_present);
        ck_assert_str_eq(f.cfi_source, "config");
        ck_assert(f.cfi_enabled);
        ck_assert(!f.cfi_permissive);
        ck_assert(f.tk_present);
        ck_assert_str_eq(f.tk_source, "tee"); /* the last one wins */
        ck_assert_str_eq(f.tk_origin, "cmdline");
}
END_TEST

START_TEST(test_facts_fall_back_to_proc_config_gz_and_absent)
{
        struct facts_paths p = {at("osrelease"), at("none"), at("none"), at("noboot"),
                                at("config.gz")};
        struct facts f;
        struct attest_err err = {0};
        static const char cfg[] = "CONFIG_CFI_CLANG=y\nCONFIG_CFI_PERMISSIVE=y\n";
        gzFile z;

        put("osrelease", "6.1.0-attest\n", 13, "w");
        z = gzopen(at("config.gz"), "wb");
        ck_assert_ptr_nonnull(z);
        ck_assert_int_eq(gzwrite(z, cfg, (unsigned)strlen(cfg)), (int)strlen(cfg));
        gzclose(z);
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.cfi_source, "proc-config");
        ck_assert(f.cfi_enabled && f.cfi_permissive);
        ck_assert(!f.tk_present);
        ck_assert_str_eq(f.boot_id, "");
        /* no config anywhere: CFI absent, not "disabled" */
        p.config_gz = at("none");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert(!f.cfi_present);
        /* no kernel release: an error */
        p.osrelease = at("none");
        ck_assert_int_eq(facts_collect(&p, &f, &err), -EIO);
        ck_assert_int_eq(err.code, AE_FACTS_NO_KERNEL);
}
END_TEST

START_TEST(test_facts_reject_unprintable_and_spoofed_params)
{
        struct facts_paths p = {at("osrelease"), at("none"), at("cmdline"), at("noboot"),
                                at("none")};
        struct facts f;
        struct attest_err err = {0};

        put("osrelease", "6.1\n", 4, "w");
        put("cmdline", "xtrusted.source=tee foo.trusted.source=tee\n", 43, "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert(!f.tk_present);
        put("cmdline", "a\x1b[0m trusted.source=tpm\n", 26, "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.cmdline, "");
        ck_assert(!f.tk_present);
}
END_TEST

static uint64_t count_entries(const uint8_t *buf, size_t len)
{
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t n = 0;

        ima_reader_init_binary(&rd, buf, len, NULL);
        while (ima_reader_next(&rd, &e, NULL) > 0)
                n++;
        return n;
}

START_TEST(test_imalog_reads_only_new_entries)
{
        size_t len, got_len;
        uint8_t *real =
                (uint8_t *)tu_read("tests/data/qemu61-tcb/binary_runtime_measurements", &len);
        uint64_t total = count_entries(real, len), from, n;
        uint8_t *got;
        struct imalog l;
        struct attest_err err = {0};
        struct imagen g;
        uint8_t d[32] = {1};

        ck_assert_uint_eq(total, 20);
        put("log", real, len, "w");
        imalog_init(&l, at("log"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 20);
        ck_assert_uint_eq(got_len, len);
        ck_assert_int_eq(memcmp(got, real, len), 0);
        free(got);

        /* three new entries appended: only they come back, read from the remembered offset */
        ck_assert_int_eq(imagen_init(&g), 0);
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/new"), 0);
        put("log", g.bin, g.bin_len, "a");
        /* scribble over the old part: an incremental read must not look at it */
        {
                FILE *f = fopen(at("log"), "r+");
                ck_assert_ptr_nonnull(f);
                fputs("garbage", f);
                fclose(f);
        }
        ck_assert_int_eq(imalog_read(&l, 20, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(from, 20);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(got_len, g.bin_len);
        ck_assert_int_eq(memcmp(got, g.bin, g.bin_len), 0);
        free(got);
        /* nothing new */
        ck_assert_int_eq(imalog_read(&l, 23, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_uint_eq(got_len, 0);
        free(got);

        /* an older offset re-reads from the start (and now meets the scribbled bytes) */
        ck_assert_int_lt(imalog_read(&l, 5, &got, &got_len, &from, &n, &err), 0);
        put("log", real, len, "w");
        put("log", g.bin, g.bin_len, "a");
        ck_assert_int_eq(imalog_read(&l, 5, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 18);
        ck_assert_uint_eq(count_entries(got, got_len), 18);
        free(got);
        imagen_done(&g);
        free(real);
}
END_TEST

START_TEST(test_imalog_leaves_a_partial_entry_and_handles_a_new_boot)
{
        struct imagen g;
        uint8_t d[32] = {2}, *got;
        size_t got_len;
        uint64_t from, n;
        struct imalog l;
        struct attest_err err = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/a"), 0);
        size_t first = g.bin_len;
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/b"), 0);
        put("log2", g.bin, first + 10, "w"); /* second entry half written */
        imalog_init(&l, at("log2"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(got_len, first);
        free(got);
        put("log2", g.bin + first + 10, g.bin_len - first - 10, "a");
        ck_assert_int_eq(imalog_read(&l, 1, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(got_len, g.bin_len - first);
        free(got);
        /* the verifier asks for entry 7 of a log that now has 2: a new boot, send all from 0 */
        ck_assert_int_eq(imalog_read(&l, 7, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(from, 0);
        ck_assert_uint_eq(n, 2);
        free(got);
        /* size cap */
        imalog_init(&l, at("log2"), IMA_FORMAT_BINARY, 16);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMALOG_TOO_BIG);
        /* ascii */
        put("log3", g.txt, g.txt_len, "w");
        imalog_init(&l, at("log3"), IMA_FORMAT_ASCII, 0);
        ck_assert_int_eq(imalog_read(&l, 1, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(memcmp(got, strchr(g.txt, '\n') + 1, got_len), 0);
        free(got);
        imagen_done(&g);
}
END_TEST

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

/* ---- the round's outcome and what the agent does next (issue 9, defects 8 and 9) ---- */

static enum agent_action act(enum agent_step step, enum agent_outcome_kind kind, int error,
                             long status, const char *code)
{
        struct agent_outcome o = {.kind = kind,
                                  .error = error,
                                  .status = status,
                                  .code = agent_api_code_from_name(code)};

        return agent_outcome_action(step, &o);
}

#define ck_act(want, ...)                                                                          \
        do {                                                                                       \
                enum agent_action got_ = act(__VA_ARGS__);                                         \
                ck_assert_msg(got_ == (want), "%s: %s, want %s", #__VA_ARGS__,                     \
                              agent_action_name(got_), agent_action_name(want));                   \
        } while (0)

START_TEST(test_outcome_local_errors_never_reenrol)
{
        static const int errs[] = {-ENOENT, -EACCES, -EIO, -EBADMSG, -E2BIG, -ENOMEM, -EPERM};

        for (size_t i = 0; i < ARRAY_SIZE(errs); i++)
                for (int step = AGENT_STEP_ENROL; step <= AGENT_STEP_ROUND; step++) {
                        /* a missing IMA log, TPM or state-dir failure: back off, keep the id */
                        ck_act(AGENT_ACT_BACKOFF, step, AGENT_OUTCOME_LOCAL, errs[i], 0, NULL);
                        /* no answer, or one the agent cannot use: the same */
                        ck_act(AGENT_ACT_BACKOFF, step, AGENT_OUTCOME_TRANSPORT, errs[i], 0, NULL);
                        ck_act(AGENT_ACT_BACKOFF, step, AGENT_OUTCOME_PROTOCOL, errs[i], 0, NULL);
                }
        /* a stray status or code next to a local failure changes nothing */
        ck_act(AGENT_ACT_BACKOFF, AGENT_STEP_ROUND, AGENT_OUTCOME_LOCAL, -ENOENT, 404,
               "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, AGENT_STEP_ROUND, AGENT_OUTCOME_LOCAL, -ENOENT, 403,
               "agent_decommissioned");
        ck_act(AGENT_ACT_PROCEED, AGENT_STEP_ROUND, AGENT_OUTCOME_DONE, 0, 0, NULL);
        ck_act(AGENT_ACT_PROCEED, AGENT_STEP_ENROL, AGENT_OUTCOME_DONE, 0, 0, NULL);
}
END_TEST

START_TEST(test_outcome_http_statuses_and_codes)
{
        const enum agent_step R = AGENT_STEP_ROUND, E = AGENT_STEP_ENROL;
        const enum agent_outcome_kind H = AGENT_OUTCOME_HTTP;

        /* forgotten (DELETE): only 404 agent_not_found in a round enrols again */
        ck_act(AGENT_ACT_REENROL, R, H, 0, 404, "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 404, "not_found");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 404, NULL);
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 400, "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 404, "agent_not_found"); /* gone before activation */
        /* decommissioned: stop for good, from a round or from enrolment */
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, R, H, 0, 403, "agent_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, R, H, 0, 403, "ek_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, E, H, 0, 403, "ek_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, E, H, 0, 403, "agent_decommissioned");
        /* other refusals of a round: keep the id, back off */
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 403, "agent_not_active");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 403, "forbidden");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 409, "agent_busy");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 503, "nonces_exhausted");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 500, NULL);
        /* a stale nonce: one fresh challenge */
        ck_act(AGENT_ACT_RECHALLENGE, R, H, 0, 410, "nonce_expired");
        ck_act(AGENT_ACT_RECHALLENGE, R, H, 0, 409, "nonce_unknown");
        /* enrolment: the verifier down or busy is retried, a refusal is final */
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 503, NULL);
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 429, NULL);
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 408, NULL);
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 401, "unauthorized");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 403, "ek_cert_required");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 409, "agent_exists");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 410, "nonce_expired");
}
END_TEST

START_TEST(test_outcome_code_names_and_exit_statuses)
{
        for (int c = 0; c < AGENT_API_CODE_COUNT; c++)
                if (c != AGENT_API_OTHER)
                        ck_assert_int_eq(agent_api_code_from_name(agent_api_code_name(c)), c);
        ck_assert_int_eq(agent_api_code_from_name(NULL), AGENT_API_OTHER);
        ck_assert_int_eq(agent_api_code_from_name(""), AGENT_API_OTHER);
        ck_assert_int_eq(agent_api_code_from_name("AGENT_NOT_FOUND"), AGENT_API_OTHER);
        ck_assert_int_eq(agent_api_code_from_name("agent_not_found "), AGENT_API_OTHER);
        ck_assert_int_eq(agent_api_code_from_name("agent_decommissioned"),
                         AGENT_API_AGENT_DECOMMISSIONED);
        ck_assert_str_eq(agent_api_code_name(AGENT_API_EK_DECOMMISSIONED), "ek_decommissioned");
        for (int a = 0; a < AGENT_ACT_COUNT; a++)
                ck_assert_str_ne(agent_action_name(a), "?");
        for (int k = 0; k < AGENT_OUTCOME_KIND_COUNT; k++)
                ck_assert_str_ne(agent_outcome_kind_name(k), "?");
        /* the documented statuses (attest-agent(8), RestartPreventExitStatus= in the unit) */
        ck_assert_int_eq(AGENT_EXIT_PASS, 0);
        ck_assert_int_eq(AGENT_EXIT_FAIL, 1);
        ck_assert_int_eq(AGENT_EXIT_ERROR, 2);
        ck_assert_int_eq(AGENT_EXIT_DECOMMISSIONED, 3);
}
END_TEST

static Suite *agent_suite(void)
{
        Suite *s = suite_create("agent");
        TCase *tc = tcase_create("collectors");
        TCase *oc = tcase_create("outcome");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_facts_from_boot_config_and_cmdline);
        tcase_add_test(tc, test_facts_fall_back_to_proc_config_gz_and_absent);
        tcase_add_test(tc, test_facts_reject_unprintable_and_spoofed_params);
        tcase_add_test(tc, test_imalog_reads_only_new_entries);
        tcase_add_test(tc, test_imalog_leaves_a_partial_entry_and_handles_a_new_boot);
        suite_add_tcase(s, tc);
        tcase_add_test(oc, test_outcome_local_errors_never_reenrol);
        tcase_add_test(oc, test_outcome_http_statuses_and_codes);
        tcase_add_test(oc, test_outcome_code_names_and_exit_statuses);
        suite_add_tcase(s, oc);
        return s;
}

int main(void)
{
        return tu_run(agent_suite());
}
