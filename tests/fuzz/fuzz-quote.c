/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the quote parsers: quote_ak_parse, quote_verify's TPMS_ATTEST /
 * TPMT_SIGNATURE decoders and checks, the TPML_PCR_SELECTION conversion and pcr_sel_parse.
 *
 * Input: u16be ak_len | ak | u16be attest_len | attest | u8 nonce_len | nonce | signature (the
 * rest). Inputs too short for that framing are fed whole to each parser. Seeds in
 * tests/fuzz/corpus/quote/ are real swtpm quotes (make-quote-corpus.sh).
 *
 * Built with -DFUZZ_REPLAY_MAIN this file has a main() that runs the target over files or
 * directories given as arguments, so the corpus runs under gcc in `meson test`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "evidence/quote.h"
#include "util/rd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_sel_text(const uint8_t *data, size_t size)
{
        char text[128];
        struct pcr_sel s;
        char out[PCR_SEL_TEXT_MAX];

        if (size >= sizeof(text))
                size = sizeof(text) - 1;
        memcpy(text, data, size);
        text[size] = '\0';
        if (pcr_sel_parse(text, &s) == 0 && pcr_sel_format(&s, out, sizeof(out)) != 0)
                abort(); /* every parsed selection has a text form */
}

static void fuzz_attest_decode(const uint8_t *attest, size_t len)
{
        TPMS_ATTEST a;
        struct pcr_sel s;
        char out[PCR_SEL_TEXT_MAX];
        size_t off = 0;

        memset(&a, 0, sizeof(a));
        if (Tss2_MU_TPMS_ATTEST_Unmarshal(attest, len, &off, &a) != TSS2_RC_SUCCESS ||
            a.type != TPM2_ST_ATTEST_QUOTE)
                return;
        if (pcr_sel_from_tpml(&a.attested.quote.pcrSelect, &s) == 0 &&
            pcr_sel_format(&s, out, sizeof(out)) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct rd r = RD_INIT(data, size);
        const uint8_t *ak_b = data, *attest = data, *nonce = NULL, *sig = data;
        size_t ak_len = size, attest_len = size, nonce_len = 0, sig_len = size;
        struct quote_ak *ak = NULL;
        struct attest_err err = {0};
        struct quote_info info;
        static struct pcr_set pcrs;
        uint16_t n16;
        uint8_t n8;

        if (rd_u16be(&r, &n16) == 0 && rd_bytes(&r, n16, &ak_b) == 0) {
                ak_len = n16;
                if (rd_u16be(&r, &n16) == 0 && rd_bytes(&r, n16, &attest) == 0) {
                        attest_len = n16;
                        if (rd_u8(&r, &n8) == 0 && rd_bytes(&r, n8, &nonce) == 0) {
                                nonce_len = n8;
                                sig = r.p;
                                sig_len = rd_left(&r);
                        }
                }
        }
        fuzz_sel_text(data, size);
        fuzz_attest_decode(attest, attest_len);
        /* every PCR present (zeros): the digest check is reached when a seed's signature holds */
        for (int b = 0; b < BANK_COUNT; b++)
                pcrs.have[b] = (1u << PCR_COUNT) - 1;
        if (quote_ak_parse(ak_b, ak_len, &ak, &err) == 0) {
                uint8_t name[QUOTE_NAME_MAX];
                size_t name_len;

                if (quote_ak_name(ak, name, sizeof(name), &name_len) != 0 || !quote_ak_pkey(ak))
                        abort();
                int e = quote_verify(ak, attest, attest_len, sig, sig_len, nonce, nonce_len, NULL,
                                     &pcrs, &info, &err);

                if (e < 0 && !err.code)
                        abort(); /* every failure names its check */
#ifdef FUZZ_REPLAY_MAIN
                if (getenv("FUZZ_QUOTE_VERBOSE"))
                        fprintf(stderr, "verify: %d %s\n", e,
                                e < 0 ? attest_code_name(err.code) : "ok");
#endif
                ak = quote_ak_free(ak);
        } else if (!err.code) {
                abort();
        }
        return 0;
}
/* the replay main() for `meson test` is tests/fuzz/replay-main.c */
