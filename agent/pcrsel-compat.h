/* SPDX-License-Identifier: MIT */
/*
 * Stand-in for the PCR selection type of evidence/quote.h (branch `quote`) until that header lands:
 * once quote.h is in the include path this header only includes it, and pcrsel-compat.c compiles to
 * nothing.
 */
#ifndef AGENT_PCRSEL_COMPAT_H
#define AGENT_PCRSEL_COMPAT_H

#if __has_include("quote.h")
#include "quote.h"
#else
#include <stdint.h>

#include "bank.h"

#define PCRSEL_COMPAT 1

/* PCRs per bank: bit i of mask[b] selects PCR i of bank b. */
struct pcr_sel {
        uint32_t mask[BANK_COUNT];
};

/* Parse "sha256:0-10+sha1:10" (banks joined by '+', PCRs by ',' and ranges); -EINVAL when bad. */
int pcr_sel_parse(const char *s, struct pcr_sel *ret) _wur_;
#endif

#endif
