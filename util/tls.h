/* SPDX-License-Identifier: MIT */
/*
 * The TLS client set-up every libcurl client of the project shares (attest-agent, attestctl,
 * attestd's webhooks): one function sets the hardened core on a handle, each caller adds what is
 * its own (URL, headers, body sinks, client certificate, keep-alive, user agent).
 */
#ifndef ATTEST_TLS_H
#define ATTEST_TLS_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "util/macro.h"

/*
 * The TLS 1.2 suites a client offers: ECDHE with AES-GCM or ChaCha20-Poly1305 only (AEAD, forward
 * secret); TLS 1.3's suites are all AEAD. OpenSSL names, as CURLOPT_SSL_CIPHER_LIST takes them.
 */
#define ATTEST_TLS12_CIPHERS                                                                       \
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
        "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

struct tls_client_opts {
        /* CA file the server's certificate must chain to, pinned: the system's CA directory is
         * not searched. NULL: the system's trust store (webhooks without --webhook-ca). */
        const char *ca;
        long connect_timeout_ms; /* > 0 */
        long timeout_ms;         /* > 0: the whole transfer */
        /* > 0: an answer announced longer is refused (CURLE_FILESIZE_EXCEEDED); the caller's
         * write callback still caps what is sent without a length. 0: only the callback caps. */
        uint64_t max_response;
        /* http:// instead of https:// and no TLS options (the agent's --insecure-http) */
        bool plain_http;
};

/*
 * Sets on h: one protocol (https, or http when plain_http), for redirects too, and no
 * redirects followed (a 3xx is an answer), no signals (threads), the two timeouts, the response
 * cap; for https also peer and host name verification, TLS >= 1.2 with only
 * ATTEST_TLS12_CIPHERS, and the CA. Proxies come from the environment as libcurl's default.
 * -EINVAL when libcurl refuses an option; *ret_refused (may be NULL) then names it.
 */
int tls_client_setup(CURL *h, const struct tls_client_opts *o, const char **ret_refused) _wur_;

#endif
