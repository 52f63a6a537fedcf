/* SPDX-License-Identifier: MIT */
/* Enrolment: POST /v1/agents (credential for the EK) and POST /v1/agents/{id}/activate. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "daemon/api/api-internal.h"
#include "evidence/evjson.h"
#include "daemon/log.h"
#include "evidence/credential.h"
#include "evidence/ekcert.h"
#include "evidence/quote.h"
#include "evidence/tpmkey.h"
#include "util/esc.h"
#include "util/hash.h"
#include "util/hex.h"
#include "util/ossl.h"

/*
 * The identity of an EK: SHA-256 of its public key as DER SubjectPublicKeyInfo, so two encodings
 * of one key (other attributes, policy, unique padding) are the same EK.
 */
static int ek_identity(const uint8_t *ekpub, size_t len, uint8_t out[STORE_EK_ID_LEN])
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *pk = NULL;
        TPM2B_PUBLIC pub;
        unsigned char *der = NULL;
        int n;

        if (tpmkey_unmarshal(ekpub, len, &pub, NULL) < 0 ||
            tpmkey_pkey(&pub.publicArea, &pk, NULL) < 0)
                return -EBADMSG;
        n = i2d_PUBKEY(pk, &der);
        if (n <= 0)
                return -EIO;
        SHA256(der, (size_t)n, out);
        OPENSSL_free(der);
        return 0;
}

#define ISSUER_MAX 256 /* bytes of an EK certificate's issuer shown, escaped */

