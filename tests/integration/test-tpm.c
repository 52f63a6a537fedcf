/* SPDX-License-Identifier: MIT */
/*
 * agent/tpm against a real software TPM (swtpm), no mocks. Each Check case is one meson test with
 * its own swtpm and fresh state (tests/integration/meson.build runs it under tests/lib/swtpm-run
 * with CK_RUN_CASE); the restart cases start their swtpms themselves. Environment: SWTPM_TCTI,
 * SWTPM_STATE (from swtpm-run), SWTPM_RUN, ATTESTCTL (from meson).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <tss2/tss2_mu.h>

#include "evidence/bank.h"
#include "evidence/credential.h"
#include "util/hex.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"
#include "evidence/quote.h"
#include "tpm/tpm.h"
#include "tests/lib/tool.h"

/* --- helpers ------------------------------------------------------------------------------- */

static const char *env(const char *name)
{
        const char *v = getenv(name);

        ck_assert_msg(v && *v, "%s is not set (run through meson test)", name);
        return v;
}

static struct tpm *open_tpm(void)
{
        struct attest_err err = {0};
        struct tpm *t = NULL;
        int r = tpm_open(env("SWTPM_TCTI"), &t, &err);

        ck_assert_msg(r == 0, "tpm_open: %d %s", r, err.msg);
        return t;
}

static void tmpdir(char *buf, size_t n)
{
        ck_assert_int_lt(snprintf(buf, n, "/tmp/test-tpm.XXXXXX"), (int)n);
        ck_assert_ptr_nonnull(mkdtemp(buf));
}

/* Run argv (PATH searched), stdout into the file out (passed through when out is NULL), stderr
 * passed through; returns the exit status. */
