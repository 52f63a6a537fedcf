/* SPDX-License-Identifier: MIT */
/*
 * Why something failed, for a person: a stable code and a message naming the entry, line, byte
 * offset or JSON path. Functions still return -errno; the err is filled alongside (STYLE "Errors").
 */
#ifndef ATTEST_ERR_H
#define ATTEST_ERR_H

#include <stdbool.h>

#include "util/macro.h"

/*
 * What a failure means for the round or request that met it: every code has exactly one class,
 * given in ATTEST_CODES (a code without one does not compile). Code that must decide what a
 * failure does (answer 4xx or 5xx, refuse evidence, store a verdict) asks the class, never a list
 * of codes, so a new code is decided where it is defined.
 */
enum attest_class {
        /* the request is wrong or not allowed (bad JSON, unknown agent, policy invalid, no
         * token): answered 4xx, changes nothing */
        AEC_CLIENT,
        /* the evidence is not proven to be a fresh quote of this agent's AK (malformed, bad
         * signature, another nonce): anyone could have posted it, so it is refused (400/422)
         * and changes nothing: no verdict, no replay reset */
        AEC_UNAUTHENTICATED,
        /* authenticated evidence that answers a state which moved on (another submission came
         * first, a reboot, a used or expired nonce, a new runtime policy): refused (409/410),
         * ask a new challenge; only a reboot or policy change resets the replay state */
        AEC_STALE,
        /* authenticated evidence whose failure is the host's state (PCR values, IMA or event
         * log, boot aggregate): it becomes a stored fail (or error) verdict */
        AEC_VERDICT,
        /* the fault of whoever reports it, not of its requester (configuration, files, memory,
         * store, TPM, transport, a bug): 5xx when answered, changes nothing */
        AEC_SERVER,
        AEC__COUNT
};

/*
 * Every error code, one table: the enum constant, its stable name (the JSON "error" of the REST
 * API, the CLI's messages, the metrics label) and its class. Control flow compares the enum or
 * asks the class; people and peers read the name. Append anywhere: the numbers are not persisted
 * or sent.
 */
