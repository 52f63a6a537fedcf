/* SPDX-License-Identifier: MIT */
/*
 * Attestation policy (attestd-policy(5)): a JSON document of expected host state,
 * parsed strictly (errors name the JSON path), evaluated against the typed claims of one verified
 * submission into a typed verdict (policy/verdict.h) with a reason per claim, or written from a
 * known-good host.
 *
 *   {"name":"prod",
 *    "selinux":{"initialized":true, "enforcing":true, "checkreqprot":false,
 *               "policycaps":{"network_peer_controls":true}, "policy_sha256":["HEX",...],
 *               "never_permissive":true},
 *    "trusted_keys":{"sources":["tpm"], "anchored":true},
 *    "cfi":{"enabled":true, "permissive":false, "anchored":true},
 *    "kernel":{"versions":["6.1.*"], "anchored":true},
 *    "tpm":{"pcrs":{"sha256":{"0":"HEX", "7":"HEX"}}},
 *    "ima":{"require_boot_aggregate":true}}
 *
 * Parse error codes: policy_json, policy_type, policy_unknown_field, policy_missing_field,
 * policy_bad_value, policy_bad_hex, policy_bad_glob, policy_empty_section (all -EBADMSG; -E2BIG
 * policy_too_big).
 */
#ifndef ATTEST_POLICY_H
#define ATTEST_POLICY_H

#include <jansson.h>

#include "util/err.h"
#include "policy/verdict.h"
#include "verify/claims.h"

/* runtime: a policy document, and the body of PUT /v1/policies/{name} (admin only; other
 * non-evidence bodies keep --max-body, 64 KiB): an ima.runtime allowlist of 100,000 paths is
 * ~11 MiB (docs/design-notes.md, "Runtime policies") */
#define POLICY_JSON_MAX (32u * 1024 * 1024)
#define POLICY_NAME_MAX 64
#define POLICY_HASHES_MAX 256
#define POLICY_VERSIONS_MAX 64
#define POLICY_SOURCES_MAX 16

struct policy;

int policy_parse(const char *json, size_t len, struct policy **ret, struct attest_err *err) _wur_;
/* The same checks on a document already parsed as JSON (the daemon's PUT parses the body once). */
int policy_from_json(const json_t *doc, struct policy **ret, struct attest_err *err) _wur_;
struct policy *policy_free(struct policy *p);
DEFINE_CLEANUP_FUNC(struct policy *, policy_free)
const char *policy_name(const struct policy *p);
/* runtime: the ima.runtime section (policy/runtime.h), NULL when the policy has none. */
struct rt_policy;
const struct rt_policy *policy_runtime(const struct policy *p);

/*
 * Evaluate the policy on typed claims into *ret_verdict (initialised here; release it with
 * verdict_done). Status is pass only when every claim passes ("missing" fails). Expected-value
 * lists in the verdict are borrowed from p: keep p until the verdict is turned into JSON.
 * *ret_verdict->policy is the policy's name. Returns 0 whenever a verdict was made; negative
 * (-ENOMEM, -EINVAL) only when it could not judge, and then *ret_verdict holds nothing.
 */
int policy_eval(const struct policy *p, const struct claims *c, struct verdict *ret_verdict) _wur_;

/*
 * A policy pinning a known-good host's state from its claims: the latest SELinux state and policy
 * hash (never_permissive only if the history satisfies it), the trusted-keys source, CFI state and
 * kernel version (anchored when they were measured), the quoted PCRs except 10 and
 * boot_aggregate when it matched. The result parses with policy_parse and passes on that host.
 */
int policy_from_host(const struct claims *c, const char *name, json_t **ret_policy) _wur_;

/*
 * bootv: the "boot" section pinning a known-good host's measured boot (policy/policy-host-boot.c):
 * pcrs_replay when PCR 0-7 matched, Secure Boot, the PK/KEK/db/dbx digests, the boot loaders and
 * kernel, separators, startup locality. -ENODATA when the host sent no firmware event log.
 */
int policy_boot_from_host(const struct claims *c, json_t **ret_section) _wur_;

/* Glob match as the policy uses it: '*' any run, '?' one byte, everything else literal. */
bool policy_glob_match(const char *glob, const char *s);

#endif
