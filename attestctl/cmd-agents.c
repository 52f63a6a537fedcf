/* SPDX-License-Identifier: MIT */
/*
 * attestctl agents list | show | results | delete | decommission | readmit | bind-policy: the
 * agents of an attestd, over its REST API (docs/api.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "attestctl/attestctl.h"
#include "attestctl/tty.h"
#include "attestctl/remote.h"
#include "util/num.h"

#define PAGES_MAX 10000 /* --all follows at most this many cursors */
#define LABELS_MAX 16

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl agents list [--status S] [--label K=V]... [--hostname H]\n"
                "                             [--limit N] [--cursor C] [--all] [CONNECTION]\n"
                "       attestctl agents show ID [CONNECTION]\n"
                "       attestctl agents results ID [--limit N] [--before RESULT] [CONNECTION]\n"
                "       attestctl agents delete ID [CONNECTION]\n"
                "       attestctl agents decommission ID [CONNECTION]\n"
                "       attestctl agents readmit ID [CONNECTION]\n"
                "       attestctl agents bind-policy ID (NAME | --default) [CONNECTION]\n"
                "\n"
                "list          the agents: host, id, state, last verdict, policy, last seen;\n"
                "              failing and stale agents first\n"
                "show          one agent and its latest verdict, failing claims first\n"
                "results       the agent's verdict history, newest first\n"
                "delete        forget the agent (it may enrol again)\n"
                "decommission  refuse the agent and its EK until readmitted\n"
                "readmit       lift a decommission\n"
                "bind-policy   judge the agent by policy NAME (--default: the default policy)\n"
                "\n"
                "Options:\n"
                "  --status S     list: only agents with status S: failing (latest verdict\n"
                "                 fail, stale or not), fail, pass (not stale), stale, never\n"
                "                 (no verdict yet), pending, active, decommissioned\n"
                "  --label K=V    list: only agents with label K set to V (repeatable: all)\n"
                "  --hostname H   list: only agents of host H\n"
                "  --limit N      list: at most N agents (a page); results: N results (1-1000)\n"
                "  --cursor C     list: the page after cursor C (the \"next\" of a list)\n"
                "  --all          list: follow \"next\" to the last page\n"
                "  --before ID    results: the results older than result ID\n"
                "  --default      bind-policy: back to the default policy\n"
                "%s"
                "\n"
                "Exit status: 0 done (show: the agent's latest verdict passed and it is not\n"
                "stale); 1 show: the agent is failing, stale, decommissioned, pending or has no\n"
                "verdict yet; 2 usage, file, network or TLS errors, or an error answer of "
                "attestd.\n",
                remote_options_help);
}

enum {
        OPT_STATUS = OPT_FIRST_OWN,
        OPT_LABEL,
        OPT_HOSTNAME,
        OPT_LIMIT,
        OPT_CURSOR,
        OPT_ALL,
        OPT_BEFORE,
        OPT_DEFAULT,
};

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

static int parse(int argc, char **argv, struct args *a)
{
        static const struct option opts[] = {
                REMOTE_LONGOPTS,
                {"status", required_argument, NULL, OPT_STATUS},
                {"label", required_argument, NULL, OPT_LABEL},
                {"hostname", required_argument, NULL, OPT_HOSTNAME},
                {"limit", required_argument, NULL, OPT_LIMIT},
                {"cursor", required_argument, NULL, OPT_CURSOR},
                {"all", no_argument, NULL, OPT_ALL},
                {"before", required_argument, NULL, OPT_BEFORE},
                {"default", no_argument, NULL, OPT_DEFAULT},
                {0},
        };
        int c, x;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if ((x = remote_opt(&a->r, c, optarg)) < 0)
                        return x;
                if (x)
                        continue;
                switch (c) {
                case OPT_STATUS:
                        a->status = optarg;
                        break;
                case OPT_LABEL:
                        if (a->nlabels == LABELS_MAX || !strchr(optarg, '=') || optarg[0] == '=') {
                                fprintf(stderr, "attestctl: --label K=V (at most %d)\n",
                                        LABELS_MAX);
                                return -EINVAL;
                        }
                        a->labels[a->nlabels++] = optarg;
                        break;
                case OPT_HOSTNAME:
                        a->hostname = optarg;
                        break;
                case OPT_LIMIT:
                        if (num_u64(optarg, strlen(optarg), 1, 1000, &a->limit) < 0) {
                                fprintf(stderr, "attestctl: --limit: 1 to 1000\n");
                                return -EINVAL;
                        }
                        break;
                case OPT_CURSOR:
                        a->cursor = optarg;
                        break;
                case OPT_ALL:
                        a->all = true;
                        break;
                case OPT_BEFORE:
                        a->before = optarg;
                        break;
                case OPT_DEFAULT:
                        a->def = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        }
        for (; optind < argc; optind++) {
                if (a->npos == 2) {
                        fprintf(stderr, "attestctl agents: too many arguments\n");
                        return -EINVAL;
                }
                a->pos[a->npos++] = argv[optind];
        }
        return 0;
}

