/* SPDX-License-Identifier: MIT */
/*
 * REST API (docs/api.md): routing, auth, validation and the handlers. api_handle() is a pure
 * function of the request and the context, so the HTTP layer, the fuzzer and tests share it.
 * Every error is {"error": CODE, "detail": TEXT} with its 4xx/5xx status.
 */
#ifndef ATTESTD_API_H
#define ATTESTD_API_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/attestd.h"

#define API_QUERY_MAX 8
#define API_ID_MAX 64
/* Caps of what the router and the header readers look at (libmicrohttpd caps the whole head at
 * 16 KiB before them): a longer path matches no route, a longer header value is refused. */
#define API_PATH_MAX 4096
#define API_HEADER_MAX 8192

struct api_req {
        const char *method;
        const char *path;          /* without the query string */
        const char *authorization; /* header value or NULL */
        const char *content_type;  /* header value or NULL */
        size_t nquery;
        const char *qkey[API_QUERY_MAX], *qval[API_QUERY_MAX]; /* qval NULL: "?key" alone */
        bool query_overflow;                                   /* more than API_QUERY_MAX */
        const char *body;                                      /* may be NULL when body_len 0 */
        size_t body_len;
        /* the agent row api_preflight() read for this request (the caller's slot, freed by the
         * caller; a handler may take it, leaving NULL); NULL: none read */
        struct store_agent **agent;
};

struct api_resp {
        unsigned status;
        char *body; /* malloc'ed, body_len bytes */
        size_t body_len;
        const char *content_type; /* static */
        const char *allow;        /* static; set with 405 */
        bool www_authenticate;    /* set with 401 */
        unsigned retry_after;     /* seconds; with 429 (a Retry-After header when non-zero) */
        enum attest_code error;   /* AE_NONE on success */
};

/* The body cap for a request, known from its method and path before any byte is read. */
size_t api_body_limit(const struct attestd *d, const char *method, const char *path);

/*
 * Decide what can be decided from the request head alone, before any body byte is read
 * (api-preflight.c): unknown route or method, missing or wrong token, unknown or inactive agent.
 * 1: *ret holds the answer to send now; 0: read the body and call api_handle(), ret_id then holds
 * the agent id the path names ("" when none; the key of its share of the body budget) and
 * *ret_agent the agent row read to decide (NULL when none was: the handler's, api_req.agent, so
 * that a request reads its agent once).
 */
int api_preflight(struct attestd *d, const char *method, const char *path,
                  const char *authorization, struct api_resp *ret, char ret_id[API_ID_MAX + 1],
                  struct store_agent **ret_agent);

/* Fill *ret (status always set; body malloc'ed). */
void api_handle(struct attestd *d, const struct api_req *req, struct api_resp *ret);
void api_resp_done(struct api_resp *r);
/* Log each agent that went stale since the last call, once per transition (api-agents.c). */
void api_stale_scan(struct attestd *d);

/* An error response outside api_handle (413 from the HTTP layer, 503 when draining). */
void api_error(struct attestd *d, struct api_resp *r, unsigned status, enum attest_code code,
               const char *fmt, ...) _printf_(5, 6);

/* Agent and policy names: [A-Za-z0-9_.-]{1,64}, not starting with '.' or '-'. */
bool api_id_valid(const char *s, size_t n);

#endif
