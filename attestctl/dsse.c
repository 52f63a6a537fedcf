/* SPDX-License-Identifier: MIT */
/*
 * DSSE envelopes of Keylime's signed runtime policies (dsse.h). The format is the DSSE v1
 * specification's (secure-systems-lab/dsse, envelope.md and protocol.md); what Keylime writes and
 * accepts (its payloadType, ECDSA with SHA-256 on every curve, DER signatures, hex or base64
 * decoding) was read from Keylime's keylime/dsse and keylime/signing.py. The code is ours.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "attestctl/dsse.h"
#include "evidence/jpath.h"
#include "util/hex.h"
#include "util/ossl.h"

struct dsse_sig {
        size_t len;
        uint8_t b[DSSE_SIG_MAX];
};

struct dsse_envelope {
        uint8_t *payload; /* decoded, payload_len bytes (owned) */
        size_t payload_len;
        size_t nsigs;
        struct dsse_sig sigs[DSSE_SIGS_MAX];
};

struct dsse_envelope *dsse_envelope_free(struct dsse_envelope *e)
{
        if (!e)
                return NULL;
        free(e->payload);
        free(e);
        return NULL;
}

size_t dsse_envelope_nsigs(const struct dsse_envelope *e)
{
        return e ? e->nsigs : 0;
}

size_t dsse_envelope_payload_len(const struct dsse_envelope *e)
{
        return e ? e->payload_len : 0;
}

bool dsse_is_envelope(const json_t *doc)
{
        return json_is_object(doc) &&
               (json_object_get(doc, "payload") || json_object_get(doc, "payloadType") ||
                json_object_get(doc, "signatures"));
}

/* ---- payload and sig text: as Keylime decodes them ---- */

/* The most bytes s (n characters) can decode to; 0 when it cannot decode at all. */
static size_t decoded_bound(const char *s, size_t n)
{
        if (n > 0 && n % 2 == 0 && hex_is_any(s, n))
                return n / 2;
        return n / 4 * 3;
}

/*
 * Keylime's order (keylime/dsse/dsse.py b64dec): hex when the whole non-empty string is an even
 * number of hex digits (either case), else standard base64, else URL-safe base64; base64 padded
 * (Python's strict mode), and here also with canonical trailing bits. out holds max bytes.
 * 0, -EBADMSG neither, -E2BIG more than max bytes, -ENOMEM.
 */
static int decode_text(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len)
{
        _cleanup_free_ char *std = NULL;

        if (n > 0 && n % 2 == 0 && hex_is_any(s, n))
                return hex_decode(s, n, out, max, ret_len);
        if (memchr(s, '-', n) || memchr(s, '_', n)) {
                /* Keylime's second try: '-' and '_' read as '+' and '/' (the rest unchanged) */
                if (!(std = malloc(n)))
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        std[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
                s = std;
        }
        return b64_decode(s, n, out, max, ret_len);
}

/* ---- the envelope ---- */

static int need_string(const json_t *obj, const char *path, const char *key, const json_t **ret,
                       struct attest_err *err)
{
        const json_t *v = json_object_get(obj, key);
        char p[JPATH_MAX];

        jpath_join(p, path, key);
        if (!v)
                return jpath_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, p, "missing");
        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        *ret = v;
        return 0;
}

static int read_payload(const json_t *v, size_t payload_max, struct dsse_envelope *e,
                        struct attest_err *err)
{
        const char *s = json_string_value(v);
        size_t n = json_string_length(v), bound = decoded_bound(s, n), got = 0;
        int x;

        if (bound > payload_max) /* decoding stops with -E2BIG past the cap */
                bound = payload_max;
        if (!(e->payload = malloc(bound ? bound : 1)))
                return -ENOMEM;
        x = decode_text(s, n, e->payload, bound, &got);
        if (x == -E2BIG)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, "$.payload",
                                  "more than %zu bytes once decoded", payload_max);
        if (x == -ENOMEM)
                return x;
        if (x < 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.payload",
                                  "not base64 (standard or URL-safe, padded) nor hex");
        e->payload_len = got;
        return 0;
}

