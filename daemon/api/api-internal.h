/* SPDX-License-Identifier: MIT */
/*
 * What the API handler files share (api-router.c, api-agents.c, api-results.c, api-enrol.c,
 * api-policies.c, api-challenge.c, api-attest.c, api-preflight.c, api-ear.c); not for other
 * modules. The handlers do not include each other.
 */
#ifndef ATTESTD_API_INTERNAL_H
#define ATTESTD_API_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "daemon/api/api.h"

#define API_TIME_MAX 32
#define API_POLICY_REF_MAX (API_ID_MAX + 24) /* name@version */

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
/* Query parameters: only the allowed keys; an optional integer in min..max into *v. */
int api_query_check(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *const *allowed, size_t n) _wur_;
int api_query_u64(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *key,
                  uint64_t min, uint64_t max, uint64_t *v) _wur_;

/* The row of agent id the pre-flight check read for req, taken (the caller owns it); NULL when
 * it read none (req may be NULL). */
struct store_agent *api_req_agent(const struct api_req *req, const char *id);
/* Agent id's row: the one the pre-flight check read for req, else read now; a 404 or store error
 * answered in r when there is none. */
int api_agent_load(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id,
                   struct store_agent **ret) _wur_;
bool api_agent_stale(const struct attestd *d, const struct store_agent *a, int64_t now);
/*
 * o's compact text (o's reference stolen) with "key": the stored verdict text last (as it is,
 * never parsed back; text that is not an object goes out as null), written to a new exact-size
 * buffer *ret (its length *ret_len); -ENOMEM. api-results.c.
 */
int api_json_with_verdict(json_t *o, const char *key, const char *verdict, char **ret,
                          size_t *ret_len) _wur_;

/*
 * A verdict's text and what its results row keeps of it (api-results.c). The row's columns hold
 * the text's head, so the row keeps the rest only: every verdict text a round answers or a list
 * gives back is
 *   {"status":S,"policy":P,"time":T,"next_due":D   rendered from the columns (status, policy,
 *                                                  time, due), then
 *   ,"claims":[...],...}                            the rest, as the row stores it.
 * api_verdict_text: v's members but "status" and "policy" (deleted from v) after the head, as a
 * new text *ret_full; *ret_stored points into it at the rest. -ENOMEM.
 * api_verdict_full: the whole text of a stored row into a new *ret, or NULL (0) when the row
 * holds it whole (written before the split, or not starting with ","). -ENOMEM.
 */
int api_verdict_text(json_t *v, const char *status, const char *policy, int64_t time, int64_t due,
                     char **ret_full, const char **ret_stored) _wur_;
struct store_result_row;
int api_verdict_full(const struct store_result_row *row, char **ret) _wur_;

/* What the route of a request needs, known from its head alone (api_preflight). */
enum api_gate {
        API_GATE_NONE,   /* nothing about an agent to check */
        API_GATE_EXISTS, /* the id must name an agent */
        API_GATE_ACTIVE, /* the id must name an active agent */
        /* the same, for the evidence that answers a challenge: the row the challenge kept
         * (rowstash.h) says so without a read */
        API_GATE_EVIDENCE,
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

/*
 * The handlers the route table (api-router.c) dispatches to: id is the path's id segment ("" when
 * the route has none), already validated.
 */
void api_agents_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *id);
void api_agent_get(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   const char *id);
void api_agent_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id);
void api_agent_decommission(struct attestd *d, const struct api_req *req, struct api_resp *r,
                            const char *id);
void api_agent_readmit(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id);
void api_agent_policy(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id);
void api_refused_eks(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *id);
/* api-results.c */
void api_agent_results(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id);
/* api-enrol.c */
/* An enrolment refused for its token (401 before the handler), logged rate-limited
 * (api-enrol.c); presented: a token was sent. */
void api_enrol_refused_token(struct attestd *d, bool presented);
void api_agent_enroll(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id);
void api_agent_activate(struct attestd *d, const struct api_req *req, struct api_resp *r,
                        const char *id);
/* api-policies.c */
void api_policies_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id);
void api_policy_put(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *name);
void api_policy_get(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *name);
void api_policy_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *name);
/* api-challenge.c */
void api_challenge(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   const char *id);
/* api-attest.c */
void api_evidence(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id);
/* api-ear.c */
void api_agent_ear(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   const char *id);
void api_ear_keys(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id);

#endif
