/* SPDX-License-Identifier: MIT */
/*
 * Differential: the evidence reader (evidence_from_json on util/json-rd) against the jansson
 * decoder it replaced (evjson-jansson.c), on the same bytes and the same caps. Aborts on any
 * difference in accept/reject, errno, error code, message (except for evidence_json: each parser
 * words its own syntax errors) or decoded struct.
 *
 * The one intended difference: the reader refuses every input that holds a NUL byte, where jansson
 * drops a NUL that directly follows a number or a literal and accepts the rest. For such inputs
 * the reader must say evidence_json and jansson is not asked.
 */
#include <string.h>

#include "evidence/evjson.h"
#include "tests/fuzz/evjson-jansson.h"
#include "tests/fuzz/fuzz.h"

static int same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
        return an == bn && (an == 0 || memcmp(a, b, an) == 0) && (a == NULL) == (b == NULL);
}

static void check_same(const struct evidence *a, const struct evidence *b)
{
        const struct evidence_host *x = &a->host, *y = &b->host;

        FUZZ_CHECK(a->nonce_len == b->nonce_len);
        FUZZ_CHECK(memcmp(a->nonce, b->nonce, sizeof(a->nonce)) == 0);
        FUZZ_CHECK(same_bytes(a->attest, a->attest_len, b->attest, b->attest_len));
        FUZZ_CHECK(same_bytes(a->sig, a->sig_len, b->sig, b->sig_len));
        FUZZ_CHECK(memcmp(&a->pcrs, &b->pcrs, sizeof(a->pcrs)) == 0);
        FUZZ_CHECK(a->ima_offset == b->ima_offset);
        FUZZ_CHECK(a->ima_format == b->ima_format);
        FUZZ_CHECK(same_bytes(a->ima, a->ima_len, b->ima, b->ima_len));
        FUZZ_CHECK(a->boot_offset == b->boot_offset);
        FUZZ_CHECK(same_bytes(a->boot_log, a->boot_log_len, b->boot_log, b->boot_log_len));
        FUZZ_CHECK(memcmp(x->kernel, y->kernel, sizeof(x->kernel)) == 0);
        FUZZ_CHECK((x->cmdline == NULL) == (y->cmdline == NULL));
        FUZZ_CHECK(!x->cmdline || strcmp(x->cmdline, y->cmdline) == 0);
        FUZZ_CHECK(memcmp(x->boot_id, y->boot_id, sizeof(x->boot_id)) == 0);
        FUZZ_CHECK(x->cfi_present == y->cfi_present && x->cfi_enabled == y->cfi_enabled &&
                   x->cfi_permissive == y->cfi_permissive);
        FUZZ_CHECK(memcmp(x->cfi_source, y->cfi_source, sizeof(x->cfi_source)) == 0);
        FUZZ_CHECK(x->tk_present == y->tk_present);
        FUZZ_CHECK(memcmp(x->tk_source, y->tk_source, sizeof(x->tk_source)) == 0);
        FUZZ_CHECK(memcmp(x->tk_origin, y->tk_origin, sizeof(x->tk_origin)) == 0);
}

static void one(const uint8_t *data, size_t size, size_t max_ima)
{
        struct evidence *a = NULL, *b = NULL;
        struct attest_err ea = {0}, eb = {0};
        int xa, xb;

        xb = evidence_from_json((const char *)data, size, max_ima, &b, &eb);
        if (xb == -ENOMEM)
                return;
        if (size <= EVIDENCE_JSON_MAX && memchr(data, '\0', size)) {
                FUZZ_CHECK(xb == -EBADMSG && eb.code == AE_EVIDENCE_JSON && b == NULL);
                return;
        }
        xa = evidence_from_json_jansson((const char *)data, size, max_ima, &a, &ea);
        if (xa == -ENOMEM) {
                evidence_free(b);
                return;
        }
        if (xa != xb || ea.code != eb.code)
                fprintf(stderr, "jansson: %d %s: %s\nreader:  %d %s: %s\n", xa,
                        attest_code_name(ea.code), ea.msg, xb, attest_code_name(eb.code), eb.msg);
        FUZZ_CHECK(xa == xb);
        FUZZ_CHECK(ea.code == eb.code);
        if (xa < 0) {
                FUZZ_CHECK(a == NULL && b == NULL);
                if (ea.code != AE_EVIDENCE_JSON && strcmp(ea.msg, eb.msg) != 0)
                        fprintf(stderr, "jansson: %s\nreader:  %s\n", ea.msg, eb.msg);
                FUZZ_CHECK(ea.code == AE_EVIDENCE_JSON || strcmp(ea.msg, eb.msg) == 0);
                return;
        }
        check_same(a, b);
        evidence_free(a);
        evidence_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* a roomy log cap, and a small one so that cap errors meet the other checks */
        one(data, size, 1u << 20);
        one(data, size, 64);
        return 0;
}
