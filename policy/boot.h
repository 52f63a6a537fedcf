/* SPDX-License-Identifier: MIT */
/*
 * The policy's "boot" section (attestd-policy(5)): expected measured-boot claims, from the
 * firmware event log (verify/boot.h):
 *   "boot":{"secureboot":true|false, "pcrs_replay":true,
 *           "variables":{"PK":["<sha256 hex of the variable data>",...],"KEK":[...],"db":[...],
 *                        "dbx":[...]},
 *           "bootloaders":["sha256:<hex>",...], "kernels":["sha256:<hex>",...],
 *           "separators":true, "startup_locality":[0,3]}
 * Every member optional, the section not empty. Digests of boot applications name their bank
 * ("sha1:", "sha256:", "sha384:", "sha512:" and the matching length). Parsed strictly: errors
 * name the JSON path. Internal to policy/.
 */
#ifndef ATTEST_POLICY_BOOT_H
#define ATTEST_POLICY_BOOT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "evidence/bank.h"
#include "util/err.h"
#include "util/macro.h"
#include "verify/boot.h"

#define BOOT_POLICY_DIGESTS_MAX 64 /* per variable, bootloaders, kernels */
#define BOOT_POLICY_LOCALITY_MAX 4 /* PFP: startup locality 0, 3 or 4 (H-CRTM); 0-4 accepted */
#define BOOT_POLICY_APP_TEXT (8 + 2 * BANK_DIGEST_MAX + 1) /* "sha512:" + hex + NUL */

struct boot_policy_apps {
        bool set;
        unsigned n;
        char text[BOOT_POLICY_DIGESTS_MAX][BOOT_POLICY_APP_TEXT]; /* canonical "bank:hex" */
        uint8_t bank[BOOT_POLICY_DIGESTS_MAX];
        uint8_t digest[BOOT_POLICY_DIGESTS_MAX][BANK_DIGEST_MAX];
};

struct boot_policy {
        signed char secureboot, pcrs_replay, separators; /* -1 not checked, else 0/1 */
        bool var_set[BOOT_VAR__COUNT];
        unsigned nvar[BOOT_VAR__COUNT];
        uint8_t var[BOOT_VAR__COUNT][BOOT_POLICY_DIGESTS_MAX][32];
        uint8_t var_len[BOOT_POLICY_DIGESTS_MAX]; /* all 32: the verdict's lengths */
        struct boot_policy_apps loaders, kernels;
        bool locality_set;
        unsigned nlocality;
        char locality[BOOT_POLICY_LOCALITY_MAX + 1][4]; /* decimal, for the verdict */
        uint8_t locality_v[BOOT_POLICY_LOCALITY_MAX + 1];
};

/* Parse o (the value of "boot") at path into a new *ret (boot_policy_free). */
int boot_policy_from_json(const json_t *o, const char *path, struct boot_policy **ret,
                          struct attest_err *err) _wur_;
struct boot_policy *boot_policy_free(struct boot_policy *p);
DEFINE_CLEANUP_FUNC(struct boot_policy *, boot_policy_free)

#endif
