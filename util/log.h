/* SPDX-License-Identifier: MIT */
/*
 * The one logger of attestd, attest-agent and attestctl (STYLE "Logging"): only main.c, HTTP
 * handlers and the agent loop log; libraries return errors.
 *
 * One line per event on stderr, written with one write() so threads do not interleave. Three
 * forms, chosen per line by where stderr goes (log_style()):
 *   - the journal ($JOURNAL_STREAM names stderr's device and inode, as systemd sets it): the
 *     priority as an sd-daemon prefix, "<3>" (err) to "<7>" (debug), which journald turns into the
 *     entry's priority, and no time (journald adds it);
 *   - a terminal: "error: ", "warning: " or nothing, no time;
 *   - anything else (a file such as `2>>attestd.log`, a pipe): the UTC time in ISO 8601 with
 *     milliseconds and the priority's name, "2026-12-05T19:04:05.123Z info: ...".
 * $ATTEST_LOG_FORMAT = journal, time or terminal forces one form (a log collector that reads
 * sd-daemon prefixes from a pipe; the test suite). err = failed, warning = continuing, notice =
 * verdict changed, info = lifecycle, debug = the rest. There is no level threshold in the program:
 * filter in the unit (LogLevelMax=) or with journalctl -p.
 *
 * Hostile text: every control byte of the formatted line (a '\n' followed by "<0>" would forge a
 * journal entry) is written as \xHH, and a line longer than LOG_LINE_MAX ends in "...". Strings
 * from agents or files should still go through log_escape() so they cannot pass for our words.
 *
 * Secrets: there is deliberately no API that takes a key, a token or a nonce: never pass them to
 * log_*() (not even in part); log what they are for (the file, the agent id), not what they hold.
 */
#ifndef ATTEST_LOG_H
#define ATTEST_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

/* syslog(3) priorities, as journald reads them from the sd-daemon prefix */
#define LOG_PRIO_ERR 3
#define LOG_PRIO_WARNING 4
#define LOG_PRIO_NOTICE 5
#define LOG_PRIO_INFO 6
#define LOG_PRIO_DEBUG 7

/* the forms of a line (log_format's style) */
#define LOG_STYLE_TERMINAL 0
#define LOG_STYLE_JOURNAL 1
#define LOG_STYLE_TIME 2

#define LOG_LINE_MAX 1024 /* bytes of one message after escaping, without prefix and newline */

#define log_err(...) log_msg(LOG_PRIO_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_PRIO_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_PRIO_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_PRIO_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_PRIO_DEBUG, __VA_ARGS__)

/* prio LOG_PRIO_ERR ... LOG_PRIO_DEBUG (clamped into that range). */
void log_msg(int prio, const char *fmt, ...) _printf_(2, 3);

/*
 * The line log_msg() would write for prio and msg in style (LOG_STYLE_*; TIME reads the clock)
 * into out (max bytes, NUL terminated, newline included); its length. For tests and for writers
 * to other fds.
 */
size_t log_format(int prio, int style, const char *msg, char *out, size_t max);

/* The form log_msg() uses now: LOG_STYLE_* from $ATTEST_LOG_FORMAT and stderr (see above). */
int log_style(void);

/*
 * Copy at most n bytes of untrusted s into out (max bytes, NUL terminated): printable ASCII as is,
 * everything else (and '\\') as \xHH, truncated with "..." when it does not fit. Returns out.
 */
const char *log_escape(const char *s, size_t n, char *out, size_t max);

/*
 * Why this process may not read path (after an open failed with EACCES), for a log line: the
 * user and group it runs as, the directory on the way it cannot enter or the file's owner and
 * mode, and what it needs (secret: owned by that user, mode 0600; else readable by its group,
 * 0640). Into out (max bytes, NUL terminated); returns out. No "see --help": not a usage error.
 */
const char *log_access_hint(const char *path, bool secret, char *out, size_t max);

#endif
