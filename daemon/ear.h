/* SPDX-License-Identifier: MIT */
/*
 * EAR: a verdict as an EAT Attestation Result (draft-fv-rats-ear), a JWT signed with ES256 by the
 * daemon's --ear-key (docs/ear.md says what each claim means).
 *
 *   ear_appraise()    typed verdict -> ear.status and the AR4SI trustworthiness vector (pure),
 *                     once, when the round is judged
 *   ear_appraisal_to_store / _from_store
 *                     the appraisal as the results table keeps it (daemon/store.h), and back,
 *                     refusing values ear_appraise() never gives; the EAR is issued from it (the
 *                     verdict's text is never read back)
 *   ear_claims()      the claims-set (JSON object)
 *   ear_signer_*      the P-256 key: loaded once (other curves and RSA refused), its JWKS and
 *                     RFC 7638 thumbprint (the kid), and ES256 signing through libjwt
 *
 * The key's PEM bytes are a secret: the signer keeps one copy, wiped when it is freed.
 */
#ifndef ATTESTD_EAR_H
#define ATTESTD_EAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/verdict.h"
#include "util/err.h"

#define EAR_PROFILE "tag:github.com,2023:veraison/ear"
#define EAR_DEVELOPER "attestd"
/* RFC 7638 thumbprint: base64url of a SHA-256, 43 characters */
#define EAR_KID_MAX 44
/* eat_nonce (EAT: 8..64 bytes; in a JWT as base64url text without padding: 11..86 characters) */
#define EAR_NONCE_MIN 8
#define EAR_NONCE_MAX 64
#define EAR_NONCE_TEXT_MAX 86

/* ear.status: the AR4SI trust tiers (draft-ietf-rats-ar4si §2.3.2) */
enum ear_status {
        EAR_NONE,
        EAR_AFFIRMING,
        EAR_WARNING,
        EAR_CONTRAINDICATED,
};

/* The trustworthiness vector's entries attestd appraises, in the order the JSON lists them. */
enum ear_tv {
        EAR_TV_INSTANCE_IDENTITY,
        EAR_TV_CONFIGURATION,
        EAR_TV_EXECUTABLES,
        EAR_TV_HARDWARE,
        EAR_TV__COUNT,
};

/* AR4SI trustworthiness claim values (draft-ietf-rats-ar4si §2.3.4), those attestd uses */
#define AR4SI_VERIFIER_MALFUNCTION -1 /* every category: the verifier could not appraise */
#define AR4SI_NO_CLAIM 0              /* every category: no assertion */
#define AR4SI_CRYPTO_FAILED 99        /* every category: cryptographic validation failed */
#define AR4SI_INSTANCE_RECOGNIZED 2   /* instance-identity: recognised, not compromised */
#define AR4SI_CONFIG_APPROVED 2       /* configuration: known and approved */
#define AR4SI_CONFIG_UNAVAILABLE 36   /* configuration: elements unavailable to the verifier */
#define AR4SI_CONFIG_UNSUPPORTABLE 96 /* configuration: unacceptable vulnerabilities */
#define AR4SI_EXEC_APPROVED_RUNTIME 2 /* executables: approved during and after boot */
#define AR4SI_EXEC_APPROVED_BOOT 3    /* executables: approved boot-time executables only */
#define AR4SI_EXEC_UNRECOGNIZED 33    /* executables: unrecognised run-time objects */
#define AR4SI_EXEC_CONTRAINDICATED 96 /* executables: contraindicated run-time objects */
#define AR4SI_HW_GENUINE 2            /* hardware: genuine */
#define AR4SI_HW_UNSAFE 32            /* hardware: genuine, known vulnerabilities */
#define AR4SI_HW_CONTRAINDICATED 96   /* hardware: recognised, trustworthiness contraindicated */

struct ear_appraisal {
        enum ear_status status;
        int tv[EAR_TV__COUNT];
};

