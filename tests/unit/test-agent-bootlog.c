/* SPDX-License-Identifier: MIT */
/*
 * The agent's firmware event log reader (agent/bootlog.h) and the boot log in the streamed
 * evidence (agent/evout.h): offsets as the challenge names them, the cap, files that are not
 * logs, and evout's bytes equal to evidence_to_json()'s with a log larger than the envelope cap.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/bootlog.h"
#include "agent/evout.h"
#include "agent/imalog.h"
#include "evidence/evjson.h"
#include "tests/unit/testutil.h"

static char tmpdir[] = "/tmp/test-agent-bootlog.XXXXXX";

static const char *at(const char *name)
{
        static char bufs[8][256];
        static int i;
        char *p = bufs[i++ % 8];

        snprintf(p, 256, "%s/%s", tmpdir, name);
        return p;
}

static void put(const char *name, const void *data, size_t len)
{
        FILE *f = fopen(at(name), "wb");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        fclose(f);
}

/* A real firmware log (SeaBIOS, QEMU, tests/data/qemu61-good), read from the offsets a verifier
 * names: 0 (all of it), the middle (the rest), its end (nothing, but sent), past its end (a log
 * of another boot: all of it again, from 0). */
START_TEST(test_bootlog_offsets)
{
        struct attest_err err = {0};
        size_t len, got_len;
        _cleanup_free_ char *log = tu_read("tests/data/qemu61-good/binary_bios_measurements", &len);
        uint64_t from;
        uint8_t *got;

        ck_assert_ptr_nonnull(log);
        ck_assert_uint_gt(len, 1000);
        put("bios", log, len);
        const uint64_t offs[] = {0, 1, 100, len / 2, len - 1, len, len + 1, UINT64_MAX};

        for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
                uint64_t off = offs[i], want = off <= len ? off : 0;

                ck_assert_int_eq(bootlog_read(at("bios"), 0, off, &from, &got, &got_len, &err), 0);
                ck_assert_ptr_nonnull(got);
                ck_assert_uint_eq(from, want);
                ck_assert_uint_eq(got_len, len - want);
                ck_assert(memcmp(got, log + want, got_len) == 0);
                free(got);
        }
}
END_TEST

/* The cap: a log of exactly max bytes is read, one byte more is refused (never cut); outputs are
 * left alone on failure. */
START_TEST(test_bootlog_cap)
{
        struct attest_err err = {0};
        _cleanup_free_ char *big = filled(BOOTLOG_MAX + 1, 'b');
        uint64_t from = 77;
        uint8_t *got = NULL;
        size_t got_len = 5;

        put("small", big, 1000);
        ck_assert_int_eq(bootlog_read(at("small"), 1000, 0, &from, &got, &got_len, &err), 0);
        ck_assert_uint_eq(got_len, 1000);
        free(got);
        got = NULL;
        got_len = 5;
        ck_assert_int_eq(bootlog_read(at("small"), 999, 0, &from, &got, &got_len, &err), -E2BIG);
        ck_assert_ptr_null(got);
        ck_assert_uint_eq(got_len, 5);
        put("max", big, BOOTLOG_MAX);
        ck_assert_int_eq(bootlog_read(at("max"), 0, 0, &from, &got, &got_len, &err), 0);
        ck_assert_uint_eq(got_len, BOOTLOG_MAX);
        free(got);
        got = NULL;
        /* a max over the evidence's cap is the evidence's cap */
        put("over", big, BOOTLOG_MAX + 1);
        ck_assert_int_eq(bootlog_read(at("over"), 4 * BOOTLOG_MAX, 0, &from, &got, &got_len, &err),
                         -E2BIG);
        ck_assert_ptr_null(got);
        ck_assert_int_eq(bootlog_read(at("over"), 0, BOOTLOG_MAX, &from, &got, &got_len, &err),
                         -E2BIG);
}
END_TEST

/* No log (no TPM, no firmware log): -ENOENT, which the round takes as "nothing to send"; a FIFO
 * or a directory in its place is refused before a byte is read (no hang). */
