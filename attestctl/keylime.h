/* SPDX-License-Identifier: MIT */
/*
 * Keylime runtime-policy import (attestctl policy import-keylime): Keylime's runtime-policy JSON
 * (meta.version 1: digests, excludes, keyrings, ima.ignored_keyrings, ima.log_hash_alg,
 * ima.dm_policy, ima-buf, verification-keys) read strictly and written as an attestd policy with
 * an ima.runtime section (attestd-policy(5), docs/runtime-policy.md).
 *
 * Strict: every one of Keylime's eight top-level fields must be there (Keylime's own schema
 * requires them), no field outside Keylime's schema, no duplicate key, digests as Keylime's schema
 * has them (40-128 lowercase hex digits, "alg:hex" accepted too): a length that names an algorithm
 * (40 sha1, 64 sha256 or, with keylime_opts.alg_256, sm3, 96 sha384, 128 sha512) is carried; any
 * other is accepted as Keylime accepts it and, since such a digest matches nothing there or here,
 * not carried, with a note; every exclude compiled by PCRE2 after translation from Python's
 * re dialect, every verification key a DER RSA or EC public key whose key id is the one Keylime
 * records. What attestd cannot do is refused (a dm_policy, a legacy allowlist), never dropped; a
 * DSSE-signed envelope is read by attestctl/dsse.c, which verifies it with the keys given (--dsse-
 * key) and hands its payload here, imported like any policy file (an envelope reaching
 * keylime_import itself, e.g. nested in a payload, is refused); what carries no verdict (meta,
 * release, ima.log_hash_alg) is named in the notes, and so is what attestd judges another way:
 * digests.boot_aggregate (attestd checks that entry against the quoted PCRs,
 * ima.require_boot_aggregate; Keylime's verifier adds the PCRs' value to the list too) and digests
 * names that are not absolute paths (attestd lists files by absolute path; such an entry then
 * fails, never passes). Errors name the JSON path (policy_* codes of util/err.h).
 */
#ifndef ATTESTCTL_KEYLIME_H
#define ATTESTCTL_KEYLIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evidence/hashalg.h"
#include "policy/runtime.h"
#include "util/err.h"

/*
 * Caps: Keylime has none; these are the ima.runtime section's (policy/runtime.h), so whatever
 * imports also loads, and a distribution's full allowlist fits.
 */
#define KEYLIME_JSON_MAX (256u << 20)                /* the policy file */
#define KEYLIME_NAMES_MAX RT_PATHS_MAX               /* names in digests, keyrings or ima-buf */
#define KEYLIME_DIGESTS_MAX RT_DIGESTS_MAX           /* digests in all lists together */
#define KEYLIME_LIST_MAX RT_DIGESTS_PER_PATH_MAX     /* digests for one name */
#define KEYLIME_NAME_MAX RT_PATH_BYTES_MAX           /* a path or event name */
#define KEYLIME_EXCLUDES_MAX RT_EXCLUDES_MAX         /* regexes */
#define KEYLIME_EXCLUDE_MAX RT_REGEX_MAX             /* bytes of one regex once translated */
#define KEYLIME_KEYRINGS_MAX RT_IGNORED_KEYRINGS_MAX /* keyrings, ignored keyrings */
#define KEYLIME_KEYRING_NAME_MAX RT_KEYRING_NAME_MAX
#define KEYLIME_KEYS_JSON_MAX (1u << 20) /* the verification-keys string */
#define KEYLIME_KEYS_MAX RT_KEYS_MAX     /* verification keys */
#define KEYLIME_KEY_DER_MAX 8192u        /* one DER key (its PEM fits RT_KEY_PEM_MAX) */
#define KEYLIME_VIOLATIONS_MAX RT_VIOLATIONS_ALLOW_MAX
#define KEYLIME_NOTES_MAX 16

