/* SPDX-License-Identifier: MIT */
/* What attestctl agents' two files share: the parsed arguments, the usage, a JSON string member.
 * cmd-agents.c: argument parsing, show, results and the changes; cmd-agents-list.c: list. */
#ifndef ATTESTCTL_CMD_AGENTS_H
#define ATTESTCTL_CMD_AGENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "attestctl/remote.h"

#define PAGES_MAX 10000 /* --all follows at most this many cursors */
#define LABELS_MAX 16

struct args {
        struct remote r;
        const char *status, *hostname, *cursor, *before;
        const char *labels[LABELS_MAX];
        unsigned nlabels;
        uint64_t limit;
        bool all, def;
        int npos;
        const char *pos[2];
};

void ctl_agents_usage(FILE *f);
/* o's member k when it is a string (borrowed), else NULL */
const char *ctl_agents_str(const json_t *o, const char *k);
/* attestctl agents list; the exit status */
int ctl_agents_list(struct args *a);

#endif
