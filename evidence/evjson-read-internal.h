/* SPDX-License-Identifier: MIT */
/*
 * What the two steps of evidence_from_json share: the walk's record of where each field of the
 * schema is (evjson-read.c fills it, step 1) and the checks that decode it into struct evidence
 * in the jansson decoder's order (evjson-check.c, step 2). Not for other modules.
 */
#ifndef ATTEST_EVJSON_READ_INTERNAL_H
#define ATTEST_EVJSON_READ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/evjson.h"
#include "util/err.h"
#include "util/json-rd.h"

/* A leaf of the schema as the walk met it (present only when its object was one). */
struct slot {
        bool present;
        enum jrd_type type;
        struct jrd_str s; /* JRD_STRING: borrowed from the input */
        int64_t i;        /* JRD_INT */
};

/* An object of the schema. */
struct obj {
        bool present, is_obj;
        bool unknown; /* a key outside the schema was met: the first is in key */
        struct jrd_str key;
};

struct walk {
        struct jrd r;
        struct evidence *ev;
        struct obj top, quote, pcrs, ima, host, cfi, tk, boot;
        struct slot version, nonce, attest, sig, offset, format, entries, kernel, cmdline, boot_id,
                cfi_source, cfi_enabled, cfi_permissive, tk_source, tk_origin;
        struct slot hostname, machine_id;
        struct slot boot_offset, boot_data;
        struct obj labels;
        unsigned n_labels; /* members of "labels"; the first EVIDENCE_LABELS_MAX are kept */
        struct jrd_str label_key[EVIDENCE_LABELS_MAX];
        struct slot label_val[EVIDENCE_LABELS_MAX];
        int pcrs_e; /* the PCR map's first error, in pcrs_err */
        unsigned pcrs_count;
        struct attest_err pcrs_err;
};

/* parent + key, as jpath_join names it (out: JPATH_MAX bytes); -ENOMEM. */
int evjson_read_join(char *out, const char *parent, const struct jrd_str *key);
/* Step 2: the remembered values checked and decoded into ev, in the jansson decoder's order. */
int evjson_read_check(const struct walk *w, size_t max_ima, struct evidence *ev,
                      struct attest_err *err);

#endif
