/* SPDX-License-Identifier: MIT */
/*
 * The IMA signature header (rt_sig_parse) and the signature check behind it on arbitrary bytes:
 * the input is the sig field of an ima-sig entry over a fixed sha256 digest, judged by a runtime
 * policy trusting one fixed EC key (the seed is evmctl's real signature by it, so the fuzzer
 * reaches the key lookup and OpenSSL's verify). No crash, no leak; a parsed header's signature
 * lies inside the input and fills it; a pass needs a well-formed header naming the trusted key
 * and sha256 and a signature of DER's minimum size (a 1-byte seed must never pass).
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
                json_t *o = json_pack("{s:[s]}", "keys", key);

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
                                   s.hash_algo == RT_ALGO_SHA256 && s.sig_len >= 8);
                if (x == RT_FAIL)
                        FUZZ_CHECK(why == RT_REASON_BAD_SIGNATURE || why == RT_REASON_UNKNOWN_KEY ||
                                   (why == RT_REASON_NOT_ALLOWED && size == 0));
                FUZZ_CHECK(st.passed + st.failed == 1);
                rt_ctx_free(c);
        }
        return 0;
}
