/* SPDX-License-Identifier: MIT */
/*
 * Quote verifications per second, in-process, one thread: quote_verify() with a parsed AK, and
 * quote_ak_parse() + quote_verify() per quote (a verifier that keeps only the AK bytes).
 * Usage: bench-quote FIXTURE_DIR KIND [SECONDS [COUNT]]   (fixtures: make-quote-fixtures.sh; KIND
 * rsa|ecc|rsapss). Prints one line per figure: "KIND MODE: N verifications in S s: R/s". Never
 * fails on timing.
 *
 * COUNT > 0: exactly COUNT quote_verify() calls with the parsed AK and no timing, for callgrind
 * (instructions per verification = the difference of two counts over their difference):
 *   valgrind --tool=callgrind --callgrind-out-file=cg.N bench-quote FX ecc 0 N   (N = 100, 1100)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hex.h"
#include "evidence/pcrs.h"
#include "evidence/quote.h"
#include "util/file.h"
#include "util/num.h"

/* DIR[/KIND]/NAME, whole (util/file.h), NUL terminated in buf of max bytes. */
static int slurp(const char *dir, const char *kind, const char *name, uint8_t *buf, size_t max,
                 size_t *ret_len)
{
        struct attest_err err = {0};
        char path[4096];
        int e;

        if (kind)
                snprintf(path, sizeof(path), "%s/%s/%s", dir, kind, name);
        else
                snprintf(path, sizeof(path), "%s/%s", dir, name);
        if ((e = file_read(path, buf, max - 1, 0, ret_len, &err)) < 0) {
                fprintf(stderr, "bench-quote: %s\n", err.msg);
                return e;
        }
        buf[*ret_len] = 0;
        return 0;
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        static uint8_t ak_b[QUOTE_AK_MAX + 1], attest[QUOTE_ATTEST_MAX + 1], sig[QUOTE_SIG_MAX + 1],
                text[PCR_FILE_MAX + 1], nhex[256];
        size_t ak_len, attest_len, sig_len, text_len, nhex_len, nonce_len;
        uint8_t nonce[QUOTE_NONCE_MAX];
        struct attest_err err = {0};
        struct quote_ak *ak = NULL;
        struct pcr_set pcrs;
        double secs = argc > 3 ? strtod(argv[3], NULL) : 2.0;
        uint32_t count = 0;

        if (argc < 3 ||
            (argc > 4 && num_u32(argv[4], strlen(argv[4]), 0, UINT32_MAX, &count) < 0) ||
            (secs <= 0 && count == 0)) {
                fprintf(stderr, "usage: bench-quote FIXTURE_DIR KIND [SECONDS [COUNT]]\n");
                return 2;
        }
        if (slurp(argv[1], argv[2], "ak.pub", ak_b, sizeof(ak_b), &ak_len) < 0 ||
            slurp(argv[1], argv[2], "quote.attest", attest, sizeof(attest), &attest_len) < 0 ||
            slurp(argv[1], argv[2], "quote.sig", sig, sizeof(sig), &sig_len) < 0 ||
            slurp(argv[1], argv[2], "pcrs.yaml", text, sizeof(text), &text_len) < 0 ||
            slurp(argv[1], NULL, "nonce.hex", nhex, sizeof(nhex), &nhex_len) < 0)
                return 2;
        while (nhex_len && (nhex[nhex_len - 1] == '\n' || nhex[nhex_len - 1] == '\r'))
                nhex_len--;
        if (hex_decode((const char *)nhex, nhex_len, nonce, sizeof(nonce), &nonce_len) < 0 ||
            pcrs_parse((const char *)text, text_len, &pcrs, &err) < 0 ||
            quote_ak_parse(ak_b, ak_len, &ak, &err) < 0 ||
            quote_verify(ak, attest, attest_len, sig, sig_len, nonce, nonce_len, NULL, &pcrs, NULL,
                         &err) < 0) {
                fprintf(stderr, "bench-quote: fixture does not verify: %s: %s\n",
                        attest_code_name(err.code), err.msg);
                quote_ak_free(ak);
                return 1;
        }
        for (uint32_t i = 0; i < count; i++)
                if (quote_verify(ak, attest, attest_len, sig, sig_len, nonce, nonce_len, NULL,
                                 &pcrs, NULL, &err) < 0)
                        return 1;
        for (int mode = 0; count == 0 && mode < 2; mode++) {
                unsigned long n = 0;
                double t0 = now(), t;

                do {
                        for (int i = 0; i < 64; i++, n++) {
                                struct quote_ak *k = ak;

                                if (mode == 1 && quote_ak_parse(ak_b, ak_len, &k, &err) < 0)
                                        return 1;
                                if (quote_verify(k, attest, attest_len, sig, sig_len, nonce,
                                                 nonce_len, NULL, &pcrs, NULL, &err) < 0)
                                        return 1;
                                if (mode == 1)
                                        quote_ak_free(k);
                        }
                        t = now() - t0;
                } while (t < secs);
                printf("%s %s: %lu verifications in %.2f s: %.0f/s\n", argv[2],
                       mode ? "parse+verify" : "verify", n, t, (double)n / t);
        }
        quote_ak_free(ak);
        return 0;
}
