/* SPDX-License-Identifier: MIT */
/*
 * The verdict (docs/architecture.md §6; policy -> verdict -> store): a status and a result per
 * claim the policy checked, typed. JSON is made once, at the edge, by verdict_to_json
 * (policy/verdict.c), in the shape docs/api.md gives:
 *   {"status":"pass"|"fail", "policy":NAME,
 *    "claims":[{"name":"selinux.enforcing", "expected":true, "observed":true,
 *               "result":"pass"|"fail"|"missing", "anchored":true, "entry":4,
 *               "reason":"..." (fail and missing only)}, ...],
 *    "sections_unchecked":["cfi", ...],
 *    "runtime":{"passed":N, "failed":N, "excluded":N, "signed":N, "violations":N,
 *               "failures":[{"entry":N, "path":"/bin/x", "digest":"sha256:HEX",
 *                            "reason":"not_allowed"}, ...]}}   (ima.runtime policies only)
 */
#ifndef ATTEST_VERDICT_H
#define ATTEST_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evidence/bank.h"
#include "evidence/cdata.h"
#include "util/err.h"
#include "policy/runtime-state.h"

enum verdict_status {
        VERDICT_PASS,
        VERDICT_FAIL,
        VERDICT_ERROR, /* the round could not be judged (stored so, never the old verdict) */
};

enum claim_result {
        CLAIM_PASS,
        CLAIM_FAIL,
        CLAIM_MISSING, /* nothing to judge: fails the verdict too */
};

/* The policy's sections, in the order "sections_unchecked" lists them. */
enum policy_section {
        SECTION_SELINUX,
        SECTION_TRUSTED_KEYS,
        SECTION_CFI,
        SECTION_KERNEL,
        SECTION_TPM,
        SECTION_IMA,
        SECTION_BOOT,
        SECTION__COUNT,
};

/* Every claim a policy can check; the name table gives "selinux.enforcing" etc. */
#define CLAIM_IDS(X)                                                                               \
        X(CLAIM_SELINUX_INITIALIZED, "selinux.initialized")                                        \
        X(CLAIM_SELINUX_ENFORCING, "selinux.enforcing")                                            \
        X(CLAIM_SELINUX_CHECKREQPROT, "selinux.checkreqprot")                                      \
        X(CLAIM_SELINUX_POLICYCAP, "selinux.policycaps") /* + "." capability name */               \
        X(CLAIM_SELINUX_NEVER_PERMISSIVE, "selinux.never_permissive")                              \
        X(CLAIM_SELINUX_POLICY_SHA256, "selinux.policy_sha256")                                    \
        X(CLAIM_TRUSTED_KEYS_SOURCE, "trusted_keys.source")                                        \
        X(CLAIM_TRUSTED_KEYS_RNG, "trusted_keys.rng")                                              \
        X(CLAIM_TRUSTED_KEYS_REQUESTED, "trusted_keys.requested")                                  \
        X(CLAIM_TRUSTED_KEYS_ANCHORED, "trusted_keys.anchored")                                    \
        X(CLAIM_CFI_ENABLED, "cfi.enabled")                                                        \
        X(CLAIM_CFI_MODE, "cfi.mode")                                                              \
        X(CLAIM_CFI_PERMISSIVE, "cfi.permissive")                                                  \
        X(CLAIM_CFI_ANCHORED, "cfi.anchored")                                                      \
        X(CLAIM_KERNEL_VERSION, "kernel.version")                                                  \
        X(CLAIM_KERNEL_ANCHORED, "kernel.anchored")                                                \
        X(CLAIM_TPM_PCR, "tpm.pcrs") /* + ".BANK.N" */                                             \
        X(CLAIM_IMA_BOOT_AGGREGATE, "ima.boot_aggregate")                                          \
        /* runtime: every file and ima-buf measurement against ima.runtime */                      \
        X(CLAIM_IMA_RUNTIME, "ima.runtime")                                                        \
        /* bootv: measured boot (the policy's "boot" section) */                                   \
        X(CLAIM_BOOT_PCRS_REPLAY, "boot.pcrs_replay")                                              \
        X(CLAIM_BOOT_SECUREBOOT, "boot.secureboot")                                                \
        X(CLAIM_BOOT_VARIABLE, "boot.variables")     /* + ".PK" ... */                             \
        X(CLAIM_BOOT_BOOTLOADER, "boot.bootloaders") /* + ".N": the N-th application */            \
        X(CLAIM_BOOT_KERNEL, "boot.kernels")                                                       \
        X(CLAIM_BOOT_SEPARATORS, "boot.separators")                                                \
        X(CLAIM_BOOT_STARTUP_LOCALITY, "boot.startup_locality")

