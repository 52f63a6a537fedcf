/* SPDX-License-Identifier: MIT */
/* Helpers shared by the API handler files (api.c, api-attest.c); not for other modules. */
#ifndef ATTESTD_API_INTERNAL_H
#define ATTESTD_API_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "daemon/api.h"

#define API_TIME_MAX 32
#define API_POLICY_REF_MAX (API_ID_MAX + 24) /* name@version */

struct evidence;
struct verify_result;

/* body (malloc'ed, len bytes, ownership taken) as the response. */
void api_resp_text(struct api_resp *r, unsigned status, const char *ctype, char *body, size_t len);
/* Serialise o (reference stolen) as the response. -ENOMEM leaves r untouched. */
int api_json(struct api_resp *r, unsigned status, json_t *o) _wur_;
void api_nomem(struct attestd *d, struct api_resp *r);
void api_store_error(struct attestd *d, struct api_resp *r, int e, const char *what);
/* RFC 3339 UTC, second precision; "" for ms <= 0. */
void api_time(int64_t ms, char out[API_TIME_MAX]);
json_t *api_time_json(int64_t ms);

/* Content-Type and JSON object checks; on failure r holds the error and a negative is returned. */
bool api_ctype_is_json(const char *content_type);
int api_parse_body(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   bool allow_empty, json_t **ret) _wur_;
int api_check_fields(struct attestd *d, struct api_resp *r, json_t *o, const char *path,
                     const char *const *allowed, size_t n) _wur_;
int api_b64_field(struct attestd *d, struct api_resp *r, json_t *o, const char *name, bool required,
                  size_t max, uint8_t **ret, size_t *ret_len) _wur_;

int api_agent_load(struct attestd *d, struct api_resp *r, const char *id, struct store_agent **ret)
        _wur_;
bool api_agent_stale(const struct attestd *d, const struct store_agent *a, int64_t now);

/* Policy document validation for PUT /v1/policies/NAME. */
int api_policy_validate(const char *body, size_t len, struct attest_err *err) _wur_;
/*
 * The verdict of a verified submission under the policy text (NULL: no policy, nothing checked)
 * named ref ("" for none): a new JSON object {status, policy, claims, ...}.
 */
int api_judge(struct attestd *d, const char *policy, const char *ref,
              const struct verify_result *vr, const struct evidence *ev, json_t **ret) _wur_;
/* The verdict of a genuine submission that failed verification (err says why). */
int api_verdict_failed(const char *ref, const struct attest_err *why, json_t **ret) _wur_;

/* What the route of a request needs, known from its head alone (api_preflight). */
enum api_gate {
        API_GATE_NONE,   /* nothing about an agent to check */
        API_GATE_EXISTS, /* the id must name an agent */
        API_GATE_ACTIVE, /* the id must name an active agent */
};
struct api_route_info {
        bool found, method_ok, bad_id;
        const char *allow;   /* static */
        enum auth_role need; /* AUTH_NONE: no token */
        enum auth_role have; /* the presented token's role (only looked up when need is set) */
        enum api_gate gate;
        char id[API_ID_MAX + 1];
};
void api_route_info(struct attestd *d, const char *method, const char *path,
                    const char *authorization, struct api_route_info *ret);

void api_challenge(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   const char *id);
void api_evidence(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id);

#endif
