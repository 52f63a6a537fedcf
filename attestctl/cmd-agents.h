/* SPDX-License-Identifier: MIT */
/*
 * What attestctl agents' files share: the parsed arguments, the usage, a JSON string member.
 * cmd-agents.c: argument parsing, show, results and the changes; cmd-agents-list.c: list;
 * cmd-agents-find.c: ids from their prefixes, the refused EKs; cmd-agents-export.c: results
 * --since, page by page.
 */
#ifndef ATTESTCTL_CMD_AGENTS_H
#define ATTESTCTL_CMD_AGENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "attestctl/remote.h"

#define PAGES_MAX 10000 /* --all follows at most this many cursors */
#define LABELS_MAX 16
#define ID_MAX 64        /* an agent id (remote_id_valid) */
#define ID_PREFIX_MIN 4  /* characters of an id prefix at least */
#define ID_FULL_LEN 32   /* attestd's ids: 32 hex digits; a shorter one is looked up as a prefix */
#define ID_CANDIDATES 10 /* ids an ambiguous prefix lists */

struct args {
        struct remote r;
        const char *status, *hostname, *cursor, *before, *policy, *since;
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

/*
 * The agent id that given stands for, into out (as git takes a commit's prefix): given itself
 * when it is ID_FULL_LEN or longer, when it is an agent id, or when it starts none (the request
 * with it then gets attestd's 404); else the one agent id (with refused_too: or refused EK's
 * agent id) it starts. Printed and -errno: -EINVAL shorter than ID_PREFIX_MIN, -CTL_E_AMBIGUOUS
 * several (ID_CANDIDATES of them listed). An attestd without ?prefix= takes given as it is.
 */
int ctl_agent_resolve(struct args *a, const char *sub, const char *given, bool refused_too,
                      char out[ID_MAX + 1]);
/* attestctl agents refused: the refused EKs (every page); -errno */
int ctl_agents_refused(struct args *a);
/* attestctl agents results ID --since TIME: every result since TIME, oldest first, page by
 * page (JSON lines with --json); -errno */
int ctl_agents_export(struct args *a, const char *id);
/* One results row of the history table (RESULT TIME STATUS POLICY FAILED). */
int ctl_results_row(struct table *t, const json_t *res);

#endif
