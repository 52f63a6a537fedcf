/* SPDX-License-Identifier: MIT */
/*
 * The outcome of one step of the agent (enrolment, or an attestation round) as a type, and what
 * the agent does next. A failure on this host (TPM, IMA log, host facts, state directory, memory),
 * a request that got no usable answer, and an HTTP status with the verifier's error code are three
 * different things and never share a code path: only the verifier saying "no agent ID" (404
 * agent_not_found) makes the agent enrol again; a missing local file never does.
 */
#ifndef AGENT_OUTCOME_H
#define AGENT_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/macro.h"

/* Exit statuses of attest-agent (documented in attest-agent(8)). */
#define AGENT_EXIT_PASS 0 /* clean stop; --once: the verdict passed */
#define AGENT_EXIT_FAIL 1 /* --once: the verdict failed */
#define AGENT_EXIT_ERROR 2
/* The verifier decommissioned this agent or its EK: restarting will not help
 * (RestartPreventExitStatus= in attest-agent.service). */
#define AGENT_EXIT_DECOMMISSIONED 3

/* The verifier's error code (the "error" member of an error answer) as one of ours; AE_NONE when
 * absent or not one attestd sends. */
enum attest_code agent_api_code(const char *name);

enum agent_outcome_kind {
        AGENT_OUTCOME_DONE,      /* enrolled, or the verifier gave a verdict */
        AGENT_OUTCOME_LOCAL,     /* failed on this host before or after talking to the verifier */
        AGENT_OUTCOME_TRANSPORT, /* no answer: connect, TLS, timeout */
        AGENT_OUTCOME_PROTOCOL,  /* an answer the agent cannot use (not JSON, fields missing) */
        AGENT_OUTCOME_HTTP,      /* the verifier answered with an error status */
        AGENT_OUTCOME_KIND_COUNT,
};

struct agent_outcome {
        enum agent_outcome_kind kind;
        int error;             /* LOCAL, TRANSPORT, PROTOCOL: negative errno */
        long status;           /* HTTP: the status */
        enum attest_code code; /* HTTP: the verifier's error code */
};

const char *agent_outcome_kind_name(enum agent_outcome_kind k);

enum agent_step {
        AGENT_STEP_ENROL, /* POST /v1/agents and the activation proof */
        AGENT_STEP_ROUND, /* challenge, collect, evidence */
};

enum agent_action {
        AGENT_ACT_PROCEED,      /* done: wait for the next round */
        AGENT_ACT_RECHALLENGE,  /* the nonce expired or is unknown, or the runtime policy changed
                                 * (the log is judged from entry 0 again): a fresh challenge at
                                 * once, not an error */
        AGENT_ACT_BACKOFF,      /* retry after a back-off; keep the agent id */
        AGENT_ACT_FAILOVER,     /* no usable answer (transport, protocol, 5xx): the next verifier
                                 * (agent/failover.h), then a back-off; keep the agent id */
        AGENT_ACT_REENROL,      /* the verifier forgot this agent (DELETE): enrol again */
        AGENT_ACT_EXIT_REFUSED, /* enrolment refused: exit AGENT_EXIT_ERROR */
        AGENT_ACT_EXIT_DECOMMISSIONED, /* exit AGENT_EXIT_DECOMMISSIONED, no retry */
        AGENT_ACT_COUNT,
};

const char *agent_action_name(enum agent_action a);

/* Whether an evidence answer with code only asks for a fresh challenge (AGENT_ACT_RECHALLENGE):
 * logged as information, not as a warning. */
bool agent_code_rechallenges(enum attest_code code);

/*
 * The verdict line the agent logs after each round: "verdict: fail (changed from pass); failing:
 * NAME (RESULT), ..." with every claim that did not pass, in the verifier's order. Names and
 * results come from the verifier: control bytes are escaped when the line is logged. A line that
 * would pass AGENT_VERDICT_LINE_MAX ends in "..." and says how many claims it left out.
 */
#define AGENT_VERDICT_LINE_MAX 1024

struct agent_verdict_line {
        char text[AGENT_VERDICT_LINE_MAX];
        size_t len;
        unsigned failing, left_out;
};

/* was: the verdict of this agent's previous round; NULL or "" when there was none, and then, as
 * when it equals status, the line shows no change. */
void agent_verdict_begin(struct agent_verdict_line *l, const char *status, const char *was);
/* A claim of the verdict; passing ones are not shown. */
void agent_verdict_claim(struct agent_verdict_line *l, const char *name, const char *result);
/* The finished line (NUL terminated). */
const char *agent_verdict_end(struct agent_verdict_line *l);
enum agent_action agent_outcome_action(enum agent_step step, const struct agent_outcome *o);

#endif
