/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: cdata_kv_parse, the strict key=value; parser for critical-data buffers. On
 * success every pair must point into the input, obey the key and value alphabets, be unique, and
 * re-serialise to exactly the input.
 */
#include <string.h>

#include "evidence/cdata.h"
#include "tests/fuzz/fuzz.h"

static int key_ok(const char *k, uint32_t n)
{
        if (n < 1 || n > CDATA_KEY_MAX)
                return 0;
        for (uint32_t i = 0; i < n; i++)
                if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
                        return 0;
        return 1;
}

static int val_ok(const char *v, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++)
                if (v[i] < 0x20 || v[i] >= 0x7f || v[i] == ';' || v[i] == '=')
                        return 0;
        return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct cdata_kvs kvs;
        struct attest_err err = {0};
        size_t pos = 0;
        int x;

        x = cdata_kv_parse(data, size, &kvs, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EBADMSG || x == -E2BIG);
                FUZZ_CHECK(err.code != AE_NONE);
                return 0;
        }
        FUZZ_CHECK(x == 0 && size > 0 && size <= CDATA_BUF_MAX);
        FUZZ_CHECK(kvs.n >= 1 && kvs.n <= CDATA_KV_MAX);
        for (uint32_t i = 0; i < kvs.n; i++) {
                const struct cdata_kv *kv = &kvs.kv[i];
                char key[CDATA_KEY_MAX + 1];

                FUZZ_CHECK(fuzz_within(kv->key, kv->key_len, data, size));
                FUZZ_CHECK(fuzz_within(kv->val, kv->val_len, data, size));
                FUZZ_CHECK(key_ok(kv->key, kv->key_len) && val_ok(kv->val, kv->val_len));
                /* pairs are contiguous and in order: key '=' value ';' */
                FUZZ_CHECK((const uint8_t *)kv->key == data + pos);
                FUZZ_CHECK(kv->val == kv->key + kv->key_len + 1 && kv->key[kv->key_len] == '=');
                FUZZ_CHECK(kv->val[kv->val_len] == ';');
                pos += kv->key_len + kv->val_len + 2;
                memcpy(key, kv->key, kv->key_len);
                key[kv->key_len] = '\0';
                FUZZ_CHECK(cdata_kv_get(&kvs, key) == kv); /* unique keys */
                x = cdata_kv_bool(&kvs, key);
                FUZZ_CHECK(x == -EBADMSG || x == (kv->val_len == 1 && kv->val[0] == '1'));
        }
        FUZZ_CHECK(pos == size);
        FUZZ_CHECK(cdata_kv_bool(&kvs, "no key is this long, nor has spaces") == -ENOENT);
        return 0;
}
