/* SPDX-License-Identifier: MIT */
/*
 * attestctl agents list | show | results | delete | decommission | readmit | bind-policy |
 * refused: the agents of an attestd, over its REST API (docs/api.md).
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
#include "attestctl/remote.h"
#include "util/num.h"

void ctl_agents_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl agents list [--status S] [--label K=V]... [--hostname H]\n"
                "                             [--policy NAME] [--limit N] [--cursor C] [--all]\n"
                "                             [CONNECTION]\n"
                "       attestctl agents show ID [CONNECTION]\n"
                "       attestctl agents results ID [--limit N] [--before RESULT] [CONNECTION]\n"
                "       attestctl agents results ID --since TIME [--limit N] [CONNECTION]\n"
                "       attestctl agents delete ID [CONNECTION]\n"
                "       attestctl agents decommission ID [CONNECTION]\n"
                "       attestctl agents readmit ID [CONNECTION]\n"
                "       attestctl agents bind-policy ID (NAME | --default) [CONNECTION]\n"
                "       attestctl agents refused [CONNECTION]\n"
                "\n"
                "list          the agents: host, id, state, last verdict, policy, last seen;\n"
                "              failing and stale agents first\n"
                "show          one agent and its latest verdict, failing claims first\n"
                "results       the agent's verdict history, newest first; with --since every\n"
                "              result since TIME, oldest first, all pages (--json: JSON lines)\n"
                "delete        forget the agent (it may enrol again)\n"
                "decommission  refuse the agent and its EK until readmitted\n"
                "readmit       lift a decommission (also of a deleted agent's EK)\n"
                "bind-policy   judge the agent by policy NAME (--default: the default policy)\n"
                "refused       the refused EKs: the agent id to readmit, also of deleted agents\n"
                "\n"
                "ID is an agent id or a unique prefix of one (at least %d characters), as git\n"
                "takes a commit's; readmit also finds the agent id of a refused EK.\n"
                "\n"
                "Options:\n"
                "  --status S     list: only agents with status S: failing (latest verdict\n"
                "                 fail, stale or not), fail, pass (not stale), stale, never\n"
                "                 (no verdict yet), pending, active, decommissioned\n"
                "  --label K=V    list: only agents with label K set to V (repeatable: all)\n"
                "  --hostname H   list: only agents of host H\n"
                "  --policy NAME  list: only agents bound to policy NAME\n"
                "  --limit N      list: at most N agents (a page); results: N results, with\n"
                "                 --since a page of N (1-1000)\n"
                "  --cursor C     list: the page after cursor C (the \"next\" of a list)\n"
                "  --all          list: follow \"next\" to the last page\n"
                "  --before ID    results: the results older than result ID\n"
                "  --since TIME   results: from TIME on (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)\n"
                "  --default      bind-policy: back to the default policy\n"
                "%s"
                "\n"
                "Exit status: 0 done (show: the agent's latest verdict passed, judged by a\n"
                "policy, and it is not stale); 1 show: the agent is failing, stale,\n"
                "decommissioned, pending, has no verdict yet or one no policy judged (EAR\n"
                "none); 2 usage, a file, an ambiguous or too short id prefix, a request attestd\n"
                "refused (400); 3 no such agent; 4 not authorised; 5 conflict; 6 server error\n"
                "or a refused answer; 7 attestd not reached (connection, TLS, timeout).\n",
                ID_PREFIX_MIN, remote_options_help);
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
        OPT_POLICY,
        OPT_SINCE,
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
                {"policy", required_argument, NULL, OPT_POLICY},
                {"since", required_argument, NULL, OPT_SINCE},
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
                case OPT_POLICY:
                        if (!remote_id_valid(optarg)) {
                                fprintf(stderr, "attestctl: --policy: a policy name "
                                                "([A-Za-z0-9_.-], 1-64)\n");
                                return -EINVAL;
                        }
                        a->policy = optarg;
                        break;
                case OPT_SINCE:
                        a->since = optarg;
                        break;
                case 'h':
                        ctl_agents_usage(stdout);
                        return 1;
                default:
                        ctl_agents_usage(stderr);
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

const char *ctl_agents_str(const json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
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
        const char *state, *last, *ear;
        bool good, unjudged;
        int x;

        snprintf(path, sizeof(path), "/v1/agents/%s", id);
        if ((x = remote_json(&a->r, "GET", path, NULL, &o)) < 0)
                return x;
        state = ctl_agents_str(o, "state");
        last = ctl_agents_str(o, "last_status");
        ear = ctl_agents_str(o, "ear_status");
        v = json_object_get(o, "last_verdict");
        /* a pass no policy judged (none bound, none named default): EAR none, not a pass; an
         * attestd without ear_status says so by a verdict with no policy and no claims */
        unjudged = last && strcmp(last, "pass") == 0 &&
                   ((ear && strcmp(ear, "none") == 0) ||
                    (!ear && json_is_object(v) && json_is_null(json_object_get(v, "policy")) &&
                     json_array_size(json_object_get(v, "claims")) == 0));
        good = last && strcmp(last, "pass") == 0 && !unjudged && state &&
               strcmp(state, "active") == 0 && !json_is_true(json_object_get(o, "stale"));
        if (a->r.json) {
                if ((x = print_json(o)) < 0)
                        return x;
                return good ? 0 : 1;
        }
        /* every value below came from the server: escaped as it is printed */
        field("agent:", ctl_agents_str(o, "id"), id);
        if (ctl_agents_str(o, "hostname") || ctl_agents_str(o, "machine_id")) {
                fputs("host:       ", stdout);
                tty_fputs(ctl_agents_str(o, "hostname") ? ctl_agents_str(o, "hostname") : "-", 0,
                          stdout);
                if (ctl_agents_str(o, "machine_id")) {
                        fputs(" (machine id ", stdout);
                        tty_fputs(ctl_agents_str(o, "machine_id"), 0, stdout);
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
        if (ctl_agents_str(o, "last_policy")) {
                fputs(" by policy ", stdout);
                tty_fputs(ctl_agents_str(o, "last_policy"), 0, stdout);
        }
        if (unjudged)
                fputs(" (not judged: no policy checked it)", stdout);
        putchar('\n');
        if (ear) {
                char b3[CELL_BYTES_MAX];

                printf("ear:        %s\n",
                       colored(ear, status_color(ear), a->r.color, b3, sizeof(b3)));
        }
        field("policy:", ctl_agents_str(o, "policy"), "(default)");
        field("created:", ctl_agents_str(o, "created"), "-");
        field("last seen:", ctl_agents_str(o, "last_seen"), "never");
        field("next due:", ctl_agents_str(o, "next_due"), "-");
        if (ctl_agents_str(o, "ak_name")) {
                /* a digest: shortened unless --full, as in the claims table */
                _cleanup_free_ char *ak =
                        a->r.full ? NULL : digests_shortened(ctl_agents_str(o, "ak_name"));

                field("ak name:", ak ? ak : ctl_agents_str(o, "ak_name"), "");
        }
        if (json_is_object(v))
                print_claims(v, &a->r);
        return good ? 0 : 1;
}

/* ---- results ---- */

int ctl_results_row(struct table *t, const json_t *res)
{
        const json_t *v = json_object_get(res, "verdict");
        const json_t *claims = json_object_get(v, "claims"), *reason;
        char rid[CELL_BYTES_MAX], failed[256] = "";
        const char *cells[5];
        enum color col[5] = {0};

        cell_text(json_object_get(res, "id"), rid, sizeof(rid));
        reason = json_object_get(v, "reason");
        if (json_is_object(reason) && ctl_agents_str(reason, "code"))
                snprintf(failed, sizeof(failed), "%s", ctl_agents_str(reason, "code"));
        for (size_t k = 0; k < json_array_size(claims); k++) {
                const json_t *c = json_array_get(claims, k);
                size_t n = strlen(failed);

                if (ctl_agents_str(c, "result") && strcmp(ctl_agents_str(c, "result"), "pass") == 0)
                        continue;
                snprintf(failed + n, sizeof(failed) - n, "%s%s", n ? "," : "",
                         ctl_agents_str(c, "name") ? ctl_agents_str(c, "name") : "?");
        }
        cells[0] = rid;
        cells[1] = ctl_agents_str(res, "time");
        cells[2] = ctl_agents_str(res, "status");
        cells[3] = ctl_agents_str(res, "policy");
        cells[4] = failed[0] ? failed : NULL;
        col[2] = status_color(cells[2]);
        return table_row(t, cells, col);
}

static int agents_results(struct args *a, const char *id)
{
        static const char *const head[] = {"RESULT", "TIME", "STATUS", "POLICY", "FAILED"};
        json_auto_t *o = NULL;
        char q[96] = "", path[256];
        const json_t *arr, *next;
        struct table t;
        int x;

        if (a->since)
                return ctl_agents_export(a, id);
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
        table_fit(&t, &a->r);
        for (size_t i = 0; i < json_array_size(arr); i++)
                if (ctl_results_row(&t, json_array_get(arr, i)) == -ENOMEM)
                        break;
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
        else if (strcmp(what, "/readmit") == 0) {
                const char *st = ctl_agents_str(o, "state");

                /* "forgotten": the agent was deleted; only its EK's refusal was left */
                if (st && strcmp(st, "forgotten") == 0)
                        printf("agent %s readmitted: its EK may enrol again (the agent was "
                               "deleted: it enrols anew)\n",
                               id);
                else {
                        printf("agent %s readmitted: ", id);
                        tty_fputs(st ? st : "-", 0, stdout);
                        putchar('\n');
                }
        } else if (json_object_get(o, "policy")) {
                printf("agent %s: policy ", id);
                tty_fputs(ctl_agents_str(o, "policy") ? ctl_agents_str(o, "policy") : "(default)",
                          0, stdout);
                putchar('\n');
        } else {
                printf("agent %s: ", id);
                tty_fputs(ctl_agents_str(o, "state") ? ctl_agents_str(o, "state") : "done", 0,
                          stdout);
                putchar('\n');
        }
        return 0;
}

static bool is(const char *sub, const char *name)
{
        return strcmp(sub, name) == 0;
}

/* The options a command does not take: 0, or printed and -EINVAL. */
static int options_check(const struct args *a, const char *sub)
{
        bool list = is(sub, "list"), results = is(sub, "results");

        if ((!list && (a->status || a->hostname || a->nlabels || a->cursor || a->all || a->policy ||
                       (a->limit && !results))) ||
            (!results && (a->before || a->since)) || (!is(sub, "bind-policy") && a->def)) {
                fprintf(stderr, "attestctl agents %s: an option of another command\n", sub);
                return -EINVAL;
        }
        if (a->before && a->since) {
                fprintf(stderr, "attestctl agents results: --before pages newest first, --since "
                                "oldest first: not both\n");
                return -EINVAL;
        }
        return 0;
}

/* The positional arguments of sub: 0, or printed and -EINVAL. */
static int positional_check(const struct args *a, const char *sub)
{
        int want = is(sub, "bind-policy") && !a->def ? 2 : 1;
        const char *bad;

        if (is(sub, "list") || is(sub, "refused")) {
                if (a->npos == 0)
                        return 0;
                fprintf(stderr, "attestctl agents %s: takes no ID\n", sub);
                return -EINVAL;
        }
        if (a->npos != want) {
                fprintf(stderr, "attestctl agents %s: expected %s\n", sub,
                        want == 2 ? "ID and a policy NAME (or ID --default)" : "an ID");
                return -EINVAL;
        }
        if (remote_id_valid(a->pos[0]) && (want == 1 || remote_id_valid(a->pos[1])))
                return 0;
        bad = remote_id_valid(a->pos[0]) ? a->pos[1] : a->pos[0];
        fprintf(stderr, "attestctl agents %s: '", sub);
        tty_fputs(bad, 80, stderr);
        fputs("' is not an id ([A-Za-z0-9_.-], 1-64, not starting with . or -)\n", stderr);
        return -EINVAL;
}

static int run(struct args *a, const char *sub)
{
        char id[ID_MAX + 1];
        int x;

        if (is(sub, "list"))
                return ctl_agents_list(a);
        if (is(sub, "refused"))
                return ctl_agents_refused(a);
        /* every command that takes an agent id takes a unique prefix of one */
        if ((x = ctl_agent_resolve(a, sub, a->pos[0], is(sub, "readmit"), id)) < 0)
                return x;
        if (is(sub, "show"))
                return agents_show(a, id);
        if (is(sub, "results"))
                return agents_results(a, id);
        if (is(sub, "delete"))
                return agents_change(a, "DELETE", id, "", NULL);
        if (is(sub, "decommission"))
                return agents_change(a, "POST", id, "/decommission", NULL);
        if (is(sub, "readmit"))
                return agents_change(a, "POST", id, "/readmit", NULL);
        {
                json_auto_t *b = json_pack("{s:s?}", "policy", a->def ? NULL : a->pos[1]);
                _cleanup_free_ char *s = b ? json_dumps(b, JSON_COMPACT) : NULL;

                return s ? agents_change(a, "PUT", id, "/policy", s) : -ENOMEM;
        }
}

int cmd_agents(int argc, char **argv)
{
        static const char *const subs[] = {"list",         "show",    "results",     "delete",
                                           "decommission", "readmit", "bind-policy", "refused"};
        struct args a = {0};
        const char *sub;
        bool known = false;
        int x;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                ctl_agents_usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? CTL_EXIT_USAGE : 0;
        }
        sub = argv[1];
        remote_init(&a.r);
        x = parse(argc - 1, argv + 1, &a);
        if (x)
                return x > 0 ? 0 : CTL_EXIT_USAGE;
        for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
                known |= is(sub, subs[i]);
        if (!known) {
                fprintf(stderr, "attestctl agents: unknown command '%s'\n", sub);
                ctl_agents_usage(stderr);
                return CTL_EXIT_USAGE;
        }
        if (options_check(&a, sub) < 0 || positional_check(&a, sub) < 0)
                return CTL_EXIT_USAGE;
        if (remote_connect(&a.r, true) < 0) {
                remote_done(&a.r);
                return CTL_EXIT_USAGE;
        }
        x = run(&a, sub);
        remote_done(&a.r);
        if (x == -ENOMEM)
                fprintf(stderr, "attestctl: out of memory\n");
        return remote_exit(x);
}
