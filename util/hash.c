/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "util/hash.h"

#define FNV64_OFFSET 14695981039346656037ull
#define FNV64_PRIME 1099511628211ull

uint64_t hash_fnv1a(const void *p, size_t n, uint64_t seed)
{
        const uint8_t *b = p;
        uint64_t h = FNV64_OFFSET ^ seed;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * FNV64_PRIME;
        return h;
}

uint64_t hash_fnv1a_str(const char *s)
{
        return hash_fnv1a(s, strlen(s), 0);
}
