/* SPDX-License-Identifier: MIT */
/* EAR: appraisal, claims-set, key and ES256 signature (daemon/ear.h). */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>

#include "daemon/ear.h"
#include "daemon/store/store.h"
#include "util/hex.h"
#include "util/ossl.h"

/* ---- appraisal ---- */

static const char *const status_names[] = {
        [EAR_NONE] = "none",
        [EAR_AFFIRMING] = "affirming",
        [EAR_WARNING] = "warning",
        [EAR_CONTRAINDICATED] = "contraindicated",
};

static const char *const tv_names[] = {
        [EAR_TV_INSTANCE_IDENTITY] = "instance-identity",
        [EAR_TV_CONFIGURATION] = "configuration",
        [EAR_TV_EXECUTABLES] = "executables",
        [EAR_TV_HARDWARE] = "hardware",
};

const char *ear_status_name(enum ear_status s)
{
        return (unsigned)s < ARRAY_SIZE(status_names) ? status_names[s] : "none";
}

const char *ear_tv_name(enum ear_tv t)
{
        return (unsigned)t < ARRAY_SIZE(tv_names) ? tv_names[t] : "unknown";
}

/*
 * The trustworthiness-vector category of every claim id (docs/ear.md has the table and the
 * reasons; AR4SI draft-ietf-rats-ar4si §2.3.4 defines the categories):
 *   configuration  how the kernel is set up: SELinux, trusted keys, CFI, the kernel release
 *   executables    what was loaded: IMA's boot aggregate and runtime appraisal, the boot
 *                  applications (bootloaders, kernels) the firmware measured
 *   hardware       the platform's hardware and firmware: the quoted PCRs, the firmware's event log
 *                  replaying to them, its separators and TPM start-up locality, Secure Boot and
 *                  its variables (firmware state)
 * Every claim id has an entry: test-ear checks that none is left at instance-identity.
 */
static const enum ear_tv claim_categories[CLAIM__COUNT] = {
        [CLAIM_SELINUX_INITIALIZED] = EAR_TV_CONFIGURATION,
        [CLAIM_SELINUX_ENFORCING] = EAR_TV_CONFIGURATION,
        [CLAIM_SELINUX_CHECKREQPROT] = EAR_TV_CONFIGURATION,
        [CLAIM_SELINUX_POLICYCAP] = EAR_TV_CONFIGURATION,
        [CLAIM_SELINUX_NEVER_PERMISSIVE] = EAR_TV_CONFIGURATION,
        [CLAIM_SELINUX_POLICY_SHA256] = EAR_TV_CONFIGURATION,
        [CLAIM_TRUSTED_KEYS_SOURCE] = EAR_TV_CONFIGURATION,
        [CLAIM_TRUSTED_KEYS_RNG] = EAR_TV_CONFIGURATION,
        [CLAIM_TRUSTED_KEYS_REQUESTED] = EAR_TV_CONFIGURATION,
        [CLAIM_TRUSTED_KEYS_ANCHORED] = EAR_TV_CONFIGURATION,
        [CLAIM_CFI_ENABLED] = EAR_TV_CONFIGURATION,
        [CLAIM_CFI_MODE] = EAR_TV_CONFIGURATION,
        [CLAIM_CFI_PERMISSIVE] = EAR_TV_CONFIGURATION,
        [CLAIM_CFI_ANCHORED] = EAR_TV_CONFIGURATION,
        [CLAIM_KERNEL_VERSION] = EAR_TV_CONFIGURATION,
        [CLAIM_KERNEL_ANCHORED] = EAR_TV_CONFIGURATION,
        [CLAIM_TPM_PCR] = EAR_TV_HARDWARE,
        [CLAIM_IMA_BOOT_AGGREGATE] = EAR_TV_EXECUTABLES,
        [CLAIM_IMA_RUNTIME] = EAR_TV_EXECUTABLES,
        [CLAIM_BOOT_PCRS_REPLAY] = EAR_TV_HARDWARE,
        [CLAIM_BOOT_SECUREBOOT] = EAR_TV_HARDWARE,
        [CLAIM_BOOT_VARIABLE] = EAR_TV_HARDWARE,
        [CLAIM_BOOT_BOOTLOADER] = EAR_TV_EXECUTABLES,
        [CLAIM_BOOT_KERNEL] = EAR_TV_EXECUTABLES,
        [CLAIM_BOOT_SEPARATORS] = EAR_TV_HARDWARE,
        [CLAIM_BOOT_STARTUP_LOCALITY] = EAR_TV_HARDWARE,
};

