/* SPDX-License-Identifier: MIT */
/* attestctl policies list | get | put | delete: the policies stored in an attestd (REST API). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "attestctl/tty.h"
#include "attestctl/remote.h"
#include "policy/policy.h"
#include "util/num.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policies list [CONNECTION]\n"
                "       attestctl policies get NAME [--version N] [CONNECTION]\n"
                "       attestctl policies put NAME FILE [CONNECTION]\n"
                "       attestctl policies delete NAME [CONNECTION]\n"
                "\n"
                "list    the policies: name, latest version, when it was stored\n"
                "get     a policy document (the latest version, or --version N); with --json the\n"
                "        server's answer {name, version, created, policy}\n"
                "put     store FILE (attestd-policy(5)) as a new version of NAME; attestd\n"
                "        validates it and names the JSON path of an error\n"
                "delete  delete every version of NAME (refused while an agent is bound to it)\n"
                "\n"
                "Options:\n"
                "  --version N    get: that version\n"
                "%s"
                "\n"
                "Exit status: 0 done; 2 usage, a file, or a request attestd refused (an invalid\n"
                "policy: 400); 3 no such policy; 4 not authorised; 5 the policy is in use; 6\n"
                "server error or a refused answer; 7 attestd not reached (connection, TLS,\n"
                "timeout).\n",
                remote_options_help);
}

enum { OPT_VERSION = OPT_FIRST_OWN };

static const char *str(const json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
}

static int list(struct remote *r)
{
        static const char *const head[] = {"NAME", "VERSION", "CREATED"};
        json_auto_t *o = NULL;
        const json_t *arr;
        struct table t;
        int x;

        if ((x = remote_json(r, "GET", "/v1/policies", NULL, &o)) < 0)
                return x;
        if (r->json)
                return print_json(o);
        arr = json_object_get(o, "policies");
        table_init(&t, ARRAY_SIZE(head), head);
        for (size_t i = 0; i < json_array_size(arr); i++) {
                const json_t *p = json_array_get(arr, i);
                char v[24];
                const char *cells[3] = {str(p, "name"), v, str(p, "created")};

                snprintf(v, sizeof(v), "%lld",
                         (long long)json_integer_value(json_object_get(p, "version")));
                if (table_row(&t, cells, NULL) < 0)
                        break;
        }
        table_print(&t, r->color);
        table_done(&t);
        return 0;
}

static int get(struct remote *r, const char *name, uint64_t version)
{
        json_auto_t *o = NULL;
        char path[128];
        int x;

        if (version)
                snprintf(path, sizeof(path), "/v1/policies/%s?version=%llu", name,
                         (unsigned long long)version);
        else
                snprintf(path, sizeof(path), "/v1/policies/%s", name);
        if ((x = remote_json(r, "GET", path, NULL, &o)) < 0)
                return x;
        if (r->json)
                return print_json(o);
        /* the document itself, ready to edit and put back */
        if (!json_is_object(json_object_get(o, "policy"))) {
                fprintf(stderr, "attestctl: GET %s: no \"policy\" object\n", path);
                return -EBADMSG;
        }
        return print_json(json_object_get(o, "policy"));
}

static int put(struct remote *r, const char *name, const char *file)
{
        _cleanup_free_ uint8_t *buf = NULL;
        json_auto_t *o = NULL, *doc = NULL;
        json_error_t je;
        char path[128];
        size_t len;
        int x;

        if (ctl_read_file(file, POLICY_JSON_MAX, &buf, &len) < 0)
                return -EINVAL; /* a local file: a usage error, whatever its errno */
        /* only that it is one JSON object: attestd validates it as a policy */
        doc = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(doc)) {
                /* jansson's text quotes the file's bytes */
                fprintf(stderr, "attestctl: %s: not a JSON object%s", file, doc ? "" : ": ");
                tty_fputs(doc ? "" : je.text, ERR_TEXT_COLS, stderr);
                fputc('\n', stderr);
                return -EINVAL;
        }
        snprintf(path, sizeof(path), "/v1/policies/%s", name);
        if ((x = remote_json(r, "PUT", path, (const char *)buf, &o)) < 0)
                return x;
        if (r->json)
                return print_json(o);
        fputs("policy ", stdout);
        tty_fputs(str(o, "name") ? str(o, "name") : name, 0, stdout);
        printf(" version %lld stored\n",
               (long long)json_integer_value(json_object_get(o, "version")));
        return 0;
}

static int del(struct remote *r, const char *name)
{
        json_auto_t *o = NULL;
        char path[128];
        int x;

        snprintf(path, sizeof(path), "/v1/policies/%s", name);
        if ((x = remote_json(r, "DELETE", path, NULL, &o)) < 0)
                return x;
        if (r->json) {
                json_auto_t *d = json_pack("{s:s, s:b}", "name", name, "deleted", 1);

                return d ? print_json(d) : -ENOMEM;
        }
        printf("policy %s deleted\n", name);
        return 0;
}

int cmd_policies(int argc, char **argv)
{
        static const struct option opts[] = {
                REMOTE_LONGOPTS,
                {"version", required_argument, NULL, OPT_VERSION},
                {0},
        };
        struct remote r;
        const char *sub, *pos[2] = {NULL, NULL};
        uint64_t version = 0;
        int c, x, npos = 0, want;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        sub = argv[1];
        remote_init(&r);
        argc--;
        argv++;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if ((x = remote_opt(&r, c, optarg)) < 0)
                        return 2;
                if (x)
                        continue;
                switch (c) {
                case OPT_VERSION:
                        if (num_u64(optarg, strlen(optarg), 1, INT64_MAX, &version) < 0) {
                                fprintf(stderr, "attestctl: --version: a version number\n");
                                return 2;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        for (; optind < argc; optind++) {
                if (npos == 2) {
                        fprintf(stderr, "attestctl policies: too many arguments\n");
                        return 2;
                }
                pos[npos++] = argv[optind];
        }
        want = strcmp(sub, "list") == 0                                ? 0
               : strcmp(sub, "put") == 0                               ? 2
               : strcmp(sub, "get") == 0 || strcmp(sub, "delete") == 0 ? 1
                                                                       : -1;
        if (want < 0) {
                fprintf(stderr, "attestctl policies: unknown command '%s'\n", sub);
                usage(stderr);
                return 2;
        }
        if (npos != want || (version && strcmp(sub, "get") != 0)) {
                usage(stderr);
                return 2;
        }
        if (want && !remote_id_valid(pos[0])) {
                fprintf(stderr,
                        "attestctl policies: '%s' is not a policy name ([A-Za-z0-9_.-], "
                        "1-64, not starting with . or -)\n",
                        pos[0]);
                return 2;
        }
        if (remote_connect(&r, true) < 0) {
                remote_done(&r);
                return 2;
        }
        if (want == 0)
                x = list(&r);
        else if (strcmp(sub, "get") == 0)
                x = get(&r, pos[0], version);
        else if (strcmp(sub, "put") == 0)
                x = put(&r, pos[0], pos[1]);
        else
                x = del(&r, pos[0]);
        remote_done(&r);
        return x < 0 ? remote_exit(x) : 0;
}
