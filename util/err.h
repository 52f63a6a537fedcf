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
 * Every error code, one table: the enum constant and its stable name (the JSON "error" of the REST
 * API, the CLI's messages, the metrics label). Control flow compares the enum; people and peers
 * read the name. Append anywhere: the numbers are not persisted or sent.
 */
#define ATTEST_CODES(X)                                                                            \
        X(AE_ACTIVATION_FAILED, "activation_failed")                                               \
        X(AE_ACTIVATION_RATE_LIMITED, "activation_rate_limited")                                   \
        X(AE_AGENT_BUSY, "agent_busy")                                                             \
        X(AE_AGENT_DECOMMISSIONED, "agent_decommissioned")                                         \
        X(AE_AGENT_EXISTS, "agent_exists")                                                         \
        X(AE_AGENT_NOT_ACTIVE, "agent_not_active")                                                 \
        X(AE_AGENT_NOT_DECOMMISSIONED, "agent_not_decommissioned")                                 \
        X(AE_AGENT_NOT_FOUND, "agent_not_found")                                                   \
        X(AE_AGENT_NOT_PENDING, "agent_not_pending")                                               \
        X(AE_BAD_FIELD, "bad_field")                                                               \
        X(AE_BAD_ID, "bad_id")                                                                     \
        X(AE_BAD_JSON, "bad_json")                                                                 \
        X(AE_BAD_QUERY, "bad_query")                                                               \
        X(AE_BAD_REQUEST, "bad_request")                                                           \
        X(AE_BOOT_OFFSET_MISMATCH, "boot_offset_mismatch")                                         \
        X(AE_BOOT_OFFSET_REBOOT, "boot_offset_reboot")                                             \
        X(AE_BOOT_REPLAY_MISMATCH, "boot_replay_mismatch")                                         \
        X(AE_BODY_TOO_LARGE, "body_too_large")                                                     \
        X(AE_CDATA_BAD_FLAG, "cdata_bad_flag")                                                     \
        X(AE_CDATA_BAD_KERNEL_VERSION, "cdata_bad_kernel_version")                                 \
        X(AE_CDATA_BAD_KEY, "cdata_bad_key")                                                       \
        X(AE_CDATA_BAD_POLICY_HASH, "cdata_bad_policy_hash")                                       \
        X(AE_CDATA_BAD_VALUE, "cdata_bad_value")                                                   \
        X(AE_CDATA_DUPLICATE_KEY, "cdata_duplicate_key")                                           \
        X(AE_CDATA_EMPTY, "cdata_empty")                                                           \
        X(AE_CDATA_MISSING_KEY, "cdata_missing_key")                                               \
        X(AE_CDATA_TOO_LONG, "cdata_too_long")                                                     \
        X(AE_CDATA_TOO_MANY, "cdata_too_many")                                                     \
        X(AE_CLIENT_CERTIFICATE_REQUIRED, "client_certificate_required")                           \
        X(AE_CONFIG, "config")                                                                     \
        X(AE_CRED_BAD_EK, "cred_bad_ek")                                                           \
        X(AE_CRED_BAD_NAME, "cred_bad_name")                                                       \
        X(AE_CRED_BAD_SECRET, "cred_bad_secret")                                                   \
        X(AE_CRED_CRYPTO, "cred_crypto")                                                           \
        X(AE_CREDENTIAL_EXPIRED, "credential_expired")                                             \
        X(AE_DRAINING, "draining")                                                                 \
        X(AE_EAR_KEY, "ear_key")                                                                   \
        X(AE_EAR_NO_VERDICT, "ear_no_verdict")                                                     \
        X(AE_EAR_UNCONFIGURED, "ear_unconfigured")                                                 \
        X(AE_EK_CA_UNCONFIGURED, "ek_ca_unconfigured")                                             \
        X(AE_EK_CA_UNREADABLE, "ek_ca_unreadable")                                                 \
        X(AE_EK_CERT_MALFORMED, "ek_cert_malformed")                                               \
        X(AE_EK_CERT_MISMATCH, "ek_cert_mismatch")                                                 \
        X(AE_EK_CERT_REQUIRED, "ek_cert_required")                                                 \
        X(AE_EK_CERT_UNTRUSTED, "ek_cert_untrusted")                                               \
        X(AE_EK_DECOMMISSIONED, "ek_decommissioned")                                               \
        X(AE_ENROLMENT_BUSY, "enrolment_busy")                                                     \
        X(AE_EVIDENCE_BAD_B64, "evidence_bad_b64")                                                 \
        X(AE_EVIDENCE_BAD_HEX, "evidence_bad_hex")                                                 \
        X(AE_EVIDENCE_BAD_VALUE, "evidence_bad_value")                                             \
        X(AE_EVIDENCE_JSON, "evidence_json")                                                       \
        X(AE_EVIDENCE_MISSING_FIELD, "evidence_missing_field")                                     \
        X(AE_EVIDENCE_NONCE_MISMATCH, "evidence_nonce_mismatch")                                   \
        X(AE_EVIDENCE_TOO_BIG, "evidence_too_big")                                                 \
        X(AE_EVIDENCE_TYPE, "evidence_type")                                                       \
        X(AE_EVIDENCE_UNKNOWN_FIELD, "evidence_unknown_field")                                     \
        X(AE_EVIDENCE_VERSION, "evidence_version")                                                 \
        X(AE_FACTS_MACHINE_ID, "facts_machine_id")                                                 \
        X(AE_FACTS_NO_KERNEL, "facts_no_kernel")                                                   \
        X(AE_FILE, "file")                                                                         \
        X(AE_FORBIDDEN, "forbidden")                                                               \
        X(AE_HTTP_BAD_URL, "http_bad_url")                                                         \
        X(AE_HTTP_KEY_PERMISSIONS, "http_key_permissions")                                         \
        X(AE_HTTP_KEY_TOO_BIG, "http_key_too_big")                                                 \
        X(AE_HTTP_KEY_UNREADABLE, "http_key_unreadable")                                           \
        X(AE_HTTP_NO_CA, "http_no_ca")                                                             \
        X(AE_HTTP_RESPONSE_NUL, "http_response_nul")                                               \
        X(AE_HTTP_RESPONSE_TOO_BIG, "http_response_too_big")                                       \
        X(AE_HTTP_START, "http_start")                                                             \
        X(AE_HTTP_TIMEOUT, "http_timeout")                                                         \
        X(AE_HTTP_TLS_VERIFY, "http_tls_verify")                                                   \
        X(AE_HTTP_TRANSPORT, "http_transport")                                                     \
        X(AE_IMA_BAD_FIELD, "ima_bad_field")                                                       \
        X(AE_IMA_BAD_HASH, "ima_bad_hash")                                                         \
        X(AE_IMA_BAD_LINE, "ima_bad_line")                                                         \
        X(AE_IMA_BAD_PCR, "ima_bad_pcr")                                                           \
        X(AE_IMA_BAD_TEMPLATE, "ima_bad_template")                                                 \
        X(AE_IMA_BAD_VIOLATION, "ima_bad_violation")                                               \
        X(AE_IMA_BANK_UNTRACKED, "ima_bank_untracked")                                             \
        X(AE_IMA_BOOT_AGGREGATE_ALGO, "ima_boot_aggregate_algo")                                   \
        X(AE_IMA_BOOT_AGGREGATE_MISMATCH, "ima_boot_aggregate_mismatch")                           \
        X(AE_IMA_BOOT_AGGREGATE_PCRS, "ima_boot_aggregate_pcrs")                                   \
        X(AE_IMA_DATA_TOO_LONG, "ima_data_too_long")                                               \
        X(AE_IMA_LINE_TOO_LONG, "ima_line_too_long")                                               \
        X(AE_IMA_NAME_TOO_LONG, "ima_name_too_long")                                               \
        X(AE_IMA_NO_BOOT_AGGREGATE, "ima_no_boot_aggregate")                                       \
        X(AE_IMA_OFFSET_MISMATCH, "ima_offset_mismatch")                                           \
        X(AE_IMA_OFFSET_REBOOT, "ima_offset_reboot")                                               \
        X(AE_IMA_REPLAY_MISMATCH, "ima_replay_mismatch")                                           \
        X(AE_IMA_SHA1_MISMATCH, "ima_sha1_mismatch")                                               \
        X(AE_IMA_TOO_MANY_ENTRIES, "ima_too_many_entries")                                         \
        X(AE_IMA_TRAILING_DATA, "ima_trailing_data")                                               \
        X(AE_IMA_TRUNCATED, "ima_truncated")                                                       \
        X(AE_IMA_UNKNOWN_TEMPLATE, "ima_unknown_template")                                         \
        X(AE_IMALOG_READ, "imalog_read")                                                           \
        X(AE_IMALOG_TOO_BIG, "imalog_too_big")                                                     \
        X(AE_INTERNAL, "internal")                                                                 \
        X(AE_JUDGE_FAILED, "judge_failed")                                                         \
        X(AE_KEY_INVALID, "key_invalid")                                                           \
        X(AE_KEY_MALFORMED, "key_malformed")                                                       \
        X(AE_KEY_UNSUPPORTED, "key_unsupported")                                                   \
        X(AE_LISTEN, "listen")                                                                     \
        X(AE_METHOD_NOT_ALLOWED, "method_not_allowed")                                             \
        X(AE_MISSING_FIELD, "missing_field")                                                       \
        X(AE_NONCE_EXPIRED, "nonce_expired")                                                       \
        X(AE_NONCE_KEY, "nonce_key")                                                               \
        X(AE_NONCE_REUSED, "nonce_reused")                                                         \
        X(AE_NONCE_UNKNOWN, "nonce_unknown")                                                       \
        X(AE_NONCE_WRONG_AGENT, "nonce_wrong_agent")                                               \
        X(AE_NOT_FOUND, "not_found")                                                               \
        X(AE_PCRS_BAD_BANK, "pcrs_bad_bank")                                                       \
        X(AE_PCRS_BAD_INDEX, "pcrs_bad_index")                                                     \
        X(AE_PCRS_BAD_LINE, "pcrs_bad_line")                                                       \
        X(AE_PCRS_BAD_VALUE, "pcrs_bad_value")                                                     \
        X(AE_PCRS_DUPLICATE, "pcrs_duplicate")                                                     \
        X(AE_PCRS_TOO_BIG, "pcrs_too_big")                                                         \
        X(AE_POLICY_BAD_GLOB, "policy_bad_glob")                                                   \
        X(AE_POLICY_BAD_HEX, "policy_bad_hex")                                                     \
        X(AE_POLICY_BAD_SIGNATURE, "policy_bad_signature")                                         \
        X(AE_POLICY_BAD_VALUE, "policy_bad_value")                                                 \
        X(AE_POLICY_EMPTY_SECTION, "policy_empty_section")                                         \
        X(AE_POLICY_IN_USE, "policy_in_use")                                                       \
        X(AE_POLICY_INVALID, "policy_invalid")                                                     \
        X(AE_POLICY_JSON, "policy_json")                                                           \
        X(AE_POLICY_MISSING_FIELD, "policy_missing_field")                                         \
        X(AE_POLICY_NOT_FOUND, "policy_not_found")                                                 \
        X(AE_POLICY_TOO_BIG, "policy_too_big")                                                     \
        X(AE_POLICY_TYPE, "policy_type")                                                           \
        X(AE_POLICY_UNKNOWN_FIELD, "policy_unknown_field")                                         \
        X(AE_QUOTE_AK_ALG, "quote_ak_alg")                                                         \
        X(AE_QUOTE_AK_ATTRIBUTES, "quote_ak_attributes")                                           \
        X(AE_QUOTE_AK_CURVE, "quote_ak_curve")                                                     \
        X(AE_QUOTE_AK_KEY, "quote_ak_key")                                                         \
        X(AE_QUOTE_AK_MALFORMED, "quote_ak_malformed")                                             \
        X(AE_QUOTE_AK_NAME_ALG, "quote_ak_name_alg")                                               \
        X(AE_QUOTE_AK_TOO_BIG, "quote_ak_too_big")                                                 \
        X(AE_QUOTE_AK_TRAILING, "quote_ak_trailing")                                               \
        X(AE_QUOTE_AK_WEAK, "quote_ak_weak")                                                       \
        X(AE_QUOTE_ATTEST_MALFORMED, "quote_attest_malformed")                                     \
        X(AE_QUOTE_ATTEST_TOO_BIG, "quote_attest_too_big")                                         \
        X(AE_QUOTE_ATTEST_TRAILING, "quote_attest_trailing")                                       \
        X(AE_QUOTE_CLOCK_REWIND, "quote_clock_rewind")                                             \
        X(AE_QUOTE_INTERNAL, "quote_internal")                                                     \
        X(AE_QUOTE_INVALID, "quote_invalid")                                                       \
        X(AE_QUOTE_INVALID_ARGUMENT, "quote_invalid_argument")                                     \
        X(AE_QUOTE_MAGIC, "quote_magic")                                                           \
        X(AE_QUOTE_NONCE, "quote_nonce")                                                           \
        X(AE_QUOTE_PCR_BANK, "quote_pcr_bank")                                                     \
        X(AE_QUOTE_PCR_DIGEST, "quote_pcr_digest")                                                 \
        X(AE_QUOTE_PCR_MISSING, "quote_pcr_missing")                                               \
        X(AE_QUOTE_PCR_SELECTION, "quote_pcr_selection")                                           \
        X(AE_QUOTE_PCR_SELECTION_MALFORMED, "quote_pcr_selection_malformed")                       \
        X(AE_QUOTE_SIG_ALG, "quote_sig_alg")                                                       \
        X(AE_QUOTE_SIG_MALFORMED, "quote_sig_malformed")                                           \
        X(AE_QUOTE_SIG_SCHEME, "quote_sig_scheme")                                                 \
        X(AE_QUOTE_SIG_TOO_BIG, "quote_sig_too_big")                                               \
        X(AE_QUOTE_SIG_TRAILING, "quote_sig_trailing")                                             \
        X(AE_QUOTE_SIGNATURE, "quote_signature")                                                   \
        X(AE_QUOTE_TYPE, "quote_type")                                                             \
        X(AE_REPLAY_STATE_BAD_VALUE, "replay_state_bad_value")                                     \
        X(AE_REPLAY_STATE_MAGIC, "replay_state_magic")                                             \
        X(AE_REPLAY_STATE_TOO_BIG, "replay_state_too_big")                                         \
        X(AE_REPLAY_STATE_TRAILING, "replay_state_trailing")                                       \
        X(AE_REPLAY_STATE_TRUNCATED, "replay_state_truncated")                                     \
        X(AE_REPLAY_STATE_VERSION, "replay_state_version")                                         \
        X(AE_RUNTIME_POLICY_CHANGED, "runtime_policy_changed")                                     \
        X(AE_SERVER_BUSY, "server_busy")                                                           \
        X(AE_STORE_BUSY, "store_busy")                                                             \
        X(AE_STORE_CONFIG, "store_config")                                                         \
        X(AE_STORE_CORRUPT, "store_corrupt")                                                       \
        X(AE_STORE_FAILED, "store_failed")                                                         \
        X(AE_STORE_IO, "store_io")                                                                 \
        X(AE_STORE_SCHEMA, "store_schema")                                                         \
        X(AE_STORE_UNAVAILABLE, "store_unavailable")                                               \
        X(AE_TCGLOG_BAD_DIGEST, "tcglog_bad_digest")                                               \
        X(AE_TCGLOG_BAD_EVENT, "tcglog_bad_event")                                                 \
        X(AE_TCGLOG_BAD_PCR, "tcglog_bad_pcr")                                                     \
        X(AE_TCGLOG_BAD_SPECID, "tcglog_bad_specid")                                               \
        X(AE_TCGLOG_TOO_BIG, "tcglog_too_big")                                                     \
        X(AE_TCGLOG_TRUNCATED, "tcglog_truncated")                                                 \
        X(AE_TOKENS_BAD_HASH, "tokens_bad_hash")                                                   \
        X(AE_TOKENS_BAD_LINE, "tokens_bad_line")                                                   \
        X(AE_TOKENS_BAD_ROLE, "tokens_bad_role")                                                   \
        X(AE_TOKENS_LINE_TOO_LONG, "tokens_line_too_long")                                         \
        X(AE_TOKENS_OPEN, "tokens_open")                                                           \
        X(AE_TOKENS_TOO_BIG, "tokens_too_big")                                                     \
        X(AE_TOKENS_TOO_MANY, "tokens_too_many")                                                   \
        X(AE_TPM_AK_CORRUPT, "tpm_ak_corrupt")                                                     \
        X(AE_TPM_AK_INCOMPLETE, "tpm_ak_incomplete")                                               \
        X(AE_TPM_AK_REJECTED, "tpm_ak_rejected")                                                   \
        X(AE_TPM_AK_UNREADABLE, "tpm_ak_unreadable")                                               \
        X(AE_TPM_BAD_ALG, "tpm_bad_alg")                                                           \
        X(AE_TPM_BAD_CREDENTIAL, "tpm_bad_credential")                                             \
        X(AE_TPM_BAD_NONCE, "tpm_bad_nonce")                                                       \
        X(AE_TPM_BAD_PCR, "tpm_bad_pcr")                                                           \
        X(AE_TPM_BAD_QUOTE, "tpm_bad_quote")                                                       \
        X(AE_TPM_BAD_RESPONSE, "tpm_bad_response")                                                 \
        X(AE_TPM_BAD_SELECTION, "tpm_bad_selection")                                               \
        X(AE_TPM_CREDENTIAL_REJECTED, "tpm_credential_rejected")                                   \
        X(AE_TPM_DIGEST, "tpm_digest")                                                             \
        X(AE_TPM_EK_CERT_NOT_DER, "tpm_ek_cert_not_der")                                           \
        X(AE_TPM_EK_CERT_TOO_BIG, "tpm_ek_cert_too_big")                                           \
        X(AE_TPM_EK_CERT_UNREADABLE, "tpm_ek_cert_unreadable")                                     \
        X(AE_TPM_ERROR, "tpm_error")                                                               \
        X(AE_TPM_MARSHAL, "tpm_marshal")                                                           \
        X(AE_TPM_NO_AK, "tpm_no_ak")                                                               \
        X(AE_TPM_NO_BANK, "tpm_no_bank")                                                           \
        X(AE_TPM_NO_EK_CERT, "tpm_no_ek_cert")                                                     \
        X(AE_TPM_PCRS_CHANGING, "tpm_pcrs_changing")                                               \
        X(AE_TPM_STATE_DIR, "tpm_state_dir")                                                       \
        X(AE_TPM_STATE_WRITE, "tpm_state_write")                                                   \
        X(AE_UNAUTHORIZED, "unauthorized")                                                         \
        X(AE_UNEXPECTED_BODY, "unexpected_body")                                                   \
        X(AE_UNKNOWN_FIELD, "unknown_field")                                                       \
        X(AE_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")                                     \
        X(AE_VERIFY_FAILED, "verify_failed")                                                       \
        X(AE_VERIFY_INTERNAL, "verify_internal")                                                   \
        X(AE_VERIFY_INVALID_ARGUMENT, "verify_invalid_argument")                                   \
        X(AE_VERIFY_PCR10_NOT_QUOTED, "verify_pcr10_not_quoted")

enum attest_code {
        AE_NONE = 0, /* unset */
#define ATTEST_CODE_ENUM(id, name) id,
        ATTEST_CODES(ATTEST_CODE_ENUM)
#undef ATTEST_CODE_ENUM
                AE__COUNT
};

/* The stable name ("ima_truncated"); "none" for AE_NONE, "unknown" out of range. */
const char *attest_code_name(enum attest_code c);
/* The code of a name (a peer's JSON "error"); false when the name is not one of ours. */
bool attest_code_from_name(const char *name, enum attest_code *ret);

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