struct keylime_notes {
        unsigned n;       /* notes in msg */
        unsigned dropped; /* notes past KEYLIME_NOTES_MAX */
        char msg[KEYLIME_NOTES_MAX][256];
};

struct keylime_stats {
        size_t names, digests, excludes, keyrings, keyring_digests, buf_names, buf_digests, keys,
                ignored_keyrings;
        size_t dropped_names;          /* digests names that are not absolute paths (not carried) */
        size_t dropped_boot_aggregate; /* digests.boot_aggregate values (checked against PCRs) */
        size_t dropped_digests;        /* digests whose length names no algorithm (never match) */
        size_t dropped_lists;          /* names left without a digest by that (not carried) */
        size_t digests_256;            /* bare 64-hex digests, carried as o->alg_256 */
};

struct keylime_opts {
        const char *name; /* the attestd policy's name */
        /*
         * Violation entries (ToMToU, open writers): < 0 fail them, else allow this many. Keylime
         * skips them by default (its verifier's ignore_tomtou_errors = False: the entry is
         * neither checked nor failed), fails them when that option is true.
         */
        int64_t violations_allow;
        /*
         * What a bare digest of 64 hex digits is: Keylime compares digests as hex strings
         * whatever the algorithm, so one list serves sha256 and sm3 logs alike (its
         * keylime-policy tool calls such a list "sha256_or_sm3_256"); attestd judges an algorithm
         * and its digest together. NULL: sha256; else a 32-byte policy algorithm (sm3).
         */
        const struct hashalg *alg_256;
};

/*
 * Read Keylime's runtime policy json (len bytes) into a new attestd policy named o->name:
 * {"name":name, "ima":{"require_boot_aggregate":true, "runtime":{...}}}. notes and stats may be
 * NULL. -EBADMSG (err names the JSON path), -E2BIG over a cap, -EOPNOTSUPP a Keylime feature
 * attestd does not have (dm_policy, a DSSE envelope: see dsse.h, legacy allowlist), -EINVAL a bad
 * name, -ENOMEM.
 */
int keylime_import(const char *json, size_t len, const struct keylime_opts *o, json_t **ret_policy,
                   struct keylime_stats *ret_stats, struct keylime_notes *notes,
                   struct attest_err *err) _wur_;
/*
 * Whether the text starts like a flat allowlist: its first non-blank line "HEX<blank>PATH" as
 * sha256sum writes and Keylime's flat allowlists are (40-128 hex digits). Reads at most the
 * first 4 KiB.
 */
bool keylime_is_flat_allowlist(const char *text, size_t len);
/* x, or -EOPNOTSUPP with err saying how to convert when x is -EBADMSG (not JSON) and the text is
 * a flat allowlist. */
int keylime_flat_refusal(const char *text, size_t len, int x, struct attest_err *err) _wur_;

/* The same on a document already parsed (by jpath_load: no duplicate keys, no NUL in strings). */
int keylime_import_doc(const json_t *doc, const struct keylime_opts *o, json_t **ret_policy,
                       struct keylime_stats *ret_stats, struct keylime_notes *notes,
                       struct attest_err *err) _wur_;

/*
 * Keylime's exclude (Python re, applied with re.match: anchored at the start only) as a PCRE2
 * pattern that attestd matches against the whole path: "(?:R)" + "[\s\S]*", with \Z written \z
 * and Python's "{,n}" written "{0,n}". out has size bytes. 0, -E2BIG (does not fit), -EBADMSG
 * with *ret_why (a static string) for constructs the two dialects read differently.
 */
int keylime_exclude_to_pcre(const char *py, size_t n, char *out, size_t size, const char **ret_why)
        _wur_;

/* 0 if PCRE2 compiles the pattern pat (from keylime_exclude_to_pcre()); else -EBADMSG with err
 * naming the JSON path p and PCRE2's message. */
int keylime_exclude_check(const char *pat, const char *p, struct attest_err *err) _wur_;

#endif
