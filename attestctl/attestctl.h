/* SPDX-License-Identifier: MIT */
#ifndef ATTESTCTL_H
#define ATTESTCTL_H

#include <stddef.h>
#include <stdint.h>

#include "evidence/ima.h"
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

/*
 * An IMA log as a stream (evidence/ima.h): the regular file path, or standard input for "-",
 * through a window of IMA_STREAM_WINDOW_DEFAULT bytes. 0, or -errno with the error printed
 * (naming the path). ctl_log_close() closes what ctl_log_open() opened.
 */
struct ctl_log {
        struct ima_stream s;
        int fd;
};
int ctl_log_open(const char *path, enum ima_stream_format format, const struct ima_log_opts *opts,
                 struct ctl_log *ret) _wur_;
void ctl_log_close(struct ctl_log *l);

#endif
