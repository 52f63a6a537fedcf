/* SPDX-License-Identifier: MIT */
/*
 * A capped text sink for an HTTP response body (libcurl's CURLOPT_WRITEFUNCTION shape, but no
 * libcurl here): bytes appended NUL terminated, at most max of them; a NUL byte in the body or a
 * byte past max stops the transfer (the callback returns 0) and says which. Used by the agent's
 * and attestctl's HTTPS clients.
 */
#ifndef ATTEST_SINK_H
#define ATTEST_SINK_H

#include <stdbool.h>
#include <stddef.h>

struct text_sink {
        char *buf; /* NUL terminated; NULL before the first byte */
        size_t len, cap;
        size_t max;    /* bytes accepted at most */
        bool overflow; /* more than max bytes came */
        bool nul;      /* a NUL byte came: no JSON text has one, and the text would end there */
};

/* Appends size * n bytes at p to the sink ud; returns them, or 0 to stop the transfer. */
size_t text_sink_write(char *p, size_t size, size_t n, void *ud);

#endif