enum ear_tv ear_claim_category(enum claim_id id)
{
        /* an id this table does not know says nothing about the host's identity */
        return (unsigned)id < CLAIM__COUNT ? claim_categories[id] : EAR_TV_CONFIGURATION;
}

/* affirming, warning (unanchored), contraindicated values per category */
static const int category_values[EAR_TV__COUNT][3] = {
        [EAR_TV_INSTANCE_IDENTITY] = {AR4SI_INSTANCE_RECOGNIZED, AR4SI_INSTANCE_RECOGNIZED,
                                      AR4SI_CRYPTO_FAILED},
        [EAR_TV_CONFIGURATION] = {AR4SI_CONFIG_APPROVED, AR4SI_CONFIG_UNAVAILABLE,
                                  AR4SI_CONFIG_UNSUPPORTABLE},
        [EAR_TV_EXECUTABLES] = {AR4SI_EXEC_APPROVED_BOOT, AR4SI_EXEC_UNRECOGNIZED,
                                AR4SI_EXEC_CONTRAINDICATED},
        [EAR_TV_HARDWARE] = {AR4SI_HW_GENUINE, AR4SI_HW_UNSAFE, AR4SI_HW_CONTRAINDICATED},
};

void ear_appraise(const struct verdict *v, bool verified, struct ear_appraisal *ret)
{
        bool seen[EAR_TV__COUNT] = {false}, bad[EAR_TV__COUNT] = {false},
             loose[EAR_TV__COUNT] = {false};
        bool any_bad = false, any_loose = false, runtime = false;

        memset(ret, 0, sizeof(*ret));
        if (v->status == VERDICT_ERROR) {
                /* the round could not be judged: no claim about the host, and it says why */
                for (int t = 0; t < EAR_TV__COUNT; t++)
                        ret->tv[t] = AR4SI_VERIFIER_MALFUNCTION;
                ret->status = EAR_NONE;
                return;
        }
        if (!verified) {
                for (int t = 0; t < EAR_TV__COUNT; t++)
                        ret->tv[t] = AR4SI_CRYPTO_FAILED;
                ret->status = EAR_CONTRAINDICATED;
                return;
        }
        for (size_t i = 0; i < v->n_claims; i++) {
                const struct verdict_claim *c = &v->claims[i];
                enum ear_tv t = ear_claim_category(c->id);

                seen[t] = true;
                runtime |= c->id == CLAIM_IMA_RUNTIME;
                if (verdict_claim_failing(c))
                        bad[t] = any_bad = true;
                else if (!c->anchored)
                        loose[t] = any_loose = true;
        }
        ret->tv[EAR_TV_INSTANCE_IDENTITY] = AR4SI_INSTANCE_RECOGNIZED;
        for (int t = EAR_TV_INSTANCE_IDENTITY + 1; t < EAR_TV__COUNT; t++)
                ret->tv[t] = !seen[t]   ? AR4SI_NO_CLAIM
                             : bad[t]   ? category_values[t][2]
                             : loose[t] ? category_values[t][1]
                                        : category_values[t][0];
        /* every file and ima-buf measurement was appraised against ima.runtime, and all passed:
         * approved executables during and after boot (2), not only at boot (3) */
        if (runtime && ret->tv[EAR_TV_EXECUTABLES] == AR4SI_EXEC_APPROVED_BOOT)
                ret->tv[EAR_TV_EXECUTABLES] = AR4SI_EXEC_APPROVED_RUNTIME;
        if (any_bad || v->status != VERDICT_PASS)
                ret->status = EAR_CONTRAINDICATED;
        else if (v->n_claims == 0)
                ret->status = EAR_NONE;
        else if (any_loose)
                ret->status = EAR_WARNING;
        else
                ret->status = EAR_AFFIRMING;
}

/* ---- the appraisal as the store keeps it ---- */

_Static_assert(EAR_TV__COUNT == STORE_TV_COUNT, "the results table has a column per category");

/* ear.status as its AR4SI trustworthiness tier (draft-fv-rats-ear: ear.status in CBOR) */
static const int64_t status_tiers[] = {
        [EAR_NONE] = 0,
        [EAR_AFFIRMING] = 2,
        [EAR_WARNING] = 32,
        [EAR_CONTRAINDICATED] = 96,
};