enum claim_id {
#define CLAIM_ID_ENUM(id, name) id,
        CLAIM_IDS(CLAIM_ID_ENUM)
#undef CLAIM_ID_ENUM
                CLAIM__COUNT
};

const char *claim_id_name(enum claim_id id);
const char *claim_result_name(enum claim_result r);
const char *verdict_status_name(enum verdict_status s);
const char *policy_section_name(enum policy_section s);

/* An expected or observed value. Lists are borrowed from the policy that made the verdict. */
enum verdict_value_kind {
        VV_NULL,
        VV_BOOL,
        VV_STRING,  /* s */
        VV_HEX,     /* hex[len] */
        VV_STRINGS, /* n strings at strs, stride bytes apart (policy word/glob arrays) */
        VV_HEXES,   /* n digests at hexes, stride bytes apart, lengths at lens */
};

#define VERDICT_STRING_MAX CDATA_KERNEL_VERSION_MAX

struct verdict_value {
        enum verdict_value_kind kind;
        bool b;
        uint32_t len;
        char s[VERDICT_STRING_MAX];
        uint8_t hex[BANK_DIGEST_MAX];
        const char *strs; /* borrowed */
        const uint8_t *hexes, *lens;
        size_t stride;
        unsigned n;
};

#define VERDICT_REASON_MAX 320
#define VERDICT_ARG_MAX (CDATA_KEY_MAX + 1)

struct verdict_claim {
        enum claim_id id;
        char arg[VERDICT_ARG_MAX]; /* capability name, or "sha256.7" for a PCR; "" otherwise */
        struct verdict_value expected, observed;
        enum claim_result result;
        bool anchored;
        int64_t entry;                   /* log entry, -1: none */
        char reason[VERDICT_REASON_MAX]; /* "" when none; only shown for fail and missing */
};

#define VERDICT_POLICY_MAX 96 /* name@version with its NUL */
#define VERDICT_CLAIMS_MAX 256

struct verdict {
        enum verdict_status status;
        char policy[VERDICT_POLICY_MAX]; /* the policy's name; the daemon writes name@version */
        struct verdict_claim *claims;    /* owned (verdict_done) */
        size_t n_claims, cap_claims;
        unsigned unchecked; /* bit per enum policy_section the policy does not have */
        /* runtime: the ima.runtime results (borrowed from the claims); NULL: not checked */
        const struct rt_state *runtime;
};

void verdict_init(struct verdict *v);
void verdict_done(struct verdict *v);
/* Name of claim c ("selinux.policycaps.open_perms") into buf of n bytes. */
void verdict_claim_name(const struct verdict_claim *c, char *buf, size_t n);
/* A new JSON object in the shape above; -ENOMEM. */
int verdict_to_json(const struct verdict *v, json_t **ret) _wur_;
/* Whether claim c fails the verdict: every result but pass (fail and missing alike). */
static inline bool verdict_claim_failing(const struct verdict_claim *c)
{
        return c->result != CLAIM_PASS;
}
/*
 * The names of the failing claims (verdict_claim_failing), in claim order, as a new JSON array
 * of strings escaped as verdict_to_json escapes them; -ENOMEM.
 */
int verdict_failing_to_json(const struct verdict *v, json_t **ret) _wur_;

#endif
