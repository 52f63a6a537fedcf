/* SPDX-License-Identifier: MIT */
/*
 * The verification pipeline with real TPM quotes: runs under tests/lib/swtpm-run (a fresh swtpm),
 * extends PCR 10 with the template hashes of the real logs in tests/data with tpm2_pcrextend,
 * quotes with tpm2_quote, and checks what verify_evidence accepts and rejects. Each test starts
 * with a TPM reset (swtpm_ioctl -i, TPM2_Startup(CLEAR)): PCRs zero, resetCount + 1.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>

#include "evidence/evjson.h"
#include "util/hex.h"
#include "tests/lib/imagen.h"
#include "tests/unit/testutil.h"
#include "verify/verify.h"

#define AK_HANDLE "0x81010002"
#define SEL_TOOLS "sha256:0,1,2,3,4,5,6,7,8,9,10+sha1:10"
#define SEL "sha256:0-10+sha1:10"

static char tmpdir[256];
static const char *quote_sel = SEL_TOOLS; /* what quote_ev asks tpm2_quote for */
static struct pcr_sel sel;                /* what verify() asks verify_evidence for */

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...)
{
        char cmd[16384];
        va_list ap;
        int rc;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        rc = system(cmd);
        ck_assert_msg(rc == 0, "command failed (%d): %.200s", rc, cmd);
}

static void tpm_reset(void)
{
        const char *port = getenv("SWTPM_CTRL_PORT");

        ck_assert_msg(port != NULL, "not running under tests/lib/swtpm-run");
        /* an orderly reboot: without TPM2_Shutdown the TPM counts a DA failure */
        sh("tpm2_shutdown -c && swtpm_ioctl --tcp 127.0.0.1:%s -i && tpm2_startup -c", port);
}

/* A binary log with its entry boundaries and per-entry extend digests. */
struct log {
        uint8_t *buf;
        size_t len;
        size_t n;
        size_t off[64]; /* off[i]: byte where entry i starts; off[n] == len */
        uint32_t pcr[64];
        uint8_t sha1[64][20], sha256[64][32];
        unsigned n_selinux; /* selinux-state entries on PCR 10 */
};

static void log_index(struct log *l)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct hasher *h;
        struct attest_err err = {0};
        int x;

        ck_assert_int_eq(hasher_new(&h), 0);
        ima_reader_init_binary(&rd, l->buf, l->len, NULL);
        l->n = 0;
        l->n_selinux = 0;
        l->off[0] = 0;
        while ((x = ima_reader_next(&rd, &e, &err)) > 0) {
                ck_assert_uint_lt(l->n, 63);
                l->pcr[l->n] = e.pcr;
                if (e.pcr == IMA_PCR && cdata_kind_of(&e) == CDATA_SELINUX_STATE)
                        l->n_selinux++;
                if (e.violation) {
                        memset(l->sha1[l->n], 0xff, 20);
                        memset(l->sha256[l->n], 0xff, 32);
                } else {
                        memcpy(l->sha1[l->n], e.sha1, 20);
                        ck_assert_int_eq(ima_tmpl_hash(h, BANK_SHA256, &e, l->sha256[l->n]), 0);
                }
                l->n++;
                l->off[l->n] = rd_offset(&rd.r);
        }
        ck_assert_msg(x == 0, "%s", err.msg);
        ima_reader_done(&rd);
        hasher_free(h);
}

static void log_load(struct log *l, const char *boot)
{
        char rel[256];

        snprintf(rel, sizeof(rel), "tests/data/%s/binary_runtime_measurements", boot);
        l->buf = (uint8_t *)tu_read(rel, &l->len);
        ck_assert_ptr_nonnull(l->buf);
        log_index(l);
}

/* What the kernel does: extend entries [from, to) into the TPM. */
static void tpm_extend(const struct log *l, size_t from, size_t to)
{
        char cmd[16384] = "tpm2_pcrextend";
        size_t o = strlen(cmd);

        if (from >= to)
                return;
        for (size_t i = from; i < to; i++) {
                char a[41], b[65];

                hex_encode(l->sha1[i], 20, a);
                hex_encode(l->sha256[i], 32, b);
                o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " %u:sha1=%s,sha256=%s", l->pcr[i],
                                      a, b);
                ck_assert_uint_lt(o, sizeof(cmd) - 1);
        }
        sh("%s >/dev/null", cmd);
}

static uint8_t *slurp(const char *path, size_t *len)
{
        uint8_t *p = (uint8_t *)tu_read(path, len);

        ck_assert_msg(p != NULL, "cannot read %s", path);
        return p;
}