static int read_signature(const json_t *sig, size_t i, struct dsse_sig *ret, struct attest_err *err)
{
        static const char *const keys[] = {"keyid", "sig", NULL};
        const json_t *v = NULL, *keyid;
        char p[JPATH_MAX], q[JPATH_MAX];
        int x;

        jpath_index(p, "$.signatures", i);
        if ((x = jpath_object(sig, p, keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        /* keyid: optional, a hint only (every signature is tried with every key) */
        if ((keyid = json_object_get(sig, "keyid"))) {
                jpath_join(q, p, "keyid");
                if (!json_is_string(keyid))
                        return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not a string");
                if (json_string_length(keyid) > DSSE_KEYID_MAX)
                        return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, q, "%zu bytes > %u",
                                          json_string_length(keyid), DSSE_KEYID_MAX);
        }
        if ((x = need_string(sig, p, "sig", &v, err)) < 0)
                return x;
        jpath_join(q, p, "sig");
        /* hex is the densest text Keylime reads: longer than that is over the cap in any case */
        if (json_string_length(v) > 2 * (size_t)DSSE_SIG_MAX)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, q,
                                  "%zu characters: more than %u bytes", json_string_length(v),
                                  DSSE_SIG_MAX);
        x = decode_text(json_string_value(v), json_string_length(v), ret->b, DSSE_SIG_MAX,
                        &ret->len);
        if (x == -E2BIG)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, q,
                                  "more than %u bytes once decoded", DSSE_SIG_MAX);
        if (x == -ENOMEM)
                return x;
        if (x < 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                  "not base64 (standard or URL-safe, padded) nor hex");
        if (ret->len == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q, "empty");
        return 0;
}

int dsse_envelope_from_json(const json_t *doc, size_t payload_max, struct dsse_envelope **ret,
                            struct attest_err *err)
{
        static const char *const keys[] = {"payload", "payloadType", "signatures", NULL};
        _cleanup_(dsse_envelope_freep) struct dsse_envelope *e = NULL;
        const json_t *v = NULL, *sigs;
        int x;

        if (!doc || !ret)
                return -EINVAL;
        if ((x = jpath_object(doc, "$", keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = need_string(doc, "$", "payloadType", &v, err)) < 0)
                return x;
        if (json_string_length(v) != strlen(DSSE_PAYLOAD_TYPE_KEYLIME) ||
            memcmp(json_string_value(v), DSSE_PAYLOAD_TYPE_KEYLIME,
                   strlen(DSSE_PAYLOAD_TYPE_KEYLIME)) != 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.payloadType",
                                  "not " DSSE_PAYLOAD_TYPE_KEYLIME " (Keylime's runtime policy)");
        if (!(sigs = json_object_get(doc, "signatures")))
                return jpath_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, "$.signatures",
                                  "missing");
        if (!json_is_array(sigs))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, "$.signatures", "not an array");
        if (json_array_size(sigs) == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.signatures",
                                  "no signatures");
        if (json_array_size(sigs) > DSSE_SIGS_MAX)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, "$.signatures",
                                  "%zu signatures > %u", json_array_size(sigs), DSSE_SIGS_MAX);
        if ((x = need_string(doc, "$", "payload", &v, err)) < 0)
                return x;
        if (!(e = calloc(1, sizeof(*e))))
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(sigs); i++) {
                if ((x = read_signature(json_array_get(sigs, i), i, &e->sigs[i], err)) < 0)
                        return x;
                e->nsigs++;
        }
        if ((x = read_payload(v, payload_max, e, err)) < 0)
                return x;
        *ret = TAKE_PTR(e);
        return 0;
}

int dsse_envelope_parse(const char *json, size_t len, size_t max, struct dsse_envelope **ret,
                        struct attest_err *err)
{
        json_t *doc = NULL;
        int x;

        if (!json || !ret)
                return -EINVAL;
        if ((x = jpath_load(json, len, max, AE_POLICY_JSON, &doc, err)) < 0)
                return x;
        x = dsse_envelope_from_json(doc, max, ret, err);
        json_decref(doc);
        return x;
}

/* ---- keys ---- */