static int run_to(char *const argv[], const char *out)
{
        pid_t pid;
        int st;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;

                if (fd < 0 || dup2(fd, 1) < 0)
                        _exit(126);
                execvp(argv[0], argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(char *const argv[])
{
        return run_to(argv, NULL);
}

/* Run the shell script (its $0: arg0, may be NULL) under a swtpm of its own on the state folder
 * tpmstate (tests/lib/swtpm-run); returns the exit status. */
static int sh_under_swtpm(const char *tpmstate, const char *script, const char *arg0)
{
        char *argv[] = {(char *)env("SWTPM_RUN"),
                        "--state",
                        (char *)tpmstate,
                        "--",
                        "sh",
                        "-c",
                        (char *)script,
                        (char *)arg0,
                        NULL};

        return run(argv);
}

static void rm_rf(const char *dir)
{
        char *argv[] = {"rm", "-rf", (char *)dir, NULL};

        run(argv);
}

static void write_path(const char *path, const void *buf, size_t len)
{
        FILE *f = fopen(path, "wb");

        ck_assert_msg(f, "%s: %s", path, strerror(errno));
        ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

/* Read a whole file into a new buffer; -errno when it cannot be opened. */
static int read_path(const char *path, uint8_t **ret, size_t *ret_len)
{
        *ret = tool_read(path, ret_len);
        return *ret ? 0 : -errno;
}

static void path_join(char *out, size_t n, const char *dir, const char *name)
{
        ck_assert_int_lt(snprintf(out, n, "%s/%s", dir, name), (int)n);
}

/* Read the whole file dir/name into a new buffer (it must exist). */
static void read_in(const char *dir, const char *name, uint8_t **ret, size_t *ret_len)
{
        char path[300];

        path_join(path, sizeof(path), dir, name);
        ck_assert_msg(read_path(path, ret, ret_len) == 0, "%s: %s", path, strerror(errno));
}

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A quote and the PCR values tpm_quote() returned with it. */
struct quote {
        uint8_t *attest, *sig;
        size_t attest_len, sig_len;
        struct pcr_set pcrs;
        uint8_t nonce[32];
};

static void quote_clear(struct quote *q)
{
        free(q->attest);
        free(q->sig);
        memset(q, 0, sizeof(*q));
}

static void do_quote(struct tpm *t, const char *sel_text, struct quote *q)
{
        struct attest_err err = {0};
        struct pcr_sel sel;
        int r;

        memset(q, 0, sizeof(*q));
        ck_assert_int_eq(pcr_sel_parse(sel_text, &sel), 0);
        ck_assert_int_eq(RAND_bytes(q->nonce, sizeof(q->nonce)), 1);
        r = tpm_quote(t, &sel, q->nonce, sizeof(q->nonce), &q->attest, &q->attest_len, &q->sig,
                      &q->sig_len, &q->pcrs, &err);
        ck_assert_msg(r == 0, "tpm_quote: %d %s", r, err.msg);
}

/* quote_verify() (evidence/quote.c, the verifier) on a quote of sel by the AK ak_pub. */
static int verify(const uint8_t *ak_pub, size_t ak_len, const struct quote *q, const char *sel_text,
                  const uint8_t *nonce, struct quote_info *ret_info, struct attest_err *err)
{
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        struct pcr_sel sel;
        int r;

        ck_assert_int_eq(pcr_sel_parse(sel_text, &sel), 0);
        r = quote_ak_parse(ak_pub, ak_len, &ak, err);
        if (r < 0)
                return r;
        return quote_verify(ak, q->attest, q->attest_len, q->sig, q->sig_len, nonce,
                            sizeof(q->nonce), &sel, &q->pcrs, ret_info, err);
}

static void ak_public(struct tpm *t, uint8_t **ret, size_t *ret_len)
{
        ck_assert_int_eq(tpm_ak_public(t, ret, ret_len), 0);
}

static void load_ak(struct tpm *t, const char *dir, enum tpm_key_alg alg)
{
        struct attest_err err = {0};
        int r = tpm_ak_load_or_create(t, dir, alg, &err);

        ck_assert_msg(r == 0, "tpm_ak_load_or_create: %d %s", r, err.msg);
}

/* Run attestctl with args (NULL terminated, at most 14); its stdout must contain every string of
 * want (NULL terminated) and it must exit with rc. */
static void attestctl_expect(const char *const *args, int rc, const char *const *want)
{
        char *argv[16] = {(char *)env("ATTESTCTL")};
        char dir[64], out[96];
        _cleanup_free_ uint8_t *text = NULL;
        size_t len, n = 1;

        for (; args[n - 1]; n++) {
                ck_assert_uint_lt(n, ARRAY_SIZE(argv) - 1);
                argv[n] = (char *)args[n - 1];
        }
        argv[n] = NULL;
        tmpdir(dir, sizeof(dir));
        path_join(out, sizeof(out), dir, "stdout");
        ck_assert_int_eq(run_to(argv, out), rc);
        ck_assert_int_eq(read_path(out, &text, &len), 0);
        for (; want && *want; want++)
                ck_assert_msg(strstr((const char *)text, *want), "'%s' not in output:\n%s", *want,
                              (const char *)text);
        rm_rf(dir);
}

/* --- round trip ---------------------------------------------------------------------------- */

#define SEL_DEFAULT "sha256:0-10+sha1:10"

static void roundtrip(enum tpm_key_alg alg)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        _cleanup_free_ uint8_t *ak_pub = NULL;
        struct attest_err err = {0};
        struct quote_info info;
        struct quote q;
        uint8_t pcr10[32] = {0}, d[32], bad_nonce[32];
        size_t ak_len;
        double t0, total = 0;
        const int runs = 20;

        ck_assert_int_eq(hasher_new(&h), 0);
        t0 = now_ms();
        load_ak(t, NULL, alg);
        printf("%s: EK + AK created and loaded in %.1f ms\n", tpm_key_alg_name(alg), now_ms() - t0);
        ak_public(t, &ak_pub, &ak_len);

        /* PCR 10 (sha256) from zeros, extended with two known digests through Esys_PCR_Extend */
        for (int i = 0; i < 2; i++) {
                const char *data = i == 0 ? "attestd measurement 1" : "attestd measurement 2";

                ck_assert_int_eq(hasher_digest(h, BANK_SHA256, data, strlen(data), d), 0);
                ck_assert_int_eq(tpm_pcr_extend(t, 10, BANK_SHA256, d, &err), 0);
                ck_assert_int_eq(hasher_extend(h, BANK_SHA256, pcr10, d), 0);
        }

        do_quote(t, SEL_DEFAULT, &q);
        ck_assert_uint_eq(q.pcrs.have[BANK_SHA256], 0x7ff);
        ck_assert_uint_eq(q.pcrs.have[BANK_SHA1], 1u << 10);
        ck_assert_int_eq(memcmp(q.pcrs.v[BANK_SHA256][10], pcr10, 32), 0);
        ck_assert_int_eq(verify(ak_pub, ak_len, &q, SEL_DEFAULT, q.nonce, &info, &err), 0);
        ck_assert_uint_eq(info.sig_alg, alg == TPM_KEY_RSA2048 ? TPM2_ALG_RSASSA : TPM2_ALG_ECDSA);
        ck_assert_int_eq(info.hash, BANK_SHA256);

        /* the verifier is not a rubber stamp: other nonce, other PCR value */
        memcpy(bad_nonce, q.nonce, sizeof(bad_nonce));
        bad_nonce[0] ^= 1;
        ck_assert_int_eq(verify(ak_pub, ak_len, &q, SEL_DEFAULT, bad_nonce, NULL, &err), -ESTALE);
        q.pcrs.v[BANK_SHA256][10][0] ^= 1;
        ck_assert_int_eq(verify(ak_pub, ak_len, &q, SEL_DEFAULT, q.nonce, NULL, &err),
                         -EKEYREJECTED);
        quote_clear(&q);

        for (int i = 0; i < runs; i++) {
                t0 = now_ms();
                do_quote(t, SEL_DEFAULT, &q);
                total += now_ms() - t0;
                ck_assert_int_eq(verify(ak_pub, ak_len, &q, SEL_DEFAULT, q.nonce, NULL, &err), 0);
                quote_clear(&q);
        }
        printf("%s: tpm_quote (%s, quote + 2 PCR_Read) mean %.2f ms over %d runs\n",
               tpm_key_alg_name(alg), SEL_DEFAULT, total / runs, runs);
}

START_TEST(test_quote_roundtrip_rsa)
{
        roundtrip(TPM_KEY_RSA2048);
}
END_TEST

START_TEST(test_quote_roundtrip_ecc)
{
        roundtrip(TPM_KEY_ECCP256);
}
END_TEST

/* Every PCR of two banks (48 values, 6+ PCR_Read calls) and a nonce of the maximum size. */
START_TEST(test_quote_all_pcrs_two_banks)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();
        _cleanup_free_ uint8_t *ak_pub = NULL, *attest = NULL, *sig = NULL;
        const char *sel_text = "sha1:0-23+sha256:0-23";
        struct attest_err err = {0};
        struct pcr_sel sel;
        struct pcr_set pcrs;
        uint8_t nonce[TPM_NONCE_MAX + 1];
        size_t ak_len, attest_len, sig_len;

        load_ak(t, NULL, TPM_KEY_RSA2048);
        ak_public(t, &ak_pub, &ak_len);
        ck_assert_int_eq(pcr_sel_parse(sel_text, &sel), 0);
        memset(nonce, 0xa5, sizeof(nonce));
        ck_assert_int_eq(tpm_quote(t, &sel, nonce, TPM_NONCE_MAX, &attest, &attest_len, &sig,
                                   &sig_len, &pcrs, &err),
                         0);
        ck_assert_uint_eq(pcrs.have[BANK_SHA1], 0xffffff);
        ck_assert_uint_eq(pcrs.have[BANK_SHA256], 0xffffff);
        /* PCRs 17-22 are reset to all ones (locality PCRs) on a TPM2 */
        ck_assert_uint_eq(pcrs.v[BANK_SHA256][17][0], 0xff);
        {
                _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;

                ck_assert_int_eq(quote_ak_parse(ak_pub, ak_len, &ak, &err), 0);
                ck_assert_msg(quote_verify(ak, attest, attest_len, sig, sig_len, nonce,
                                           TPM_NONCE_MAX, &sel, &pcrs, NULL, &err) == 0,
                              "%s", err.msg);
        }
        /* bad arguments */
        ck_assert_int_eq(tpm_quote(t, &sel, nonce, TPM_NONCE_MAX + 1, &attest, &attest_len, &sig,
                                   &sig_len, &pcrs, &err),
                         -EINVAL);
        ck_assert_int_eq(
                tpm_quote(t, &sel, nonce, 0, &attest, &attest_len, &sig, &sig_len, &pcrs, &err),
                -EINVAL);
        memset(&sel, 0, sizeof(sel));
        ck_assert_int_eq(
                tpm_quote(t, &sel, nonce, 8, &attest, &attest_len, &sig, &sig_len, &pcrs, &err),
                -EINVAL);
}
END_TEST

/* --- tpm2_checkquote on the files `attestctl tpm quote` writes ------------------------------ */

static void put_le(FILE *f, uint32_t v, int n)
{
        for (int i = 0; i < n; i++)
                ck_assert_int_ne(fputc((int)((v >> (8 * i)) & 0xff), f), EOF);
}

/*
 * The PCR file of tpm2_quote -o (its default "serialized" form), which tpm2_checkquote -f reads
 * (5.4's "values" form with -l fails even on tpm2_quote's own output): TPML_PCR_SELECTION as laid
 * out in memory, little-endian (u32 count, 16 x {u16 hash, u8 sizeofSelect, u8 pcrSelect[4], pad}),
 * then u32 n and n TPML_DIGEST (u32 count, 8 x {u16 size, u8 buffer[64]}) of 8 values each.
 */
static void write_tools_pcrs(const char *path, const struct pcr_set *pcrs)
{
        static const uint8_t zero[64];
        struct pcr_sel sel;
        TPML_PCR_SELECTION l;
        const uint8_t *vals[BANK_COUNT * PCR_COUNT];
        size_t sizes[BANK_COUNT * PCR_COUNT], n = 0;
        FILE *f = fopen(path, "wb");

        ck_assert_ptr_nonnull(f);
        pcr_sel_from_set(pcrs, &sel);
        pcr_sel_to_tpml(&sel, &l);
        put_le(f, l.count, 4);
        for (uint32_t i = 0; i < TPM2_NUM_PCR_BANKS; i++) {
                const TPMS_PCR_SELECTION *s = &l.pcrSelections[i];

                put_le(f, i < l.count ? s->hash : 0, 2);
                put_le(f, i < l.count ? s->sizeofSelect : 0, 1);
                for (int j = 0; j < 4; j++)
                        put_le(f, i < l.count && j < s->sizeofSelect ? s->pcrSelect[j] : 0, 1);
                put_le(f, 0, 1);
        }
        for (uint32_t i = 0; i < l.count; i++) {
                int b = bank_from_tpm_alg(l.pcrSelections[i].hash);

                ck_assert_int_ge(b, 0);
                for (unsigned p = 0; p < PCR_COUNT; p++)
                        if (sel.mask[b] & (1u << p)) {
                                vals[n] = pcrs->v[b][p];
                                sizes[n++] = bank_size(b);
                        }
        }
        put_le(f, (uint32_t)((n + 7) / 8), 4);
        for (size_t k = 0; k < n; k += 8) {
                size_t m = n - k < 8 ? n - k : 8;

                put_le(f, (uint32_t)m, 4);
                for (size_t j = 0; j < 8; j++) {
                        size_t sz = j < m ? sizes[k + j] : 0;

                        put_le(f, (uint32_t)sz, 2);
                        if (sz)
                                ck_assert_uint_eq(fwrite(vals[k + j], 1, sz, f), sz);
                        ck_assert_uint_eq(fwrite(zero, 1, 64 - sz, f), 64 - sz);
                }
        }
        ck_assert_int_eq(fclose(f), 0);
}

static void checkquote(enum tpm_key_alg alg)
{
        char out[64], path[128], pub[128], msg[128], sig[128], bin[128], nonce_hex[65], nonce_c;
        _cleanup_free_ uint8_t *text = NULL;
        const char *tcti = env("SWTPM_TCTI");
        struct attest_err err = {0};
        struct pcr_set pcrs;
        uint8_t nonce[32];
        size_t len;

        tmpdir(out, sizeof(out));
        ck_assert_int_eq(RAND_bytes(nonce, sizeof(nonce)), 1);
        hex_encode(nonce, sizeof(nonce), nonce_hex);
        nonce_c = nonce_hex[0];
        {
                char *argv[] = {(char *)env("ATTESTCTL"),
                                "tpm",
                                "quote",
                                "--tcti",
                                (char *)tcti,
                                "--nonce",
                                nonce_hex,
                                "--out",
                                out,
                                "--alg",
                                (char *)tpm_key_alg_name(alg),
                                "--sel",
                                "sha256:0-10",
                                NULL};

                ck_assert_int_eq(run(argv), 0);
        }
        /* DIR/pcrs parses with evidence/pcrs.h */
        read_in(out, "pcrs", &text, &len);
        ck_assert_msg(pcrs_parse((const char *)text, len, &pcrs, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(pcrs.have[BANK_SHA256], 0x7ff);
        path_join(path, sizeof(path), out, "pcrs");
        path_join(bin, sizeof(bin), out, "pcrs.tools");
        write_tools_pcrs(bin, &pcrs);
        path_join(pub, sizeof(pub), out, "ak.pub");
        path_join(msg, sizeof(msg), out, "attest");
        path_join(sig, sizeof(sig), out, "sig");
        {
                char *argv[] = {
                        "tpm2_checkquote", "-u", pub,       "-m", msg, "-s", sig, "-f", bin, "-g",
                        "sha256",          "-q", nonce_hex, NULL};

                ck_assert_int_eq(run(argv), 0);
                /* and it does refuse another nonce */
                nonce_hex[0] = nonce_c == '0' ? '1' : '0';
                ck_assert_int_ne(run(argv), 0);
        }
        {
                /* the same files through our own CLI verifier */
                char *argv[] = {(char *)env("ATTESTCTL"),
                                "quote",
                                "check",
                                "--ak",
                                pub,
                                "--nonce",
                                nonce_hex,
                                "--attest",
                                msg,
                                "--sig",
                                sig,
                                "--pcrs",
                                path,
                                NULL};

                ck_assert_int_ne(run(argv), 0); /* nonce_hex was altered above */
                nonce_hex[0] = nonce_c;
                ck_assert_int_eq(run(argv), 0);
        }
        rm_rf(out);
}

START_TEST(test_checkquote_accepts_our_quotes_rsa)
{
        checkquote(TPM_KEY_RSA2048);
}
END_TEST

START_TEST(test_checkquote_accepts_our_quotes_ecc)
{
        checkquote(TPM_KEY_ECCP256);
}
END_TEST

/* --- EK ------------------------------------------------------------------------------------ */

static void unmarshal_public(const uint8_t *buf, size_t len, TPM2B_PUBLIC *ret)
{
        size_t off = 0;

        memset(ret, 0, sizeof(*ret));
        ck_assert_int_eq(Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, ret), 0);
        ck_assert_uint_eq(off, len);
}

/* swtpm_setup --create-ek-cert made the RSA EK from the TCG template and certified it: the key in
 * the certificate is the one our template re-creates. */
START_TEST(test_ek_cert_matches_template_rsa)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();
        _cleanup_free_ uint8_t *der = NULL, *pub = NULL;
        struct attest_err err = {0};
        TPM2B_PUBLIC p;
        const unsigned char *q;
        X509 *x;
        EVP_PKEY *k;
        BIGNUM *n = NULL, *e = NULL;
        uint8_t mod[256];
        size_t der_len, pub_len;
        int r;

        r = tpm_ek_cert(t, TPM_KEY_RSA2048, &der, &der_len, &err);
        ck_assert_msg(r == 0, "tpm_ek_cert: %d %s", r, err.msg);
        q = der;
        x = d2i_X509(NULL, &q, (long)der_len);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_eq(q, der + der_len); /* exactly one certificate, no padding */
        k = X509_get0_pubkey(x);
        ck_assert_ptr_nonnull(k);
        ck_assert_int_eq(EVP_PKEY_get_base_id(k), EVP_PKEY_RSA);
        ck_assert_int_eq(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n), 1);
        ck_assert_int_eq(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e), 1);
        ck_assert_int_eq(BN_bn2binpad(n, mod, sizeof(mod)), 256);
        ck_assert(BN_is_word(e, 65537));

        r = tpm_ek_public(t, TPM_KEY_RSA2048, &pub, &pub_len, &err);
        ck_assert_msg(r == 0, "tpm_ek_public: %d %s", r, err.msg);
        unmarshal_public(pub, pub_len, &p);
        ck_assert_uint_eq(p.publicArea.type, TPM2_ALG_RSA);
        ck_assert_uint_eq(p.publicArea.unique.rsa.size, 256);
        ck_assert_int_eq(memcmp(p.publicArea.unique.rsa.buffer, mod, 256), 0);
        BN_free(n);
        BN_free(e);
        X509_free(x);

        /* swtpm 0.7 certifies a P-384 EK at 0x01c00016 (high range); no P-256 one at 0x01c0000a */
        free(TAKE_PTR(der));
        ck_assert_int_eq(tpm_ek_cert(t, TPM_KEY_ECCP256, &der, &der_len, &err), -ENOENT);
        ck_assert_ptr_null(der);

        t = tpm_close(t); /* swtpm serves one connection at a time */
        {
                const char *args[] = {"tpm", "ek", "--tcti", env("SWTPM_TCTI"), NULL};
                const char *want[] = {"rsa: EK certificate (", "issuer:  CN=swtpm-localca",
                                      "ecc: no EK certificate", NULL};

                attestctl_expect(args, 0, want);
        }
}
END_TEST

