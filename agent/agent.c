/* SPDX-License-Identifier: MIT */
/* What the agent's parts share: requests to the verifier and how they ended. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

/* Record how a step ended; returns error (negative) so callers can `return agent_outcome_set(...)`.
 */
int agent_outcome_set(struct agent_outcome *o, enum agent_outcome_kind kind, int error)
{
        *o = (struct agent_outcome){.kind = kind, .error = error};
        return error;
}

/*
 * The verifier answered what with an error status: log it, record the status and the error code.
 * Returns -EREMOTEIO: the caller learns only that the step failed; what to do next follows from
 * *o (agent_outcome_action()), never from an errno.
 */
int agent_outcome_http(struct agent_outcome *o, const char *what, long status, json_t *j)
{
        const char *code = json_string_value(json_object_get(j, "error"));
        const char *detail = json_string_value(json_object_get(j, "detail"));

        enum attest_code c = agent_api_code(code);

        /* a nonce past its time, a new runtime policy: the next challenge is the answer */
        if (agent_code_rechallenges(c))
                log_info("%s: HTTP %ld %s: %s: asking a fresh challenge", what, status, code,
                         detail ? detail : "");
        else
                log_warning("%s: HTTP %ld %s: %s", what, status, code ? code : "?",
                            detail ? detail : "");
        *o = (struct agent_outcome){.kind = AGENT_OUTCOME_HTTP, .status = status, .code = c};
        return -EREMOTEIO;
}

/* One request with a JSON text body and a JSON object answer (for any status). On failure *o
 * says whether the request got no answer (transport), an unusable one (protocol) or failed here. */
/* What became of a request (x, err from http_request*): *o and a JSON object answer. */
int verifier_answer(const char *method, const char *path, int x, const struct attest_err *err,
                    const char *resp, long *status, json_t **ret_json, struct agent_outcome *o)
{
        json_error_t jerr;

        if (x < 0) {
                log_warning("%s", err->msg); /* names the method and path */
                return agent_outcome_set(o,
                                         x == -EIO                      ? AGENT_OUTCOME_TRANSPORT
                                         : x == -E2BIG || x == -EBADMSG ? AGENT_OUTCOME_PROTOCOL
                                                                        : AGENT_OUTCOME_LOCAL,
                                         x);
        }
        *ret_json = json_loads(resp, 0, &jerr);
        if (!*ret_json || !json_is_object(*ret_json)) {
                json_decref(*ret_json);
                *ret_json = NULL;
                log_warning("%s %s: HTTP %ld without a JSON object", method, path, *status);
                return agent_outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        return 0;
}

int verifier_call_text(struct agent *a, const char *method, const char *path, const char *text,
                       long *status, json_t **ret_json, struct agent_outcome *o)
{
        _cleanup_free_ char *resp = NULL;
        struct attest_err err = {0};
        int x;

        x = http_request(a->http, method, path, text, text ? strlen(text) : 0, status, &resp, &err);
        return verifier_answer(method, path, x, &err, resp, status, ret_json, o);
}

int verifier_call(struct agent *a, const char *method, const char *path, json_t *body, long *status,
                  json_t **ret_json, struct agent_outcome *o)
{
        _cleanup_free_ char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;

        if (body && !text)
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        return verifier_call_text(a, method, path, text, status, ret_json, o);
}
