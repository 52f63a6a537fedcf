/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer targets: the entry point's prototype and an invariant check that aborts
 * (so libFuzzer and the replay main() both report it as a crash with the input that caused it).
 */
#ifndef ATTEST_FUZZ_H
#define ATTEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,       \
                                #cond);                                                            \
                        abort();                                                                   \
                }                                                                                  \
        } while (0)

/* True when [p, p + n) lies inside [base, base + len); written so it cannot overflow. */
static inline int fuzz_within(const void *p, size_t n, const void *base, size_t len)
{
        uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;

        return a >= b && a - b <= len && n <= len - (a - b);
}

#endif