/* An EC public key from the TPM's x and y (P-256). */
static EVP_PKEY *ec_pkey(const TPMS_ECC_POINT *pt)
{
        uint8_t pub[65];
        OSSL_PARAM params[3];
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        EVP_PKEY *k = NULL;

        ck_assert_ptr_nonnull(ctx);
        ck_assert_uint_eq(pt->x.size, 32);
        ck_assert_uint_eq(pt->y.size, 32);
        pub[0] = 0x04;
        memcpy(pub + 1, pt->x.buffer, 32);
        memcpy(pub + 33, pt->y.buffer, 32);
        params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
        params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub));
        params[2] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
        ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params), 1);
        EVP_PKEY_CTX_free(ctx);
        return k;
}

/*
 * swtpm 0.7 certifies no P-256 EK, so provision one the way a manufacturer would: a certificate for
 * the EK our L-2 template re-creates, larger than TPM2_PT_NV_BUFFER_MAX (1024 on swtpm) and padded
 * in its NV index (0x01c0000a). tpm_ek_cert() reads it in chunks and returns exactly the DER.
 */
START_TEST(test_ek_cert_ecc_read_in_chunks)
{
        _cleanup_free_ uint8_t *pub = NULL, *der = NULL, *got = NULL;
        char dir[64], path[128], size_arg[16], comment[1301];
        struct attest_err err = {0};
        TPM2B_PUBLIC p;
        EVP_PKEY *ek, *ca;
        X509 *x;
        X509_EXTENSION *ext;
        const unsigned char *q;
        size_t pub_len, got_len;
        int der_len;
        uint8_t *w;

        tmpdir(dir, sizeof(dir));
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();

                ck_assert_int_eq(tpm_ek_public(t, TPM_KEY_ECCP256, &pub, &pub_len, &err), 0);
                free(der);
                der = NULL;
                ck_assert_int_eq(tpm_ek_cert(t, TPM_KEY_ECCP256, &der, &got_len, &err), -ENOENT);
        }
        unmarshal_public(pub, pub_len, &p);
        ek = ec_pkey(&p.publicArea.unique.ecc);
        ca = EVP_EC_gen("P-256");
        ck_assert_ptr_nonnull(ca);
        x = X509_new();
        ck_assert_ptr_nonnull(x);
        ck_assert_int_eq(X509_set_version(x, 2), 1);
        ck_assert_int_eq(ASN1_INTEGER_set(X509_get_serialNumber(x), 42), 1);
        ck_assert_ptr_nonnull(X509_gmtime_adj(X509_getm_notBefore(x), 0));
        ck_assert_ptr_nonnull(X509_gmtime_adj(X509_getm_notAfter(x), 3600));
        ck_assert_int_eq(X509_NAME_add_entry_by_txt(X509_get_issuer_name(x), "CN", MBSTRING_ASC,
                                                    (const unsigned char *)"attestd test EK CA", -1,
                                                    -1, 0),
                         1);
        ck_assert_int_eq(X509_set_pubkey(x, ek), 1);
        memset(comment, 'c', sizeof(comment) - 1);
        comment[sizeof(comment) - 1] = '\0';
        ext = X509V3_EXT_conf_nid(NULL, NULL, NID_netscape_comment, comment);
        ck_assert_ptr_nonnull(ext);
        ck_assert_int_eq(X509_add_ext(x, ext, -1), 1);
        X509_EXTENSION_free(ext);
        ck_assert_int_gt(X509_sign(x, ca, EVP_sha256()), 0);
        der_len = i2d_X509(x, NULL);
        ck_assert_int_gt(der_len, 1024); /* more than one NV_Read */
        ck_assert_int_le(der_len + 16, 2048);
        free(der);
        der = malloc((size_t)der_len + 16);
        ck_assert_ptr_nonnull(der);
        w = der;
        ck_assert_int_eq(i2d_X509(x, &w), der_len);
        memset(der + der_len, 0xff, 16); /* NV padding after the certificate */
        X509_free(x);
        EVP_PKEY_free(ca);

        path_join(path, sizeof(path), dir, "ek.crt");
        write_path(path, der, (size_t)der_len + 16);
        snprintf(size_arg, sizeof(size_arg), "%d", der_len + 16);
        {
                char *define[] = {"tpm2_nvdefine",
                                  "0x01c0000a",
                                  "-C",
                                  "o",
                                  "-s",
                                  size_arg,
                                  "-a",
                                  "ownerread|ownerwrite|authread|no_da",
                                  NULL};
                char *write[] = {"tpm2_nvwrite", "0x01c0000a", "-C", "o", "-i", path, NULL};

                ck_assert_int_eq(run(define), 0);
                ck_assert_int_eq(run(write), 0);
        }
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();
                int r = tpm_ek_cert(t, TPM_KEY_ECCP256, &got, &got_len, &err);

                ck_assert_msg(r == 0, "tpm_ek_cert: %d %s", r, err.msg);
        }
        ck_assert_uint_eq(got_len, (size_t)der_len);
        ck_assert_int_eq(memcmp(got, der, got_len), 0);
        q = got;
        x = d2i_X509(NULL, &q, (long)got_len);
        ck_assert_ptr_nonnull(x);
        ck_assert_int_eq(EVP_PKEY_eq(X509_get0_pubkey(x), ek), 1);
        X509_free(x);
        EVP_PKEY_free(ek);
        rm_rf(dir);
}
END_TEST

