/* SPDX-License-Identifier: MIT */
/* The jansson evidence decoder, the reference of the differential fuzzer (evjson-jansson.c). */
#ifndef ATTEST_EVJSON_JANSSON_H
#define ATTEST_EVJSON_JANSSON_H

#include <stddef.h>

#include "evidence/evidence.h"
#include "util/err.h"

/* evidence_from_json() as it was: the same contract. */
int evidence_from_json_jansson(const char *buf, size_t len, size_t max_ima, struct evidence **ret,
                               struct attest_err *err) _wur_;

#endif
