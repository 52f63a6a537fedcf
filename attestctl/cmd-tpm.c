/* SPDX-License-Identifier: MIT */
/* attestctl tpm: EK certificate and quotes from a local (or emulated) TPM, through libagent. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/x509.h>

#include "attestctl/attestctl.h"
#include "util/hex.h"
#include "tpm/tpm.h"

#define DEFAULT_SEL "sha256:0-10"

static void tpm_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl tpm ek [--tcti TCTI] [--alg rsa|ecc]\n"
                "       attestctl tpm quote --nonce HEX --out DIR [--tcti TCTI] [--sel SEL]\n"
                "                           [--alg rsa|ecc] [--state DIR]\n\n"
                "  ek     print the subject and issuer of the EK certificate(s) in TPM NV, or say\n"
                "         that there is none\n"
                "  quote  quote PCRs with the attestation key (AK) and write into DIR:\n"
                "         ak.pub (TPM2B_PUBLIC), attest (TPMS_ATTEST), sig (TPMT_SIGNATURE),\n"
                "         pcrs (lines 'sha256:N HEX'), ek.pub (TPM2B_PUBLIC of the AK's parent "
                "EK)\n"
                "         and ek.crt (DER) when the TPM holds one\n\n"
                "Options:\n"
                "  --tcti TCTI   TPM to use: device:/dev/tpmrm0 (default), swtpm:host=H,port=N,\n"
                "                mssim:host=H,port=N\n"
                "  --alg ALG     key algorithm of the EK and AK: rsa (RSA-2048, default) or ecc\n"
                "                (NIST P-256); 'ek' shows both when not given\n"
                "  --nonce HEX   qualifying data for the quote, 1 to %d bytes\n"
                "  --sel SEL     PCRs to quote, e.g. sha256:0-10+sha1:10 (default %s)\n"
                "  --state DIR   keep the AK in DIR (created 0700) and reuse it on later runs;\n"
                "                without it a new AK is made for this quote only\n"
                "  --out DIR     where to write the files (created when missing)\n"
                "  -h, --help    this text\n",
                TPM_NONCE_MAX, DEFAULT_SEL);
}

static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
        char path[4096];
        int fd;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
                fprintf(stderr, "attestctl: %s/%s: path too long\n", dir, name);
                return -ENAMETOOLONG;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                fprintf(stderr, "attestctl: %s: %s\n", path, strerror(errno));
                return -errno;
        }
        for (size_t off = 0; off < len;) {
                ssize_t n = write(fd, (const uint8_t *)buf + off, len - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;

                        close(fd);
                        fprintf(stderr, "attestctl: %s: %s\n", path, strerror(e));
                        return -e;
                }
                off += (size_t)n;
        }
        if (close(fd) < 0) {
                fprintf(stderr, "attestctl: %s: %s\n", path, strerror(errno));
                return -errno;
        }
        return 0;
}

static int print_err(const char *what, int r, const struct attest_err *err)
{
        fprintf(stderr, "attestctl: %s: %s\n", what, err->msg[0] ? err->msg : strerror(-r));
        return 1;
}

static void print_cert_names(const char *alg, const uint8_t *der, size_t len)
{
        const unsigned char *p = der;
        X509 *x = d2i_X509(NULL, &p, (long)len);
        BIO *out;

        if (!x) {
                printf("%s: EK certificate of %zu bytes does not parse as X.509\n", alg, len);
                return;
        }
        out = BIO_new_fp(stdout, BIO_NOCLOSE);
        if (out) {
                BIO_printf(out, "%s: EK certificate (%zu bytes)\n  subject: ", alg, len);
                X509_NAME_print_ex(out, X509_get_subject_name(x), 0, XN_FLAG_RFC2253);
                BIO_printf(out, "\n  issuer:  ");
                X509_NAME_print_ex(out, X509_get_issuer_name(x), 0, XN_FLAG_RFC2253);
                BIO_printf(out, "\n");
                BIO_free(out);
        }
        X509_free(x);
}

enum { OPT_TCTI = 0x100, OPT_ALG, OPT_NONCE, OPT_SEL, OPT_STATE, OPT_OUT };

static const struct option options[] = {
        {"tcti", required_argument, NULL, OPT_TCTI},
        {"alg", required_argument, NULL, OPT_ALG},
        {"nonce", required_argument, NULL, OPT_NONCE},
        {"sel", required_argument, NULL, OPT_SEL},
        {"state", required_argument, NULL, OPT_STATE},
        {"out", required_argument, NULL, OPT_OUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
};

struct tpm_args {
        const char *tcti, *nonce_hex, *sel, *state, *out;
        enum tpm_key_alg alg;
        int have_alg;
};

static int cmd_tpm_ek(struct tpm *t, const struct tpm_args *a)
{
        int found = 0;

        for (int alg = 0; alg < TPM_KEY_ALG_COUNT; alg++) {
                _cleanup_free_ uint8_t *der = NULL;
                struct attest_err err = {0};
                size_t len;
                int r;

                if (a->have_alg && (enum tpm_key_alg)alg != a->alg)
                        continue;
                r = tpm_ek_cert(t, alg, &der, &len, &err);
                if (r == -ENOENT) {
                        printf("%s: no EK certificate (%s)\n", tpm_key_alg_name(alg), err.msg);
                        continue;
                }
                if (r < 0)
                        return print_err("reading the EK certificate", r, &err);
                print_cert_names(tpm_key_alg_name(alg), der, len);
                found++;
        }
        return found ? 0 : 3; /* 3: no certificate, distinct from errors */
}

