/* SPDX-License-Identifier: MIT */
/*
 * The IMA signature header (rt_sig_parse) and the signature check behind it on arbitrary bytes:
 * the input is the sig field of an ima-sig entry over a fixed sha256 digest, judged by a runtime
 * policy trusting one fixed EC key (the seed is evmctl's real signature by it, so the fuzzer
 * reaches the key lookup and OpenSSL's verify). No crash, no leak; a parsed header's signature
 * lies inside the input and fills it; a pass needs a well-formed header naming the trusted key
 * and sha256 and a signature of DER's minimum size (a 1-byte seed must never pass).
 *
 * The same bytes are then judged as the modsig field of an ima-modsig entry (rt_modsig_check, the
 * CMS parse and verify): the policy also trusts one fixed RSA certificate, and the seeds
 * signfile-rsa-*modsig are the kernel's scripts/sign-file signatures by it (by issuer+serial and
 * by -k subjectKeyIdentifier) over "fuzz module content\n", whose sha256 is d-modsig. A reason
 * within the enum, 1 exactly when it is ok, too_big exactly above RT_MODSIG_MAX, and an entry that
 * passes signed or fails bad_signature/unknown_key (not_allowed for no modsig).
 */
#include <string.h>

#include <jansson.h>

#include "policy/runtime.h"
#include "tests/fuzz/fuzz.h"
#include "util/hex.h"

static const char key[] = "-----BEGIN PUBLIC KEY-----\n"
                          "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOfrxnUU4oeI6ZZbnp8poWoa4eJyq\n"
                          "vAW4eoKBTyj2dhrbLf7A7hp53ZnBeGVWnBp1mzI4mBYXw/Iwk0sk8vhUNQ==\n"
                          "-----END PUBLIC KEY-----\n";
static const char cert[] = "-----BEGIN CERTIFICATE-----\n"
                           "MIIDHzCCAgegAwIBAgIUbwR23o1z205O+r4KzIMDi1+GKWIwDQYJKoZIhvcNAQEL\n"
                           "BQAwHjEcMBoGA1UEAwwTYXR0ZXN0ZC1mdXp6LW1vZHNpZzAgFw0yNjEyMDMyMzU0\n"
                           "MzZaGA8yMTI2MTEwOTIzNTQzNlowHjEcMBoGA1UEAwwTYXR0ZXN0ZC1mdXp6LW1v\n"
                           "ZHNpZzCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKv4wfRcNMbCgHyd\n"
                           "aHjxUBX6iKQwWcurmusqLHTrewJYrBs4xGIiktb2NGagR2+2iwjkZLLIHNkRGpY7\n"
                           "KhRa/1UZe4UkD2GWq7yfc+2HNnIJIcFBAIH8ST2ohVURWXtuP9t9pFgH2Kik07su\n"
                           "FQUshfNNBfmY3lp8wRSHk2Vui66PTxvArIyUGC5N+5gtBCXode0lCKaYZvGUIYx2\n"
                           "agPe+MOoiFdHniln6dzBZk4yVRJYuPfcU6Cefrkfl4/kHiBMP9joBjZMspTDvwqX\n"
                           "O1ajnCXW6iytzBusiRormRniRte6GGCjiUA//RC/15GwBrGEE6ekDJvnNxPPCjE7\n"
                           "MPdc3R0CAwEAAaNTMFEwHwYDVR0jBBgwFoAUl3paHPY3pRxJJBB5pVR/JnF+p8ww\n"
                           "DwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUl3paHPY3pRxJJBB5pVR/JnF+p8ww\n"
                           "DQYJKoZIhvcNAQELBQADggEBAFVG1eWDzjPyn+UghY3xyyyM4/90lf5LpcOcein4\n"
                           "sluqlbDfZo9XB8zptA0pM0lHzFNNyCnEZ9JdqvbBiPRjWYIBt9QmuexumaoCBeoW\n"
                           "OKzDe9vqFTX3rxq8CCVMZFfR+hxQ9xgnqvR4u0qc/+VytUVu9H4fH+laR7qzEQ2P\n"
                           "Iwpjqy7qwDw4FbfHS9DGSE/8RVuqvdWNhza7B40bDFZ1ZHVI7qdEKqTwWa1FNsQL\n"
                           "rh8hg8E5XyzLiQn8ruIZ2OhxhrwTd+l5zUljyWuLRboK9fRIdrGsWBaCK1/wI2o6\n"
                           "XtfbUT0fWohdyMjDPuOqWm2JA7JYNuWxvC+n0VjRHgp11TE=\n"
                           "-----END CERTIFICATE-----\n";