/* Quote with nonce and read the PCRs: a new evidence with the log bytes [from, to). */
static struct evidence *quote_ev(const struct log *l, size_t from, size_t to, uint8_t nonce_byte)
{
        struct evidence *ev = calloc(1, sizeof(*ev));
        char nonce[65], path[512];
        struct attest_err err = {0};
        size_t n;
        char *y;

        ck_assert_ptr_nonnull(ev);
        ev->nonce_len = 32;
        memset(ev->nonce, nonce_byte, 32);
        hex_encode(ev->nonce, 32, nonce);
        sh("tpm2_quote -c %s -l %s -q %s -m %s/q.attest -s %s/q.sig -g sha256 >/dev/null && "
           "tpm2_pcrread %s >%s/q.pcrs",
           AK_HANDLE, quote_sel, nonce, tmpdir, tmpdir, quote_sel, tmpdir);
        snprintf(path, sizeof(path), "%s/q.attest", tmpdir);
        ev->attest = slurp(path, &ev->attest_len);
        snprintf(path, sizeof(path), "%s/q.sig", tmpdir);
        ev->sig = slurp(path, &ev->sig_len);
        snprintf(path, sizeof(path), "%s/q.pcrs", tmpdir);
        y = (char *)slurp(path, &n);
        ck_assert_msg(pcrs_parse(y, n, &ev->pcrs, &err) == 0, "%s", err.msg);
        free(y);
        ev->ima_format = IMA_FORMAT_BINARY;
        ev->ima_offset = from;
        if (l) {
                ev->ima_len = l->off[to] - l->off[from];
                ev->ima = malloc(ev->ima_len + 1);
                memcpy(ev->ima, l->buf + l->off[from], ev->ima_len);
        }
        return ev;
}

/* Replace the log bytes of ev with buf. */
static void ev_set_log(struct evidence *ev, const uint8_t *buf, size_t len)
{
        free(ev->ima);
        ev->ima = malloc(len + 1);
        memcpy(ev->ima, buf, len);
        ev->ima_len = len;
}

static struct quote_ak *load_ak(void)
{
        char path[512];
        struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        size_t n;
        uint8_t *p;

        snprintf(path, sizeof(path), "%s/ak.pub", tmpdir);
        p = slurp(path, &n);
        ck_assert_msg(quote_ak_parse(p, n, &ak, &err) == 0, "%s", err.msg);
        free(p);
        return ak;
}

static int verify_obs(const struct quote_ak *ak, const struct evidence *ev,
                      const struct replay_state *prev, const struct verify_observer *obs,
                      struct verify_result *r, struct attest_err *err)
{
        struct verify_input in = {
                .ak = ak,
                .nonce = ev->nonce,
                .nonce_len = ev->nonce_len,
                .sel = &sel,
                .prev = prev,
                .observer = obs,
        };

        memset(err, 0, sizeof(*err));
        return verify_evidence(&in, ev, r, err);
}

static int verify(const struct quote_ak *ak, const struct evidence *ev,
                  const struct replay_state *prev, struct verify_result *r, struct attest_err *err)
{
        return verify_obs(ak, ev, prev, NULL, r, err);
}

/* An observer that records what verify showed it: begins, and whether the entries were the
 * accepted ones in log order */
struct seen {
        unsigned begins;
        uint64_t first, next, entries;
        bool in_order;
};

static int seen_begin(void *arg, uint64_t first)
{
        struct seen *s = arg;

        s->begins++;
        s->first = s->next = first;
        s->entries = 0;
        s->in_order = true;
        return 0;
}

static int seen_entry(void *arg, const struct ima_entry *e, uint64_t idx)
{
        struct seen *s = arg;

        (void)e;
        s->in_order = s->in_order && s->begins == 1 && idx == s->next;
        s->next = idx + 1;
        s->entries++;
        return 0;
}

static void expect_fail(const struct quote_ak *ak, const struct evidence *ev,
                        const struct replay_state *prev, int e, enum attest_code code)
{
        static struct verify_result r, canary; /* 31 KiB each */
        struct attest_err err;
        int x;

        memset(&r, 0x5a, sizeof(r));
        canary = r;
        x = verify(ak, ev, prev, &r, &err);
        ck_assert_msg(x == e, "want %d %s, got %d (%s: %s)", e, attest_code_name(code), x,
                      attest_code_name(err.code), err.msg);
        ck_assert_msg(err.code == code, "want %s, got %s: %s", attest_code_name(code),
                      attest_code_name(err.code), err.msg);
        /* a failure writes nothing of the result */
        ck_assert(memcmp(&r, &canary, sizeof(r)) == 0);
}

