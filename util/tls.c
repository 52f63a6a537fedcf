/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "util/tls.h"

/* One option that must take: -EINVAL naming it otherwise. */
#define SET(h, opt, val, what)                                                                     \
        do {                                                                                       \
                if (curl_easy_setopt(h, opt, val) != CURLE_OK) {                                   \
                        if (ret_refused)                                                           \
                                *ret_refused = what;                                               \
                        return -EINVAL;                                                            \
                }                                                                                  \
        } while (0)

int tls_client_setup(CURL *h, const struct tls_client_opts *o, const char **ret_refused)
{
        const char *proto = o->plain_http ? "http" : "https";

        SET(h, CURLOPT_PROTOCOLS_STR, proto, "the protocol list");
        /* libcurl refuses an empty list (CURLE_BAD_FUNCTION_ARGUMENT: the "" the clients set
         * before never took); no redirect is followed anyway, and none could leave the protocol */
        SET(h, CURLOPT_REDIR_PROTOCOLS_STR, proto, "the redirect protocol list");
        SET(h, CURLOPT_FOLLOWLOCATION, 0L, "no redirects");
        SET(h, CURLOPT_NOSIGNAL, 1L, "no signals");
        SET(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms, "the connect timeout");
        SET(h, CURLOPT_TIMEOUT_MS, o->timeout_ms, "the timeout");
        if (o->max_response)
                SET(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_response, "the response cap");
        if (o->plain_http)
                return 0;
        SET(h, CURLOPT_SSL_VERIFYPEER, 1L, "peer verification");
        SET(h, CURLOPT_SSL_VERIFYHOST, 2L, "host name verification");
        SET(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2, "TLS 1.2 as the minimum");
        SET(h, CURLOPT_SSL_CIPHER_LIST, ATTEST_TLS12_CIPHERS, "the TLS 1.2 cipher list");
        if (o->ca) {
                SET(h, CURLOPT_CAINFO, o->ca, "the CA file");
                SET(h, CURLOPT_CAPATH, (char *)NULL, "no CA directory"); /* pinned: this CA only */
        }
        return 0;
}
