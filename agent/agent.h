/* SPDX-License-Identifier: MIT */
/*
 * attest-agent, the executable: main.c (options, signals, the loop), enrol.c (the one-time
 * enrolment), round.c (one attestation round) and agent.c (what they share: atomic files,
 * requests to the verifier and how they ended); logging is util/log.h. libagent (config, facts,
 * http, imalog, evout, outcome, tpm) holds what attestctl and the tests use too.
 */
#ifndef AGENT_AGENT_H
#define AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "agent/bootlog.h"
#include "agent/config.h"
#include "agent/facts.h"
#include "agent/failover.h"
#include "agent/http.h"
#include "agent/imalog.h"
#include "agent/outcome.h"
#include "tpm/tpm.h"
#include "util/err.h"
#include "util/log.h"

#define TOKEN_MAX AGENT_TOKEN_MAX

struct agent {
        /* configuration */
        const char *verifiers[AGENT_VERIFIERS_MAX]; /* in order of preference */
        unsigned n_verifiers;
        const char *ca, *cert, *key, *token_file, *tcti, *state_dir, *ima_path;
        const char *dump, *pcr_sel_text;
        const char *boot_log_path; /* the firmware event log; NULL: not sent (boot-log = none) */
        enum ima_format ima_format;
        enum tpm_key_alg ak_alg;
        bool once, insecure_http;
        unsigned interval;            /* seconds, when the verifier gives no next_due */
        unsigned timeout;             /* seconds per HTTP request */
        unsigned retry_max, failback; /* seconds (agent/failover.h) */
        struct facts_paths facts_paths;
        struct agent_config cfg;                       /* the file, then the flags */
        char proc_paths[5][AGENT_CONFIG_STR_MAX + 32]; /* --proc-root's facts_paths */
        /* state */
        struct tpm *tpm;
        struct http_client *http; /* the verifier in use: https[fo.cur] */
        struct http_client *https[AGENT_VERIFIERS_MAX];
        struct failover fo;
        struct imalog log;
        char id[AGENT_ID_MAX + 1];
        char token[TOKEN_MAX + 1];
        int sigfd;
        bool stop;
        uint64_t watchdog_usec;
        char last_status[64];
};

/* Record how a step ended; returns error (negative) so callers can `return agent_outcome_set(...)`.
 */
int agent_outcome_set(struct agent_outcome *o, enum agent_outcome_kind kind, int error);
/* The verifier answered what with an error status: log, record; -EREMOTEIO. */
int agent_outcome_http(struct agent_outcome *o, const char *what, long status, json_t *j);
/* What became of a request (x, err from http_request*): *o, and the JSON object answer. */
int verifier_answer(const char *method, const char *path, int x, const struct attest_err *err,
                    const char *resp, long *status, json_t **ret_json, struct agent_outcome *o);
/* One request with a JSON text (or object) body and a JSON object answer, for any status. */
int verifier_call_text(struct agent *a, const char *method, const char *path, const char *text,
                       long *status, json_t **ret_json, struct agent_outcome *o);
int verifier_call(struct agent *a, const char *method, const char *path, json_t *body, long *status,
                  json_t **ret_json, struct agent_outcome *o);

/* enrol.c: the enrolment token (--token-file), read once; the agent id; the enrolment. */
int agent_read_token(struct agent *a);
/* 1 and a->id set when state_dir/agent-id holds one, 0 when there is none, negative. */
int agent_load_id(struct agent *a);
/* Enrol the AK (and activate the credential). 0 when enrolled; else negative with *o filled. */
int agent_enrol(struct agent *a, struct agent_outcome *o);

/*
 * round.c: challenge, collect, submit. 1 pass, 0 fail (a verdict: *o is DONE), negative when
 * the round ended otherwise (*o says how); *next_due_s is the delay the verifier asked for.
 */
int agent_round(struct agent *a, long *next_due_s, struct agent_outcome *o);
/* Offline: quote a random local nonce and write the evidence (no verifier). */
int agent_dump_offline(struct agent *a);

#endif
