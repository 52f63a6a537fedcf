/* SPDX-License-Identifier: MIT */
/*
 * Keylime's verification keys (its ImaKeyring JSON in the policy's "verification-keys" string)
 * as PEM public keys for ima.runtime.keys (keylime-internal.h); the rest of the import is
 * keylime.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "attestctl/keylime-internal.h"
#include "attestctl/keylime.h"
#include "evidence/ima-keyid.h"
#include "evidence/jpath.h"
#include "util/buf.h"
#include "util/hex.h"
#include "util/ossl.h"

/* ---- verification keys: Keylime's ImaKeyring JSON {"keyids":[int], "pubkeys":[b64 DER]} ---- */

/* One base64 DER public key (and its recorded key id, or -1) as a PEM string. */
static int key_to_pem(struct attest_err *err, const json_t *v, int64_t keyid, const char *p,
                      json_t **ret)
{
        _cleanup_free_ uint8_t *der = NULL;
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *k = NULL;
        _cleanup_(BIO_freep) BIO *bio = NULL;
        const unsigned char *q;
        const char *s;
        char *pem;
        size_t n, dlen;
        long plen;
        uint32_t own;
        int x, id;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        if (n == 0 || n > b64_encoded_size(KEYLIME_KEY_DER_MAX))
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "%zu base64 bytes, want a DER key of 1-%u bytes", n,
                                  KEYLIME_KEY_DER_MAX);
        if (!(der = malloc(KEYLIME_KEY_DER_MAX)))
                return -ENOMEM;
        if (b64_decode(s, n, der, KEYLIME_KEY_DER_MAX, &dlen) < 0 || dlen == 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "not base64");
        q = der;
        k = d2i_PUBKEY(NULL, &q, (long)dlen);
        if (!k || q != der + dlen)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "not one DER SubjectPublicKeyInfo");
        id = EVP_PKEY_get_base_id(k);
        if (id != EVP_PKEY_RSA && id != EVP_PKEY_EC)
                return jpath_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, p,
                                  "neither an RSA nor an EC key (what Keylime accepts)");
        if ((x = ima_keyid_v2(k, &own, NULL)) < 0)
                return jpath_fail(err, x == -ENOMEM ? x : -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                  "cannot encode the key");
        /* Keylime treats a recorded key id 0 as none */
        if (keyid > 0 && (uint32_t)keyid != own)
                return jpath_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, p,
                                  "recorded key id 0x%08" PRIx32 " is not the key's own "
                                  "(0x%08" PRIx32 "): it came from a certificate's subject key "
                                  "identifier; give attestd that X.509 certificate instead",
                                  (uint32_t)keyid, own);
        /* written with the uncompressed point, the one form the kernel reads */
        if (id == EVP_PKEY_EC &&
            EVP_PKEY_set_utf8_string_param(k, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                           OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED) != 1)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p, "cannot encode the key");
        if (!(bio = BIO_new(BIO_s_mem())) || PEM_write_bio_PUBKEY(bio, k) != 1)
                return -ENOMEM;
        plen = BIO_get_mem_data(bio, &pem);
        if (plen <= 0 || !(*ret = json_stringn(pem, (size_t)plen)))
                return -ENOMEM;
        return 0;
}

int keylime_verification_keys(const json_t *v, struct keylime_notes *notes, size_t *ret_keys,
                              json_t **ret, struct attest_err *err)
{
        static const char *const keys[] = {"meta", "keyids", "pubkeys", NULL};
        static const char *const meta_keys[] = {"version", NULL};
        const char *p = "$[\"verification-keys\"]";
        char q[JPATH_MAX], r[JPATH_MAX];
        json_auto_t *doc = NULL, *out = NULL;
        json_t *ids, *pubs, *m;
        json_error_t je;
        size_t n;
        int x;

        *ret = NULL;
        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        n = json_string_length(v);
        if (n == 0)
                return 0;
        if (n > KEYLIME_KEYS_JSON_MAX)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, p, "%zu bytes > %u", n,
                                  KEYLIME_KEYS_JSON_MAX);
        doc = json_loadb(json_string_value(v), n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        /* Keylime reads a JSON string holding the keyring JSON too (a database's encoding) */
        if (doc && json_is_string(doc)) {
                json_t *inner = json_loadb(json_string_value(doc), json_string_length(doc),
                                           JSON_REJECT_DUPLICATES, &je);

                json_decref(doc);
                doc = inner;
        }
        if (!doc)
                return jpath_fail(err, -EBADMSG, AE_POLICY_JSON, p,
                                  "the string is not JSON: line %d column %d: %s", je.line,
                                  je.column, je.text);
        if ((x = jpath_object(doc, p, keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((m = json_object_get(doc, "meta"))) {
                json_t *ver;

                jpath_join(q, p, "meta");
                if ((x = jpath_object(m, q, meta_keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD,
                                      err)) < 0)
                        return x;
                ver = json_object_get(m, "version");
                jpath_join(r, q, "version");
                if (!ver)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, r, "missing");
                if (!json_is_integer(ver) || json_integer_value(ver) < 1)
                        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, r,
                                          "not an integer >= 1");
        }
        ids = json_object_get(doc, "keyids");
        pubs = json_object_get(doc, "pubkeys");
        jpath_join(q, p, "keyids");
        if (!ids)
                return jpath_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, q, "missing");
        if (!json_is_array(ids))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not an array");
        jpath_join(q, p, "pubkeys");
        if (!pubs)
                return jpath_fail(err, -EBADMSG, AE_POLICY_MISSING_FIELD, q, "missing");
        if (!json_is_array(pubs))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, q, "not an array");
        if (json_array_size(pubs) > KEYLIME_KEYS_MAX)
                return jpath_fail(err, -E2BIG, AE_POLICY_TOO_BIG, q, "%zu keys > %u",
                                  json_array_size(pubs), KEYLIME_KEYS_MAX);
        if (json_array_size(ids) > json_array_size(pubs)) {
                jpath_join(q, p, "keyids");
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, q, "%zu key ids for %zu keys",
                                  json_array_size(ids), json_array_size(pubs));
        }
        if (!(out = json_array()))
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(pubs); i++) {
                json_t *id = json_array_get(ids, i), *pem = NULL;
                int64_t keyid = -1;

                if (id) {
                        jpath_join(q, p, "keyids");
                        jpath_index(r, q, i);
                        if (!json_is_integer(id))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, r,
                                                  "not an integer");
                        keyid = json_integer_value(id);
                        if (keyid < 0 || keyid > UINT32_MAX)
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, r,
                                                  "not a 32-bit key id");
                }
                jpath_join(q, p, "pubkeys");
                jpath_index(r, q, i);
                if ((x = key_to_pem(err, json_array_get(pubs, i), keyid, r, &pem)) < 0)
                        return x;
                if (json_array_append_new(out, pem) < 0)
                        return -ENOMEM;
        }
        *ret_keys = json_array_size(out);
        if (json_array_size(out) == 0) {
                keylime_note(notes, "%s: an empty keyring (no keys)", p);
                return 0;
        }
        *ret = TAKE_PTR(out);
        return 0;
}