/* Our templates L-1 / L-2 give byte for byte the EK public that tpm2_createek (which implements
 * the same TCG templates) gets from this TPM: same type, attributes, policy, parameters, key. */
START_TEST(test_ek_public_equals_tpm2_createek)
{
        char dir[64], pub_path[128], ctx_path[128];

        tmpdir(dir, sizeof(dir));
        for (int alg = 0; alg < TPM_KEY_ALG_COUNT; alg++) {
                _cleanup_free_ uint8_t *ours = NULL, *theirs = NULL;
                struct attest_err err = {0};
                size_t ours_len, theirs_len;

                {
                        _cleanup_(tpm_closep) struct tpm *t = open_tpm();

                        ck_assert_int_eq(tpm_ek_public(t, alg, &ours, &ours_len, &err), 0);
                }
                path_join(pub_path, sizeof(pub_path), dir, "ek.pub");
                path_join(ctx_path, sizeof(ctx_path), dir, "ek.ctx");
                {
                        char *argv[] = {"tpm2_createek",
                                        "-G",
                                        (char *)tpm_key_alg_name(alg),
                                        "-c",
                                        ctx_path,
                                        "-u",
                                        pub_path,
                                        NULL};
                        char *flush[] = {"tpm2_flushcontext", "-t", NULL};

                        ck_assert_int_eq(run(argv), 0);
                        ck_assert_int_eq(run(flush), 0);
                }
                ck_assert_int_eq(read_path(pub_path, &theirs, &theirs_len), 0);
                ck_assert_uint_eq(ours_len, theirs_len);
                ck_assert_msg(memcmp(ours, theirs, ours_len) == 0, "%s EK differs",
                              tpm_key_alg_name(alg));
        }
        rm_rf(dir);
}
END_TEST

