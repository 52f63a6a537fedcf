/* SPDX-License-Identifier: MIT */
/* attestctl: operator CLI. Sub-commands live in cmd-*.c; this file only dispatches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attestctl/attestctl.h"
#include "attestctl/remote.h"

static const struct cmd {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
} cmds[] = {
        {"ima", cmd_ima, "show and replay IMA measurement logs"},
        {"quote", cmd_quote, "check TPM 2.0 quotes"},
        {"policy", cmd_policy, "validate policies, check evidence against them, write them"},
        {"tpm", cmd_tpm, "EK certificate and PCR quotes from a TPM"},
        {"tcglog", cmd_tcglog, "parse and replay a TCG2 firmware event log"},
        {"agents", cmd_agents, "list, show, judge and retire the agents of an attestd"},
        {"policies", cmd_policies, "the policies stored in an attestd"},
        {"status", cmd_status, "attestd's readiness and a summary of its metrics"},
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: attestctl COMMAND [ARGS...]\n\n"
                   "Operator tool for attestd: inspect and verify attestation evidence offline,\n"
                   "and run a fleet through attestd's REST API.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
                fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
        fprintf(f,
                "\nOptions:\n"
                "  -h, --help     this text\n"
                "  --version      the version\n"
                "  --url, --ca, --token-file, --timeout, --json, --full: the connection and\n"
                "                 output options of agents, policies and status, taken before\n"
                "                 the command too\n"
                "\nRun 'attestctl COMMAND --help' for a command's options. See attestctl(1).\n"
                "Exit status: 0 ok, 1 a verdict or check failed, 2 usage or a local file;\n"
                "the remote commands also 3 not found, 4 not authorised, 5 conflict, 6 server\n"
                "error or a refused answer, 7 attestd not reached (connection, TLS, timeout).\n");
}

/* The options of the remote commands that may come before the command: 1 with an argument
 * (unless given as --opt=VALUE), 0 without, -1 not one of them. */
static int global_opt(const char *a)
{
        static const char *const with[] = {"--url", "--ca", "--token-file", "--timeout"};
        static const char *const without[] = {"--json", "--full"};

        for (size_t i = 0; i < ARRAY_SIZE(with); i++) {
                size_t n = strlen(with[i]);

                if (strncmp(a, with[i], n) == 0 && (a[n] == '\0' || a[n] == '='))
                        return a[n] == '=' ? 0 : 1;
        }
        for (size_t i = 0; i < ARRAY_SIZE(without); i++)
                if (strcmp(a, without[i]) == 0)
                        return 0;
        return -1;
}

/*
 * attestctl [OPTIONS] COMMAND ...: the connection and output options before a remote command
 * are moved after its own arguments (before a "--" among them), where its getopt takes them.
 * Returns the new argv (argv itself when there are none), NULL on a usage error (printed).
 */
static char **hoist(int argc, char **argv, int *ret_argc)
{
        int i = 1, nopt, cmd, dd, o = 0;
        char **v;

        while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--help") != 0 &&
               strcmp(argv[i], "-h") != 0 && strcmp(argv[i], "--version") != 0) {
                int k = global_opt(argv[i]);

                if (k < 0) {
                        fprintf(stderr, "attestctl: unknown option '%s' before the command\n",
                                argv[i]);
                        return NULL;
                }
                if (k && i + 1 >= argc) {
                        fprintf(stderr, "attestctl: %s needs a value\n", argv[i]);
                        return NULL;
                }
                i += 1 + k;
        }
        *ret_argc = argc;
        if (i == 1)
                return argv;
        nopt = i - 1;
        cmd = i;
        if (cmd >= argc) {
                fprintf(stderr, "attestctl: a command after the options\n");
                return NULL;
        }
        if (strcmp(argv[cmd], "agents") != 0 && strcmp(argv[cmd], "policies") != 0 &&
            strcmp(argv[cmd], "status") != 0) {
                fprintf(stderr,
                        "attestctl: options before '%s': only the remote commands "
                        "(agents, policies, status) take them there\n",
                        argv[cmd]);
                return NULL;
        }
        for (dd = cmd; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
                ;
        if (!(v = calloc((size_t)argc + 1, sizeof(*v))))
                return NULL;
        v[o++] = argv[0];
        for (int k = cmd; k < dd; k++)
                v[o++] = argv[k];
        for (int k = 1; k <= nopt; k++)
                v[o++] = argv[k];
        for (int k = dd; k < argc; k++)
                v[o++] = argv[k];
        return v;
}

static int run(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("attestctl %s\n", ATTEST_VERSION);
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
                if (strcmp(argv[1], cmds[i].name) == 0)
                        return cmds[i].run(argc - 1, argv + 1);
        fprintf(stderr, "attestctl: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
}

int main(int argc, char **argv)
{
        char **hv = argc >= 2 && argv[1][0] == '-' ? hoist(argc, argv, &argc) : argv;
        int x;

        if (!hv)
                return CTL_EXIT_USAGE;
        x = run(argc, hv);
        if (hv != argv)
                free(hv);
        return x;
}