START_TEST(test_real_log_passes_with_real_quote)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 1);

        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, l.n);
        ck_assert_uint_eq(r.extra_entries, 0);
        ck_assert(!r.rebooted);
        ck_assert(r.next.valid);
        ck_assert_uint_eq(r.next.entries, l.n);
        ck_assert_uint_eq(r.next.reset_count, r.quote.reset_count);
        ck_assert_uint_eq(r.next.clock, r.quote.clock);
        /* replayed PCR 10 is the TPM's */
        ck_assert_mem_eq(r.next.pcr[BANK_SHA256][10], ev->pcrs.v[BANK_SHA256][10], 32);
        ck_assert_mem_eq(r.next.pcr[BANK_SHA1][10], ev->pcrs.v[BANK_SHA1][10], 20);
        /* entry 0 is the real boot's boot_aggregate: swtpm's PCRs 0-9 are not that boot's */
        ck_assert(r.boot_aggregate_seen);
        ck_assert(!r.boot_aggregate_ok);
        ck_assert_int_eq(r.boot_aggregate_err.code, AE_IMA_BOOT_AGGREGATE_MISMATCH);
        /* the claims of the log: 4 selinux-state entries, kernel_version, policy hash */
        ck_assert_uint_eq(r.next.claims.history.states, 4);
        ck_assert(r.next.claims.kernel_version_seen);
        ck_assert_uint_eq(r.next.claims.kernel_version_entry, 1);
        ck_assert(r.next.claims.policy_hash_seen);
        ck_assert_uint_eq(r.next.claims.policy_hash_count, 4);
        verify_result_done(&r);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_boot_aggregate_matches_quoted_pcrs)
{
        struct quote_ak *ak = load_ak();
        struct imagen g;
        struct log l = {0};
        struct verify_result r;
        struct attest_err err;
        uint8_t agg[32];
        struct hasher *h;

        tpm_reset();
        /* firmware-like measurements into PCRs 0 and 7 */
        sh("tpm2_pcrextend 0:sha256=%s 7:sha256=%s >/dev/null",
           "11111111111111111111111111111111111111111111111111111111111111ab",
           "22222222222222222222222222222222222222222222222222222222222222cd");
        struct evidence *pre = quote_ev(NULL, 0, 0, 9);
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(hasher_begin(h, BANK_SHA256), 0);
        for (int i = 0; i <= 9; i++)
                ck_assert_int_eq(hasher_update(h, pre->pcrs.v[BANK_SHA256][i], 32), 0);
        ck_assert_int_eq(hasher_end(h, agg), 0);
        hasher_free(h);
        evidence_free(pre);

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", agg, 32, "boot_aggregate"), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", "initialized=1;enforcing=1;", 26), 0);
        l.buf = g.bin;
        l.len = g.bin_len;
        log_index(&l);
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 2);

        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert(r.boot_aggregate_seen);
        ck_assert_msg(r.boot_aggregate_ok, "%s", r.boot_aggregate_err.msg);
        ck_assert_uint_eq(r.new_entries, 2);
        verify_result_done(&r);
        evidence_free(ev);
        imagen_done(&g);
        quote_ak_free(ak);
}
END_TEST

START_TEST(test_recorded_boot_replayed_into_the_tpm_passes_boot_aggregate)
{
        struct quote_ak *ak = load_ak();
        const char *top = getenv("ATTEST_TOP"), *ctl = getenv("ATTESTCTL");
        struct log l;
        struct verify_result r;
        struct attest_err err;

        ck_assert_msg(top && ctl, "ATTEST_TOP and ATTESTCTL must be set");
        tpm_reset();
        /* the firmware event log into PCRs 0-9 and the IMA log into PCR 10, as on the machine */
        sh("%s/tests/lib/replay-boot %s/tests/data/qemu61-good %s >/dev/null", top, top, ctl);
        log_load(&l, "qemu61-good");
        struct evidence *ev = quote_ev(&l, 0, l.n, 60);
        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert(r.boot_aggregate_seen);
        ck_assert_msg(r.boot_aggregate_ok, "%s", r.boot_aggregate_err.msg);
        ck_assert_uint_eq(r.new_entries, l.n);
        verify_result_done(&r);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_claims_come_only_from_pcr10_entries)
{
        struct quote_ak *ak = load_ak();
        struct imagen g;
        struct log l = {0};
        struct verify_result r;
        struct attest_err err;

        tpm_reset();
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", "initialized=1;enforcing=1;", 26), 0);
        /* PCR 11 is not checked against the log: what it claims is not anchored */
        ck_assert_int_eq(imagen_buf(&g, 11, "selinux-state", "initialized=1;enforcing=0;", 26), 0);
        ck_assert_int_eq(imagen_buf(&g, 11, "kernel_version", "9.9.9", 5), 0);
        /* (the shortest matching prefix would end before trailing PCR 11 entries) */
        ck_assert_int_eq(imagen_buf(&g, 10, "selinux-state", "initialized=1;enforcing=1;", 26), 0);
        l.buf = g.bin;
        l.len = g.bin_len;
        log_index(&l);
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 80);

        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, 4);
        ck_assert_uint_eq(r.next.claims.history.states, 2);
        ck_assert_uint_eq(r.next.claims.history.first_enforcing, 0);
        ck_assert_uint_eq(r.next.claims.selinux.entry, 3);
        ck_assert(!r.next.claims.kernel_version_seen);
        ck_assert(!r.boot_aggregate_seen);
        verify_result_done(&r);
        evidence_free(ev);
        imagen_done(&g);
        quote_ak_free(ak);
}
END_TEST

