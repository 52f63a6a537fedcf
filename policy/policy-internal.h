/* SPDX-License-Identifier: MIT */
/* The parsed policy, shared by the parser, the evaluator and the writer (policy*.c) only. */
#ifndef ATTEST_POLICY_INTERNAL_H
#define ATTEST_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/boot.h"
#include "policy/policy.h"
#include "policy/runtime.h"

#define WORD_MAX 32
#define GLOB_MAX 128

/* -1: not checked; 0/1: expected value */
typedef signed char tri;

struct policy {
        char name[POLICY_NAME_MAX + 1];
        bool has_selinux, has_tk, has_cfi, has_kernel, has_tpm, has_ima;
        struct {
                tri initialized, enforcing, checkreqprot, never_permissive;
                unsigned ncaps;
                char cap[CDATA_KV_MAX][CDATA_KEY_MAX + 1];
                enum selinux_cap cap_id[CDATA_KV_MAX]; /* SELINUX_CAP_UNKNOWN: never reported */
                bool cap_val[CDATA_KV_MAX];
                bool has_hashes;
                unsigned nhashes;
                uint8_t hash[POLICY_HASHES_MAX][BANK_DIGEST_MAX];
                uint8_t hash_len[POLICY_HASHES_MAX];
        } selinux;
        struct {
                unsigned nsources; /* 0: sources not checked */
                char source[POLICY_SOURCES_MAX][WORD_MAX];
                enum tk_source source_id[POLICY_SOURCES_MAX]; /* never TK_SOURCE_UNKNOWN */
                unsigned nrng, nrequested;                    /* 0: not checked */
                char rng[POLICY_SOURCES_MAX][WORD_MAX];       /* known words only */
                char requested[POLICY_SOURCES_MAX][WORD_MAX]; /* known words only */
                tri anchored;
        } tk;
        struct {
                tri enabled, permissive, anchored;
                unsigned nmodes; /* 0: mode not checked */
                char mode[POLICY_SOURCES_MAX][WORD_MAX];
                enum cfi_mode mode_id[POLICY_SOURCES_MAX]; /* never UNKNOWN or ABSENT */
        } cfi;
        struct {
                unsigned nversions;
                char version[POLICY_VERSIONS_MAX][GLOB_MAX];
                tri anchored;
        } kernel;
        struct pcr_set pcrs;
        tri require_boot_aggregate;
        /* runtime: ima.runtime, NULL when absent (policy/runtime.h) */
        struct rt_policy *runtime;
        /* bootv: the "boot" section, NULL when absent (policy/boot.h) */
        struct boot_policy *boot;
};

/*
 * A policy section at path: an object of the allowed keys only (NULL-terminated), and not empty
 * (an empty section checks nothing: refused, C_EMPTY).
 */
int policy_section_object(const json_t *o, const char *path, const char *const *keys,
                          struct attest_err *err);
/* v at p: an array of 1..max members. */
int policy_list(const json_t *v, const char *p, size_t max, struct attest_err *err);
/* An optional boolean member key of o: *ret -1 when absent, else 0 or 1. */
int policy_tri_bool(const json_t *o, const char *path, const char *key, tri *ret,
                    struct attest_err *err);
/* [A-Za-z0-9_.+~-]: names, trust sources, kernel releases. */
bool policy_word_char(char c);
/* Lowercase hex of n bytes (at most BANK_DIGEST_MAX) as a new JSON string. */
json_t *policy_hex_json(const uint8_t *p, size_t n);

#endif