START_TEST(test_ek_cert_absent)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();

        for (int alg = 0; alg < TPM_KEY_ALG_COUNT; alg++) {
                _cleanup_free_ uint8_t *der = NULL;
                struct attest_err err = {0};
                size_t len = 12345;

                ck_assert_int_eq(tpm_ek_cert(t, alg, &der, &len, &err), -ENOENT);
                ck_assert_ptr_null(der);
                ck_assert_uint_eq(len, 12345);
                ck_assert_int_eq(err.code, AE_TPM_NO_EK_CERT);
                ck_assert_ptr_nonnull(strstr(err.msg, "not defined"));
        }
        t = tpm_close(t);
        {
                const char *args[] = {"tpm", "ek", "--tcti", env("SWTPM_TCTI"), NULL};
                const char *want[] = {"rsa: no EK certificate", "ecc: no EK certificate", NULL};

                attestctl_expect(args, 3, want);
        }
}
END_TEST

START_TEST(test_attestctl_tpm_help_and_usage_errors)
{
        const char *help[] = {"tpm", "--help", NULL};
        const char *quote_help[] = {"tpm", "quote", "--help", NULL};
        const char *ek_help[] = {"tpm", "ek", "-h", NULL};
        const char *bogus[] = {"tpm", "bogus", NULL};
        const char *no_nonce[] = {"tpm",   "quote", "--tcti", env("SWTPM_TCTI"),
                                  "--out", "/tmp",  NULL};
        const char *bad_sel[] = {"tpm",   "quote", "--tcti", env("SWTPM_TCTI"), "--nonce", "00",
                                 "--out", "/tmp",  "--sel",  "sha256:0-99",     NULL};
        const char *want[] = {"attestctl tpm ek", "attestctl tpm quote --nonce HEX --out DIR",
                              "--state DIR", "--sel SEL", NULL};

        attestctl_expect(help, 0, want);
        attestctl_expect(quote_help, 0, want);
        attestctl_expect(ek_help, 0, want);
        attestctl_expect(bogus, 2, NULL);
        attestctl_expect(no_nonce, 2, NULL);
        attestctl_expect(bad_sel, 2, NULL);
}
END_TEST

/* --- AK persistence ------------------------------------------------------------------------ */