int dsse_key_load(const char *pem, size_t len, EVP_PKEY **ret, struct attest_err *err)
{
        _cleanup_(BIO_freep) BIO *b = NULL;
        _cleanup_(X509_freep) X509 *cert = NULL;
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *k = NULL;

        if (!pem || !ret)
                return -EINVAL;
        if (len > DSSE_KEY_FILE_MAX)
                return attest_fail(err, -E2BIG, AE_POLICY_TOO_BIG, "%zu bytes > %u", len,
                                   DSSE_KEY_FILE_MAX);
        if (!(b = BIO_new_mem_buf(pem, (int)len)))
                return -ENOMEM;
        k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        if (!k) {
                BIO_free(b);
                if (!(b = BIO_new_mem_buf(pem, (int)len)))
                        return -ENOMEM;
                if ((cert = PEM_read_bio_X509(b, NULL, NULL, NULL)))
                        k = X509_get_pubkey(cert);
        }
        ERR_clear_error();
        if (!k)
                return attest_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE,
                                   "neither a PEM public key (BEGIN PUBLIC KEY) nor a PEM "
                                   "certificate (a private key? openssl pkey -pubout gives its "
                                   "public key)");
        if (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC)
                return attest_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE,
                                   "not an EC key (%s): Keylime signs runtime policies with "
                                   "ECDSA only",
                                   OBJ_nid2sn(EVP_PKEY_get_base_id(k)));
        *ret = TAKE_PTR(k);
        return 0;
}

/* ---- verification ---- */

int dsse_pae_sha256(const char *type, const uint8_t *payload, size_t len, uint8_t out[32])
{
        _cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *c = EVP_MD_CTX_new();
        char head[64];
        size_t tlen = strlen(type);
        unsigned olen = 0;
        int n;

        if (!c)
                return -ENOMEM;
        /* "DSSEv1" SP LEN(type) SP type SP LEN(payload) SP payload; LEN in ASCII decimal */
        n = snprintf(head, sizeof(head), "DSSEv1 %zu ", tlen);
        if (n < 0 || (size_t)n >= sizeof(head) || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
            EVP_DigestUpdate(c, head, (size_t)n) != 1 || EVP_DigestUpdate(c, type, tlen) != 1)
                return -ENOMEM;
        n = snprintf(head, sizeof(head), " %zu ", len);
        if (n < 0 || (size_t)n >= sizeof(head) || EVP_DigestUpdate(c, head, (size_t)n) != 1 ||
            (len && EVP_DigestUpdate(c, payload, len) != 1) ||
            EVP_DigestFinal_ex(c, out, &olen) != 1 || olen != 32)
                return -ENOMEM;
        return 0;
}

/*
 * One signature (DER ECDSA) over the PAE's SHA-256 digest with one key: 1 verifies, 0 not,
 * -ENOMEM. The digest is taken once for all signatures and keys (a payload may be hundreds of
 * MiB); OpenSSL's ECDSA verify refuses DER that is not the canonical encoding.
 */
static int verify_one(EVP_PKEY *key, const struct dsse_sig *s, const uint8_t digest[32])
{
        _cleanup_(EVP_PKEY_CTX_freep) EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(key, NULL);
        int r;

        if (!c)
                return -ENOMEM;
        if (EVP_PKEY_verify_init(c) != 1 || EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) != 1) {
                ERR_clear_error();
                return 0;
        }
        r = EVP_PKEY_verify(c, s->b, s->len, digest, 32);
        ERR_clear_error();
        return r == 1;
}

int dsse_verify(const struct dsse_envelope *e, EVP_PKEY *const *keys, size_t nkeys,
                const uint8_t **ret_payload, size_t *ret_len, size_t *ret_sig, size_t *ret_key,
                struct attest_err *err)
{
        uint8_t digest[32];
        int x;

        if (!e || !keys || nkeys == 0 || nkeys > DSSE_KEYS_MAX || !ret_payload || !ret_len)
                return -EINVAL;
        if ((x = dsse_pae_sha256(DSSE_PAYLOAD_TYPE_KEYLIME, e->payload, e->payload_len, digest)) <
            0)
                return x;
        for (size_t i = 0; i < e->nsigs; i++)
                for (size_t k = 0; k < nkeys; k++) {
                        if ((x = verify_one(keys[k], &e->sigs[i], digest)) < 0)
                                return x;
                        if (x == 0)
                                continue;
                        *ret_payload = e->payload;
                        *ret_len = e->payload_len;
                        if (ret_sig)
                                *ret_sig = i;
                        if (ret_key)
                                *ret_key = k;
                        return 0;
                }
        return jpath_fail(err, -EKEYREJECTED, AE_POLICY_BAD_SIGNATURE, "$.signatures",
                          "none of the %zu signatures verifies with the %zu key%s given (ECDSA "
                          "with SHA-256 over the DSSE v1 PAE of the payload)",
                          e->nsigs, nkeys, nkeys == 1 ? "" : "s");
}
