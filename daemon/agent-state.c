/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "daemon/agent-state.h"

static const char *const state_names[AGENT_STATE__COUNT] = {
#define AGENT_STATE_NAME(id, name) [AGENT_STATE_##id] = name,
        AGENT_STATES(AGENT_STATE_NAME)
#undef AGENT_STATE_NAME
};

const char *agent_state_name(enum agent_state s)
{
        return (unsigned)s < AGENT_STATE__COUNT ? state_names[s] : NULL;
}

int agent_state_parse(const char *text, enum agent_state *ret)
{
        if (!text)
                return -EBADMSG;
        for (unsigned i = 0; i < AGENT_STATE__COUNT; i++)
                if (!strcmp(state_names[i], text)) {
                        *ret = (enum agent_state)i;
                        return 0;
                }
        return -EBADMSG;
}
