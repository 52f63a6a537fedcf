/* SPDX-License-Identifier: MIT */
/*
 * daemon/akcache: parsed AKs by agent id on util/lru.h. Hits share one entry; a changed public
 * area is a new entry; over the cap the least recently used goes; an evicted or dropped entry
 * stays valid for its holder (ASan sees a use after free).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <tss2/tss2_mu.h>

#include "daemon/akcache.h"
#include "tests/unit/testutil.h"

/* A marshalled TPM2B_PUBLIC of a fresh P-256 restricted signing key (an AK's template). */
static size_t ak_public(uint8_t out[1024])
{
        EVP_PKEY *key = EVP_EC_gen("P-256");
        TPM2B_PUBLIC pub = {0};
        TPMT_PUBLIC *p = &pub.publicArea;
        uint8_t pt[65];
        size_t pl = 0, off = 0;

        ck_assert_ptr_nonnull(key);
        p->type = TPM2_ALG_ECC;
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                              TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                              TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
        p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
        p->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
        p->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
        p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
        ck_assert_int_eq(
                EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &pl),
                1);
        ck_assert_uint_eq(pl, 65);
        p->unique.ecc.x.size = 32;
        memcpy(p->unique.ecc.x.buffer, pt + 1, 32);
        p->unique.ecc.y.size = 32;
        memcpy(p->unique.ecc.y.buffer, pt + 33, 32);
        ck_assert_int_eq(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, 1024, &off), TSS2_RC_SUCCESS);
        EVP_PKEY_free(key);
        return off;
}

static uint8_t pub[3][1024];
static size_t pub_len[3];

static void setup(void)
{
        for (int i = 0; i < 3; i++)
                pub_len[i] = ak_public(pub[i]);
}

static struct akcache_ref *get(struct akcache *c, const char *id, int k)
{
        struct attest_err err = {0};
        struct akcache_ref *r = NULL;

        ck_assert_msg(akcache_get(c, id, pub[k], pub_len[k], &r, &err) == 0, "%s: %s", id, err.msg);
        ck_assert_ptr_nonnull(akcache_ak(r));
        return r;
}

START_TEST(test_akcache_hit_shares_and_new_public_replaces)
{
        struct akcache *c = NULL;
        struct akcache_ref *a, *b, *a2;

        ck_assert_int_eq(akcache_new(4, &c), 0);
        a = get(c, "a", 0);
        b = get(c, "a", 0);
        ck_assert_ptr_eq(a, b); /* a hit: the same parsed key */
        akcache_put(c, b);
        /* re-enrolled: the stored public area changed, the old entry is not served */
        a2 = get(c, "a", 1);
        ck_assert_ptr_ne(a2, a);
        akcache_put(c, a); /* held past its replacement: still valid */
        b = get(c, "a", 1);
        ck_assert_ptr_eq(b, a2);
        akcache_put(c, b);
        akcache_put(c, a2);
        /* an id over the cap is refused */
        {
                struct akcache_ref *r = NULL;
                char id[66];

                memset(id, 'x', 65);
                id[65] = '\0';
                ck_assert_int_eq(akcache_get(c, id, pub[0], pub_len[0], &r, NULL), -EINVAL);
                ck_assert_ptr_null(r);
        }
        akcache_free(c);
}
END_TEST

START_TEST(test_akcache_evicts_least_recently_used)
{
        struct akcache *c = NULL;
        struct akcache_ref *a, *b, *x, *held;

        ck_assert_int_eq(akcache_new(2, &c), 0);
        a = get(c, "a", 0);
        b = get(c, "b", 1);
        held = b;
        akcache_put(c, a);
        /* a used again: b is now the least recently used */
        x = get(c, "a", 0);
        ck_assert_ptr_eq(x, a);
        akcache_put(c, x);
        x = get(c, "c", 2); /* over the cap: b goes */
        akcache_put(c, x);
        x = get(c, "a", 0);
        ck_assert_ptr_eq(x, a); /* still cached */
        akcache_put(c, x);
        x = get(c, "b", 1);
        ck_assert_ptr_ne(x, held);               /* parsed again */
        ck_assert_ptr_nonnull(akcache_ak(held)); /* the evicted one, still held, still valid */
        akcache_put(c, held);
        akcache_put(c, x);
        akcache_free(c);
}
END_TEST

START_TEST(test_akcache_drop_and_zero_cap)
{
        struct akcache *c = NULL;
        struct akcache_ref *a, *x;

        ck_assert_int_eq(akcache_new(2, &c), 0);
        a = get(c, "a", 0);
        akcache_drop(c, "a");
        akcache_drop(c, "never-seen");
        x = get(c, "a", 0);
        ck_assert_ptr_ne(x, a); /* forgotten: parsed again */
        akcache_put(c, a);
        akcache_put(c, x);
        akcache_free(c);
        /* a cache of none parses every time, and frees on the last put */
        ck_assert_int_eq(akcache_new(0, &c), 0);
        a = get(c, "a", 0);
        x = get(c, "a", 0);
        ck_assert_ptr_ne(x, a);
        akcache_put(c, a);
        akcache_put(c, x);
        akcache_free(c);
}
END_TEST

static Suite *akcache_suite(void)
{
        Suite *s = suite_create("akcache");
        TCase *tc = tcase_create("akcache");

        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_add_test(tc, test_akcache_hit_shares_and_new_public_replaces);
        tcase_add_test(tc, test_akcache_evicts_least_recently_used);
        tcase_add_test(tc, test_akcache_drop_and_zero_cap);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(akcache_suite());
}
