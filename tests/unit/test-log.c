/* SPDX-License-Identifier: MIT */
/*
 * util/log: the sd-daemon prefix when stderr is the journal's stream ($JOURNAL_STREAM naming its
 * device and inode), an ISO 8601 UTC time and the priority's name on a file or pipe, neither on a
 * terminal; $ATTEST_LOG_FORMAT; control bytes escaped so a message cannot forge a second journal
 * line; the message cap at LOG_LINE_MAX - 1, LOG_LINE_MAX and + 1; log_escape() for agent-supplied
 * strings.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/testutil.h"
#include "util/log.h"

/* Run fn with stderr on fd, restore stderr; what was read from rd (up to max - 1 bytes). */
static size_t capture(int fd, int rd, void (*fn)(void), char *out, size_t max)
{
        int saved = dup(STDERR_FILENO);
        ssize_t n = 1;
        size_t got = 0;

        ck_assert_int_ge(saved, 0);
        ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
        fn();
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        /* everything written so far, in as many reads as it takes */
        ck_assert_int_eq(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
        while (got < max - 1 && (n = read(rd, out + got, max - 1 - got)) > 0)
                got += (size_t)n;
        ck_assert(n > 0 || errno == EAGAIN);
        out[got] = '\0';
        return got;
}

static void say_forged(void)
{
        log_err("agent %s failed", "x\n<0>forged");
        log_info("second");
}

/* Whether s matches the POSIX extended regex re. */
static bool matches(const char *s, const char *re)
{
        regex_t r;
        bool m;

        ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
        m = regexec(&r, s, 0, NULL, 0) == 0;
        regfree(&r);
        return m;
}

#define ISO_UTC "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "

START_TEST(test_log_time_on_a_pipe_prefix_in_the_journal)
{
        char out[4096], js[64];
        struct stat st;
        int p[2];

        unsetenv("ATTEST_LOG_FORMAT");
        unsetenv("JOURNAL_STREAM");
        ck_assert_int_eq(pipe(p), 0);
        /* a pipe that is not the journal: time, the priority's name, one line per message */
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_msg(matches(out, "^" ISO_UTC "error: agent x\\\\x0a<0>forged failed\n" ISO_UTC
                                   "info: second\n$"),
                      "%s", out);
        /* $JOURNAL_STREAM of another stream (inherited by a child whose stderr was redirected) */
        setenv("JOURNAL_STREAM", "8:1234", 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_msg(matches(out, "^" ISO_UTC "error: "), "%s", out);
        ck_assert_msg(!matches(out, "<[0-9]>agent"), "%s", out);
        /* stderr is the stream $JOURNAL_STREAM names: the sd-daemon prefix, no time */
        ck_assert_int_eq(fstat(p[1], &st), 0);
        snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        setenv("JOURNAL_STREAM", js, 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_str_eq(out, "<3>agent x\\x0a<0>forged failed\n<6>second\n");
        /* trailing bytes: not what systemd sets, not the journal */
        snprintf(js + strlen(js), sizeof(js) - strlen(js), "x");
        setenv("JOURNAL_STREAM", js, 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_msg(matches(out, "^" ISO_UTC "error: "), "%s", out);
        /* the same numbers as a blank-led or a negative (wrapping) form: two decimal numbers
         * only, as systemd writes them (sscanf's %llu took both) */
        snprintf(js, sizeof(js), " %llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        setenv("JOURNAL_STREAM", js, 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_msg(matches(out, "^" ISO_UTC "error: "), "blank-led: %s", out);
        snprintf(js, sizeof(js), "-%llu:%llu", 0ULL - (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        setenv("JOURNAL_STREAM", js, 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_msg(matches(out, "^" ISO_UTC "error: "), "negative: %s", out);
        unsetenv("JOURNAL_STREAM");
        /* forced */
        setenv("ATTEST_LOG_FORMAT", "journal", 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_str_eq(out, "<3>agent x\\x0a<0>forged failed\n<6>second\n");
        setenv("ATTEST_LOG_FORMAT", "terminal", 1);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_str_eq(out, "error: agent x\\x0a<0>forged failed\nsecond\n");
        unsetenv("ATTEST_LOG_FORMAT");
        close(p[0]);
        close(p[1]);
}
END_TEST

static void say_warning(void)
{
        log_warning("disk %d%% full", 91);
        log_debug("dbg");
}

START_TEST(test_log_no_prefix_on_a_terminal)
{
        char out[4096];
        int m, s;

        m = posix_openpt(O_RDWR | O_NOCTTY);
        ck_assert_int_ge(m, 0);
        ck_assert_int_eq(grantpt(m), 0);
        ck_assert_int_eq(unlockpt(m), 0);
        s = open(ptsname(m), O_RDWR | O_NOCTTY);
        ck_assert_int_ge(s, 0);
        unsetenv("ATTEST_LOG_FORMAT");
        unsetenv("JOURNAL_STREAM");
        capture(s, m, say_warning, out, sizeof(out));
        ck_assert_str_eq(out, "warning: disk 91% full\r\ndbg\r\n");
        /* a $JOURNAL_STREAM that is not this terminal changes nothing */
        setenv("JOURNAL_STREAM", "8:1234", 1);
        capture(s, m, say_warning, out, sizeof(out));
        ck_assert_str_eq(out, "warning: disk 91% full\r\ndbg\r\n");
        unsetenv("JOURNAL_STREAM");
        close(s);
        close(m);
}
END_TEST

START_TEST(test_log_format_caps_the_message)
{
        char msg[LOG_LINE_MAX + 2], line[LOG_LINE_MAX + 64];
        size_t len0;

        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(LOG_LINE_MAX + d), len;

                memset(msg, 'm', n);
                msg[n] = '\0';
                len = log_format(LOG_PRIO_NOTICE, 1, msg, line, sizeof(line));
                ck_assert_int_eq(memcmp(line, "<5>", 3), 0);
                ck_assert_int_eq(line[len - 1], '\n');
                if (d <= 0) {
                        ck_assert_uint_eq(len, 3 + n + 1);
                        ck_assert_int_eq(line[len - 2], 'm');
                } else {
                        ck_assert_uint_eq(len, 3 + LOG_LINE_MAX + 1);
                        ck_assert_int_eq(memcmp(line + len - 4, "...", 3), 0);
                }
        }
        /* a priority out of range is clamped, never a "<0>" (emergency) line */
        log_format(0, 1, "x", line, sizeof(line));
        ck_assert_str_eq(line, "<3>x\n");
        log_format(9, 1, "x", line, sizeof(line));
        ck_assert_str_eq(line, "<7>x\n");
        /* escaping counts against the cap: 0x01 takes four bytes */
        memset(msg, 1, 300);
        msg[300] = '\0';
        ck_assert_uint_le(log_format(LOG_PRIO_ERR, 1, msg, line, sizeof(line)),
                          3 + LOG_LINE_MAX + 1);
        /* a small output buffer */
        ck_assert_uint_eq(log_format(LOG_PRIO_ERR, 1, "hello", line, 6), 5);
        ck_assert_str_eq(line, "<3>h\n");
        /* the time form: 25 bytes of time, the name, the message */
        len0 = log_format(LOG_PRIO_NOTICE, LOG_STYLE_TIME, "v", line, sizeof(line));
        ck_assert_uint_eq(len0, 25 + strlen("notice: v\n"));
        ck_assert_msg(matches(line, "^" ISO_UTC "notice: v\n$"), "%s", line);
}
END_TEST

START_TEST(test_log_escape_untrusted_strings)
{
        char out[16];

        ck_assert_str_eq(log_escape("a\\b\x01", 4, out, sizeof(out)), "a\\\\b\\x01");
        ck_assert_str_eq(log_escape("abc\0def", 7, out, sizeof(out)), "abc");
        /* exactly fits (15 + NUL), one more is cut with "..." */
        ck_assert_str_eq(log_escape("0123456789abcde", 15, out, sizeof(out)), "0123456789abcde");
        ck_assert_str_eq(log_escape("0123456789abcdef", 16, out, sizeof(out)), "0123456789ab...");
        ck_assert_str_eq(log_escape("\n\n\n\n", 4, out, sizeof(out)), "\\x0a\\x0a\\x0a...");
        ck_assert_str_eq(log_escape("x", 1, out, 1), "");
}
END_TEST

static Suite *log_suite(void)
{
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("log");

        tcase_add_test(tc, test_log_time_on_a_pipe_prefix_in_the_journal);
        tcase_add_test(tc, test_log_no_prefix_on_a_terminal);
        tcase_add_test(tc, test_log_format_caps_the_message);
        tcase_add_test(tc, test_log_escape_untrusted_strings);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(log_suite());
}