START_TEST(test_ak_persists_across_reopen_and_processes)
{
        _cleanup_free_ uint8_t *first = NULL, *second = NULL, *cli = NULL;
        char dir[64], state[96], out[96], path[160], nonce_hex[17];
        size_t first_len, second_len, cli_len;
        struct stat st;

        tmpdir(dir, sizeof(dir));
        path_join(state, sizeof(state), dir, "state"); /* created by the agent */
        path_join(out, sizeof(out), dir, "out");
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();

                load_ak(t, state, TPM_KEY_ECCP256);
                ak_public(t, &first, &first_len);
        }
        ck_assert_int_eq(stat(state, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        path_join(path, sizeof(path), state, TPM_AK_PUB_ECC);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        path_join(path, sizeof(path), state, TPM_AK_PRIV_ECC);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();
                struct quote q;
                struct attest_err err = {0};

                double t0 = now_ms();

                load_ak(t, state, TPM_KEY_ECCP256);
                printf("ecc: saved AK loaded (EK re-created) in %.1f ms\n", now_ms() - t0);
                ak_public(t, &second, &second_len);
                do_quote(t, "sha256:10", &q);
                ck_assert_msg(verify(first, first_len, &q, "sha256:10", q.nonce, NULL, &err) == 0,
                              "%s", err.msg);
                quote_clear(&q);
        }
        ck_assert_uint_eq(first_len, second_len);
        ck_assert_int_eq(memcmp(first, second, first_len), 0);
        /* another process: attestctl with the same state dir */
        hex_encode((const uint8_t *)"\x01\x02\x03\x04\x05\x06\x07\x08", 8, nonce_hex);
        {
                char *argv[] = {(char *)env("ATTESTCTL"),
                                "tpm",
                                "quote",
                                "--tcti",
                                (char *)env("SWTPM_TCTI"),
                                "--alg",
                                "ecc",
                                "--state",
                                state,
                                "--nonce",
                                nonce_hex,
                                "--out",
                                out,
                                NULL};

                ck_assert_int_eq(run(argv), 0);
        }
        read_in(out, "ak.pub", &cli, &cli_len);
        ck_assert_uint_eq(cli_len, first_len);
        ck_assert_int_eq(memcmp(cli, first, first_len), 0);
        /* an RSA AK lives next to the ECC one and differs from it */
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();
                _cleanup_free_ uint8_t *rsa = NULL;
                size_t rsa_len;

                load_ak(t, state, TPM_KEY_RSA2048);
                ak_public(t, &rsa, &rsa_len);
                ck_assert(rsa_len != first_len || memcmp(rsa, first, rsa_len) != 0);
        }
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();
                double t0 = now_ms();

                load_ak(t, state, TPM_KEY_RSA2048);
                printf("rsa: saved AK loaded (EK re-created) in %.1f ms\n", now_ms() - t0);
        }
        rm_rf(dir);
}
END_TEST

/* swtpm stopped and started again on the same --state: the saved AK still loads (the endorsement
 * seed is kept) and is the same key. Two processes, two swtpms, one AK. */
START_TEST(test_ak_persists_across_tpm_restart)
{
        _cleanup_free_ uint8_t *a = NULL, *b = NULL;
        char dir[64], tpmstate[96], state[96];
        size_t a_len, b_len;

        tmpdir(dir, sizeof(dir));
        path_join(tpmstate, sizeof(tpmstate), dir, "tpm");
        path_join(state, sizeof(state), dir, "agent");
        for (int i = 0; i < 2; i++) {
                char out[128], cmd[512];

                ck_assert_int_lt(snprintf(out, sizeof(out), "%s/out%d", dir, i), (int)sizeof(out));
                ck_assert_int_lt(snprintf(cmd, sizeof(cmd),
                                          "\"$ATTESTCTL\" tpm quote --tcti \"$SWTPM_TCTI\" "
                                          "--state '%s' --nonce 00ff00ff --out '%s' "
                                          "--sel sha256:0-7",
                                          state, out),
                                 (int)sizeof(cmd));
                ck_assert_int_eq(sh_under_swtpm(tpmstate, cmd, NULL), 0);
                read_in(out, "ak.pub", i == 0 ? &a : &b, i == 0 ? &a_len : &b_len);
        }
        ck_assert_uint_eq(a_len, b_len);
        ck_assert_int_eq(memcmp(a, b, a_len), 0);
        rm_rf(dir);
}
END_TEST

/* Split tpm2_makecredential's file (BE32 0xBADCC0DE, BE32 1, TPM2B_ID_OBJECT,
 * TPM2B_ENCRYPTED_SECRET) into the two marshalled structures. */
static void split_tools_cred(const uint8_t *buf, size_t len, size_t *ret_blob_len,
                             size_t *ret_secret_len)
{
        TPM2B_ID_OBJECT id;
        TPM2B_ENCRYPTED_SECRET enc;
        size_t off = 8;

        ck_assert_uint_gt(len, 8);
        ck_assert_int_eq(memcmp(buf, "\xba\xdc\xc0\xde\x00\x00\x00\x01", 8), 0);
        ck_assert_int_eq(Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(buf, len, &off, &id), 0);
        *ret_blob_len = off - 8;
        ck_assert_int_eq(Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(buf, len, &off, &enc), 0);
        ck_assert_uint_eq(off, len);
        *ret_secret_len = off - 8 - *ret_blob_len;
}

/* MakeCredential for our EK and AK name (tpm2_makecredential, offline, and our verifier's
 * cred_make()) → tpm_activate_credential gives the secret back; for another name, or altered, the
 * TPM refuses. */