/* The issuer of DER certificate der as RFC 2253 text, escaped (util/esc.h): "?" when unreadable. */
static const char *cert_issuer(const uint8_t *der, size_t len, char out[ISSUER_MAX])
{
        const unsigned char *p = der;
        _cleanup_(X509_freep) X509 *x = d2i_X509(NULL, &p, (long)len);
        BIO *b = x ? BIO_new(BIO_s_mem()) : NULL;
        char raw[ISSUER_MAX];
        int n = 0;

        snprintf(out, ISSUER_MAX, "?");
        if (b && X509_NAME_print_ex(b, X509_get_issuer_name(x), 0,
                                    XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0)
                n = BIO_read(b, raw, sizeof(raw) - 1);
        BIO_free(b);
        ERR_clear_error();
        if (n > 0)
                esc_text(out, ISSUER_MAX, raw, (size_t)n);
        return out;
}

/*
 * A refused enrolment in the log, not only in attestd_rejected_requests_total: the reason, and
 * what the operator acts on (the EK certificate's issuer, escaped: it is the client's). One line
 * per reason and issuer a minute at most, with the count of the ones left out: a holder of the
 * enrolment token, or anyone for a bad token, could otherwise fill the log. A table of its own
 * (fixed size: keys past it share slots), apart from the activation limiter's, so refusals
 * cannot push an agent's failed proofs out of theirs.
 */
static void enrol_refused_log(struct attestd *d, enum attest_code code, const char *issuer,
                              const char *why)
{
        char key[RATELIMIT_KEY_MAX], more[64] = "";
        uint64_t suppressed = 0;

        snprintf(key, sizeof(key), "enrol:%s:%016llx", attest_code_name(code),
                 (unsigned long long)hash_fnv1a_str(issuer ? issuer : ""));
        if (!d->enrol_log_rl ||
            !ratelimit_fail(d->enrol_log_rl, key, (uint64_t)attestd_now_ms(), &suppressed))
                return;
        if (suppressed)
                snprintf(more, sizeof(more), " (and %llu more like it not logged)",
                         (unsigned long long)suppressed);
        if (issuer)
                log_warning("enrolment refused (%s): EK certificate issued by %s: %s%s",
                            attest_code_name(code), issuer, why, more);
        else
                log_warning("enrolment refused (%s): %s%s", attest_code_name(code), why, more);
}

void api_enrol_refused_token(struct attestd *d, bool presented)
{
        enrol_refused_log(d, AE_UNAUTHORIZED, NULL,
                          presented ? "unknown bearer token (not an enroll token of --tokens)"
                                    : "no bearer token");
}

/*
 * POST /v1/agents (role enroll): {"ak_public": b64 TPM2B_PUBLIC, "ek_public": b64 TPM2B_PUBLIC,
 * "ek_cert": b64 DER, "host": {"hostname", "machine_id", "labels"} (optional)}. The EK certificate
 * must chain to --ek-ca and certify ek_public; the AK must be a restricted signing key. The answer
 * carries a credential (TPM2_MakeCredential for the EK and the AK's name) that only
 * ActivateCredential in that TPM opens; the agent stays "pending" until POST
 * /v1/agents/{id}/activate returns it. --insecure-trust-ak skips all of that (labs) and is warned
 * about on every use.
 */
void api_agent_enroll(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id)
{
        static const char *const fields[] = {"ak_public", "ek_cert", "ek_public", "host"};
        _cleanup_free_ struct evidence_host *host = NULL;
        json_t *hv;
        json_auto_t *o = NULL;
        _cleanup_free_ uint8_t *ak = NULL, *ek = NULL, *ekpub = NULL;
        _cleanup_(quote_ak_freep) struct quote_ak *qak = NULL;
        uint8_t name[QUOTE_NAME_MAX], h[SHA256_DIGEST_LENGTH], secret[32];
        char idhex[33], namehex[2 * QUOTE_NAME_MAX + 1], who[STORE_ID_MAX + 1];
        size_t ak_len, ek_len = 0, ekpub_len = 0, name_len;
        struct attest_err err = {0};
        struct store_agent a = {0};
        struct credential cred;
        bool trust = d->cfg.insecure_trust_ak;
        int e;

        (void)id;
        if (api_parse_body(d, req, r, false, &o) < 0 ||
            api_check_fields(d, r, o, "$", fields, ARRAY_SIZE(fields)) < 0 ||
            api_b64_field(d, r, o, "ak_public", true, QUOTE_AK_MAX, &ak, &ak_len) < 0 ||
            api_b64_field(d, r, o, "ek_cert", false, EKCERT_MAX, &ek, &ek_len) < 0 ||
            api_b64_field(d, r, o, "ek_public", !trust, QUOTE_AK_MAX, &ekpub, &ekpub_len) < 0)
                return;
        /* the host's identity (optional): hostname, machine_id, labels as in the evidence */
        if ((hv = json_object_get(o, "host"))) {
                if (!(host = calloc(1, sizeof(*host)))) {
                        api_nomem(d, r);
                        return;
                }
                if ((e = evidence_host_identity_from_json(hv, "$.host", host, &err)) < 0) {
                        api_error(d, r, 400, err.code ? err.code : AE_BAD_FIELD, "%s", err.msg);
                        return;
                }
        }
        if ((e = quote_ak_parse(ak, ak_len, &qak, &err)) < 0) {
                api_error(d, r, 400, err.code ? err.code : AE_QUOTE_AK_MALFORMED, "$.ak_public: %s",
                          err.msg);
                return;
        }
        if (ek) {
                const unsigned char *p = ek;
                X509 *x = d2i_X509(NULL, &p, (long)ek_len);

                if (!x || p != ek + ek_len) {
                        X509_free(x);
                        api_error(d, r, 400, AE_BAD_FIELD,
                                  "$.ek_cert: not a DER X.509 certificate");
                        return;
                }
                X509_free(x);
        }
        if (!trust) {
                if (!d->cfg.ek_ca[0]) {
                        api_error(d, r, 403, AE_EK_CA_UNCONFIGURED,
                                  "this verifier has no EK CA (--ek-ca): it cannot enrol agents");
                        return;
                }
                if (!ek) {
                        api_error(d, r, 403, AE_EK_CERT_REQUIRED,
                                  "$.ek_cert: an EK certificate is required to enrol");
                        return;
                }
                if ((e = ekcert_verify(ek, ek_len, d->cfg.ek_ca, ekpub, ekpub_len, &err)) < 0) {
                        enum attest_code c = err.code ? err.code : AE_EK_CERT_UNTRUSTED;
                        char issuer[ISSUER_MAX];

                        cert_issuer(ek, ek_len, issuer);
                        if (c == AE_EK_CERT_UNTRUSTED) {
                                char why[sizeof(err.msg) + 224];

                                snprintf(why, sizeof(why), "%s; --ek-ca %.200s", err.msg,
                                         d->cfg.ek_ca);
                                enrol_refused_log(d, c, issuer, why);
                                api_error(d, r, 403, c,
                                          "$.ek_cert: %s (issuer %s): the verifier's operator must "
                                          "add that CA's certificate to --ek-ca",
                                          err.msg, issuer);
                                return;
                        }
                        if (attest_code_class(c) != AEC_SERVER)
                                enrol_refused_log(d, c, issuer, err.msg);
                        else
                                log_err("enrolment: %s", err.msg); /* ours: an unreadable --ek-ca */
                        api_error(d, r,
                                  attest_code_class(c) == AEC_SERVER ? 500
                                  : e == -EKEYREJECTED               ? 403
                                                                     : 400,
                                  c, "$.ek_cert: %s", err.msg);
                        return;
                }
        }
        if (quote_ak_name(qak, name, sizeof(name), &name_len) < 0) {
                api_error(d, r, 500, AE_INTERNAL, "AK name");
                return;
        }
        if (ekpub) {
                if (ek_identity(ekpub, ekpub_len, a.ek_id) < 0) {
                        api_error(d, r, 400, AE_CRED_BAD_EK,
                                  "$.ek_public: not an RSA or ECC TPM2B_PUBLIC");
                        return;
                }
                a.has_ek_id = true;
                if ((e = store_ek_refused(d->store, a.ek_id, who, sizeof(who))) == -EPERM) {
                        api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                                  "this TPM's EK was decommissioned by an administrator with "
                                  "agent %s: an admin readmits it (attestctl agents readmit %s)",
                                  who, who);
                        return;
                }
                if (e < 0) {
                        api_store_error(d, r, e, "EK lookup");
                        return;
                }
        }
        /* the id follows from the AK: enrolling one key twice is a conflict */
        SHA256(name, name_len, h);
        hex_encode(h, 16, idhex);
        hex_encode(name, name_len, namehex);
        snprintf(a.id, sizeof(a.id), "%s", idhex);
        a.ak_public = ak;
        a.ak_public_len = ak_len;
        a.ak_name = name;
        a.ak_name_len = name_len;
        a.ek_cert = ek;
        a.ek_cert_len = ek_len;
        a.created = attestd_now_ms();
        if (trust) {
                log_warning("agent %s enrolled WITHOUT EK proof (--insecure-trust-ak)", idhex);
                a.state = AGENT_STATE_ACTIVE;
                e = store_agent_add(d->store, &a);
        } else {
                if (RAND_bytes(secret, sizeof(secret)) != 1) {
                        api_error(d, r, 500, AE_INTERNAL, "no randomness");
                        return;
                }
                e = cred_make(ekpub, ekpub_len, name, name_len, secret, sizeof(secret), &cred,
                              &err);
                SHA256(secret, sizeof(secret), h);
                OPENSSL_cleanse(secret, sizeof(secret));
                if (e < 0) {
                        enum attest_code c = err.code ? err.code : AE_CRED_BAD_EK;

                        api_error(d, r, attest_code_class(c) == AEC_SERVER ? 500 : 400, c,
                                  "$.ek_public: %s", err.msg);
                        return;
                }
                a.state = AGENT_STATE_PENDING;
                e = store_agent_add_pending(d->store, &a, ekpub, ekpub_len, h,
                                            a.created + (int64_t)d->cfg.credential_ttl * 1000);
        }
        if (e == -EEXIST && trust) {
                _cleanup_(store_agent_freep) struct store_agent *old = NULL;

                if (store_agent_get(d->store, idhex, &old) == 0 &&
                    old->state == AGENT_STATE_DECOMMISSIONED)
                        e = -EPERM;
        }
        if (e == -EPERM) {
                /* the agent (its AK) or its EK: name the agent id the admin readmits */
                if (!a.has_ek_id || store_ek_refused(d->store, a.ek_id, who, sizeof(who)) != -EPERM)
                        snprintf(who, sizeof(who), "%s", idhex);
                api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                          "this agent or its TPM's EK was decommissioned by an administrator "
                          "with agent %s: an admin readmits it (attestctl agents readmit %s)",
                          who, who);
                return;
        }
        if (e == -EEXIST) {
                api_error(d, r, 409, AE_AGENT_EXISTS, "an agent with this AK is enrolled as %s",
                          idhex);
                return;
        }
        if (e == -EBUSY) {
                api_error(d, r, 429, AE_ENROLMENT_BUSY,
                          "agent %s has %d unexpired credentials: activate one or wait", idhex,
                          STORE_PENDING_MAX);
                r->retry_after = (unsigned)d->cfg.credential_ttl;
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "agent insert");
                return;
        }
        if (host && (e = store_agent_set_identity(d->store, idhex, host)) < 0) {
                api_store_error(d, r, e, "host identity");
                return;
        }
        log_info("agent %s host %s enrolled (AK %s), %s", idhex,
                 host && host->hostname[0] ? host->hostname : "-",
                 quote_ak_type(qak) == 0x0023 ? "ECC" : "RSA",
                 trust ? "active" : "pending credential activation");
        json_t *resp = json_pack("{s:s, s:s, s:s}", "id", idhex, "state", agent_state_name(a.state),
                                 "ak_name", namehex);
        if (resp && !trust) {
                char blob[CRED_BLOB_MAX * 2], sec[CRED_ENC_SECRET_MAX * 2];

                b64_encode(cred.blob, cred.blob_len, blob);
                b64_encode(cred.secret, cred.secret_len, sec);
                if (json_object_set_new(resp, "credential",
                                        json_pack("{s:s, s:s}", "blob", blob, "secret", sec)) < 0) {
                        json_decref(resp);
                        resp = NULL;
                }
        }
        if (api_json(r, 201, resp) < 0)
                api_nomem(d, r);
}

