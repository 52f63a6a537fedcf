/* SPDX-License-Identifier: MIT */
/*
 * The pre-flight check (docs/api.md, "Before the body"): what the API can decide from a head
 * is decided before the HTTP layer reads one byte of its body, so an anonymous client cannot make
 * the daemon buffer a body addressed to an agent that does not exist, or to a route it may not
 * use. api_handle() repeats every check on the full request; this only answers early.
 */
#include <errno.h>
#include <string.h>

#include "daemon/api/api-internal.h"
#include "daemon/api/api.h"

/* Whether the agent the gate names exists (and is active where it must be): -ENOENT, -EACCES
 * (enrolled, not active), -EPERM (decommissioned), another error of the store (the handler meets
 * it again and reports it), or 0. The row read to decide is handed on in *ret_agent. */
static int gate_agent(struct attestd *d, const struct api_route_info *ri,
                      struct store_agent **ret_agent)
{
        enum agent_state state;
        struct store_agent *a;
        int e;

        /* the evidence that answers a challenge: the row the challenge read is kept */
        if (ri->gate == API_GATE_EVIDENCE && d->rows &&
            rowstash_state(d->rows, ri->id, (uint64_t)attestd_now_ms(), &state))
                return store_state_active(state);
        if ((e = store_agent_get(d->store, ri->id, &a)) < 0)
                return e;
        *ret_agent = a;
        return store_agent_active(a);
}

int api_preflight(struct attestd *d, const char *method, const char *path,
                  const char *authorization, struct api_resp *ret, char ret_id[API_ID_MAX + 1],
                  struct store_agent **ret_agent)
{
        struct api_route_info ri;
        int e;

        memset(ret, 0, sizeof(*ret));
        *ret_agent = NULL;
        api_route_info(d, method, path, authorization, &ri);
        if (!ri.found) {
                api_error(d, ret, 404, AE_NOT_FOUND, "no such resource");
                goto answered;
        }
        if (!ri.method_ok) {
                api_error(d, ret, 405, AE_METHOD_NOT_ALLOWED, "%s is not allowed here; allowed: %s",
                          strcmp(method, "OPTIONS") ? "this method" : "OPTIONS", ri.allow);
                ret->allow = ri.allow;
                goto answered;
        }
        if (ri.need != AUTH_NONE && ri.have == AUTH_NONE) {
                if (ri.need == AUTH_ENROLL)
                        api_enrol_refused_token(d, authorization != NULL);
                api_error(d, ret, 401, AE_UNAUTHORIZED,
                          authorization ? "unknown bearer token" : "a bearer token is required");
                ret->www_authenticate = true;
                goto answered;
        }
        if (ri.need != AUTH_NONE && !auth_allows(ri.have, ri.need)) {
                api_error(d, ret, 403, AE_FORBIDDEN,
                          "%s here needs a token of role %s; this token's role is %s", method,
                          auth_role_name(ri.need), auth_role_name(ri.have));
                goto answered;
        }
        if (ri.bad_id) {
                api_error(d, ret, 400, AE_BAD_ID,
                          "ids are 1-64 of [A-Za-z0-9_.-], not starting with . or -");
                goto answered;
        }
        if (ri.gate == API_GATE_NONE) {
                memcpy(ret_id, ri.id, sizeof(ri.id));
                return 0;
        }
        /* one indexed lookup, or none */
        e = gate_agent(d, &ri, ret_agent);
        if (e == -ENOENT) {
                api_error(d, ret, 404, AE_AGENT_NOT_FOUND, "no agent %s", ri.id);
                goto answered;
        }
        if (e == -EACCES && ri.gate != API_GATE_EXISTS) {
                api_error(d, ret, 403, AE_AGENT_NOT_ACTIVE,
                          "agent %s has not activated its enrolment credential", ri.id);
                goto answered;
        }
        if (e == -EPERM) {
                api_error(d, ret, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", ri.id);
                goto answered;
        }
        memcpy(ret_id, ri.id, sizeof(ri.id));
        return 0; /* on a store error the handler meets it again and reports it */
answered:
        store_agent_free(*ret_agent);
        *ret_agent = NULL;
        metrics_request(&d->metrics);
        metrics_response(&d->metrics, ret->status);
        return 1;
}