static int write_pcrs(const char *dir, const struct pcr_set *pcrs)
{
        /* 24 PCRs x 4 banks x ("sha512:23 " + 128 hex + "\n") fits easily */
        _cleanup_free_ char *text = malloc(PCR_COUNT * BANK_COUNT * (16 + 2 * BANK_DIGEST_MAX));
        size_t n = 0;

        if (!text)
                return -ENOMEM;
        for (int b = 0; b < BANK_COUNT; b++)
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char hex[2 * BANK_DIGEST_MAX + 1];

                        if (!(pcrs->have[b] & (1u << i)))
                                continue;
                        hex_encode(pcrs->v[b][i], bank_size(b), hex);
                        n += (size_t)snprintf(text + n, 16 + 2 * BANK_DIGEST_MAX, "%s:%u %s\n",
                                              bank_name(b), i, hex);
                }
        return write_file(dir, "pcrs", text, n);
}

static int cmd_tpm_quote(struct tpm *t, const struct tpm_args *a)
{
        _cleanup_free_ uint8_t *ak_pub = NULL, *attest = NULL, *sig = NULL, *ek_pub = NULL;
        _cleanup_free_ uint8_t *ek_crt = NULL;
        uint8_t nonce[TPM_NONCE_MAX];
        size_t nonce_len, ak_len, attest_len, sig_len, ek_len, crt_len;
        struct attest_err err = {0};
        struct pcr_set pcrs;
        struct pcr_sel sel;
        int r;

        if (!a->nonce_hex || !a->out) {
                fprintf(stderr, "attestctl: tpm quote needs --nonce and --out\n");
                return 2;
        }
        if (hex_decode(a->nonce_hex, strlen(a->nonce_hex), nonce, sizeof(nonce), &nonce_len) < 0 ||
            nonce_len == 0) {
                fprintf(stderr, "attestctl: --nonce: 1 to %d bytes of hex expected\n",
                        TPM_NONCE_MAX);
                return 2;
        }
        if (pcr_sel_parse(a->sel ? a->sel : DEFAULT_SEL, &sel) < 0) {
                fprintf(stderr, "attestctl: --sel '%s': expected e.g. sha256:0-10+sha1:10\n",
                        a->sel);
                return 2;
        }
        if (mkdir(a->out, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "attestctl: %s: %s\n", a->out, strerror(errno));
                return 1;
        }
        r = tpm_ak_load_or_create(t, a->state, a->alg, &err);
        if (r < 0)
                return print_err("attestation key", r, &err);
        r = tpm_ak_public(t, &ak_pub, &ak_len);
        if (r < 0)
                return print_err("attestation key", r, &err);
        r = tpm_quote(t, &sel, nonce, nonce_len, &attest, &attest_len, &sig, &sig_len, &pcrs, &err);
        if (r < 0)
                return print_err("quote", r, &err);
        r = tpm_ek_public(t, a->alg, &ek_pub, &ek_len, &err);
        if (r < 0)
                return print_err("endorsement key", r, &err);
        r = tpm_ek_cert(t, a->alg, &ek_crt, &crt_len, &err);
        if (r < 0 && r != -ENOENT)
                return print_err("EK certificate", r, &err);
        if (write_file(a->out, "ak.pub", ak_pub, ak_len) < 0 ||
            write_file(a->out, "attest", attest, attest_len) < 0 ||
            write_file(a->out, "sig", sig, sig_len) < 0 || write_pcrs(a->out, &pcrs) < 0 ||
            write_file(a->out, "ek.pub", ek_pub, ek_len) < 0 ||
            (ek_crt && write_file(a->out, "ek.crt", ek_crt, crt_len) < 0))
                return 1;
        printf("quote by the %s AK written to %s (attest %zu bytes, sig %zu bytes%s)\n",
               tpm_key_alg_name(a->alg), a->out, attest_len, sig_len,
               ek_crt ? ", with EK certificate" : "");
        return 0;
}

int cmd_tpm(int argc, char **argv)
{
        _cleanup_(tpm_closep) struct tpm *t = NULL;
        struct tpm_args a = {.alg = TPM_KEY_RSA2048};
        struct attest_err err = {0};
        const char *sub;
        int c, r;

        if (argc < 2) {
                tpm_usage(stderr);
                return 2;
        }
        sub = argv[1];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
                tpm_usage(stdout);
                return 0;
        }
        if (strcmp(sub, "ek") != 0 && strcmp(sub, "quote") != 0) {
                fprintf(stderr, "attestctl: tpm: unknown sub-command '%s'\n", sub);
                tpm_usage(stderr);
                return 2;
        }
        optind = 1;
        while ((c = getopt_long(argc - 1, argv + 1, "h", options, NULL)) != -1) {
                switch (c) {
                case OPT_TCTI:
                        a.tcti = optarg;
                        break;
                case OPT_ALG:
                        if (tpm_key_alg_from_name(optarg, &a.alg) < 0) {
                                fprintf(stderr, "attestctl: --alg: rsa or ecc expected\n");
                                return 2;
                        }
                        a.have_alg = 1;
                        break;
                case OPT_NONCE:
                        a.nonce_hex = optarg;
                        break;
                case OPT_SEL:
                        a.sel = optarg;
                        break;
                case OPT_STATE:
                        a.state = optarg;
                        break;
                case OPT_OUT:
                        a.out = optarg;
                        break;
                case 'h':
                        tpm_usage(stdout);
                        return 0;
                default:
                        tpm_usage(stderr);
                        return 2;
                }
        }
        if (optind != argc - 1) {
                fprintf(stderr, "attestctl: tpm %s: unexpected argument '%s'\n", sub,
                        argv[optind + 1]);
                return 2;
        }
        r = tpm_open(a.tcti, &t, &err);
        if (r < 0)
                return print_err("opening the TPM", r, &err);
        if (strcmp(sub, "ek") == 0)
                return cmd_tpm_ek(t, &a);
        return cmd_tpm_quote(t, &a);
}
