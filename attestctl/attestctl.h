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

/* Read a whole file (at most max bytes) into a new buffer; prints the error itself. */
int ctl_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len);

#endif