const char *ear_status_name(enum ear_status s);
const char *ear_tv_name(enum ear_tv t);

/*
 * The appraisal of a verdict. verified: the round's evidence verified (quote, nonce, IMA replay);
 * false for a round that failed verification (its verdict has no claims).
 *   status: contraindicated when not verified, the verdict failed or any claim is not "pass";
 *           none when nothing was checked (no claims); warning when a claim is unanchored;
 *           affirming otherwise
 *   vector: per category (ear_claim_category: configuration selinux, trusted_keys, cfi, kernel;
 *           hardware tpm PCRs, boot chain, Secure Boot; executables ima, boot applications),
 *           0 when the category has no claim, its contraindicated value when one of its claims
 *           is not "pass" (missing too), its warning value when one is unanchored, else its
 *           affirming value (executables: 2 when ima.runtime was checked, else 3);
 *           instance-identity 2 (the quote verified with the enrolled AK).
 *           Not verified: 99 in every category.
 */
void ear_appraise(const struct verdict *v, bool verified, struct ear_appraisal *ret);
/* The vector category a claim id belongs to (one table in ear.c; docs/ear.md lists it). */
enum ear_tv ear_claim_category(enum claim_id id);

struct store_appraisal;
/*
 * The stored form (store_appraisal): ear.status as its AR4SI trustworthiness tier (none 0,
 * affirming 2, warning 32, contraindicated 96: draft-fv-rats-ear's encoding of ear.status, not
 * enum ear_status's numbers), the vector's values as they are.
 */
void ear_appraisal_to_store(const struct ear_appraisal *a, struct store_appraisal *ret);
/*
 * And back. -EBADMSG (err: AE_STORE_CORRUPT, naming the value) when the status is not a tier or a
 * vector value is not one ear_appraise() gives its category (-1, 0, 99, or the category's
 * affirming, warning or contraindicated value): a corrupt or foreign row, never defaulted.
 */
int ear_appraisal_from_store(const struct store_appraisal *s, struct ear_appraisal *ret,
                             struct attest_err *err) _wur_;

struct ear_input {
        const char *agent;   /* submodule label */
        const char *policy;  /* name@version, or NULL: no ear.appraisal-policy-id */
        const char *build;   /* "attestd VERSION" */
        const char *nonce;   /* base64url text already checked (ear_nonce_valid), or NULL */
        int64_t iat;         /* seconds since the epoch */
        int64_t result_id;   /* the results row */
        int64_t result_time; /* ms since the epoch */
        const struct ear_appraisal *a;
};

/* The EAR claims-set as a new JSON object; -ENOMEM. */
int ear_claims(const struct ear_input *in, json_t **ret) _wur_;

/* A caller-supplied eat_nonce: base64url without padding, 8..64 bytes (11..86 characters). */
bool ear_nonce_valid(const char *s);

struct ear_signer;

/*
 * From a PEM private key (len bytes, copied): only EC keys on P-256 (prime256v1), else -EINVAL
 * with err (AE_EAR_KEY) naming the key type or curve; encrypted keys are refused (no prompt).
 */
int ear_signer_new(const char *pem, size_t len, struct ear_signer **ret, struct attest_err *err)
        _wur_;
struct ear_signer *ear_signer_free(struct ear_signer *s);
DEFINE_CLEANUP_FUNC(struct ear_signer *, ear_signer_free)
/* The RFC 7638 JWK thumbprint (base64url SHA-256), the JWT header's kid. */
const char *ear_signer_kid(const struct ear_signer *s);
/* {"keys":[{"kty":"EC","crv":"P-256","x","y","kid","use":"sig","alg":"ES256"}]}; -ENOMEM. */
int ear_signer_jwks(const struct ear_signer *s, json_t **ret) _wur_;
/* The compact JWS of claims (ES256, kid in the header), malloc'ed; -ENOMEM, -EIO (libjwt). */
int ear_sign(const struct ear_signer *s, const json_t *claims, char **ret) _wur_;

#endif
