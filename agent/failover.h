/* SPDX-License-Identifier: MIT */
/*
 * Which verifier the agent talks to, when it has several (`verifier = URL`, repeatable, in order
 * of preference; attest-agent(8), FAILOVER). Pure bookkeeping: the caller passes the monotonic
 * time and what became of each step, and gets back the verifier to use and how long to wait.
 *
 * - The agent stays on one verifier while it answers. A step (a round, or the enrolment) goes
 *   whole to one verifier: a round's challenge and evidence are never split across two, so a
 *   nonce is only ever shown to the instance that issued it (the nonces would allow more when
 *   instances share the nonce key; this rule needs nothing of the kind).
 * - A verifier that gives no usable answer (connect or TLS error, timeout, an answer that is not
 *   one, any 5xx such as 503 store_busy) is left for the next one in the list at once, and the
 *   step starts again there from its beginning (a new challenge). A Retry-After in the answer
 *   keeps that verifier out of use until it has passed.
 * - When every verifier has failed since the last success, the agent backs off (exponential,
 *   full jitter, 1 s doubling up to retry-max) and goes on with the next verifier in the list.
 * - After failback seconds of answers from a verifier other than the first, the next step goes
 *   to the first again; if it is still down, that costs one failed attempt and the agent fails
 *   over as above (so once per window at most).
 */
#ifndef AGENT_FAILOVER_H
#define AGENT_FAILOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"
#include "agent/http.h"
#include "util/macro.h"

#define FAILOVER_RETRY_AFTER_MAX 3600 /* seconds of a Retry-After honoured, at most */

struct failover {
        unsigned n;   /* verifiers, 1..AGENT_VERIFIERS_MAX */
        unsigned cur; /* the one in use */
        uint32_t failback_ms;
        bool good;              /* cur answered since it became current */
        uint64_t good_since_ms; /* ... first at this time */
        uint32_t failed;        /* bit i: verifier i failed since the last success */
        uint64_t not_before_ms[AGENT_VERIFIERS_MAX]; /* its Retry-After ends then */
        struct backoff bo;
};

enum failover_move {
        FAILOVER_STAY,     /* the same verifier */
        FAILOVER_NEXT,     /* another one not yet tried since the last success: go on at once */
        FAILOVER_ALL_DOWN, /* every verifier failed: back off, then the next one */
        FAILOVER_BACK,     /* back to the first after the failback window */
};

/* n verifiers (1..AGENT_VERIFIERS_MAX); the back-off capped at retry_max_ms. */
void failover_init(struct failover *f, unsigned n, uint32_t retry_max_ms, uint32_t failback_ms);

/* Before a step: FAILOVER_BACK (cur now 0) when the failback window has passed and the first's
 * Retry-After too, else STAY. */
enum failover_move failover_begin(struct failover *f, uint64_t now_ms);

/* The step got its answer from cur (a verdict, the enrolment): forget the failures. */
void failover_ok(struct failover *f, uint64_t now_ms);

/*
 * cur gave no usable answer (retry_after_s from it, 0: none). Moves cur on and says how:
 * FAILOVER_NEXT (*ret_delay_ms 0 unless that verifier's own Retry-After still runs) or
 * FAILOVER_ALL_DOWN (*ret_delay_ms the back-off, at least the next verifier's Retry-After).
 */
enum failover_move failover_down(struct failover *f, uint64_t now_ms, uint32_t retry_after_s,
                                 uint32_t *ret_delay_ms);

/* cur answered, but refused the step, or this host failed: the back-off on the same verifier
 * (at least retry_after_s). */
uint32_t failover_refused(struct failover *f, uint64_t now_ms, uint32_t retry_after_s);

/*
 * url for a log line: the userinfo (anything up to an '@' in the authority) left out, control
 * bytes escaped (log_escape()). Returns out.
 */
const char *failover_url_display(const char *url, char *out, size_t max);

#endif
