/* SPDX-License-Identifier: MIT */
/*
 * util/log: the sd-daemon prefix on stderr (a file or pipe, the journal) and its absence on a
 * terminal; control bytes escaped so a message cannot forge a second journal line; the message cap
 * at LOG_LINE_MAX - 1, LOG_LINE_MAX and + 1; log_escape() for agent-supplied strings.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

START_TEST(test_log_prefix_on_a_pipe_and_one_line_per_message)
{
        char out[4096];
        int p[2];

        unsetenv("JOURNAL_STREAM");
        ck_assert_int_eq(pipe(p), 0);
        capture(p[1], p[0], say_forged, out, sizeof(out));
        ck_assert_str_eq(out, "<3>agent x\\x0a<0>forged failed\n<6>second\n");
        close(p[0]);
        close(p[1]);
}
END_TEST

static void say_warning(void)
{
        log_warning("disk %d%% full", 91);
        log_debug("dbg");
}

START_TEST(test_log_no_prefix_on_a_terminal_unless_journal)
{
        char out[4096];
        int m, s;

        m = posix_openpt(O_RDWR | O_NOCTTY);
        ck_assert_int_ge(m, 0);
        ck_assert_int_eq(grantpt(m), 0);
        ck_assert_int_eq(unlockpt(m), 0);
        s = open(ptsname(m), O_RDWR | O_NOCTTY);
        ck_assert_int_ge(s, 0);
        unsetenv("JOURNAL_STREAM");
        capture(s, m, say_warning, out, sizeof(out));
        ck_assert_str_eq(out, "warning: disk 91% full\r\ndbg\r\n");
        setenv("JOURNAL_STREAM", "8:1234", 1);
        capture(s, m, say_warning, out, sizeof(out));
        ck_assert_str_eq(out, "<4>disk 91% full\r\n<7>dbg\r\n");
        unsetenv("JOURNAL_STREAM");
        close(s);
        close(m);
}
END_TEST

START_TEST(test_log_format_caps_the_message)
{
        char msg[LOG_LINE_MAX + 2], line[LOG_LINE_MAX + 64];

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

        tcase_add_test(tc, test_log_prefix_on_a_pipe_and_one_line_per_message);
        tcase_add_test(tc, test_log_no_prefix_on_a_terminal_unless_journal);
        tcase_add_test(tc, test_log_format_caps_the_message);
        tcase_add_test(tc, test_log_escape_untrusted_strings);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(log_suite());
}