void ear_appraisal_to_store(const struct ear_appraisal *a, struct store_appraisal *ret)
{
        assert((unsigned)a->status < ARRAY_SIZE(status_tiers));
        ret->status = status_tiers[a->status];
        for (int t = 0; t < EAR_TV__COUNT; t++)
                ret->tv[t] = a->tv[t];
}

/* Whether ear_appraise() gives category t the value v. */
static bool tv_value_known(enum ear_tv t, int64_t v)
{
        if (v == AR4SI_VERIFIER_MALFUNCTION || v == AR4SI_NO_CLAIM || v == AR4SI_CRYPTO_FAILED)
                return true;
        for (size_t k = 0; k < ARRAY_SIZE(category_values[t]); k++)
                if (v == category_values[t][k])
                        return true;
        return t == EAR_TV_EXECUTABLES && v == AR4SI_EXEC_APPROVED_RUNTIME;
}

int ear_appraisal_from_store(const struct store_appraisal *s, struct ear_appraisal *ret,
                             struct attest_err *err)
{
        struct ear_appraisal a = {0};
        size_t i = 0;

        while (i < ARRAY_SIZE(status_tiers) && status_tiers[i] != s->status)
                i++;
        if (i == ARRAY_SIZE(status_tiers))
                return attest_fail(err, -EBADMSG, AE_STORE_CORRUPT,
                                   "stored appraisal: ear.status %" PRId64 " is not a tier",
                                   s->status);
        a.status = (enum ear_status)i;
        for (int t = 0; t < EAR_TV__COUNT; t++) {
                if (!tv_value_known((enum ear_tv)t, s->tv[t]))
                        return attest_fail(err, -EBADMSG, AE_STORE_CORRUPT,
                                           "stored appraisal: %s %" PRId64
                                           " is not a value of that category",
                                           ear_tv_name((enum ear_tv)t), s->tv[t]);
                a.tv[t] = (int)s->tv[t];
        }
        *ret = a;
        return 0;
}

/* ---- claims-set ---- */

bool ear_nonce_valid(const char *s)
{
        size_t n = strnlen(s, EAR_NONCE_TEXT_MAX + 1);

        /* unpadded base64url of 8..64 bytes: 11..86 characters, never 1 mod 4 */
        if (n < 11 || n > EAR_NONCE_TEXT_MAX || n % 4 == 1)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_'))
                        return false;
        }
        return true;
}

