/* SPDX-License-Identifier: MIT */
/*
 * attestctl agents list: the agents of an attestd page by page (--all follows the cursors, each
 * seen once), filtered, ranked and printed as a table or JSON lines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-agents.h"
#include "attestctl/tty.h"
#include "util/num.h"

/* Failing first, then stale, decommissioned, not yet judged, passing. */
static int agent_rank(const json_t *a)
{
        const char *st = ctl_agents_str(a, "state"), *last = ctl_agents_str(a, "last_status");

        if (last && strcmp(last, "fail") == 0)
                return 0;
        if (json_is_true(json_object_get(a, "stale")))
                return 1;
        if (st && strcmp(st, "decommissioned") == 0)
                return 2;
        if (!last || strcmp(last, "pass") != 0)
                return 3;
        return 4;
}

/* The --status, --label, --hostname and --policy filters, for an attestd that does not apply
 * them. */
static bool agent_matches(const struct args *a, const json_t *ag)
{
        if (a->status) {
                const char *st = ctl_agents_str(ag, "state"),
                           *last = ctl_agents_str(ag, "last_status");
                bool stale = json_is_true(json_object_get(ag, "stale"));
                bool live = st && strcmp(st, "decommissioned") != 0 && strcmp(st, "pending") != 0;
                bool lpass = last && strcmp(last, "pass") == 0;
                bool lfail = last && strcmp(last, "fail") == 0;
                bool m;

                /* attestd's meanings (docs/api.md); such an attestd reports a stale agent's
                 * state as "stale", so pending/active/decommissioned match only fresh ones */
                if (strcmp(a->status, "failing") == 0)
                        m = live && lfail;
                else if (strcmp(a->status, "fail") == 0)
                        m = live && lfail && !stale;
                else if (strcmp(a->status, "pass") == 0)
                        m = live && lpass && !stale;
                else if (strcmp(a->status, "stale") == 0)
                        m = stale && live;
                else if (strcmp(a->status, "never") == 0)
                        m = live && !last;
                else
                        m = st && strcmp(st, a->status) == 0;
                if (!m)
                        return false;
        }
        if (a->hostname) {
                const char *h = ctl_agents_str(ag, "hostname");

                if (!h || strcmp(h, a->hostname) != 0)
                        return false;
        }
        if (a->policy) {
                const char *p = ctl_agents_str(ag, "policy");

                if (!p || strcmp(p, a->policy) != 0)
                        return false;
        }
        for (unsigned i = 0; i < a->nlabels; i++) {
                const char *eq = strchr(a->labels[i], '=');
                char key[256];
                const char *v;

                snprintf(key, sizeof(key), "%.*s", (int)(eq - a->labels[i]), a->labels[i]);
                v = ctl_agents_str(json_object_get(ag, "labels"), key);
                if (!v || strcmp(v, eq + 1) != 0)
                        return false;
        }
        return true;
}

static int query_add(struct remote *r, char *q, size_t n, const char *key, const char *val)
{
        size_t len = strlen(q);
        char *e = curl_easy_escape(r->curl, val, 0);
        int w;

        if (!e)
                return -ENOMEM;
        w = snprintf(q + len, n - len, "%c%s=%s", len ? '&' : '?', key, e);
        curl_free(e);
        if (w < 0 || (size_t)w >= n - len) {
                fprintf(stderr, "attestctl: the query is too long\n");
                return -E2BIG;
        }
        return 0;
}

static bool is_bad_query(const struct reply *p)
{
        json_auto_t *e = NULL;

        if (p->status != 400)
                return false;
        e = json_loadb(p->body, p->len, 0, NULL);
        return ctl_agents_str(e, "error") && strcmp(ctl_agents_str(e, "error"), "bad_query") == 0;
}

/*
 * One GET of the agent list. An attestd that predates the filters and paging answers any query
 * with 400 bad_query: then -EOPNOTSUPP (not printed). Told apart from a bad_query about the
 * values (an unknown --status word) by asking ?limit=1, which an attestd with paging takes: then
 * the first answer is printed as the error it is.
 */
static int list_page(struct remote *r, const char *path, bool query, json_t **ret)
{
        struct reply p = {0}, probe = {0};
        int x;
        bool old;

        if (!query)
                return remote_json(r, "GET", path, NULL, ret);
        if ((x = remote_request(r, "GET", path, NULL, &p)) < 0)
                return x;
        if (is_bad_query(&p)) {
                if ((x = remote_request(r, "GET", "/v1/agents?limit=1", NULL, &probe)) < 0) {
                        reply_done(&p);
                        return x;
                }
                old = is_bad_query(&probe);
                reply_done(&probe);
                if (old) {
                        reply_done(&p);
                        return -EOPNOTSUPP;
                }
        }
        return reply_json("GET", path, &p, ret);
}

/*
 * --all remembers every cursor it followed (as the first 8 bytes of its SHA-256, in an
 * open-addressing set of CURSOR_SET slots, at most PAGES_MAX of them used): a server that sends a
 * cursor again, not only the one just followed, would page in a loop.
 */
