/* SPDX-License-Identifier: MIT */
/*
 * DSSE envelopes (Dead Simple Signing Envelope v1) as Keylime signs runtime policies with them
 * (keylime-policy sign runtime, keylime_sign_runtime_policy): the JSON object
 * {"payload": B64, "payloadType": "application/vnd.keylime+json", "signatures": [{"keyid": S,
 * "sig": B64}, ...]}, each sig an ECDSA signature (DER, SHA-256 on every curve, as Keylime signs
 * and verifies) over the pre-authentication encoding
 *   PAE = "DSSEv1" SP LEN(payloadType) SP payloadType SP LEN(payload) SP payload
 * with LEN in ASCII decimal and payload the decoded bytes.
 *
 * Read strictly: exactly those three fields, signatures objects of "sig" and an optional "keyid"
 * string (ignored for verification: every signature is tried with every key, as Keylime does),
 * no duplicate key, every count and length capped. payload and sig are decoded as Keylime
 * decodes them: hex when the whole string is hex digits, else standard base64, else URL-safe
 * base64 (both padded; we also require canonical trailing bits). Errors name the JSON path
 * (policy_* codes of util/err.h). The payload is returned only by dsse_verify: an envelope's
 * payload is never handed out unverified.
 */
#ifndef ATTESTCTL_DSSE_H
#define ATTESTCTL_DSSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "util/err.h"
#include "util/macro.h"

#define DSSE_PAYLOAD_TYPE_KEYLIME "application/vnd.keylime+json" /* Keylime's payloadType */
#define DSSE_SIGS_MAX 16u                                        /* signatures in one envelope */
#define DSSE_SIG_MAX 512u    /* bytes of one decoded signature (ECDSA P-521 DER: at most 139) */
#define DSSE_KEYID_MAX 8192u /* bytes of a keyid (Keylime's x509 keyid: a base64 PEM cert) */
#define DSSE_KEYS_MAX 8u     /* keys to verify with (attestctl --dsse-key) */
#define DSSE_KEY_FILE_MAX (64u << 10) /* a PEM key or certificate file */

struct dsse_envelope;

/* True when doc is a JSON object meant as an envelope: it has payload, payloadType or signatures.
 */
bool dsse_is_envelope(const json_t *doc);

/*
 * Read the envelope doc (parsed JSON). payload_max caps the decoded payload. -EBADMSG malformed
 * (err names the JSON path), -E2BIG over a cap, -ENOMEM.
 */
int dsse_envelope_from_json(const json_t *doc, size_t payload_max, struct dsse_envelope **ret,
                            struct attest_err *err) _wur_;

/* The same from len bytes of JSON (at most max, which also caps the payload). */
int dsse_envelope_parse(const char *json, size_t len, size_t max, struct dsse_envelope **ret,
                        struct attest_err *err) _wur_;

struct dsse_envelope *dsse_envelope_free(struct dsse_envelope *e);
DEFINE_CLEANUP_FUNC(struct dsse_envelope *, dsse_envelope_free)

/* Signatures in e (1 .. DSSE_SIGS_MAX); bytes of its decoded payload (not yet verified). */
size_t dsse_envelope_nsigs(const struct dsse_envelope *e);
size_t dsse_envelope_payload_len(const struct dsse_envelope *e);

/*
 * A public key to verify with, from a PEM file's bytes: a SubjectPublicKeyInfo ("PUBLIC KEY") or
 * an X.509 certificate (its key; the certificate is only a container: no chain or date checks,
 * as Keylime makes none). EC keys only: Keylime signs and verifies with ECDSA alone. -EBADMSG not
 * one PEM public key or certificate, -EOPNOTSUPP not an EC key, -ENOMEM; err says which.
 */
int dsse_key_load(const char *pem, size_t len, EVP_PKEY **ret, struct attest_err *err) _wur_;

/*
 * SHA-256 of the PAE of (type, payload), fed in pieces (the payload is not copied). 0, -ENOMEM.
 */
int dsse_pae_sha256(const char *type, const uint8_t *payload, size_t len, uint8_t out[32]) _wur_;

/*
 * Verify e with keys[0..nkeys): success when at least one signature verifies with at least one
 * key; then *ret_payload borrows the decoded payload (valid while e lives) and *ret_sig and
 * *ret_key say which signature and key (either may be NULL). -EKEYREJECTED none verifies
 * (err: policy_bad_signature), -EINVAL no key or more than DSSE_KEYS_MAX, -ENOMEM.
 */
int dsse_verify(const struct dsse_envelope *e, EVP_PKEY *const *keys, size_t nkeys,
                const uint8_t **ret_payload, size_t *ret_len, size_t *ret_sig, size_t *ret_key,
                struct attest_err *err) _wur_;

#endif
