/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/esc.h"
#include "util/log.h"
#include "util/num.h"

const char *log_escape(const char *s, size_t n, char *out, size_t max)
{
        esc_text(out, max, s, strnlen(s, n));
        return out;
}

static int clamp_prio(int prio)
{
        return prio < LOG_PRIO_ERR ? LOG_PRIO_ERR : prio > LOG_PRIO_DEBUG ? LOG_PRIO_DEBUG : prio;
}

static const char *const prio_name[] = {"error", "warning", "notice", "info", "debug"};

/* "2026-12-05T19:04:05.123Z " (UTC, milliseconds): 25 bytes and the NUL */
static void time_prefix(char out[32])
{
        struct timespec ts;
        struct tm tm;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tm) ||
            !strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm)) {
                snprintf(out, 32, "1970-01-01T00:00:00.000Z ");
                return;
        }
        snprintf(out + 19, 32 - 19, ".%03dZ ", (int)(ts.tv_nsec / 1000000));
}

size_t log_format(int prio, int style, const char *msg, char *out, size_t max)
{
        const char *pre = "";
        char p[64];
        size_t o, room;

        if (max < 2) {
                if (max)
                        out[0] = '\0';
                return 0;
        }
        prio = clamp_prio(prio);
        if (style == LOG_STYLE_JOURNAL) {
                snprintf(p, sizeof(p), "<%d>", prio);
                pre = p;
        } else if (style == LOG_STYLE_TIME) {
                time_prefix(p);
                snprintf(p + strlen(p), sizeof(p) - strlen(p),
                         "%s: ", prio_name[prio - LOG_PRIO_ERR]);
                pre = p;
        } else if (prio == LOG_PRIO_ERR) {
                pre = "error: ";
        } else if (prio == LOG_PRIO_WARNING) {
                pre = "warning: ";
        }
        o = strnlen(pre, max - 2);
        memcpy(out, pre, o);
        /* the message, at most LOG_LINE_MAX bytes, then the newline */
        room = max - 1 - o;
        if (room > LOG_LINE_MAX + 1)
                room = LOG_LINE_MAX + 1;
        o += esc_line(out + o, room, msg, strlen(msg));
        out[o++] = '\n';
        out[o] = '\0';
        return o;
}

/*
 * Whether stderr is the journal's stream: $JOURNAL_STREAM ("DEV:INODE", set by systemd for
 * StandardError=journal) names the very file stderr is (sd-daemon(3), systemd.exec(5)); a child
 * whose stderr was redirected inherits the variable but not the stream.
 */
static bool stderr_is_journal(void)
{
        const char *js = getenv("JOURNAL_STREAM"), *colon;
        uint64_t dev, ino;
        struct stat st;

        /* two decimal numbers by util/num.h's strict rule (sscanf would take signs, blanks and
         * wrap an overflow) */
        if (!js || !(colon = strchr(js, ':')) ||
            num_u64(js, (size_t)(colon - js), 0, UINT64_MAX, &dev) < 0 ||
            num_u64(colon + 1, strlen(colon + 1), 0, UINT64_MAX, &ino) < 0)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

int log_style(void)
{
        const char *f = getenv("ATTEST_LOG_FORMAT");

        if (f && !strcmp(f, "journal"))
                return LOG_STYLE_JOURNAL;
        if (f && !strcmp(f, "time"))
                return LOG_STYLE_TIME;
        if (f && !strcmp(f, "terminal"))
                return LOG_STYLE_TERMINAL;
        if (stderr_is_journal())
                return LOG_STYLE_JOURNAL;
        return isatty(STDERR_FILENO) ? LOG_STYLE_TERMINAL : LOG_STYLE_TIME;
}

void log_msg(int prio, const char *fmt, ...)
{
        char msg[LOG_LINE_MAX + 1], line[LOG_LINE_MAX + 48];
        int saved = errno;
        size_t len, off = 0;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n < 0)
                snprintf(msg, sizeof(msg), "(unformattable message)");
        else if ((size_t)n >= sizeof(msg))
                memcpy(msg + sizeof(msg) - 4, "...", 4); /* cut by vsnprintf: say so */
        len = log_format(prio, log_style(), msg, line, sizeof(line));
        while (off < len) {
                ssize_t w = write(STDERR_FILENO, line + off, len - off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break; /* nowhere else to say it */
                off += (size_t)w;
        }
        errno = saved;
}

/* "user NAME (uid N)" or "uid N" of id, and the same for a group. */
static void user_text(uid_t uid, char *out, size_t max)
{
        struct passwd pw, *r = NULL;
        char buf[1024];

        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &r) == 0 && r)
                snprintf(out, max, "%.64s", r->pw_name);
        else
                snprintf(out, max, "%u", (unsigned)uid);
}

static void group_text(gid_t gid, char *out, size_t max)
{
        struct group gr, *r = NULL;
        char buf[1024];

        if (getgrgid_r(gid, &gr, buf, sizeof(buf), &r) == 0 && r)
                snprintf(out, max, "%.64s", r->gr_name);
        else
                snprintf(out, max, "%u", (unsigned)gid);
}

const char *log_access_hint(const char *path, bool secret, char *out, size_t max)
{
        char user[80], group[80], owner[80], ogroup[80], dir[4096], *slash;
        struct stat st;
        size_t n;

        if (max == 0)
                return out;
        user_text(geteuid(), user, sizeof(user));
        group_text(getegid(), group, sizeof(group));
        n = (size_t)snprintf(out, max, "%s runs as user %s (uid %u), group %s (gid %u)",
                             program_invocation_short_name, user, (unsigned)geteuid(), group,
                             (unsigned)getegid());
        if (n >= max)
                return out;
        /* a directory on the way it may not search comes first */
        snprintf(dir, sizeof(dir), "%s", path);
        while ((slash = strrchr(dir, '/')) && slash != dir) {
                *slash = '\0';
                if (access(dir, X_OK) < 0 && errno == EACCES) {
                        if (stat(dir, &st) == 0) {
                                user_text(st.st_uid, owner, sizeof(owner));
                                group_text(st.st_gid, ogroup, sizeof(ogroup));
                                snprintf(out + n, max - n,
                                         "; it cannot enter the directory %s (%s:%s %04o): it "
                                         "needs x for it (e.g. group %s, mode 0750)",
                                         dir, owner, ogroup, (unsigned)(st.st_mode & 07777), group);
                        } else {
                                snprintf(out + n, max - n, "; it cannot enter the directory %s",
                                         dir);
                        }
                        return out;
                }
        }
        if (stat(path, &st) < 0) {
                snprintf(out + n, max - n, "; %s must be readable by it", path);
                return out;
        }
        user_text(st.st_uid, owner, sizeof(owner));
        group_text(st.st_gid, ogroup, sizeof(ogroup));
        if (secret)
                snprintf(out + n, max - n,
                         "; the file is %s:%s %04o: a secret must be owned by %s, mode 0600 "
                         "(chown %s: FILE; chmod 0600 FILE)",
                         owner, ogroup, (unsigned)(st.st_mode & 07777), user, user);
        else
                snprintf(out + n, max - n,
                         "; the file is %s:%s %04o: it must be readable by %s (e.g. group %s, "
                         "mode 0640: chgrp %s FILE; chmod 0640 FILE)",
                         owner, ogroup, (unsigned)(st.st_mode & 07777), user, group, group);
        return out;
}