int ear_claims(const struct ear_input *in, json_t **ret)
{
        json_auto_t *o = NULL;
        json_t *tv, *sub;

        tv = json_object();
        if (!tv)
                return -ENOMEM;
        for (int t = 0; t < EAR_TV__COUNT; t++)
                if (json_object_set_new(tv, ear_tv_name(t), json_integer(in->a->tv[t])) < 0) {
                        json_decref(tv);
                        return -ENOMEM;
                }
        sub = json_pack("{s:s, s:o, s:s*, s:{s:I, s:I}}", "ear.status",
                        ear_status_name(in->a->status), "ear.trustworthiness-vector", tv,
                        "ear.appraisal-policy-id", in->policy, "attestd.result", "id",
                        (json_int_t)in->result_id, "time", (json_int_t)(in->result_time / 1000));
        if (!sub)
                return -ENOMEM;
        o = json_pack("{s:s, s:I, s:{s:s, s:s}, s:{s:o}}", "eat_profile", EAR_PROFILE, "iat",
                      (json_int_t)in->iat, "ear.verifier-id", "developer", EAR_DEVELOPER, "build",
                      in->build, "submods", in->agent, sub);
        if (!o)
                return -ENOMEM;
        if (in->nonce && json_object_set_new(o, "eat_nonce", json_string(in->nonce)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- key and signature ---- */

struct ear_signer {
        char *pem; /* secret: wiped on free */
        size_t pem_len;
        char kid[EAR_KID_MAX + 1];
        char x[EAR_KID_MAX + 1], y[EAR_KID_MAX + 1]; /* base64url of the 32-byte coordinates */
};

/* Unpadded base64url of n <= 48 bytes into out (at least 65 bytes). */
static void b64url(const uint8_t *in, size_t n, char *out)
{
        char tmp[72];
        size_t k = 0;

        b64_encode(in, n, tmp);
        for (size_t i = 0; tmp[i] && tmp[i] != '='; i++)
                out[k++] = tmp[i] == '+' ? '-' : tmp[i] == '/' ? '_' : tmp[i];
        out[k] = '\0';
}

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
        (void)buf;
        (void)size;
        (void)rwflag;
        (void)u;
        return -1;
}

int ear_signer_new(const char *pem, size_t len, struct ear_signer **ret, struct attest_err *err)
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *k = NULL;
        _cleanup_(BN_freep) BIGNUM *bx = NULL;
        _cleanup_(BN_freep) BIGNUM *by = NULL;
        _cleanup_(ear_signer_freep) struct ear_signer *s = NULL;
        uint8_t x[32], y[32], md[32];
        char group[64] = "", canon[160];
        unsigned mdlen = 0;
        size_t glen = 0;
        BIO *b;

        if (len > INT32_MAX)
                return attest_fail(err, -EINVAL, AE_EAR_KEY, "key too large");
        b = BIO_new_mem_buf(pem, (int)len);
        if (!b)
                return -ENOMEM;
        k = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
        BIO_free(b);
        if (!k)
                return attest_fail(err, -EINVAL, AE_EAR_KEY, "not an unencrypted PEM private key");
        if (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC)
                return attest_fail(err, -EINVAL, AE_EAR_KEY,
                                   "an %s key; ES256 needs an EC key on P-256 (prime256v1)",
                                   EVP_PKEY_get0_type_name(k) ? EVP_PKEY_get0_type_name(k)
                                                              : "unknown");
        if (!EVP_PKEY_get_group_name(k, group, sizeof(group), &glen) ||
            OBJ_sn2nid(group) != NID_X9_62_prime256v1)
                return attest_fail(err, -EINVAL, AE_EAR_KEY,
                                   "an EC key on curve %s; ES256 needs P-256 (prime256v1)",
                                   group[0] ? group : "(unknown)");
        if (!EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &bx) ||
            !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &by) ||
            BN_bn2binpad(bx, x, sizeof(x)) != (int)sizeof(x) ||
            BN_bn2binpad(by, y, sizeof(y)) != (int)sizeof(y))
                return attest_fail(err, -EINVAL, AE_EAR_KEY, "no public point in the key");
        s = calloc(1, sizeof(*s));
        if (!s || !(s->pem = malloc(len + 1)))
                return -ENOMEM;
        memcpy(s->pem, pem, len);
        s->pem[len] = '\0';
        s->pem_len = len;
        b64url(x, sizeof(x), s->x);
        b64url(y, sizeof(y), s->y);
        /* RFC 7638 §3.2: the required members in lexicographic order, no white space */
        snprintf(canon, sizeof(canon),
                 "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", s->x, s->y);
        if (!EVP_Digest(canon, strlen(canon), md, &mdlen, EVP_sha256(), NULL) ||
            mdlen != sizeof(md))
                return attest_fail(err, -EINVAL, AE_EAR_KEY, "SHA-256 failed");
        b64url(md, sizeof(md), s->kid);
        *ret = TAKE_PTR(s);
        return 0;
}

struct ear_signer *ear_signer_free(struct ear_signer *s)
{
        if (!s)
                return NULL;
        if (s->pem) {
                OPENSSL_cleanse(s->pem, s->pem_len + 1);
                free(s->pem);
        }
        free(s);
        return NULL;
}

const char *ear_signer_kid(const struct ear_signer *s)
{
        return s->kid;
}

int ear_signer_jwks(const struct ear_signer *s, json_t **ret)
{
        json_t *o = json_pack("{s:[{s:s, s:s, s:s, s:s, s:s, s:s, s:s}]}", "keys", "kty", "EC",
                              "crv", "P-256", "x", s->x, "y", s->y, "kid", s->kid, "use", "sig",
                              "alg", "ES256");

        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

static void jwt_freep(jwt_t **p)
{
        jwt_free(*p);
}

int ear_sign(const struct ear_signer *s, const json_t *claims, char **ret)
{
        _cleanup_(jwt_freep) jwt_t *j = NULL;
        _cleanup_free_ char *text = json_dumps(claims, JSON_COMPACT);
        char *tok;

        if (!text || jwt_new(&j) != 0)
                return -ENOMEM;
        /* libjwt copies the key (and wipes its copy in jwt_free) */
        if (jwt_set_alg(j, JWT_ALG_ES256, (const unsigned char *)s->pem, (int)s->pem_len) != 0 ||
            jwt_add_header(j, "kid", s->kid) != 0 || jwt_add_grants_json(j, text) != 0)
                return -EIO;
        tok = jwt_encode_str(j);
        if (!tok)
                return errno == ENOMEM ? -ENOMEM : -EIO;
        *ret = tok;
        return 0;
}