#define CURSOR_SET 32768 /* a power of two above 2 * PAGES_MAX */
#define CURSOR_MAX 1024  /* bytes of a "next" cursor */

struct cursors {
        uint64_t *slot; /* 0: free */
        size_t n;
};

static void cursors_done(struct cursors *c)
{
        free(c->slot);
        c->slot = NULL;
}

/* 1 when cur was seen before, else 0 and remembered; -ENOMEM, -E2BIG when full. */
static int cursor_seen(struct cursors *c, const char *cur)
{
        unsigned char md[SHA256_DIGEST_LENGTH];
        uint64_t h;
        size_t i;

        if (!c->slot && !(c->slot = calloc(CURSOR_SET, sizeof(*c->slot))))
                return -ENOMEM;
        if (c->n >= CURSOR_SET / 2)
                return -E2BIG;
        SHA256((const unsigned char *)cur, strlen(cur), md);
        memcpy(&h, md, sizeof(h));
        h |= 1; /* never 0, the free mark */
        for (i = h & (CURSOR_SET - 1); c->slot[i]; i = (i + 1) & (CURSOR_SET - 1))
                if (c->slot[i] == h)
                        return 1;
        c->slot[i] = h;
        c->n++;
        return 0;
}

/*
 * The output of agents list, written page by page so that --all holds one page at a time: with
 * --json the text print_json() gives for {"agents": [...], "next": ...}, each agent as it comes
 * (an error after the first page leaves the document unfinished, and the exit status is 2); else
 * the rows of a table, escaped and cut (struct table: at most TABLE_ROWS_MAX rows and
 * TABLE_BYTES_MAX bytes), printed failing and stale agents first once all pages are in.
 */
struct list_out {
        bool json;
        size_t count; /* agents taken */
        struct table t;
};

static void list_out_done(struct list_out *lo)
{
        table_done(&lo->t);
}

