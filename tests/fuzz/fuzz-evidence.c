/* SPDX-License-Identifier: MIT */
/*
 * evidence_from_json on arbitrary bytes: no crash, no leak; whatever it accepts is within its
 * caps, re-encodes and decodes to the same text (the codec is a bijection on valid documents).
 */
#include <string.h>

#include "evidence/evjson.h"
#include "tests/fuzz/fuzz.h"
#include "evidence/quote.h"

#define FUZZ_IMA_MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct evidence *ev = NULL, *back = NULL;
        struct attest_err err = {0};
        char *a = NULL, *b = NULL;
        int x;

        x = evidence_from_json((const char *)data, size, FUZZ_IMA_MAX, &ev, &err);
        if (x < 0) {
                FUZZ_CHECK(ev == NULL);
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
                return 0;
        }
        FUZZ_CHECK(ev->nonce_len >= 1 && ev->nonce_len <= EVIDENCE_NONCE_MAX);
        FUZZ_CHECK(ev->attest && ev->attest_len <= QUOTE_ATTEST_MAX);
        FUZZ_CHECK(ev->sig && ev->sig_len <= QUOTE_SIG_MAX);
        FUZZ_CHECK(ev->ima_len <= FUZZ_IMA_MAX && (ev->ima_len == 0) == (ev->ima == NULL));
        FUZZ_CHECK(memchr(ev->host.kernel, '\0', sizeof(ev->host.kernel)) != NULL);
        FUZZ_CHECK(!ev->host.cmdline || strlen(ev->host.cmdline) <= EVIDENCE_CMDLINE_MAX);
        FUZZ_CHECK(evidence_to_json(ev, &a) == 0);
        FUZZ_CHECK(evidence_from_json(a, strlen(a), FUZZ_IMA_MAX, &back, &err) == 0);
        FUZZ_CHECK(evidence_to_json(back, &b) == 0);
        FUZZ_CHECK(strcmp(a, b) == 0);
        free(a);
        free(b);
        evidence_free(back);
        evidence_free(ev);
        return 0;
}
