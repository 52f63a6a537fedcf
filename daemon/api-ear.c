/* SPDX-License-Identifier: MIT */
/*
 * GET /v1/agents/{id}/ear: the agent's latest verdict as a signed EAR (daemon/ear.h), and
 * GET /v1/ear/keys: the signing key as a JWKS. Both 503 ear_unconfigured without --ear-key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api-internal.h"
#include "daemon/ear.h"
#include "daemon/log.h"

#ifndef ATTEST_VERSION
#define ATTEST_VERSION "0"
#endif

#define EAR_CONTENT_TYPE "application/eat+jwt; eat_profile=\"" EAR_PROFILE "\""

static bool ear_configured(struct attestd *d, struct api_resp *r)
{
        if (d->ear)
                return true;
        api_error(d, r, 503, AE_EAR_UNCONFIGURED,
                  "EAR signing is not configured (attestd --ear-key FILE)");
        return false;
}

void api_ear_keys(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        json_t *o;

        (void)req;
        (void)id;
        if (!ear_configured(d, r))
                return;
        if (ear_signer_jwks(d->ear, &o) < 0 || api_json(r, 200, o) < 0)
                api_nomem(d, r);
        else
                r->content_type = "application/jwk-set+json";
}

struct latest {
        int64_t id, time;
        char *verdict;
        char *policy;
        int e;
};

static void latest_done(struct latest *l)
{
        free(l->verdict);
        free(l->policy);
}

static int latest_one(int64_t rid, int64_t time, const char *status, const char *policy,
                      const char *verdict, void *arg)
{
        struct latest *l = arg;

        (void)status;
        l->id = rid;
        l->time = time;
        l->verdict = strdup(verdict ? verdict : "");
        l->policy = policy ? strdup(policy) : NULL;
        if (!l->verdict || (policy && !l->policy))
                return -ENOMEM;
        return 0;
}

void api_agent_ear(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        static const char *const q[] = {"nonce"};
        _cleanup_(verdict_done) struct verdict v = {0};
        _cleanup_(latest_done) struct latest l = {0};
        struct ear_appraisal a;
        struct attest_err err = {0};
        const char *nonce = NULL;
        json_auto_t *claims = NULL;
        char *tok = NULL;
        bool verified;
        int e;

        verdict_init(&v);
        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0)
                return;
        if (req->nquery > 1) {
                api_error(d, r, 400, AE_BAD_QUERY, "nonce given more than once");
                return;
        }
        for (size_t i = 0; i < req->nquery; i++)
                nonce = req->qval[i] ? req->qval[i] : "";
        if (nonce && !ear_nonce_valid(nonce)) {
                api_error(d, r, 400, AE_BAD_QUERY,
                          "nonce: expected base64url without padding of %d..%d bytes",
                          EAR_NONCE_MIN, EAR_NONCE_MAX);
                return;
        }
        if (!ear_configured(d, r))
                return;
        e = store_results_list(d->store, id, 1, 0, latest_one, &l);
        if (e < 0) {
                if (e == -ENOENT)
                        api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                else if (e == -ENOMEM)
                        api_nomem(d, r);
                else
                        api_store_error(d, r, e, "results");
                return;
        }
        if (!l.verdict) {
                api_error(d, r, 409, AE_EAR_NO_VERDICT, "agent %s has no verdict yet", id);
                return;
        }
        if ((e = ear_verdict_parse(l.verdict, strlen(l.verdict), &v, &verified, &err)) < 0) {
                log_err("EAR for agent %s, result %lld: %s", id, (long long)l.id, err.msg);
                api_error(d, r, 500, AE_INTERNAL, "the stored verdict could not be read");
                return;
        }
        ear_appraise(&v, verified, &a);
        struct ear_input in = {
                .agent = id,
                .policy = v.policy[0] ? v.policy : l.policy,
                .build = "attestd " ATTEST_VERSION,
                .nonce = nonce,
                .iat = attestd_now_ms() / 1000,
                .result_id = l.id,
                .result_time = l.time,
                .a = &a,
        };
        if ((e = ear_claims(&in, &claims)) < 0 || (e = ear_sign(d->ear, claims, &tok)) < 0) {
                if (e == -ENOMEM)
                        api_nomem(d, r);
                else
                        api_error(d, r, 500, AE_INTERNAL, "signing failed");
                return;
        }
        api_resp_text(r, 200, EAR_CONTENT_TYPE, tok, strlen(tok));
}
