/* SPDX-License-Identifier: MIT */
#ifndef ATTESTCTL_H
#define ATTESTCTL_H

#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

/* Each sub-command: argv[0] is its own name; returns the process exit status. */
int cmd_ima(int argc, char **argv);
int cmd_quote(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_tpm(int argc, char **argv);
int cmd_agents(int argc, char **argv);
int cmd_policies(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_tcglog(int argc, char **argv);

/*
 * Read a whole regular file (at most max bytes, util/file.h) into a new buffer, NUL terminated
 * (not counted in *ret_len); prints the error itself.
 */
int ctl_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len);

#endif
