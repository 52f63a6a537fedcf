/* SPDX-License-Identifier: MIT */
/*
 * The DSSE envelope reader of attestctl policy import-keylime (attestctl/dsse.c) on arbitrary
 * bytes: no crash, no leak; a refusal fills err and hands nothing out; an envelope read has 1-16
 * signatures and is read again with its payload's own size as the cap (and refused one byte
 * below); it is verified with a fixed P-256 key (the seeds of tests/fuzz/corpus/dsse/ are signed
 * by its private key, which was not kept), and a payload that verifies is imported like a policy
 * file. The same bytes are also tried as a --dsse-key PEM file.
 */
#include <errno.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

#include "attestctl/dsse.h"
#include "attestctl/keylime.h"
#include "evidence/jpath.h"
#include "tests/fuzz/fuzz.h"

static const char fuzz_key_pem[] =
        "-----BEGIN PUBLIC KEY-----\n"
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEa4kgQkGWSM8BNhvlD709ofF+CTfA\n"
        "dwyV9W1/qPCcxo2nyrIeL8+//iZPAllUaq7+kJyL/5KOhDi0auP/UjlgYg==\n"
        "-----END PUBLIC KEY-----\n";

static EVP_PKEY *fuzz_key(void)
{
        static EVP_PKEY *k;
        struct attest_err err = {0};

        if (!k && dsse_key_load(fuzz_key_pem, sizeof(fuzz_key_pem) - 1, &k, &err) < 0) {
                fprintf(stderr, "fuzz key: %s\n", err.msg);
                abort();
        }
        return k;
}

static void reread_at_cap(const uint8_t *data, size_t size, size_t plen)
{
        struct dsse_envelope *e = NULL;
        struct attest_err err = {0};
        json_t *doc = NULL;

        FUZZ_CHECK(jpath_load((const char *)data, size, size, AE_POLICY_JSON, &doc, &err) == 0);
        FUZZ_CHECK(dsse_envelope_from_json(doc, plen, &e, &err) == 0);
        FUZZ_CHECK(dsse_envelope_payload_len(e) == plen);
        dsse_envelope_free(e);
        e = NULL;
        if (plen > 0) {
                err = (struct attest_err){0};
                FUZZ_CHECK(dsse_envelope_from_json(doc, plen - 1, &e, &err) == -E2BIG);
                FUZZ_CHECK(e == NULL && err.code == AE_POLICY_TOO_BIG);
        }
        json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct keylime_opts o = {.name = "fuzz", .violations_allow = 3};
        struct dsse_envelope *e = NULL;
        struct attest_err err = {0};
        EVP_PKEY *keys[1] = {fuzz_key()}, *k = NULL;
        const uint8_t *payload = NULL;
        size_t plen = 0, si = 99, ki = 99;
        json_t *pol = NULL;
        int x;

        /* the bytes as a key file */
        if (dsse_key_load((const char *)data, size, &k, &err) == 0) {
                FUZZ_CHECK(k != NULL && EVP_PKEY_get_base_id(k) == EVP_PKEY_EC);
                EVP_PKEY_free(k);
        } else {
                FUZZ_CHECK(k == NULL);
        }

        err = (struct attest_err){0};
        x = dsse_envelope_parse((const char *)data, size, KEYLIME_JSON_MAX, &e, &err);
        if (x < 0) {
                FUZZ_CHECK(e == NULL && (x == -ENOMEM || err.code != AE_NONE));
                return 0;
        }
        FUZZ_CHECK(dsse_envelope_nsigs(e) >= 1 && dsse_envelope_nsigs(e) <= DSSE_SIGS_MAX);
        reread_at_cap(data, size, dsse_envelope_payload_len(e));

        err = (struct attest_err){0};
        x = dsse_verify(e, keys, 1, &payload, &plen, &si, &ki, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EKEYREJECTED && err.code == AE_POLICY_BAD_SIGNATURE);
                FUZZ_CHECK(payload == NULL);
                dsse_envelope_free(e);
                return 0;
        }
        FUZZ_CHECK(si < dsse_envelope_nsigs(e) && ki == 0);
        FUZZ_CHECK(plen == dsse_envelope_payload_len(e));
        err = (struct attest_err){0};
        if (keylime_import((const char *)payload, plen, &o, &pol, NULL, NULL, &err) < 0)
                FUZZ_CHECK(pol == NULL && err.code != AE_NONE);
        json_decref(pol);
        dsse_envelope_free(e);
        return 0;
}
