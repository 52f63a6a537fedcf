/* SPDX-License-Identifier: MIT */
/*
 * attestctl agents results ID --since TIME: every result of the agent from TIME on, oldest
 * first, through GET /v1/agents/{id}/results?since=&after=&limit= page by page (one page held at
 * a time), so that what a host ran is archived before retention drops it. --json writes one
 * result a line (JSON lines), each page as it comes; else a table once all pages are in.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-agents.h"
#include "attestctl/tty.h"

#define EXPORT_PAGE 1000       /* results a page unless --limit (attestd's cap) */
#define EXPORT_PAGES_MAX 10000 /* pages followed at most */
#define SINCE_MAX 20           /* YYYY-MM-DDTHH:MM:SSZ */

/* --since: YYYY-MM-DD (midnight UTC) or YYYY-MM-DDTHH:MM:SSZ, into out; attestd checks the date. */
static int since_text(const char *s, char out[SINCE_MAX + 1])
{
        static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
        size_t n = strlen(s);

        if (n != 10 && n != SINCE_MAX)
                goto bad;
        for (size_t i = 0; i < n; i++)
                if (form[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != form[i])
                        goto bad;
        memcpy(out, s, n);
        memcpy(out + n, "T00:00:00Z", SINCE_MAX - n); /* nothing when n is SINCE_MAX */
        out[SINCE_MAX] = '\0';
        return 0;
bad:
        fprintf(stderr, "attestctl: --since: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)\n");
        return -EINVAL;
}

/* One result as a JSON line, the agent id first (an "agent" member of the answer is not taken):
 * each line stands alone in an archive. */
static int json_line(const char *id, const json_t *res)
{
        json_auto_t *o = json_pack("{s:s}", "agent", id);
        _cleanup_free_ char *s = NULL;

        if (!o || json_object_update_missing(o, (json_t *)res) < 0)
                return -ENOMEM;
        /* compact: JSON escapes any newline inside a string, so a line is one result */
        if (!(s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)))
                return -ENOMEM;
        puts(s);
        return ferror(stdout) ? -EIO : 0;
}

int ctl_agents_export(struct args *a, const char *id)
{
        static const char *const head[] = {"RESULT", "TIME", "STATUS", "POLICY", "FAILED"};
        char since[SINCE_MAX + 1];
        long long after = 0;
        unsigned limit = a->limit ? (unsigned)a->limit : EXPORT_PAGE;
        struct table t;
        int x;

        if ((x = since_text(a->since, since)) < 0)
                return x;
        table_init(&t, ARRAY_SIZE(head), head);
        table_fit(&t, &a->r);
        for (unsigned page = 0;; page++) {
                json_auto_t *o = NULL;
                char path[256];
                const json_t *arr, *next, *v;
                size_t i;

                if (page == EXPORT_PAGES_MAX) {
                        fprintf(stderr, "attestctl: results --since: over %d pages: stopped\n",
                                EXPORT_PAGES_MAX);
                        x = -E2BIG;
                        break;
                }
                snprintf(path, sizeof(path), "/v1/agents/%s/results?since=%s&limit=%u", id, since,
                         limit);
                if (after)
                        snprintf(path + strlen(path), sizeof(path) - strlen(path), "&after=%lld",
                                 after);
                if ((x = remote_json(&a->r, "GET", path, NULL, &o)) < 0)
                        break;
                arr = json_object_get(o, "results");
                next = json_object_get(o, "next_after");
                if (!json_is_array(arr) || json_array_size(arr) > limit ||
                    (!json_is_null(next) && !json_is_integer(next))) {
                        /* an attestd without the export answers next_before: say so */
                        fprintf(stderr,
                                "attestctl: GET %s: not a page of the export (\"results\" of at "
                                "most %u and \"next_after\")%s\n",
                                path, limit,
                                json_object_get(o, "next_before") ? ": this attestd has no --since"
                                                                  : "");
                        x = -EBADMSG;
                        break;
                }
                json_array_foreach(arr, i, v)
                {
                        x = a->r.json ? json_line(id, v) : ctl_results_row(&t, v);
                        if (x == -E2BIG) /* the table is full: said under it */
                                x = 0;
                        if (x < 0)
                                break;
                }
                if (x < 0)
                        break;
                if (a->r.json && fflush(stdout) != 0) {
                        x = -EIO;
                        break;
                }
                if (json_is_null(next))
                        break;
                /* the cursor only moves forward: a server that repeats it would loop */
                if (json_integer_value(next) <= after) {
                        fprintf(stderr,
                                "attestctl: GET %s: next_after %lld does not move past %lld: "
                                "stopped\n",
                                path, (long long)json_integer_value(next), after);
                        x = -ELOOP;
                        break;
                }
                after = (long long)json_integer_value(next);
        }
        if (!a->r.json && x >= 0)
                table_print(&t, a->r.color);
        table_done(&t);
        return x < 0 ? x : fflush(stdout) == 0 ? 0 : -EIO;
}