#define ATTEST_CODES(X)                                                                            \
        X(AE_ACTIVATION_FAILED, "activation_failed", AEC_CLIENT)                                   \
        X(AE_ACTIVATION_RATE_LIMITED, "activation_rate_limited", AEC_CLIENT)                       \
        X(AE_AGENT_BUSY, "agent_busy", AEC_STALE)                                                  \
        X(AE_AGENT_DECOMMISSIONED, "agent_decommissioned", AEC_CLIENT)                             \
        X(AE_AGENT_EXISTS, "agent_exists", AEC_CLIENT)                                             \
        X(AE_AGENT_NOT_ACTIVE, "agent_not_active", AEC_CLIENT)                                     \
        X(AE_AGENT_NOT_DECOMMISSIONED, "agent_not_decommissioned", AEC_CLIENT)                     \
        X(AE_AGENT_NOT_FOUND, "agent_not_found", AEC_CLIENT)                                       \
        X(AE_AGENT_NOT_PENDING, "agent_not_pending", AEC_CLIENT)                                   \
        X(AE_BAD_FIELD, "bad_field", AEC_CLIENT)                                                   \
        X(AE_BAD_ID, "bad_id", AEC_CLIENT)                                                         \
        X(AE_BAD_JSON, "bad_json", AEC_CLIENT)                                                     \
        X(AE_BAD_QUERY, "bad_query", AEC_CLIENT)                                                   \
        X(AE_BAD_REQUEST, "bad_request", AEC_CLIENT)                                               \
        X(AE_BOOT_OFFSET_MISMATCH, "boot_offset_mismatch", AEC_STALE)                              \
        X(AE_BOOT_OFFSET_REBOOT, "boot_offset_reboot", AEC_STALE)                                  \
        X(AE_BOOT_REPLAY_MISMATCH, "boot_replay_mismatch", AEC_VERDICT)                            \
        X(AE_BODY_TOO_LARGE, "body_too_large", AEC_CLIENT)                                         \
        X(AE_CDATA_BAD_FLAG, "cdata_bad_flag", AEC_VERDICT)                                        \
        X(AE_CDATA_BAD_KERNEL_VERSION, "cdata_bad_kernel_version", AEC_VERDICT)                    \
        X(AE_CDATA_BAD_KEY, "cdata_bad_key", AEC_VERDICT)                                          \
        X(AE_CDATA_BAD_POLICY_HASH, "cdata_bad_policy_hash", AEC_VERDICT)                          \
        X(AE_CDATA_BAD_VALUE, "cdata_bad_value", AEC_VERDICT)                                      \
        X(AE_CDATA_DUPLICATE_KEY, "cdata_duplicate_key", AEC_VERDICT)                              \
        X(AE_CDATA_EMPTY, "cdata_empty", AEC_VERDICT)                                              \
        X(AE_CDATA_MISSING_KEY, "cdata_missing_key", AEC_VERDICT)                                  \
        X(AE_CDATA_TOO_LONG, "cdata_too_long", AEC_VERDICT)                                        \
        X(AE_CDATA_TOO_MANY, "cdata_too_many", AEC_VERDICT)                                        \
        X(AE_CLIENT_CERTIFICATE_REQUIRED, "client_certificate_required", AEC_CLIENT)               \
        X(AE_CONFIG, "config", AEC_SERVER)                                                         \
        X(AE_CRED_BAD_EK, "cred_bad_ek", AEC_CLIENT)                                               \
        X(AE_CRED_BAD_NAME, "cred_bad_name", AEC_CLIENT)                                           \
        X(AE_CRED_BAD_SECRET, "cred_bad_secret", AEC_SERVER)                                       \
        X(AE_CRED_CRYPTO, "cred_crypto", AEC_SERVER)                                               \
        X(AE_CREDENTIAL_EXPIRED, "credential_expired", AEC_CLIENT)                                 \
        X(AE_DRAINING, "draining", AEC_SERVER)                                                     \
        X(AE_EAR_KEY, "ear_key", AEC_SERVER)                                                       \
        X(AE_EAR_NO_APPRAISAL, "ear_no_appraisal", AEC_CLIENT)                                     \
        X(AE_EAR_NO_VERDICT, "ear_no_verdict", AEC_CLIENT)                                         \
        X(AE_EAR_UNCONFIGURED, "ear_unconfigured", AEC_SERVER)                                     \
        X(AE_EK_CA_UNCONFIGURED, "ek_ca_unconfigured", AEC_CLIENT)                                 \
        X(AE_EK_CA_UNREADABLE, "ek_ca_unreadable", AEC_SERVER)                                     \
        X(AE_EK_CERT_MALFORMED, "ek_cert_malformed", AEC_CLIENT)                                   \
        X(AE_EK_CERT_MISMATCH, "ek_cert_mismatch", AEC_CLIENT)                                     \
        X(AE_EK_CERT_REQUIRED, "ek_cert_required", AEC_CLIENT)                                     \
        X(AE_EK_CERT_UNTRUSTED, "ek_cert_untrusted", AEC_CLIENT)                                   \
        X(AE_EK_DECOMMISSIONED, "ek_decommissioned", AEC_CLIENT)                                   \
        X(AE_ENROLMENT_BUSY, "enrolment_busy", AEC_CLIENT)                                         \
        X(AE_EVIDENCE_BAD_B64, "evidence_bad_b64", AEC_CLIENT)                                     \
        X(AE_EVIDENCE_BAD_HEX, "evidence_bad_hex", AEC_CLIENT)                                     \
        X(AE_EVIDENCE_BAD_VALUE, "evidence_bad_value", AEC_CLIENT)                                 \
        X(AE_EVIDENCE_JSON, "evidence_json", AEC_CLIENT)                                           \
        X(AE_EVIDENCE_MISSING_FIELD, "evidence_missing_field", AEC_CLIENT)                         \
        X(AE_EVIDENCE_NONCE_MISMATCH, "evidence_nonce_mismatch", AEC_UNAUTHENTICATED)              \
        X(AE_EVIDENCE_TOO_BIG, "evidence_too_big", AEC_CLIENT)                                     \
        X(AE_EVIDENCE_TYPE, "evidence_type", AEC_CLIENT)                                           \
        X(AE_EVIDENCE_UNKNOWN_FIELD, "evidence_unknown_field", AEC_CLIENT)                         \
        X(AE_EVIDENCE_VERSION, "evidence_version", AEC_CLIENT)                                     \
        X(AE_FACTS_MACHINE_ID, "facts_machine_id", AEC_SERVER)                                     \
        X(AE_FACTS_NO_KERNEL, "facts_no_kernel", AEC_SERVER)                                       \
        X(AE_FILE, "file", AEC_SERVER)                                                             \
        X(AE_FORBIDDEN, "forbidden", AEC_CLIENT)                                                   \
        X(AE_HTTP_BAD_URL, "http_bad_url", AEC_SERVER)                                             \
        X(AE_HTTP_KEY_PERMISSIONS, "http_key_permissions", AEC_SERVER)                             \
        X(AE_HTTP_KEY_TOO_BIG, "http_key_too_big", AEC_SERVER)                                     \
        X(AE_HTTP_KEY_UNREADABLE, "http_key_unreadable", AEC_SERVER)                               \
        X(AE_HTTP_NO_CA, "http_no_ca", AEC_SERVER)                                                 \
        X(AE_HTTP_RESPONSE_NUL, "http_response_nul", AEC_SERVER)                                   \
        X(AE_HTTP_RESPONSE_TOO_BIG, "http_response_too_big", AEC_SERVER)                           \
        X(AE_HTTP_START, "http_start", AEC_SERVER)                                                 \
        X(AE_HTTP_TIMEOUT, "http_timeout", AEC_SERVER)                                             \
        X(AE_HTTP_TLS_VERIFY, "http_tls_verify", AEC_SERVER)                                       \
        X(AE_HTTP_TRANSPORT, "http_transport", AEC_SERVER)                                         \
        X(AE_IMA_BAD_FIELD, "ima_bad_field", AEC_VERDICT)                                          \
        X(AE_IMA_BAD_HASH, "ima_bad_hash", AEC_VERDICT)                                            \
        X(AE_IMA_BAD_LINE, "ima_bad_line", AEC_VERDICT)                                            \
        X(AE_IMA_BAD_PCR, "ima_bad_pcr", AEC_VERDICT)                                              \
        X(AE_IMA_BAD_TEMPLATE, "ima_bad_template", AEC_VERDICT)                                    \
        X(AE_IMA_BAD_VIOLATION, "ima_bad_violation", AEC_VERDICT)                                  \
        X(AE_IMA_BANK_UNTRACKED, "ima_bank_untracked", AEC_VERDICT)                                \
        X(AE_IMA_BOOT_AGGREGATE_ALGO, "ima_boot_aggregate_algo", AEC_VERDICT)                      \
        X(AE_IMA_BOOT_AGGREGATE_MISMATCH, "ima_boot_aggregate_mismatch", AEC_VERDICT)              \
        X(AE_IMA_BOOT_AGGREGATE_PCRS, "ima_boot_aggregate_pcrs", AEC_VERDICT)                      \
        X(AE_IMA_DATA_TOO_LONG, "ima_data_too_long", AEC_VERDICT)                                  \
        X(AE_IMA_LINE_TOO_LONG, "ima_line_too_long", AEC_VERDICT)                                  \
        X(AE_IMA_NAME_TOO_LONG, "ima_name_too_long", AEC_VERDICT)                                  \
        X(AE_IMA_NO_BOOT_AGGREGATE, "ima_no_boot_aggregate", AEC_VERDICT)                          \
        X(AE_IMA_OFFSET_MISMATCH, "ima_offset_mismatch", AEC_STALE)                                \
        X(AE_IMA_OFFSET_REBOOT, "ima_offset_reboot", AEC_STALE)                                    \
        X(AE_IMA_REPLAY_MISMATCH, "ima_replay_mismatch", AEC_VERDICT)                              \
        X(AE_IMA_SHA1_MISMATCH, "ima_sha1_mismatch", AEC_VERDICT)                                  \
        X(AE_IMA_TOO_MANY_ENTRIES, "ima_too_many_entries", AEC_VERDICT)                            \
        X(AE_IMA_TRAILING_DATA, "ima_trailing_data", AEC_VERDICT)                                  \
        X(AE_IMA_TRUNCATED, "ima_truncated", AEC_VERDICT)                                          \
        X(AE_IMA_UNKNOWN_TEMPLATE, "ima_unknown_template", AEC_VERDICT)                            \
        X(AE_IMALOG_READ, "imalog_read", AEC_SERVER)                                               \
        X(AE_IMALOG_TOO_BIG, "imalog_too_big", AEC_SERVER)                                         \
        X(AE_INTERNAL, "internal", AEC_SERVER)                                                     \
        X(AE_JUDGE_FAILED, "judge_failed", AEC_VERDICT)                                            \
        X(AE_KEY_INVALID, "key_invalid", AEC_CLIENT)                                               \
        X(AE_KEY_MALFORMED, "key_malformed", AEC_CLIENT)                                           \
        X(AE_KEY_UNSUPPORTED, "key_unsupported", AEC_CLIENT)                                       \
        X(AE_LISTEN, "listen", AEC_SERVER)                                                         \
        X(AE_METHOD_NOT_ALLOWED, "method_not_allowed", AEC_CLIENT)                                 \
        X(AE_MISSING_FIELD, "missing_field", AEC_CLIENT)                                           \
        X(AE_NONCE_EXPIRED, "nonce_expired", AEC_STALE)                                            \
        X(AE_NONCE_KEY, "nonce_key", AEC_SERVER)                                                   \
        X(AE_NONCE_REUSED, "nonce_reused", AEC_STALE)                                              \
        X(AE_NONCE_UNKNOWN, "nonce_unknown", AEC_CLIENT)                                           \
        X(AE_NONCE_WRONG_AGENT, "nonce_wrong_agent", AEC_CLIENT)                                   \
        X(AE_NOT_FOUND, "not_found", AEC_CLIENT)                                                   \
        X(AE_PCRS_BAD_BANK, "pcrs_bad_bank", AEC_CLIENT)                                           \
        X(AE_PCRS_BAD_INDEX, "pcrs_bad_index", AEC_CLIENT)                                         \
        X(AE_PCRS_BAD_LINE, "pcrs_bad_line", AEC_CLIENT)                                           \
        X(AE_PCRS_BAD_VALUE, "pcrs_bad_value", AEC_CLIENT)                                         \
        X(AE_PCRS_DUPLICATE, "pcrs_duplicate", AEC_CLIENT)                                         \
        X(AE_PCRS_TOO_BIG, "pcrs_too_big", AEC_CLIENT)                                             \
        X(AE_POLICY_BAD_GLOB, "policy_bad_glob", AEC_CLIENT)                                       \
        X(AE_POLICY_BAD_HEX, "policy_bad_hex", AEC_CLIENT)                                         \
        X(AE_POLICY_BAD_SIGNATURE, "policy_bad_signature", AEC_CLIENT)                             \
        X(AE_POLICY_BAD_VALUE, "policy_bad_value", AEC_CLIENT)                                     \
        X(AE_POLICY_EMPTY_SECTION, "policy_empty_section", AEC_CLIENT)                             \
        X(AE_POLICY_IN_USE, "policy_in_use", AEC_CLIENT)                                           \
        X(AE_POLICY_INVALID, "policy_invalid", AEC_CLIENT)                                         \
        X(AE_POLICY_JSON, "policy_json", AEC_CLIENT)                                               \
        X(AE_POLICY_MISSING_FIELD, "policy_missing_field", AEC_CLIENT)                             \
        X(AE_POLICY_NOT_FOUND, "policy_not_found", AEC_CLIENT)                                     \
        X(AE_POLICY_TOO_BIG, "policy_too_big", AEC_CLIENT)                                         \
        X(AE_POLICY_TYPE, "policy_type", AEC_CLIENT)                                               \
        X(AE_POLICY_UNKNOWN_FIELD, "policy_unknown_field", AEC_CLIENT)                             \
        X(AE_QUOTE_AK_ALG, "quote_ak_alg", AEC_UNAUTHENTICATED)                                    \
        X(AE_QUOTE_AK_ATTRIBUTES, "quote_ak_attributes", AEC_UNAUTHENTICATED)                      \
        X(AE_QUOTE_AK_CURVE, "quote_ak_curve", AEC_UNAUTHENTICATED)                                \
        X(AE_QUOTE_AK_KEY, "quote_ak_key", AEC_UNAUTHENTICATED)                                    \
        X(AE_QUOTE_AK_MALFORMED, "quote_ak_malformed", AEC_UNAUTHENTICATED)                        \
        X(AE_QUOTE_AK_NAME_ALG, "quote_ak_name_alg", AEC_UNAUTHENTICATED)                          \
        X(AE_QUOTE_AK_TOO_BIG, "quote_ak_too_big", AEC_UNAUTHENTICATED)                            \
        X(AE_QUOTE_AK_TRAILING, "quote_ak_trailing", AEC_UNAUTHENTICATED)                          \
        X(AE_QUOTE_AK_WEAK, "quote_ak_weak", AEC_UNAUTHENTICATED)                                  \
        X(AE_QUOTE_ATTEST_MALFORMED, "quote_attest_malformed", AEC_UNAUTHENTICATED)                \
        X(AE_QUOTE_ATTEST_TOO_BIG, "quote_attest_too_big", AEC_UNAUTHENTICATED)                    \
        X(AE_QUOTE_ATTEST_TRAILING, "quote_attest_trailing", AEC_UNAUTHENTICATED)                  \
        X(AE_QUOTE_CLOCK_REWIND, "quote_clock_rewind", AEC_STALE)                                  \
        X(AE_QUOTE_INTERNAL, "quote_internal", AEC_SERVER)                                         \
        X(AE_QUOTE_INVALID, "quote_invalid", AEC_UNAUTHENTICATED)                                  \
        X(AE_QUOTE_INVALID_ARGUMENT, "quote_invalid_argument", AEC_SERVER)                         \
        X(AE_QUOTE_MAGIC, "quote_magic", AEC_UNAUTHENTICATED)                                      \
        X(AE_QUOTE_NONCE, "quote_nonce", AEC_UNAUTHENTICATED)                                      \
        X(AE_QUOTE_PCR_BANK, "quote_pcr_bank", AEC_VERDICT)                                        \
        X(AE_QUOTE_PCR_DIGEST, "quote_pcr_digest", AEC_VERDICT)                                    \
        X(AE_QUOTE_PCR_MISSING, "quote_pcr_missing", AEC_VERDICT)                                  \
        X(AE_QUOTE_PCR_SELECTION, "quote_pcr_selection", AEC_VERDICT)                              \
        X(AE_QUOTE_PCR_SELECTION_MALFORMED, "quote_pcr_selection_malformed", AEC_VERDICT)          \
        X(AE_QUOTE_SIG_ALG, "quote_sig_alg", AEC_UNAUTHENTICATED)                                  \
        X(AE_QUOTE_SIG_MALFORMED, "quote_sig_malformed", AEC_UNAUTHENTICATED)                      \
        X(AE_QUOTE_SIG_SCHEME, "quote_sig_scheme", AEC_UNAUTHENTICATED)                            \
        X(AE_QUOTE_SIG_TOO_BIG, "quote_sig_too_big", AEC_UNAUTHENTICATED)                          \
        X(AE_QUOTE_SIG_TRAILING, "quote_sig_trailing", AEC_UNAUTHENTICATED)                        \
        X(AE_QUOTE_SIGNATURE, "quote_signature", AEC_UNAUTHENTICATED)                              \
        X(AE_QUOTE_TYPE, "quote_type", AEC_UNAUTHENTICATED)                                        \
        X(AE_REPLAY_STATE_BAD_VALUE, "replay_state_bad_value", AEC_SERVER)                         \
        X(AE_REPLAY_STATE_MAGIC, "replay_state_magic", AEC_SERVER)                                 \
        X(AE_REPLAY_STATE_TOO_BIG, "replay_state_too_big", AEC_SERVER)                             \
        X(AE_REPLAY_STATE_TRAILING, "replay_state_trailing", AEC_SERVER)                           \
        X(AE_REPLAY_STATE_TRUNCATED, "replay_state_truncated", AEC_SERVER)                         \
        X(AE_REPLAY_STATE_VERSION, "replay_state_version", AEC_SERVER)                             \
        X(AE_RUNTIME_POLICY_CHANGED, "runtime_policy_changed", AEC_STALE)                          \
        X(AE_SERVER_BUSY, "server_busy", AEC_SERVER)                                               \
        X(AE_STORE_BUSY, "store_busy", AEC_SERVER)                                                 \
        X(AE_STORE_CONFIG, "store_config", AEC_SERVER)                                             \
        X(AE_STORE_CORRUPT, "store_corrupt", AEC_SERVER)                                           \
        X(AE_STORE_FAILED, "store_failed", AEC_SERVER)                                             \
        X(AE_STORE_IO, "store_io", AEC_SERVER)                                                     \
        X(AE_STORE_SCHEMA, "store_schema", AEC_SERVER)                                             \
        X(AE_STORE_UNAVAILABLE, "store_unavailable", AEC_SERVER)                                   \
        X(AE_TCGLOG_BAD_DIGEST, "tcglog_bad_digest", AEC_VERDICT)                                  \
        X(AE_TCGLOG_BAD_EVENT, "tcglog_bad_event", AEC_VERDICT)                                    \
        X(AE_TCGLOG_BAD_PCR, "tcglog_bad_pcr", AEC_VERDICT)                                        \
        X(AE_TCGLOG_BAD_SPECID, "tcglog_bad_specid", AEC_VERDICT)                                  \
        X(AE_TCGLOG_TOO_BIG, "tcglog_too_big", AEC_VERDICT)                                        \
        X(AE_TCGLOG_TRUNCATED, "tcglog_truncated", AEC_VERDICT)                                    \
        X(AE_TOKENS_BAD_HASH, "tokens_bad_hash", AEC_SERVER)                                       \
        X(AE_TOKENS_BAD_LINE, "tokens_bad_line", AEC_SERVER)                                       \
        X(AE_TOKENS_BAD_ROLE, "tokens_bad_role", AEC_SERVER)                                       \
        X(AE_TOKENS_LINE_TOO_LONG, "tokens_line_too_long", AEC_SERVER)                             \
        X(AE_TOKENS_OPEN, "tokens_open", AEC_SERVER)                                               \
        X(AE_TOKENS_TOO_BIG, "tokens_too_big", AEC_SERVER)                                         \
        X(AE_TOKENS_TOO_MANY, "tokens_too_many", AEC_SERVER)                                       \
        X(AE_TPM_AK_CORRUPT, "tpm_ak_corrupt", AEC_SERVER)                                         \
        X(AE_TPM_AK_INCOMPLETE, "tpm_ak_incomplete", AEC_SERVER)                                   \
        X(AE_TPM_AK_REJECTED, "tpm_ak_rejected", AEC_SERVER)                                       \
        X(AE_TPM_AK_UNREADABLE, "tpm_ak_unreadable", AEC_SERVER)                                   \
        X(AE_TPM_BAD_ALG, "tpm_bad_alg", AEC_SERVER)                                               \
        X(AE_TPM_BAD_CREDENTIAL, "tpm_bad_credential", AEC_SERVER)                                 \
        X(AE_TPM_BAD_NONCE, "tpm_bad_nonce", AEC_SERVER)                                           \
        X(AE_TPM_BAD_PCR, "tpm_bad_pcr", AEC_SERVER)                                               \
        X(AE_TPM_BAD_QUOTE, "tpm_bad_quote", AEC_SERVER)                                           \
        X(AE_TPM_BAD_RESPONSE, "tpm_bad_response", AEC_SERVER)                                     \
        X(AE_TPM_BAD_SELECTION, "tpm_bad_selection", AEC_SERVER)                                   \
        X(AE_TPM_CREDENTIAL_REJECTED, "tpm_credential_rejected", AEC_SERVER)                       \
        X(AE_TPM_DIGEST, "tpm_digest", AEC_SERVER)                                                 \
        X(AE_TPM_EK_CERT_NOT_DER, "tpm_ek_cert_not_der", AEC_SERVER)                               \
        X(AE_TPM_EK_CERT_TOO_BIG, "tpm_ek_cert_too_big", AEC_SERVER)                               \
        X(AE_TPM_EK_CERT_UNREADABLE, "tpm_ek_cert_unreadable", AEC_SERVER)                         \
        X(AE_TPM_ERROR, "tpm_error", AEC_SERVER)                                                   \
        X(AE_TPM_MARSHAL, "tpm_marshal", AEC_SERVER)                                               \
        X(AE_TPM_NO_AK, "tpm_no_ak", AEC_SERVER)                                                   \
        X(AE_TPM_NO_BANK, "tpm_no_bank", AEC_SERVER)                                               \
        X(AE_TPM_NO_EK_CERT, "tpm_no_ek_cert", AEC_SERVER)                                         \
        X(AE_TPM_PCRS_CHANGING, "tpm_pcrs_changing", AEC_SERVER)                                   \
        X(AE_TPM_STATE_DIR, "tpm_state_dir", AEC_SERVER)                                           \
        X(AE_TPM_STATE_WRITE, "tpm_state_write", AEC_SERVER)                                       \
        X(AE_UNAUTHORIZED, "unauthorized", AEC_CLIENT)                                             \
        X(AE_UNEXPECTED_BODY, "unexpected_body", AEC_CLIENT)                                       \
        X(AE_UNKNOWN_FIELD, "unknown_field", AEC_CLIENT)                                           \
        X(AE_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", AEC_CLIENT)                         \
        X(AE_VERIFY_FAILED, "verify_failed", AEC_VERDICT)                                          \
        X(AE_VERIFY_INTERNAL, "verify_internal", AEC_SERVER)                                       \
        X(AE_VERIFY_INVALID_ARGUMENT, "verify_invalid_argument", AEC_SERVER)                       \
        X(AE_VERIFY_PCR10_NOT_QUOTED, "verify_pcr10_not_quoted", AEC_VERDICT)

enum attest_code {
        AE_NONE = 0, /* unset */
#define ATTEST_CODE_ENUM(id, name, cls) id,
        ATTEST_CODES(ATTEST_CODE_ENUM)
#undef ATTEST_CODE_ENUM
                AE__COUNT
};

/* The stable name ("ima_truncated"); "none" for AE_NONE, "unknown" out of range. */
const char *attest_code_name(enum attest_code c);
/* The code of a name (a peer's JSON "error"); false when the name is not one of ours. */
bool attest_code_from_name(const char *name, enum attest_code *ret);
/*
 * The class of a code. AE_NONE and out-of-range values are AEC_SERVER: a failure nobody explained
 * is ours, and it must change nothing.
 */
enum attest_class attest_code_class(enum attest_code c);
/* "client", "unauthenticated", "stale", "verdict", "server"; "unknown" out of range. */
const char *attest_class_name(enum attest_class k);

struct attest_err {
        enum attest_code code; /* AE_NONE when unset */
        char msg[256];
};

/*
 * Fill err (which may be NULL) with code and a formatted message; returns e (a negative errno)
 * so callers can write `return attest_fail(err, -EBADMSG, AE_IMA_TRUNCATED, "entry %zu", i);`.
 */
int attest_fail(struct attest_err *err, int e, enum attest_code code, const char *fmt, ...)
        _printf_(4, 5);

/* Prefix an already filled message with more context ("line 3: ..."). */
void attest_err_prefix(struct attest_err *err, const char *fmt, ...) _printf_(2, 3);

#endif