START_TEST(test_every_recorded_boot_verifies_in_all_banks)
{
        struct quote_ak *ak = load_ak();
        const char *top = getenv("ATTEST_TOP"), *ctl = getenv("ATTESTCTL");
        char **boots = tu_boots();
        unsigned n = 0;

        ck_assert_msg(top && ctl, "ATTEST_TOP and ATTESTCTL must be set");
        quote_sel = "sha1:0,1,2,3,4,5,6,7,8,9,10+sha256:0,1,2,3,4,5,6,7,8,9,10+"
                    "sha384:0,1,2,3,4,5,6,7,8,9,10+sha512:0,1,2,3,4,5,6,7,8,9,10";
        ck_assert_int_eq(pcr_sel_parse("sha1:0-10+sha256:0-10+sha384:0-10+sha512:0-10", &sel), 0);
        for (size_t i = 0; boots[i]; i++) {
                struct log l;
                struct verify_result r;
                struct attest_err err;

                tpm_reset();
                sh("%s/tests/lib/replay-boot %s/tests/data/%s %s >/dev/null", top, top, boots[i],
                   ctl);
                log_load(&l, boots[i]);
                struct evidence *ev = quote_ev(&l, 0, l.n, (uint8_t)(90 + i));
                ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s: %s", boots[i],
                              attest_code_name(err.code), err.msg);
                ck_assert_uint_eq(r.new_entries, l.n);
                ck_assert_uint_eq(r.next.banks, BANK_MASK_ALL);
                ck_assert_msg(r.boot_aggregate_seen && r.boot_aggregate_ok, "%s: %s", boots[i],
                              r.boot_aggregate_err.msg);
                ck_assert_uint_eq(r.next.claims.history.states, l.n_selinux);
                verify_result_done(&r);
                evidence_free(ev);
                free(l.buf);
                n++;
        }
        ck_assert_uint_ge(n, 6);
        quote_sel = SEL_TOOLS;
        ck_assert_int_eq(pcr_sel_parse(SEL, &sel), 0);
        tu_boots_free(boots);
        quote_ak_free(ak);
}
END_TEST

/* Entry i's bytes, for rebuilding logs. */
static void put_entry(uint8_t *out, size_t *o, const struct log *l, size_t i)
{
        memcpy(out + *o, l->buf + l->off[i], l->off[i + 1] - l->off[i]);
        *o += l->off[i + 1] - l->off[i];
}