static int list_out_agent(struct list_out *lo, const json_t *ag)
{
        const char *policy = ctl_agents_str(ag, "last_policy");
        const char *cells[6];
        enum color col[6] = {0};
        int x;

        if (lo->json) {
                _cleanup_free_ char *s = json_dumps(ag, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

                if (!s)
                        return -ENOMEM;
                fputs(lo->count ? ",\n    " : "{\n  \"agents\": [\n    ", stdout);
                /* one level deeper: the dump's lines indented by 4 (its strings hold no '\n') */
                for (const char *p = s, *nl; *p; p = nl + 1) {
                        if (!(nl = strchr(p, '\n'))) {
                                fputs(p, stdout);
                                break;
                        }
                        fwrite(p, 1, (size_t)(nl - p) + 1, stdout);
                        fputs("    ", stdout);
                }
                lo->count++;
                return ferror(stdout) ? -EIO : 0;
        }
        cells[0] = ctl_agents_str(ag, "hostname");
        cells[1] = ctl_agents_str(ag, "id");
        cells[2] = ctl_agents_str(ag, "state");
        cells[3] = ctl_agents_str(ag, "last_status");
        cells[4] = policy ? policy : ctl_agents_str(ag, "policy");
        cells[5] = ctl_agents_str(ag, "last_seen");
        col[2] = status_color(cells[2]);
        col[3] = status_color(cells[3]);
        x = table_row_ranked(&lo->t, (unsigned)agent_rank(ag), cells, col);
        if (x == -E2BIG)
                fprintf(stderr,
                        "attestctl: agents list: over %u agents or %u MiB in the table: narrow "
                        "the list (--status, --label, --hostname), page it (--limit, --cursor) "
                        "or use --json\n",
                        TABLE_ROWS_MAX, TABLE_BYTES_MAX >> 20);
        if (x == 0)
                lo->count++;
        return x;
}

/* The end of the output: next is the cursor to print (NULL: none). */
static int list_out_end(struct list_out *lo, const char *next, bool color)
{
        if (lo->json) {
                json_auto_t *n = next ? json_string(next) : json_null();
                _cleanup_free_ char *s = n ? json_dumps(n, JSON_ENCODE_ANY) : NULL;

                if (!s)
                        return -ENOMEM;
                printf("%s\n  \"next\": %s\n}\n", lo->count ? "\n  ]," : "{\n  \"agents\": [],", s);
                return fflush(stdout) == 0 ? 0 : -EIO;
        }
        table_print(&lo->t, color);
        if (next) {
                fputs("(more: --cursor ", stdout);
                tty_fputs(next, 0, stdout);
                fputs(", or --all)\n", stdout);
        }
        return fflush(stdout) == 0 ? 0 : -EIO;
}

/* The "next" of a page for --all: a string, not too long, never seen before. */
static int next_check(struct cursors *seen, const char *next, unsigned page)
{
        int x;

        if (strlen(next) > CURSOR_MAX) {
                fprintf(stderr,
                        "attestctl: GET /v1/agents: page %u: the \"next\" cursor is over %d "
                        "bytes: stopped\n",
                        page + 1, CURSOR_MAX);
                return -EBADMSG;
        }
        if ((x = cursor_seen(seen, next)) < 0)
                return x;
        if (x) {
                fprintf(stderr, "attestctl: GET /v1/agents: page %u: the server sent the cursor ",
                        page + 1);
                tty_fputs(next, 80, stderr);
                fputs(" again (its pages would loop): stopped\n", stderr);
                return -ELOOP;
        }
        return 0;
}

int ctl_agents_list(struct args *a)
{
        json_auto_t *next = NULL; /* owned: the page it came from is freed */
        char q[2048] = "", path[2400];
        _cleanup_free_ char *cursor = a->cursor ? strdup(a->cursor) : NULL;
        _cleanup_(cursors_done) struct cursors seen = {0};
        _cleanup_(list_out_done) struct list_out lo = {.json = a->r.json};
        static const char *const head[] = {"HOST", "ID", "STATE", "VERDICT", "POLICY", "LAST SEEN"};
        bool paged = false;
        int x;

        table_init(&lo.t, ARRAY_SIZE(head), head);
        table_fit(&lo.t, &a->r);
        if (a->cursor && !cursor)
                return -ENOMEM;
        if (a->npos != 0) {
                ctl_agents_usage(stderr);
                return -EINVAL;
        }
        if ((a->status && (x = query_add(&a->r, q, sizeof(q), "status", a->status)) < 0) ||
            (a->hostname && (x = query_add(&a->r, q, sizeof(q), "hostname", a->hostname)) < 0) ||
            (a->policy && (x = query_add(&a->r, q, sizeof(q), "policy", a->policy)) < 0))
                return x;
        for (unsigned i = 0; i < a->nlabels; i++)
                if ((x = query_add(&a->r, q, sizeof(q), "label", a->labels[i])) < 0)
                        return x;
        if (a->limit) {
                char lim[24];

                snprintf(lim, sizeof(lim), "%llu", (unsigned long long)a->limit);
                if ((x = query_add(&a->r, q, sizeof(q), "limit", lim)) < 0)
                        return x;
        }
        if (a->all && cursor && (x = cursor_seen(&seen, cursor)) < 0)
                return x;
        for (unsigned page = 0;; page++) {
                json_auto_t *o = NULL;
                char qc[2300];
                json_t *arr;
                size_t i;
                json_t *v;

                if (page == PAGES_MAX) {
                        fprintf(stderr, "attestctl: --all: over %d pages\n", PAGES_MAX);
                        return -E2BIG;
                }
                snprintf(qc, sizeof(qc), "%s", q);
                if (cursor && (x = query_add(&a->r, qc, sizeof(qc), "cursor", cursor)) < 0)
                        return x;
                snprintf(path, sizeof(path), "/v1/agents%s", qc);
                x = list_page(&a->r, path, qc[0] != '\0', &o);
                if (x == -EOPNOTSUPP && page == 0 && !cursor) {
                        /* an attestd without filters and paging: everything, filtered here */
                        q[0] = '\0';
                        x = list_page(&a->r, "/v1/agents", false, &o);
                } else if (x == -EOPNOTSUPP) {
                        fprintf(stderr, "attestctl: --cursor: this attestd does not page its "
                                        "agent list\n");
                        return -ENOTSUP;
                }
                if (x < 0)
                        return x;
                arr = json_object_get(o, "agents");
                if (!json_is_array(arr)) {
                        fprintf(stderr, "attestctl: GET /v1/agents: no \"agents\" array\n");
                        return -EBADMSG;
                }
                /* the whole page checked before any of it is printed */
                json_array_foreach(arr, i, v)
                {
                        if (!json_is_object(v) || !json_is_string(json_object_get(v, "id"))) {
                                fprintf(stderr,
                                        "attestctl: GET /v1/agents: agent %zu has no "
                                        "id\n",
                                        i);
                                return -EBADMSG;
                        }
                }
                json_decref(next);
                next = json_incref(json_object_get(o, "next"));
                paged = next != NULL;
                if (a->all && json_is_string(next) &&
                    (x = next_check(&seen, json_string_value(next), page)) < 0)
                        return x;
                json_array_foreach(arr, i, v)
                {
                        /* an attestd without filters (no "next") lists everything: filter here */
                        if (!paged && !agent_matches(a, v))
                                continue;
                        if (!paged && a->limit && lo.count >= a->limit)
                                break;
                        if ((x = list_out_agent(&lo, v)) < 0)
                                return x;
                }
                if (!a->all || !json_is_string(next))
                        break;
                free(cursor);
                if (!(cursor = strdup(json_string_value(next))))
                        return -ENOMEM;
                /* o (the page) is freed here, before the next one comes */
        }
        return list_out_end(&lo, !a->all && json_is_string(next) ? json_string_value(next) : NULL,
                            a->r.color);
}