static void activate(enum tpm_key_alg alg)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        _cleanup_free_ uint8_t *ak_pub = NULL, *ek_pub = NULL;
        char dir[64], ek_path[96], sec_path[96], cred_path[96], name_hex[2 * QUOTE_NAME_MAX + 1];
        uint8_t name[QUOTE_NAME_MAX], secret[32], got[TPM_CRED_MAX];
        size_t ak_len, ek_len, name_len, got_len;
        struct attest_err err = {0};

        tmpdir(dir, sizeof(dir));
        load_ak(t, NULL, alg);
        ak_public(t, &ak_pub, &ak_len);
        ck_assert_int_eq(tpm_ek_public(t, alg, &ek_pub, &ek_len, &err), 0);
        ck_assert_int_eq(quote_ak_parse(ak_pub, ak_len, &ak, &err), 0);
        ck_assert_int_eq(quote_ak_name(ak, name, sizeof(name), &name_len), 0);
        path_join(ek_path, sizeof(ek_path), dir, "ek.pub");
        path_join(sec_path, sizeof(sec_path), dir, "secret");
        path_join(cred_path, sizeof(cred_path), dir, "cred");
        write_path(ek_path, ek_pub, ek_len);
        ck_assert_int_eq(RAND_bytes(secret, sizeof(secret)), 1);
        write_path(sec_path, secret, sizeof(secret));

        for (int wrong_name = 0; wrong_name < 2; wrong_name++) {
                _cleanup_free_ uint8_t *cred = NULL;
                size_t cred_len, blob_len, sec_len;
                int r;

                name[name_len - 1] ^= (uint8_t)wrong_name;
                hex_encode(name, name_len, name_hex);
                name[name_len - 1] ^= (uint8_t)wrong_name;
                {
                        char *argv[] = {"tpm2_makecredential",
                                        "-T",
                                        "none",
                                        "-u",
                                        ek_path,
                                        "-s",
                                        sec_path,
                                        "-n",
                                        name_hex,
                                        "-o",
                                        cred_path,
                                        NULL};

                        ck_assert_int_eq(run(argv), 0);
                }
                ck_assert_int_eq(read_path(cred_path, &cred, &cred_len), 0);
                split_tools_cred(cred, cred_len, &blob_len, &sec_len);
                memset(&err, 0, sizeof(err));
                r = tpm_activate_credential(t, cred + 8, blob_len, cred + 8 + blob_len, sec_len,
                                            got, &got_len, &err);
                if (wrong_name) {
                        ck_assert_msg(r == -EKEYREJECTED, "%d %s", r, err.msg);
                        ck_assert_int_eq(err.code, AE_TPM_CREDENTIAL_REJECTED);
                        printf("%s: other AK name: %s\n", tpm_key_alg_name(alg), err.msg);
                        continue;
                }
                ck_assert_msg(r == 0, "tpm_activate_credential: %d %s", r, err.msg);
                ck_assert_uint_eq(got_len, sizeof(secret));
                ck_assert_int_eq(memcmp(got, secret, sizeof(secret)), 0);
                /* a blob with trailing bytes is malformed, before the TPM sees it */
                ck_assert_int_eq(tpm_activate_credential(t, cred + 8, blob_len + 1,
                                                         cred + 8 + blob_len, sec_len, got,
                                                         &got_len, &err),
                                 -EBADMSG);
                /* an altered blob (its HMAC no longer checks) */
                cred[8 + blob_len / 2] ^= 0x10;
                ck_assert_int_eq(tpm_activate_credential(t, cred + 8, blob_len, cred + 8 + blob_len,
                                                         sec_len, got, &got_len, &err),
                                 -EKEYREJECTED);
        }

        /* the verifier's own MakeCredential (evidence/credential.c) */
        {
                struct credential c;

                ck_assert_msg(cred_make(ek_pub, ek_len, name, name_len, secret, sizeof(secret), &c,
                                        &err) == 0,
                              "cred_make: %s", err.msg);
                ck_assert_msg(tpm_activate_credential(t, c.blob, c.blob_len, c.secret, c.secret_len,
                                                      got, &got_len, &err) == 0,
                              "tpm_activate_credential: %s", err.msg);
                ck_assert_uint_eq(got_len, sizeof(secret));
                ck_assert_int_eq(memcmp(got, secret, sizeof(secret)), 0);
        }
        rm_rf(dir);
}

START_TEST(test_activate_credential_rsa)
{
        activate(TPM_KEY_RSA2048);
}
END_TEST

START_TEST(test_activate_credential_ecc)
{
        activate(TPM_KEY_ECCP256);
}
END_TEST

/* --- failures ------------------------------------------------------------------------------ */

START_TEST(test_open_unreachable_tcti_fails_with_eio)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof(sa);
        char tcti[64];
        struct tpm *t = NULL;
        struct attest_err err = {0};
        int fd, r;

        /* a loopback port nothing listens on: bound, never listened, then closed */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
        close(fd);
        snprintf(tcti, sizeof(tcti), "swtpm:host=127.0.0.1,port=%u", ntohs(sa.sin_port));
        r = tpm_open(tcti, &t, &err);
        ck_assert_int_eq(r, -EIO);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(err.code, AE_TPM_ERROR);
        ck_assert_ptr_nonnull(strstr(err.msg, tcti));
        printf("unreachable: %s\n", err.msg);

        memset(&err, 0, sizeof(err));
        ck_assert_int_eq(tpm_open("device:/nonexistent/tpmrm0", &t, &err), -EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/tpmrm0"));
        memset(&err, 0, sizeof(err));
        ck_assert_int_eq(tpm_open("nosuchtcti:x", &t, &err), -EIO);
        ck_assert(err.msg[0] != '\0');
}
END_TEST

/* Expect tpm_ak_load_or_create to fail naming file, and the state files to stay as they were. */
static void expect_ak_error(const char *state, int want, enum attest_code code, const char *file)
{
        _cleanup_(tpm_closep) struct tpm *t = open_tpm();
        _cleanup_free_ uint8_t *ak = NULL;
        struct attest_err err = {0};
        size_t len;
        int r;

        r = tpm_ak_load_or_create(t, state, TPM_KEY_RSA2048, &err);
        ck_assert_msg(r == want, "got %d (%s), want %d", r, err.msg, want);
        ck_assert_int_eq(err.code, code);
        ck_assert_msg(strstr(err.msg, file), "'%s' does not name %s", err.msg, file);
        ck_assert_int_eq(tpm_ak_public(t, &ak, &len), -ENOENT);
        printf("%s: %s\n", attest_code_name(code), err.msg);
}

START_TEST(test_corrupt_ak_is_an_error_not_a_new_ak)
{
        _cleanup_free_ uint8_t *pub = NULL, *priv = NULL, *cur = NULL;
        char dir[64], path[160];
        size_t pub_len, priv_len, cur_len;

        tmpdir(dir, sizeof(dir));
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();

                load_ak(t, dir, TPM_KEY_RSA2048);
        }
        read_in(dir, TPM_AK_PUB_RSA, &pub, &pub_len);
        read_in(dir, TPM_AK_PRIV_RSA, &priv, &priv_len);
        path_join(path, sizeof(path), dir, TPM_AK_PUB_RSA);

        /* truncated public */
        write_path(path, pub, pub_len - 7);
        expect_ak_error(dir, -EBADMSG, AE_TPM_AK_CORRUPT, TPM_AK_PUB_RSA);
        read_in(dir, TPM_AK_PUB_RSA, &cur, &cur_len);
        ck_assert_uint_eq(cur_len, pub_len - 7);
        free(TAKE_PTR(cur));
        /* trailing garbage */
        {
                _cleanup_free_ uint8_t *longer = malloc(pub_len + 1);

                memcpy(longer, pub, pub_len);
                longer[pub_len] = 0;
                write_path(path, longer, pub_len + 1);
                expect_ak_error(dir, -EBADMSG, AE_TPM_AK_CORRUPT, TPM_AK_PUB_RSA);
        }
        /* one bit of the modulus: parses, matches the template, but the TPM's integrity check
         * (the private is bound to the public's name) refuses it */
        {
                _cleanup_free_ uint8_t *bad = malloc(pub_len);

                memcpy(bad, pub, pub_len);
                bad[pub_len - 1] ^= 0x01;
                write_path(path, bad, pub_len);
                expect_ak_error(dir, -EBADMSG, AE_TPM_AK_REJECTED, TPM_AK_PUB_RSA);
        }
        write_path(path, pub, pub_len);

        /* private: a flipped byte inside the encrypted sensitive area */
        path_join(path, sizeof(path), dir, TPM_AK_PRIV_RSA);
        {
                _cleanup_free_ uint8_t *bad = malloc(priv_len);

                memcpy(bad, priv, priv_len);
                bad[priv_len / 2] ^= 0x40;
                write_path(path, bad, priv_len);
                expect_ak_error(dir, -EBADMSG, AE_TPM_AK_REJECTED, TPM_AK_PRIV_RSA);
                read_in(dir, TPM_AK_PRIV_RSA, &cur, &cur_len);
                ck_assert_int_eq(memcmp(cur, bad, priv_len), 0); /* left alone */
                free(TAKE_PTR(cur));
        }
        /* missing private: incomplete state, not a fresh AK */
        ck_assert_int_eq(unlink(path), 0);
        expect_ak_error(dir, -EBADMSG, AE_TPM_AK_INCOMPLETE, TPM_AK_PRIV_RSA);
        ck_assert_int_eq(access(path, F_OK), -1);

        /* restored, it loads again and is the same AK */
        write_path(path, priv, priv_len);
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();

                load_ak(t, dir, TPM_KEY_RSA2048);
                ak_public(t, &cur, &cur_len);
                ck_assert_uint_eq(cur_len, pub_len);
                ck_assert_int_eq(memcmp(cur, pub, pub_len), 0);
        }
        /* a state dir others can write to is refused */
        ck_assert_int_eq(chmod(dir, 0777), 0);
        expect_ak_error(dir, -EINVAL, AE_TPM_STATE_DIR, dir);
        rm_rf(dir);
}
END_TEST

