/* SPDX-License-Identifier: MIT */
/*
 * The one non-cryptographic hash of the tree, for hash tables and stripes: 64-bit FNV-1a. Not a
 * keyed hash: where keys come from clients a random seed (xor-ed into the offset basis) makes
 * chains harder to guess, no more; where a collision must not matter to security, use a MAC.
 */
#ifndef ATTEST_HASH_H
#define ATTEST_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over n bytes at p; seed 0 is plain FNV-1a 64. */
uint64_t hash_fnv1a(const void *p, size_t n, uint64_t seed);
/* The same over a NUL-terminated string (without the NUL). */
uint64_t hash_fnv1a_str(const char *s);

#endif
