/* SPDX-License-Identifier: MIT */
/*
 * GET /v1/agents/{id}/ear: the agent's latest verdict as a signed EAR (daemon/ear.h), and
 * GET /v1/ear/keys: the signing key as a JWKS. Both 503 ear_unconfigured without --ear-key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api/api-internal.h"
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

void api_agent_ear(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        static const char *const q[] = {"nonce"};
        struct store_result_head l;
        struct ear_appraisal a;
        struct attest_err err = {0};
        const char *nonce = NULL;
        json_auto_t *claims = NULL;
        char *tok = NULL;
        int e;

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
        e = store_result_latest(d->store, id, &l);
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        }
        if (e == -ENODATA) {
                api_error(d, r, 409, AE_EAR_NO_VERDICT, "agent %s has no verdict yet", id);
                return;
        }
        if (e == -EBADMSG) {
                log_err("EAR for agent %s: its newest result row is not one attestd writes", id);
                api_error(d, r, 500, AE_STORE_CORRUPT, "the stored result could not be read");
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "results");
                return;
        }
        /* a result stored before the appraisal was (schema 8): its verdict text is not read
         * back to make one */
        if (!l.has_appraisal) {
                api_error(d, r, 409, AE_EAR_NO_APPRAISAL,
                          "the latest result of agent %s (id %lld) was stored by an attestd "
                          "that did not record EAR appraisals; the agent's next attestation "
                          "round will produce one",
                          id, (long long)l.id);
                return;
        }
        if (ear_appraisal_from_store(&l.appraisal, &a, &err) < 0) {
                log_err("EAR for agent %s, result %lld: %s", id, (long long)l.id, err.msg);
                api_error(d, r, 500, AE_STORE_CORRUPT, "the stored appraisal could not be read");
                return;
        }
        struct ear_input in = {
                .agent = id,
                .policy = l.policy[0] ? l.policy : NULL,
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