/* Transient objects and sessions are flushed: many AK loads and quotes on a TPM with 3 object and
 * 3 session slots, then nothing is left loaded. */
START_TEST(test_no_handles_leak)
{
        char dir[64], out[96];
        _cleanup_free_ uint8_t *text = NULL;
        size_t len;

        tmpdir(dir, sizeof(dir));
        {
                _cleanup_(tpm_closep) struct tpm *t = open_tpm();
                _cleanup_free_ uint8_t *ek = NULL;
                size_t ek_len;
                struct attest_err err = {0};

                for (int i = 0; i < 12; i++) {
                        struct quote q;

                        load_ak(t, i % 2 ? dir : NULL, TPM_KEY_ECCP256);
                        do_quote(t, "sha256:0", &q);
                        quote_clear(&q);
                }
                ck_assert_int_eq(tpm_ek_public(t, TPM_KEY_RSA2048, &ek, &ek_len, &err), 0);
        }
        path_join(out, sizeof(out), dir, "handles");
        {
                char *transient[] = {"tpm2_getcap", "handles-transient", NULL};
                char *sessions[] = {"tpm2_getcap", "handles-loaded-session", NULL};

                ck_assert_int_eq(run_to(transient, out), 0);
                ck_assert_int_eq(read_path(out, &text, &len), 0);
                ck_assert_msg(len == 0, "transient objects left: %s", (const char *)text);
                free(TAKE_PTR(text));
                ck_assert_int_eq(run_to(sessions, out), 0);
                ck_assert_int_eq(read_path(out, &text, &len), 0);
                ck_assert_msg(len == 0, "sessions left: %s", (const char *)text);
        }
        rm_rf(dir);
}
END_TEST

/* A bank the TPM has not allocated (tpm2_pcrallocate, then a TPM restart): -EOPNOTSUPP naming it,
 * through attestctl; the allocated bank still quotes. */
START_TEST(test_quote_of_unallocated_bank_fails)
{
        char dir[64], tpmstate[96], log[128];
        _cleanup_free_ uint8_t *text = NULL;
        size_t len;

        tmpdir(dir, sizeof(dir));
        path_join(tpmstate, sizeof(tpmstate), dir, "tpm");
        path_join(log, sizeof(log), dir, "log");
        ck_assert_int_eq(
                sh_under_swtpm(tpmstate,
                               "tpm2_pcrallocate sha1:none+sha256:all+sha384:none+sha512:none",
                               NULL),
                0);
        ck_assert_int_eq(
                sh_under_swtpm(tpmstate,
                               "\"$ATTESTCTL\" tpm quote --tcti \"$SWTPM_TCTI\" --nonce 01 "
                               "--out \"$0\" --sel sha256:10+sha1:10 2>\"$0/err\" && exit 9; "
                               "\"$ATTESTCTL\" tpm quote --tcti \"$SWTPM_TCTI\" --nonce 01 "
                               "--out \"$0\" --sel sha256:10",
                               dir),
                0);
        read_in(dir, "err", &text, &len);
        ck_assert_msg(strstr((const char *)text, "no sha1 PCR bank"), "%s", (const char *)text);
        rm_rf(dir);
}
END_TEST

static Suite *tpm_suite(void)
{
        const struct {
                const char *name;
                const TTest *test;
        } cases[] = {
                {"roundtrip_rsa", test_quote_roundtrip_rsa},
                {"roundtrip_ecc", test_quote_roundtrip_ecc},
                {"all_pcrs", test_quote_all_pcrs_two_banks},
                {"checkquote_rsa", test_checkquote_accepts_our_quotes_rsa},
                {"checkquote_ecc", test_checkquote_accepts_our_quotes_ecc},
                {"ek_cert", test_ek_cert_matches_template_rsa},
                {"ek_cert_ecc", test_ek_cert_ecc_read_in_chunks},
                {"ek_template", test_ek_public_equals_tpm2_createek},
                {"ek_absent", test_ek_cert_absent},
                {"attestctl_usage", test_attestctl_tpm_help_and_usage_errors},
                {"ak_reopen", test_ak_persists_across_reopen_and_processes},
                {"ak_tpm_restart", test_ak_persists_across_tpm_restart},
                {"unreachable", test_open_unreachable_tcti_fails_with_eio},
                {"corrupt_ak", test_corrupt_ak_is_an_error_not_a_new_ak},
                {"no_leaks", test_no_handles_leak},
                {"activate_rsa", test_activate_credential_rsa},
                {"activate_ecc", test_activate_credential_ecc},
                {"no_bank", test_quote_of_unallocated_bank_fails},
        };
        Suite *s = suite_create("tpm");

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                TCase *tc = tcase_create(cases[i].name);

                tcase_set_timeout(tc, 120);
                tcase_add_test(tc, cases[i].test);
                suite_add_tcase(s, tc);
        }
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(tpm_suite());
        int failed;

        setvbuf(stdout, NULL, _IOLBF, 0);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