START_TEST(test_bootlog_not_a_log)
{
        struct attest_err err = {0};
        uint64_t from;
        uint8_t *got = NULL;
        size_t got_len;

        ck_assert_int_eq(bootlog_read(at("absent"), 0, 0, &from, &got, &got_len, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err.msg, "absent"));
        ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
        ck_assert_int_eq(bootlog_read(at("fifo"), 0, 0, &from, &got, &got_len, &err), -EINVAL);
        ck_assert_int_eq(bootlog_read(tmpdir, 0, 0, &from, &got, &got_len, &err), -EINVAL);
        ck_assert_ptr_null(got);
}
END_TEST

/* Everything an evout produces, in reads of n bytes. */
static char *evout_all(const struct evidence *ev, const struct imalog *l,
                       const struct imalog_span *sp, size_t n)
{
        struct attest_err err = {0};
        struct evout o;
        char *buf;
        size_t len = 0;
        ssize_t r;

        ck_assert_msg(evout_open(&o, ev, l, sp, &err) == 0, "%s", err.msg);
        buf = malloc(evout_size(&o) + 1);
        ck_assert_ptr_nonnull(buf);
        while ((r = evout_read(&o, (uint8_t *)buf + len, n, &err)) > 0)
                len += (size_t)r;
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(len, evout_size(&o));
        evout_close(&o);
        buf[len] = '\0';
        return buf;
}

/* The streamed evidence with a boot log is evidence_to_json()'s, byte for byte, and reads back
 * with the same log: a real one, an empty one (sent, nothing new), and one of 600 KiB, far over
 * the envelope's EVIDENCE_HEAD_MAX (the head's writer is sized for the log it carries). */
START_TEST(test_evout_boot_log)
{
        struct attest_err err = {0};
        size_t real_len;
        _cleanup_free_ char *real =
                tu_read("tests/data/qemu61-good/binary_bios_measurements", &real_len);
        _cleanup_free_ char *big = filled(600 * 1024, 'x');
        struct imalog_span sp;
        struct imalog l;
        uint8_t attest[100] = {1}, sig[64] = {2};

        ck_assert_ptr_nonnull(real);
        put("ima", "", 0);
        imalog_init(&l, at("ima"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_scan(&l, 0, &sp, &err), 0);
        for (int variant = 0; variant < 3; variant++) {
                struct evidence ev = {0}, *back = NULL;
                _cleanup_free_ char *want = NULL, *got = NULL;

                ev.nonce_len = 32;
                ev.attest = attest;
                ev.attest_len = sizeof(attest);
                ev.sig = sig;
                ev.sig_len = sizeof(sig);
                ev.pcrs.have[BANK_SHA256] = 0xff;
                ev.ima_format = IMA_FORMAT_BINARY;
                ev.boot_offset = variant == 1 ? real_len : 0;
                ev.boot_log = (uint8_t *)(variant == 2 ? big : real);
                ev.boot_log_len = variant == 0 ? real_len : variant == 1 ? 0 : 600 * 1024;
                ck_assert_int_eq(evidence_to_json(&ev, &want), 0);
                got = evout_all(&ev, &l, &sp, 4093);
                ck_assert_msg(strcmp(got, want) == 0, "variant %d", variant);
                ck_assert_msg(evidence_from_json(got, strlen(got), 16u << 20, &back, &err) == 0,
                              "%s", err.msg);
                ck_assert_ptr_nonnull(back->boot_log);
                ck_assert_uint_eq(back->boot_offset, ev.boot_offset);
                ck_assert_uint_eq(back->boot_log_len, ev.boot_log_len);
                ck_assert(memcmp(back->boot_log, ev.boot_log, ev.boot_log_len) == 0);
                evidence_free(back);
        }
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

int main(void)
{
        Suite *s = suite_create("agent-bootlog");
        TCase *tc = tcase_create("bootlog");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_bootlog_offsets);
        tcase_add_test(tc, test_bootlog_cap);
        tcase_add_test(tc, test_bootlog_not_a_log);
        tcase_add_test(tc, test_evout_boot_log);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