static const char *str(const json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
}

/* ---- list ---- */

/* Failing first, then stale, decommissioned, not yet judged, passing. */
static int agent_rank(const json_t *a)
{
        const char *st = str(a, "state"), *last = str(a, "last_status");

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

/* The --status, --label and --hostname filters, for an attestd that does not apply them. */
static bool agent_matches(const struct args *a, const json_t *ag)
{
        if (a->status) {
                const char *st = str(ag, "state"), *last = str(ag, "last_status");
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
                const char *h = str(ag, "hostname");

                if (!h || strcmp(h, a->hostname) != 0)
                        return false;
        }
        for (unsigned i = 0; i < a->nlabels; i++) {
                const char *eq = strchr(a->labels[i], '=');
                char key[256];
                const char *v;

                snprintf(key, sizeof(key), "%.*s", (int)(eq - a->labels[i]), a->labels[i]);
                v = str(json_object_get(ag, "labels"), key);
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
        return str(e, "error") && strcmp(str(e, "error"), "bad_query") == 0;
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
        const char *policy = str(ag, "last_policy");
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
        cells[0] = str(ag, "hostname");
        cells[1] = str(ag, "id");
        cells[2] = str(ag, "state");
        cells[3] = str(ag, "last_status");
        cells[4] = policy ? policy : str(ag, "policy");
        cells[5] = str(ag, "last_seen");
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

static int agents_list(struct args *a)
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
        if (a->cursor && !cursor)
                return -ENOMEM;
        if (a->npos != 0) {
                usage(stderr);
                return -EINVAL;
        }
        if ((a->status && (x = query_add(&a->r, q, sizeof(q), "status", a->status)) < 0) ||
            (a->hostname && (x = query_add(&a->r, q, sizeof(q), "hostname", a->hostname)) < 0))
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

/* ---- show ---- */

/* "label:      value" and a newline, the value escaped (attestctl/tty.h); NULL: dflt. */
static void field(const char *label, const char *v, const char *dflt)
{
        printf("%-12s", label);
        tty_fputs(v ? v : dflt, 0, stdout);
        putchar('\n');
}

static int agents_show(struct args *a, const char *id)
{
        json_auto_t *o = NULL;
        char path[128], b1[CELL_BYTES_MAX], b2[CELL_BYTES_MAX];
        const json_t *v, *labels;
        const char *state, *last;
        bool good;
        int x;

        snprintf(path, sizeof(path), "/v1/agents/%s", id);
        if ((x = remote_json(&a->r, "GET", path, NULL, &o)) < 0)
                return x;
        state = str(o, "state");
        last = str(o, "last_status");
        good = last && strcmp(last, "pass") == 0 && state && strcmp(state, "active") == 0 &&
               !json_is_true(json_object_get(o, "stale"));
        if (a->r.json) {
                if ((x = print_json(o)) < 0)
                        return x;
                return good ? 0 : 1;
        }
        /* every value below came from the server: escaped as it is printed */
        field("agent:", str(o, "id"), id);
        if (str(o, "hostname") || str(o, "machine_id")) {
                fputs("host:       ", stdout);
                tty_fputs(str(o, "hostname") ? str(o, "hostname") : "-", 0, stdout);
                if (str(o, "machine_id")) {
                        fputs(" (machine id ", stdout);
                        tty_fputs(str(o, "machine_id"), 0, stdout);
                        putchar(')');
                }
                putchar('\n');
        }
        labels = json_object_get(o, "labels");
        if (json_object_size(labels)) {
                const char *k;
                const json_t *lv;
                const char *sep = "";

                printf("labels:     ");
                json_object_foreach((json_t *)labels, k, lv)
                {
                        fputs(sep, stdout);
                        tty_fputs(k, 0, stdout);
                        putchar('=');
                        tty_fputs(json_is_string(lv) ? json_string_value(lv) : "?", 0, stdout);
                        sep = ", ";
                }
                putchar('\n');
        }
        printf("state:      %s\n",
               colored(state ? state : "-", status_color(state), a->r.color, b1, sizeof(b1)));
        printf("verdict:    %s",
               colored(last ? last : "none yet", status_color(last), a->r.color, b2, sizeof(b2)));
        if (str(o, "last_policy")) {
                fputs(" by policy ", stdout);
                tty_fputs(str(o, "last_policy"), 0, stdout);
        }
        putchar('\n');
        field("policy:", str(o, "policy"), "(default)");
        field("created:", str(o, "created"), "-");
        field("last seen:", str(o, "last_seen"), "never");
        field("next due:", str(o, "next_due"), "-");
        if (str(o, "ak_name"))
                field("ak name:", str(o, "ak_name"), "");
        v = json_object_get(o, "last_verdict");
        if (json_is_object(v))
                print_claims(v, a->r.color);
        return good ? 0 : 1;
}

/* ---- results ---- */

static int agents_results(struct args *a, const char *id)
{
        static const char *const head[] = {"RESULT", "TIME", "STATUS", "POLICY", "FAILED"};
        json_auto_t *o = NULL;
        char q[96] = "", path[256];
        const json_t *arr, *next;
        struct table t;
        int x;

        if (a->limit)
                snprintf(q, sizeof(q), "?limit=%llu", (unsigned long long)a->limit);
        if (a->before) {
                uint64_t b;

                if (num_u64(a->before, strlen(a->before), 1, INT64_MAX, &b) < 0) {
                        fprintf(stderr, "attestctl: --before: a result id\n");
                        return -EINVAL;
                }
                snprintf(q + strlen(q), sizeof(q) - strlen(q), "%cbefore=%llu", q[0] ? '&' : '?',
                         (unsigned long long)b);
        }
        snprintf(path, sizeof(path), "/v1/agents/%s/results%s", id, q);
        if ((x = remote_json(&a->r, "GET", path, NULL, &o)) < 0)
                return x;
        if (a->r.json)
                return print_json(o);
        arr = json_object_get(o, "results");
        table_init(&t, ARRAY_SIZE(head), head);
        for (size_t i = 0; i < json_array_size(arr); i++) {
                const json_t *res = json_array_get(arr, i), *v = json_object_get(res, "verdict");
                const json_t *claims = json_object_get(v, "claims"), *reason;
                char rid[CELL_BYTES_MAX], failed[256] = "";
                const char *cells[5];
                enum color col[5] = {0};

                cell_text(json_object_get(res, "id"), rid, sizeof(rid));
                reason = json_object_get(v, "reason");
                if (json_is_object(reason) && str(reason, "code"))
                        snprintf(failed, sizeof(failed), "%s", str(reason, "code"));
                for (size_t k = 0; k < json_array_size(claims); k++) {
                        const json_t *c = json_array_get(claims, k);
                        size_t n = strlen(failed);

                        if (str(c, "result") && strcmp(str(c, "result"), "pass") == 0)
                                continue;
                        snprintf(failed + n, sizeof(failed) - n, "%s%s", n ? "," : "",
                                 str(c, "name") ? str(c, "name") : "?");
                }
                cells[0] = rid;
                cells[1] = str(res, "time");
                cells[2] = str(res, "status");
                cells[3] = str(res, "policy");
                cells[4] = failed[0] ? failed : NULL;
                col[2] = status_color(cells[2]);
                if (table_row(&t, cells, col) == -ENOMEM)
                        break;
        }
        table_print(&t, a->r.color);
        table_done(&t);
        next = json_object_get(o, "next_before");
        if (json_is_integer(next))
                printf("(older: --before %lld)\n", (long long)json_integer_value(next));
        return 0;
}

/* ---- changes ---- */

static int agents_change(struct args *a, const char *method, const char *id, const char *what,
                         const char *body)
{
        json_auto_t *o = NULL;
        char path[160];
        int x;

        snprintf(path, sizeof(path), "/v1/agents/%s%s", id, what);
        if ((x = remote_json(&a->r, method, path, body, &o)) < 0)
                return x;
        if (a->r.json) {
                json_auto_t *d = o ? NULL : json_pack("{s:s, s:s}", "id", id, "state", "deleted");

                return print_json(o ? o : d);
        }
        if (!o)
                printf("agent %s deleted\n", id);
        else if (json_object_get(o, "policy")) {
                printf("agent %s: policy ", id);
                tty_fputs(str(o, "policy") ? str(o, "policy") : "(default)", 0, stdout);
                putchar('\n');
        } else {
                printf("agent %s: ", id);
                tty_fputs(str(o, "state") ? str(o, "state") : "done", 0, stdout);
                putchar('\n');
        }
        return 0;
}

int cmd_agents(int argc, char **argv)
{
        struct args a = {0};
        const char *sub, *id;
        int x;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        sub = argv[1];
        remote_init(&a.r);
        x = parse(argc - 1, argv + 1, &a);
        if (x)
                return x > 0 ? 0 : 2;
        if (strcmp(sub, "list") != 0 && strcmp(sub, "show") != 0 && strcmp(sub, "results") != 0 &&
            strcmp(sub, "delete") != 0 && strcmp(sub, "decommission") != 0 &&
            strcmp(sub, "readmit") != 0 && strcmp(sub, "bind-policy") != 0) {
                fprintf(stderr, "attestctl agents: unknown command '%s'\n", sub);
                usage(stderr);
                return 2;
        }
        if ((strcmp(sub, "list") != 0 && (a.status || a.hostname || a.nlabels || a.cursor ||
                                          a.all || (a.limit && strcmp(sub, "results") != 0))) ||
            (strcmp(sub, "results") != 0 && a.before) ||
            (strcmp(sub, "bind-policy") != 0 && a.def)) {
                fprintf(stderr, "attestctl agents %s: an option of another command\n", sub);
                return 2;
        }
        id = a.npos ? a.pos[0] : NULL;
        if (strcmp(sub, "list") != 0) {
                int want = strcmp(sub, "bind-policy") == 0 && !a.def ? 2 : 1;

                if (a.npos != want) {
                        fprintf(stderr, "attestctl agents %s: expected %s\n", sub,
                                want == 2 ? "ID and a policy NAME (or ID --default)" : "an ID");
                        return 2;
                }
                if (!remote_id_valid(id) || (want == 2 && !remote_id_valid(a.pos[1]))) {
                        fprintf(stderr,
                                "attestctl agents %s: '%s' is not an id ([A-Za-z0-9_.-], 1-64, "
                                "not starting with . or -)\n",
                                sub, remote_id_valid(id) ? a.pos[1] : id);
                        return 2;
                }
        }
        if (remote_connect(&a.r, true) < 0) {
                remote_done(&a.r);
                return 2;
        }
        if (strcmp(sub, "list") == 0)
                x = agents_list(&a);
        else if (strcmp(sub, "show") == 0)
                x = agents_show(&a, id);
        else if (strcmp(sub, "results") == 0)
                x = agents_results(&a, id);
        else if (strcmp(sub, "delete") == 0)
                x = agents_change(&a, "DELETE", id, "", NULL);
        else if (strcmp(sub, "decommission") == 0)
                x = agents_change(&a, "POST", id, "/decommission", NULL);
        else if (strcmp(sub, "readmit") == 0)
                x = agents_change(&a, "POST", id, "/readmit", NULL);
        else {
                json_auto_t *b = json_pack("{s:s?}", "policy", a.def ? NULL : a.pos[1]);
                _cleanup_free_ char *s = b ? json_dumps(b, JSON_COMPACT) : NULL;

                x = s ? agents_change(&a, "PUT", id, "/policy", s) : -ENOMEM;
        }
        remote_done(&a.r);
        if (x == -ENOMEM)
                fprintf(stderr, "attestctl: out of memory\n");
        return x < 0 ? 2 : x;
}
