/* SPDX-License-Identifier: MIT */
/*
 * Logging for main.c and the HTTP handlers only (STYLE "Logging"): one line per event on stderr
 * with an sd-daemon priority prefix, no timestamps. Agent-supplied text goes through log_escape().
 */
#ifndef ATTESTD_LOG_H
#define ATTESTD_LOG_H

#include <stddef.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "util/macro.h"

#define log_err(...) log_line(SD_ERR, __VA_ARGS__)
#define log_warning(...) log_line(SD_WARNING, __VA_ARGS__)
#define log_notice(...) log_line(SD_NOTICE, __VA_ARGS__)
#define log_info(...) log_line(SD_INFO, __VA_ARGS__)
#define log_debug(...) log_line(SD_DEBUG, __VA_ARGS__)

/* prefix is one of SD_ERR ... SD_DEBUG ("<3>" ...); journald filters by priority. */
void log_line(const char *prefix, const char *fmt, ...) _printf_(2, 3);

/*
 * Copy at most n bytes of untrusted s into out (max bytes, NUL terminated): printable ASCII as is,
 * everything else as \xHH, truncated with "..." when it does not fit. Returns out.
 */
const char *log_escape(const char *s, size_t n, char *out, size_t max);

#endif
