/* SPDX-License-Identifier: MIT */
/* attestctl: operator CLI. Sub-commands live in cmd-*.c; this file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "attestctl/attestctl.h"

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
        fprintf(f, "\nOptions:\n"
                   "  -h, --help     this text\n"
                   "  --version      the version\n"
                   "\nRun 'attestctl COMMAND --help' for a command's options. See attestctl(1).\n"
                   "Exit status: 0 ok, 1 a verdict or check failed, 2 usage, file or network "
                   "errors.\n");
}

int main(int argc, char **argv)
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