/* sha256 of the module content sign-file signed with that certificate's key */
static const char modsig_hex[] = "60fbd0dd7a31404f0cbb5a40398f7ea5170184fa67a39563cf0add19d86df6f5";
/* sha256 of the file evmctl ima_sign signed with that key */
static const char digest_hex[] = "a39bf0d387c9e7c1bdabf58cee39ccd756e9e3c023a877034b470693dc69b168";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct rt_policy *p;
        static struct rt_state st;
        struct rt_ctx *c = NULL;
        struct rt_sig s;
        uint8_t d[32];
        size_t dn = 0;
        int x;

        if (!p) {
                json_t *o = json_pack("{s:[s,s]}", "keys", key, cert);

                FUZZ_CHECK(o && rt_policy_from_json(o, "$", &p, NULL) == 0);
                json_decref(o);
        }
        FUZZ_CHECK(hex_decode(digest_hex, 64, d, sizeof(d), &dn) == 0 && dn == 32);
        x = rt_sig_parse(data, size, &s);
        if (x == 0) {
                FUZZ_CHECK(s.sig_len > 0 && fuzz_within(s.sig, s.sig_len, data, size));
                FUZZ_CHECK((size_t)s.sig_len + 9 == size);
                FUZZ_CHECK(s.version == 2 || s.version == 3);
        } else {
                FUZZ_CHECK(x == -EBADMSG || x == -EOPNOTSUPP);
        }
        {
                struct ima_entry e = {.pcr = 10,
                                      .tmpl = {.known = true},
                                      .algo = "sha256",
                                      .algo_len = 6,
                                      .digest = d,
                                      .digest_len = 32,
                                      .name = "/f.txt",
                                      .name_len = 6,
                                      .sig = data,
                                      .sig_len = (uint32_t)size};
                enum rt_reason why = RT_REASON__COUNT;

                rt_state_init(&st);
                FUZZ_CHECK(rt_ctx_new(p, &c) == 0);
                x = rt_eval_entry(c, &e, 1, &st, &why);
                FUZZ_CHECK(x == RT_PASS_SIGNED || x == RT_FAIL);
                if (x == RT_PASS_SIGNED)
                        FUZZ_CHECK(rt_sig_parse(data, size, &s) == 0 && s.keyid == 0xd14a6f61 &&
                                   s.hash_algo == HASHALG_SHA256 && s.sig_len >= 8);
                if (x == RT_FAIL)
                        FUZZ_CHECK(why == RT_REASON_BAD_SIGNATURE || why == RT_REASON_UNKNOWN_KEY ||
                                   (why == RT_REASON_NOT_ALLOWED && size == 0));
                FUZZ_CHECK(st.passed + st.failed == 1);
                rt_ctx_free(c);
        }
        {
                uint8_t dm[32];
                size_t dmn = 0;
                struct ima_entry e = {.pcr = 10,
                                      .tmpl = {.known = true},
                                      .algo = "sha256",
                                      .algo_len = 6,
                                      .digest = d,
                                      .digest_len = 32,
                                      .name = "/m.ko",
                                      .name_len = 5,
                                      .modsig_algo = "sha256",
                                      .modsig_algo_len = 6,
                                      .modsig_digest = dm,
                                      .modsig_digest_len = 32,
                                      .modsig = size ? data : NULL,
                                      .modsig_len = (uint32_t)size};
                enum rt_modsig_why mw = RT_MODSIG__COUNT;
                enum rt_reason why = RT_REASON__COUNT;

                FUZZ_CHECK(hex_decode(modsig_hex, 64, dm, sizeof(dm), &dmn) == 0 && dmn == 32);
                x = rt_modsig_check(p, &e, &mw);
                FUZZ_CHECK(x == 0 || x == 1);
                FUZZ_CHECK((unsigned)mw < RT_MODSIG__COUNT && (x == 1) == (mw == RT_MODSIG_OK));
                FUZZ_CHECK((mw == RT_MODSIG_TOO_BIG) == (size > RT_MODSIG_MAX));
                if (size == 0)
                        FUZZ_CHECK(mw == RT_MODSIG_MALFORMED);
                rt_state_init(&st);
                FUZZ_CHECK(rt_ctx_new(p, &c) == 0);
                x = rt_eval_entry(c, &e, 1, &st, &why);
                FUZZ_CHECK(x == (mw == RT_MODSIG_OK ? RT_PASS_SIGNED : RT_FAIL));
                if (x == RT_FAIL)
                        FUZZ_CHECK(size == 0 ? why == RT_REASON_NOT_ALLOWED
                                             : why == (mw == RT_MODSIG_UNKNOWN_SIGNER
                                                               ? RT_REASON_UNKNOWN_KEY
                                                               : RT_REASON_BAD_SIGNATURE));
                FUZZ_CHECK(st.passed + st.failed == 1 && st.signed_ok == (x == RT_PASS_SIGNED));
                rt_ctx_free(c);
        }
        return 0;
}
