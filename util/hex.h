/* SPDX-License-Identifier: MIT */
/* Hex and base64 codecs for untrusted text: bounded output, strict input. */
#ifndef ATTEST_HEX_H
#define ATTEST_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

/*
 * Decode n hex digits (either case) from s into out (at most max bytes). -EBADMSG on an odd count
 * or a non-hex character, -E2BIG when the result would exceed max. *ret_len is the byte count.
 */
int hex_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len) _wur_;
/* Whether all n characters of s are lowercase hex digits [0-9a-f] (true for n 0). */
static inline bool hex_is_lower(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* Whether all n characters of s are hex digits of either case (true for n 0). */
static inline bool hex_is_any(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                      (s[i] >= 'A' && s[i] <= 'F')))
                        return false;
        return true;
}

/* Lowercase hex of n bytes into out, which must hold 2n+1 bytes; NUL terminated. */
void hex_encode(const uint8_t *in, size_t n, char *out);

/*
 * Standard base64 (RFC 4648, padded, canonical trailing bits). Decoded size is checked against max.
 * One pass: on -EBADMSG out may hold part of the decode.
 */
int b64_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *ret_len) _wur_;
/* Encoded length including the NUL: 4*ceil(n/3)+1. */
size_t b64_encoded_size(size_t n);
void b64_encode(const uint8_t *in, size_t n, char *out);

#endif