START_TEST(test_tampered_entry_is_rejected)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct hasher *h;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 3);
        /* entry 2 (/init): flip the last byte of its file digest */
        uint8_t *t = malloc(l.len);
        memcpy(t, l.buf, l.len);
        size_t name_len = t[l.off[2] + 24] | (size_t)t[l.off[2] + 25] << 8;
        size_t data = l.off[2] + 28 + name_len + 4;
        size_t data_len = l.off[3] - data;
        t[data + 4 + 7 + 31] ^= 1; /* d-ng: u32 len, "sha256:\0", 32 bytes */
        ev_set_log(ev, t, l.len);
        /* the logged sha1 template hash no longer matches the data */
        expect_fail(ak, ev, NULL, -EBADMSG, AE_IMA_SHA1_MISMATCH);
        /* a forger who fixes the logged sha1 too is caught by the replay */
        ck_assert_int_eq(hasher_new(&h), 0);
        ck_assert_int_eq(hasher_digest(h, BANK_SHA1, t + data, data_len, t + l.off[2] + 4), 0);
        hasher_free(h);
        ev_set_log(ev, t, l.len);
        expect_fail(ak, ev, NULL, -ESTALE, AE_IMA_REPLAY_MISMATCH);
        free(t);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_deleted_and_reordered_entries_are_rejected)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        size_t o = 0;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 4);
        uint8_t *t = malloc(l.len);

        /* entry 5 (the first selinux-state, enforcing=0) deleted */
        for (size_t i = 0; i < l.n; i++)
                if (i != 5)
                        put_entry(t, &o, &l, i);
        ev_set_log(ev, t, o);
        expect_fail(ak, ev, NULL, -ESTALE, AE_IMA_REPLAY_MISMATCH);
        /* entries 5 and 7 swapped (the permissive and the enforcing selinux-state) */
        o = 0;
        for (size_t i = 0; i < l.n; i++)
                put_entry(t, &o, &l, i == 5 ? 7 : i == 7 ? 5 : i);
        ck_assert_uint_eq(o, l.len);
        ev_set_log(ev, t, o);
        expect_fail(ak, ev, NULL, -ESTALE, AE_IMA_REPLAY_MISMATCH);
        /* the last entry dropped: the quoted value is never reached */
        ev_set_log(ev, l.buf, l.off[l.n - 1]);
        expect_fail(ak, ev, NULL, -ESTALE, AE_IMA_REPLAY_MISMATCH);
        free(t);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_wrong_nonce_is_rejected)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err;
        uint8_t other[32];

        tpm_reset();
        log_load(&l, "qemu61-good");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 5);
        struct verify_input in = {.ak = ak, .nonce = other, .nonce_len = 32, .sel = &sel};

        /* the verifier asked for another nonce: the evidence names its own */
        memset(other, 6, sizeof(other));
        ck_assert_int_eq(verify_evidence(&in, ev, &r, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_EVIDENCE_NONCE_MISMATCH);
        /* an old quote sent with the new nonce in the JSON: the quote's extraData differs */
        memcpy(ev->nonce, other, 32);
        ck_assert_int_eq(verify_evidence(&in, ev, &r, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_QUOTE_NONCE);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_pcr_values_that_differ_from_the_quote_are_rejected)
{
        struct quote_ak *ak = load_ak();
        struct log l;

        tpm_reset();
        log_load(&l, "qemu61-good");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 7);

        ev->pcrs.v[BANK_SHA256][10][0] ^= 1;
        expect_fail(ak, ev, NULL, -EKEYREJECTED, AE_QUOTE_PCR_DIGEST);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_log_grown_after_quote_is_accepted_at_the_prefix)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r, r2;
        struct attest_err err;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, l.n - 3);
        /* quoted before the last 3 entries were extended, the log read after */
        struct evidence *ev = quote_ev(&l, 0, l.n, 8);
        tpm_extend(&l, l.n - 3, l.n);

        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, l.n - 3);
        ck_assert_uint_eq(r.extra_entries, 3);
        ck_assert_uint_eq(r.next.entries, l.n - 3);
        /* the claims stop at the prefix: the last selinux-state (entry 18) is not in */
        ck_assert_uint_eq(r.next.claims.history.states, 3);
        /* the next round sends the rest again and the state catches up */
        struct evidence *ev2 = quote_ev(&l, l.n - 3, l.n, 9);
        ck_assert_msg(verify(ak, ev2, &r.next, &r2, &err) == 0, "%s: %s",
                      attest_code_name(err.code), err.msg);
        ck_assert_uint_eq(r2.new_entries, 3);
        ck_assert_uint_eq(r2.next.entries, l.n);
        ck_assert_uint_eq(r2.next.claims.history.states, 4);
        ck_assert_uint_eq(r2.next.claims.selinux.entry, 18);
        verify_result_done(&r);
        verify_result_done(&r2);
        evidence_free(ev);
        evidence_free(ev2);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