/* POST /v1/agents/{id}/activate: {"proof": b64 of the credential ActivateCredential returned}. */
void api_agent_activate(struct attestd *d, const struct api_req *req, struct api_resp *r,
                        const char *id)
{
        static const char *const fields[] = {"proof"};
        json_auto_t *o = NULL;
        _cleanup_free_ uint8_t *proof = NULL;
        uint8_t h[SHA256_DIGEST_LENGTH];
        char replaced[STORE_ID_MAX + 1] = "";
        uint64_t now = (uint64_t)attestd_now_ms(), suppressed = 0;
        unsigned retry = 0;
        size_t len;
        int e;

        /* a proof guesser (or a broken agent) gets a few tries a minute, then 429 */
        if (ratelimit_blocked(d->activation_rl, id, now, &retry)) {
                api_error(d, r, 429, AE_ACTIVATION_RATE_LIMITED,
                          "too many failed activation proofs for agent %s: retry in %u s", id,
                          retry);
                r->retry_after = retry;
                return;
        }
        if (api_parse_body(d, req, r, false, &o) < 0 ||
            api_check_fields(d, r, o, "$", fields, ARRAY_SIZE(fields)) < 0 ||
            api_b64_field(d, r, o, "proof", true, CRED_SECRET_MAX, &proof, &len) < 0)
                return;
        SHA256(proof, len, h);
        OPENSSL_cleanse(proof, len);
        e = store_agent_activate(d->store, id, h, (int64_t)now, replaced);
        switch (e) {
        case 0:
                if (replaced[0]) {
                        akcache_drop(d->aks, replaced);
                        log_notice("agent %s took over the EK of agent %s (proved by activation): "
                                   "%s forgotten",
                                   id, replaced, replaced);
                }
                log_info("agent %s activated: its AK is in the TPM of its EK", id);
                if (api_json(r, 200,
                             json_pack("{s:s, s:s}", "id", id, "state",
                                       agent_state_name(AGENT_STATE_ACTIVE))) < 0)
                        api_nomem(d, r);
                return;
        case -ENOENT:
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        case -EALREADY:
                api_error(d, r, 409, AE_AGENT_NOT_PENDING, "agent %s has no pending enrolment", id);
                return;
        case -ETIME:
                api_error(d, r, 403, AE_CREDENTIAL_EXPIRED,
                          "the enrolment credential expired: enrol again");
                return;
        case -EPERM:
                api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", id);
                return;
        case -EACCES:
                api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                          "this TPM's EK was decommissioned by an administrator");
                return;
        case -EKEYREJECTED:
                /* one line per agent per minute, with the count of the ones left out */
                if (ratelimit_fail(d->activation_rl, id, now, &suppressed)) {
                        if (suppressed)
                                log_warning("agent %s: wrong activation proof (%llu more failed "
                                            "or refused attempts not logged)",
                                            id, (unsigned long long)suppressed);
                        else
                                log_warning("agent %s: wrong activation proof", id);
                }
                api_error(d, r, 403, AE_ACTIVATION_FAILED,
                          "$.proof: not the credential wrapped for this agent's EK and AK");
                return;
        default:
                api_store_error(d, r, e, "activation");
        }
}
