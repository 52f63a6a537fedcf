/* SPDX-License-Identifier: MIT */
/* TLS settings every libcurl client of the project shares (agent, attestctl, attestd's webhooks).
 */
#ifndef ATTEST_TLS_H
#define ATTEST_TLS_H

/*
 * The TLS 1.2 suites a client offers: ECDHE with AES-GCM or ChaCha20-Poly1305 only (AEAD, forward
 * secret); TLS 1.3's suites are all AEAD. OpenSSL names, as CURLOPT_SSL_CIPHER_LIST takes them.
 */
#define ATTEST_TLS12_CIPHERS                                                                       \
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
        "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

#endif
