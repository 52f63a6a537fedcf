/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/outcome.h"

enum attest_code agent_api_code(const char *name)
{
        enum attest_code c = AE_NONE;

        return attest_code_from_name(name, &c) ? c : AE_NONE;
}

const char *agent_outcome_kind_name(enum agent_outcome_kind k)
{
        static const char *const names[AGENT_OUTCOME_KIND_COUNT] = {
                [AGENT_OUTCOME_DONE] = "done",           [AGENT_OUTCOME_LOCAL] = "local",
                [AGENT_OUTCOME_TRANSPORT] = "transport", [AGENT_OUTCOME_PROTOCOL] = "protocol",
                [AGENT_OUTCOME_HTTP] = "http",
        };

        return (unsigned)k < AGENT_OUTCOME_KIND_COUNT ? names[k] : "?";
}

const char *agent_action_name(enum agent_action a)
{
        static const char *const names[AGENT_ACT_COUNT] = {
                [AGENT_ACT_PROCEED] = "proceed",
                [AGENT_ACT_RECHALLENGE] = "rechallenge",
                [AGENT_ACT_BACKOFF] = "backoff",
                [AGENT_ACT_FAILOVER] = "failover",
                [AGENT_ACT_REENROL] = "reenrol",
                [AGENT_ACT_EXIT_REFUSED] = "exit-refused",
                [AGENT_ACT_EXIT_DECOMMISSIONED] = "exit-decommissioned",
        };

        return (unsigned)a < AGENT_ACT_COUNT ? names[a] : "?";
}

/* An HTTP error answer: the code decides where one is defined, then the status class. */
static enum agent_action http_action(enum agent_step step, long status, enum attest_code code)
{
        switch (code) {
        case AE_AGENT_DECOMMISSIONED:
        case AE_EK_DECOMMISSIONED:
                return AGENT_ACT_EXIT_DECOMMISSIONED;
        case AE_AGENT_NOT_FOUND:
                if (status != 404)
                        break;
                /* forgotten (DELETE) while attesting: enrol again; between enrolment and
                 * activation: enrol from the start after a back-off */
                return step == AGENT_STEP_ROUND ? AGENT_ACT_REENROL : AGENT_ACT_BACKOFF;
        case AE_NONCE_EXPIRED:
        case AE_NONCE_UNKNOWN:
        case AE_RUNTIME_POLICY_CHANGED:
                if (step == AGENT_STEP_ROUND)
                        return AGENT_ACT_RECHALLENGE;
                break;
        default:
                break;
        }
        /* the verifier busy, overloaded (503 store_busy, server_busy) or down behind a proxy:
         * another one may answer */
        if (status >= 500)
                return AGENT_ACT_FAILOVER;
        /* about this agent or this request, not the verifier: try it again later */
        if (status == 408 || status == 429)
                return AGENT_ACT_BACKOFF;
        /* enrolment refused (bad token, EK not trusted, AK enrolled elsewhere): retrying the same
         * request cannot succeed */
        if (step == AGENT_STEP_ENROL)
                return AGENT_ACT_EXIT_REFUSED;
        /* a round refused for another reason (agent_not_active, agent_busy, ...): keep the id */
        return AGENT_ACT_BACKOFF;
}

bool agent_code_rechallenges(enum attest_code code)
{
        return code == AE_NONCE_EXPIRED || code == AE_NONCE_UNKNOWN ||
               code == AE_RUNTIME_POLICY_CHANGED;
}

enum agent_action agent_outcome_action(enum agent_step step, const struct agent_outcome *o)
{
        switch (o->kind) {
        case AGENT_OUTCOME_DONE:
                return AGENT_ACT_PROCEED;
        case AGENT_OUTCOME_HTTP:
                return http_action(step, o->status, o->code);
        case AGENT_OUTCOME_TRANSPORT:
        case AGENT_OUTCOME_PROTOCOL:
                /* no answer, or none usable: the verifier's trouble, another may answer */
                return AGENT_ACT_FAILOVER;
        case AGENT_OUTCOME_LOCAL:
        default:
                /* this host's trouble: never a reason to forget the agent id, to stop for good
                 * or to leave a verifier */
                return AGENT_ACT_BACKOFF;
        }
}

/* Append printf-style; false (the line unchanged) when it does not fit with room for "...". */
_printf_(2, 3) static bool line_add(struct agent_verdict_line *l, const char *fmt, ...)
{
        size_t room = sizeof(l->text) - l->len;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(l->text + l->len, room, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= room - 32) {
                l->text[l->len] = '\0';
                return false;
        }
        l->len += (size_t)n;
        return true;
}

void agent_verdict_begin(struct agent_verdict_line *l, const char *status, const char *was)
{
        *l = (struct agent_verdict_line){0};
        /* a change only against a verdict this agent saw before: the first round has none */
        if (!was || !was[0] || !strcmp(was, status))
                line_add(l, "verdict: %.64s", status);
        else
                line_add(l, "verdict: %.64s (changed from %.64s)", status, was);
}

void agent_verdict_claim(struct agent_verdict_line *l, const char *name, const char *result)
{
        if (result && !strcmp(result, "pass"))
                return;
        if (l->left_out == 0 && line_add(l, "%s%.96s (%.32s)", l->failing ? ", " : "; failing: ",
                                         name ? name : "?", result ? result : "?")) {
                l->failing++;
                return;
        }
        l->left_out++;
}

const char *agent_verdict_end(struct agent_verdict_line *l)
{
        if (l->left_out)
                snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s... and %u more",
                         l->failing ? ", " : "; failing: ", l->left_out);
        return l->text;
}