/* The state as the daemon would persist it: through its stored (binary) form. */
static void persist(struct replay_state *s)
{
        struct replay_state back;
        struct attest_err err = {0};
        uint8_t *b = NULL, *b2 = NULL;
        size_t n = 0, n2 = 0;

        ck_assert_int_eq(replay_state_encode(s, NULL, 0, &b, &n), 0);
        ck_assert_msg(replay_state_decode(b, n, &back, NULL, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(replay_state_encode(&back, NULL, 0, &b2, &n2), 0);
        ck_assert_uint_eq(n, n2);
        ck_assert_mem_eq(b, b2, n);
        *s = back;
        free(b);
        free(b2);
}

START_TEST(test_incremental_rounds_replay_only_new_entries)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct replay_state st;
        struct attest_err err;
        size_t cut[4];
        struct seen seen;
        const struct verify_observer obs = {.begin = seen_begin, .entry = seen_entry, .arg = &seen};

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        cut[0] = 0;
        cut[1] = l.n / 3;
        cut[2] = 2 * l.n / 3;
        cut[3] = l.n;
        replay_state_init(&st);
        for (int round = 0; round < 3; round++) {
                struct verify_result r;

                tpm_extend(&l, cut[round], cut[round + 1]);
                /* only the new entries are sent: a replay from entry 0 could not match */
                struct evidence *ev =
                        quote_ev(&l, cut[round], cut[round + 1], (uint8_t)(20 + round));
                seen = (struct seen){0};
                memset(&r, 0x5a, sizeof(r));
                ck_assert_msg(verify_obs(ak, ev, &st, &obs, &r, &err) == 0, "round %d: %s: %s",
                              round, attest_code_name(err.code), err.msg);
                /* the observer saw this round's entries only, numbered since boot */
                ck_assert_uint_eq(seen.begins, 1);
                ck_assert_uint_eq(seen.first, cut[round]);
                ck_assert_uint_eq(seen.entries, cut[round + 1] - cut[round]);
                ck_assert(seen.in_order);
                ck_assert_uint_eq(r.new_entries, cut[round + 1] - cut[round]);
                ck_assert_uint_eq(r.next.entries, cut[round + 1]);
                ck_assert(!r.rebooted);
                ck_assert_mem_eq(r.next.pcr[BANK_SHA256][10], ev->pcrs.v[BANK_SHA256][10], 32);
                if (round > 0) {
                        /* a stale offset (the previous round's) is refused */
                        ev->ima_offset = cut[round - 1];
                        expect_fail(ak, ev, &st, -ESTALE, AE_IMA_OFFSET_MISMATCH);
                        /* and the same entries without the stored state cannot match */
                        ev->ima_offset = 0;
                        expect_fail(ak, ev, NULL, -ESTALE, AE_IMA_REPLAY_MISMATCH);
                }
                st = r.next;
                persist(&st);
                evidence_free(ev);
        }
        ck_assert_uint_eq(st.entries, l.n);
        ck_assert_uint_eq(st.claims.history.states, 4);
        ck_assert(st.boot_aggregate_seen);
        ck_assert(st.claims.kernel_version_seen);
        /* a round with nothing new: an empty log is accepted at zero entries */
        struct verify_result r0;
        struct evidence *ev0 = quote_ev(&l, l.n, l.n, 29);
        ck_assert_uint_eq(ev0->ima_len, 0);
        ck_assert_msg(verify(ak, ev0, &st, &r0, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r0.new_entries, 0);
        ck_assert_uint_eq(r0.next.entries, l.n);
        ck_assert_uint_eq(r0.next.claims.history.states, 4);
        verify_result_done(&r0);
        evidence_free(ev0);
        /* but PCR 10 moved on and the agent sends nothing: withheld entries are caught */
        sh("tpm2_pcrextend 10:sha256=%s,sha1=%s >/dev/null",
           "00000000000000000000000000000000000000000000000000000000000000aa",
           "00000000000000000000000000000000000000bb");
        ev0 = quote_ev(&l, l.n, l.n, 28);
        expect_fail(ak, ev0, &st, -ESTALE, AE_IMA_REPLAY_MISMATCH);
        evidence_free(ev0);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_reboot_restarts_replay_from_entry_zero)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r, r2;
        struct attest_err err;

        tpm_reset();
        log_load(&l, "qemu61-good");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 30);
        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);

        /* reboot: PCRs cleared, resetCount + 1; the new boot logs the same entries again */
        tpm_reset();
        tpm_extend(&l, 0, l.n);
        struct evidence *ev2 = quote_ev(&l, l.n, l.n, 31);
        /* the agent did not know yet and sent from the old count */
        expect_fail(ak, ev2, &r.next, -ESTALE, AE_IMA_OFFSET_REBOOT);
        evidence_free(ev2);
        ev2 = quote_ev(&l, 0, l.n, 32);
        struct seen seen = {0};
        const struct verify_observer obs = {.begin = seen_begin, .entry = seen_entry, .arg = &seen};
        ck_assert_msg(verify_obs(ak, ev2, &r.next, &obs, &r2, &err) == 0, "%s: %s",
                      attest_code_name(err.code), err.msg);
        ck_assert(r2.rebooted);
        /* the observer is told the boot's log starts again: begin(0), then every entry */
        ck_assert_uint_eq(seen.begins, 1);
        ck_assert_uint_eq(seen.first, 0);
        ck_assert_uint_eq(seen.entries, l.n);
        ck_assert(seen.in_order);
        ck_assert_uint_eq(r2.quote.reset_count, r.quote.reset_count + 1);
        ck_assert_uint_eq(r2.new_entries, l.n);
        ck_assert_uint_eq(r2.next.entries, l.n);
        ck_assert_uint_eq(r2.next.claims.history.states, r.next.claims.history.states);
        verify_result_done(&r);
        verify_result_done(&r2);
        evidence_free(ev);
        evidence_free(ev2);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_offset_mismatch_and_clock_rewind)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, 10);
        struct evidence *ev = quote_ev(&l, 0, 10, 40);
        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        tpm_extend(&l, 10, l.n);
        struct evidence *ev2 = quote_ev(&l, 10, l.n, 41);

        /* no stored state, but entries from 10 */
        expect_fail(ak, ev2, NULL, -ESTALE, AE_IMA_OFFSET_MISMATCH);
        /* stored 10 entries, offset 9 or 11 */
        ev2->ima_offset = 9;
        expect_fail(ak, ev2, &r.next, -ESTALE, AE_IMA_OFFSET_MISMATCH);
        ev2->ima_offset = 11;
        expect_fail(ak, ev2, &r.next, -ESTALE, AE_IMA_OFFSET_MISMATCH);
        ev2->ima_offset = 10;
        /* the stored clock is ahead of the new quote's: an old quote, or a rewound TPM */
        r.next.clock += 3600 * 1000;
        expect_fail(ak, ev2, &r.next, -ESTALE, AE_QUOTE_CLOCK_REWIND);
        r.next.clock -= 3600 * 1000;
        struct verify_result r2;
        ck_assert_msg(verify(ak, ev2, &r.next, &r2, &err) == 0, "%s: %s",
                      attest_code_name(err.code), err.msg);
        ck_assert_uint_eq(r2.new_entries, l.n - 10);
        verify_result_done(&r);
        verify_result_done(&r2);
        evidence_free(ev);
        evidence_free(ev2);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_replay_keeps_to_the_quoted_banks)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err;

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, 10);
        quote_sel = "sha256:0,1,2,3,4,5,6,7,8,9,10";
        ck_assert_int_eq(pcr_sel_parse("sha256:0-10", &sel), 0);
        struct evidence *ev = quote_ev(&l, 0, 10, 70);
        ck_assert_msg(verify(ak, ev, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.next.banks, BANK_MASK(BANK_SHA256));
        persist(&r.next);
        ck_assert_uint_eq(r.next.banks, BANK_MASK(BANK_SHA256));
        /* the next quote covers sha1 PCR 10 too: the state cannot vouch for it */
        tpm_extend(&l, 10, l.n);
        quote_sel = SEL_TOOLS;
        ck_assert_int_eq(pcr_sel_parse(SEL, &sel), 0);
        struct evidence *ev2 = quote_ev(&l, 10, l.n, 71);
        expect_fail(ak, ev2, &r.next, -ESTALE, AE_IMA_BANK_UNTRACKED);
        /* from entry 0 without state both banks are replayed and checked */
        evidence_free(ev2);
        ev2 = quote_ev(&l, 0, l.n, 72);
        struct verify_result r2;
        ck_assert_msg(verify(ak, ev2, NULL, &r2, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r2.next.banks, BANK_MASK(BANK_SHA256) | BANK_MASK(BANK_SHA1));
        ck_assert_mem_eq(r2.next.pcr[BANK_SHA1][10], ev2->pcrs.v[BANK_SHA1][10], 20);
        verify_result_done(&r);
        verify_result_done(&r2);
        evidence_free(ev);
        evidence_free(ev2);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_entries_cap_per_submission)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err = {0};

        tpm_reset();
        log_load(&l, "qemu61-tcb");
        tpm_extend(&l, 0, 5);
        /* quoted after 5 entries, 20 sent */
        struct evidence *ev = quote_ev(&l, 0, l.n, 75);
        struct verify_input in = {.ak = ak, .nonce = ev->nonce, .nonce_len = 32, .sel = &sel};

        in.max_entries = 4;
        ck_assert_int_eq(verify_evidence(&in, ev, &r, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_TOO_MANY_ENTRIES);
        /* the cap bounds what is replayed, not what is sent after the matching prefix */
        in.max_entries = 5;
        ck_assert_msg(verify_evidence(&in, ev, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, 5);
        verify_result_done(&r);
        evidence_free(ev);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

START_TEST(test_evidence_survives_its_json_form)
{
        struct quote_ak *ak = load_ak();
        struct log l;
        struct verify_result r;
        struct attest_err err = {0};
        struct evidence *back = NULL;
        char *j = NULL;

        tpm_reset();
        log_load(&l, "qemu61-good");
        tpm_extend(&l, 0, l.n);
        struct evidence *ev = quote_ev(&l, 0, l.n, 50);
        ck_assert_int_eq(evidence_to_json(ev, &j), 0);
        ck_assert_msg(evidence_from_json(j, strlen(j), 1 << 20, &back, &err) == 0, "%s", err.msg);
        ck_assert_msg(verify(ak, back, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, l.n);
        verify_result_done(&r);
        /* the same boot's ascii log verifies against the same quote */
        size_t alen;
        uint8_t *asc =
                (uint8_t *)tu_read("tests/data/qemu61-good/ascii_runtime_measurements", &alen);
        ck_assert_ptr_nonnull(asc);
        ev_set_log(back, asc, alen);
        back->ima_format = IMA_FORMAT_ASCII;
        ck_assert_msg(verify(ak, back, NULL, &r, &err) == 0, "%s: %s", attest_code_name(err.code),
                      err.msg);
        ck_assert_uint_eq(r.new_entries, l.n);
        ck_assert_uint_eq(r.next.claims.history.states, 2);
        verify_result_done(&r);
        free(asc);
        evidence_free(back);
        evidence_free(ev);
        free(j);
        quote_ak_free(ak);
        free(l.buf);
}
END_TEST

/* Once per run: an EK and an AK, the AK made persistent so it survives the TPM resets. */
static int make_ak(void)
{
        char cmd[2048];

        snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/test-verify.XXXXXX");
        if (!mkdtemp(tmpdir))
                return -errno;
        snprintf(cmd, sizeof(cmd),
                 "cd %s && tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null && "
                 "tpm2_flushcontext -t >/dev/null && "
                 "tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub "
                 ">/dev/null && "
                 "tpm2_flushcontext -t >/dev/null && tpm2_flushcontext -s >/dev/null && "
                 "tpm2_evictcontrol -C o -c ak.ctx %s >/dev/null",
                 tmpdir, AK_HANDLE);
        return system(cmd) == 0 ? 0 : -EIO;
}

int main(void)
{
        Suite *s = suite_create("verify");
        TCase *tc = tcase_create("verify");
        char cmd[512];
        int rc;

        if (!getenv("TPM2TOOLS_TCTI")) {
                fprintf(stderr, "test-verify: run under tests/lib/swtpm-run\n");
                return 1;
        }
        if (pcr_sel_parse(SEL, &sel) < 0 || make_ak() < 0) {
                fprintf(stderr, "test-verify: cannot make the AK\n");
                return 1;
        }
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_real_log_passes_with_real_quote);
        tcase_add_test(tc, test_boot_aggregate_matches_quoted_pcrs);
        tcase_add_test(tc, test_recorded_boot_replayed_into_the_tpm_passes_boot_aggregate);
        tcase_add_test(tc, test_every_recorded_boot_verifies_in_all_banks);
        tcase_add_test(tc, test_claims_come_only_from_pcr10_entries);
        tcase_add_test(tc, test_tampered_entry_is_rejected);
        tcase_add_test(tc, test_deleted_and_reordered_entries_are_rejected);
        tcase_add_test(tc, test_wrong_nonce_is_rejected);
        tcase_add_test(tc, test_pcr_values_that_differ_from_the_quote_are_rejected);
        tcase_add_test(tc, test_log_grown_after_quote_is_accepted_at_the_prefix);
        tcase_add_test(tc, test_incremental_rounds_replay_only_new_entries);
        tcase_add_test(tc, test_reboot_restarts_replay_from_entry_zero);
        tcase_add_test(tc, test_offset_mismatch_and_clock_rewind);
        tcase_add_test(tc, test_replay_keeps_to_the_quoted_banks);
        tcase_add_test(tc, test_entries_cap_per_submission);
        tcase_add_test(tc, test_evidence_survives_its_json_form);
        suite_add_tcase(s, tc);
        rc = tu_run(s);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
        if (system(cmd) != 0)
                rc = 1;
        return rc;
}
