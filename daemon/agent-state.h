/* SPDX-License-Identifier: MIT */
#ifndef ATTEST_AGENT_STATE_H
#define ATTEST_AGENT_STATE_H

/*
 * An agent's enrolment state: one table gives each state its enum constant and its stable name,
 * the text of the agents.state column (SQLite and PostgreSQL) and of the REST API's "state"
 * (docs/api.md). The store converts at the row: everything above it holds the enum, and only
 * this codec compares the text.
 */
#include "util/macro.h"

/* X(suffix, name): AGENT_STATE_<suffix>, and STORE_STATUS_<suffix> in the store's filter. */
#define AGENT_STATES(X)                                                                            \
        X(PENDING, "pending")               /* enrolled, credential not yet activated */           \
        X(ACTIVE, "active")                 /* attests */                                          \
        X(DECOMMISSIONED, "decommissioned") /* refused, with its EK, until readmitted */

enum agent_state {
#define AGENT_STATE_ENUM(id, name) AGENT_STATE_##id,
        AGENT_STATES(AGENT_STATE_ENUM)
#undef AGENT_STATE_ENUM
                AGENT_STATE__COUNT,
};

/* The stored (and API) name; NULL for a value outside the enum. */
const char *agent_state_name(enum agent_state s);
/* The state named by text (exactly, case and all): 0, or -EBADMSG for NULL or any other text. */
int agent_state_parse(const char *text, enum agent_state *ret) _wur_;

#endif
