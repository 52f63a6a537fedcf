/* SPDX-License-Identifier: MIT */
/*
 * util/file: capped whole-file reads. Caps at max - 1, max, max + 1 through both APIs; only
 * regular files (a FIFO must not hang the reader); the secret mode check; files whose size from
 * fstat() is wrong (/proc says 0, sysfs says 4096) read as they are, in several short reads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/testutil.h"
#include "util/file.h"

static char dir[] = "/tmp/test-file-XXXXXX";

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

/* dir/name with n bytes of c, mode m; the path in a static buffer */
static const char *mkfile(const char *name, size_t n, char c, mode_t m)
{
        static char path[256];
        char *b = malloc(n + 1);
        int fd;

        ck_assert_ptr_nonnull(b);
        memset(b, c, n);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
        ck_assert_int_eq(fchmod(fd, m), 0);
        close(fd);
        free(b);
        return path;
}

START_TEST(test_file_reads_whole_file_nul_terminated)
{
        struct attest_err err = {0};
        const char *p = mkfile("a", 5000, 'a', 0644);
        char *buf = NULL, small[8000];
        size_t len = 0;

        ck_assert_int_eq(file_read_alloc(p, 1 << 20, 0, &buf, &len, &err), 0);
        ck_assert_uint_eq(len, 5000);
        ck_assert_uint_eq(strlen(buf), 5000);
        free(buf);
        ck_assert_int_eq(file_read(p, small, sizeof(small), 0, &len, &err), 0);
        ck_assert_uint_eq(len, 5000);
        ck_assert_int_eq(small[4999], 'a');
        /* empty file */
        p = mkfile("e", 0, 'a', 0644);
        ck_assert_int_eq(file_read_alloc(p, 10, 0, &buf, &len, &err), 0);
        ck_assert_uint_eq(len, 0);
        ck_assert_int_eq(buf[0], '\0');
        free(buf);
        /* missing file: the errno, and the path in the message */
        snprintf(small, sizeof(small), "%s/missing", dir);
        ck_assert_int_eq(file_read_alloc(small, 10, 0, &buf, &len, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
        ck_assert_int_eq(err.code, AE_FILE);
}
END_TEST

START_TEST(test_file_cap_at_max_minus_one_max_and_plus_one)
{
        const size_t max = 70000; /* past the 4096 first guess and one doubling */

        for (int d = -1; d <= 1; d++) {
                struct attest_err err = {0};
                const char *p = mkfile("cap", max + d, 'x', 0644);
                char *buf = (char *)"untouched", *storage = malloc(max);
                size_t len = 12345;
                int want = d <= 0 ? 0 : -E2BIG;

                ck_assert_int_eq(file_read_alloc(p, max, 0, &buf, &len, &err), want);
                if (d <= 0) {
                        ck_assert_uint_eq(len, max + d);
                        free(buf);
                } else {
                        ck_assert_str_eq(buf, "untouched");
                        ck_assert_uint_eq(len, 12345);
                        ck_assert_ptr_nonnull(strstr(err.msg, "larger than 70000 bytes"));
                }
                len = 12345;
                ck_assert_int_eq(file_read(p, storage, max, 0, &len, &err), want);
                ck_assert_uint_eq(len, d <= 0 ? max + d : 12345);
                free(storage);
        }
}
END_TEST

START_TEST(test_file_refuses_what_is_not_a_regular_file)
{
        struct attest_err err = {0};
        char fifo[256], *buf = NULL, small[16];
        size_t len;

        /* a FIFO without a writer: refused at once, not waited on */
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(file_read_alloc(fifo, 100, 0, &buf, &len, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
        ck_assert_int_eq(file_read(fifo, small, sizeof(small), 0, &len, &err), -EINVAL);
        /* a device that never ends, and a directory */
        ck_assert_int_eq(file_read_alloc("/dev/zero", 100, 0, &buf, &len, &err), -EINVAL);
        ck_assert_int_eq(file_read_alloc("/dev/null", 100, 0, &buf, &len, &err), -EINVAL);
        ck_assert_int_eq(file_read_alloc(dir, 100, 0, &buf, &len, &err), -EINVAL);
        ck_assert_ptr_null(buf);
}
END_TEST

START_TEST(test_file_secret_refuses_group_or_other_access)
{
        static const mode_t bad[] = {0640, 0604, 0620, 0602, 0610, 0601, 0660, 0644};
        struct attest_err err = {0};
        char *buf = NULL;
        size_t len;

        ck_assert_int_eq(
                file_read_alloc(mkfile("k", 32, 'k', 0600), 100, FILE_SECRET, &buf, &len, &err), 0);
        buf = file_free_secret(buf, len);
        ck_assert_int_eq(
                file_read_alloc(mkfile("k", 32, 'k', 0400), 100, FILE_SECRET, &buf, &len, &err), 0);
        buf = file_free_secret(buf, len);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char want[32];

                ck_assert_int_eq(file_read_alloc(mkfile("k", 32, 'k', bad[i]), 100, FILE_SECRET,
                                                 &buf, &len, &err),
                                 -EPERM);
                snprintf(want, sizeof(want), "mode %04o", (unsigned)bad[i]);
                ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "chmod 600"), "%s", err.msg);
                ck_assert_ptr_null(buf);
                /* the same file is fine when it is not a secret */
                ck_assert_int_eq(
                        file_read_alloc(mkfile("k", 32, 'k', bad[i]), 100, 0, &buf, &len, &err), 0);
                buf = file_free_secret(buf, len);
        }
}
END_TEST

START_TEST(test_file_secret_failure_wipes_the_caller_buffer)
{
        struct attest_err err = {0};
        char storage[64];
        size_t len = 0;

        memset(storage, '.', sizeof(storage));
        ck_assert_int_eq(file_read(mkfile("big", sizeof(storage) + 1, 'S', 0600), storage,
                                   sizeof(storage), FILE_SECRET, &len, &err),
                         -E2BIG);
        ck_assert_ptr_null(memchr(storage, 'S', sizeof(storage)));
}
END_TEST

START_TEST(test_file_size_from_fstat_is_only_a_hint)
{
        struct attest_err err = {0};
        struct stat st;
        char *buf = NULL;
        size_t len;

        /* /proc says 0 bytes and holds more, handed out a page or less per read() */
        ck_assert_int_eq(stat("/proc/self/smaps", &st), 0);
        ck_assert_int_eq(st.st_size, 0);
        ck_assert_int_eq(file_read_alloc("/proc/self/smaps", 64 << 20, 0, &buf, &len, &err), 0);
        ck_assert_uint_gt(len, 16384);
        ck_assert_uint_eq(strlen(buf), len);
        ck_assert_int_eq(buf[len - 1], '\n');
        free(buf);
        /* ... and the cap holds against it */
        ck_assert_int_eq(file_read_alloc("/proc/self/smaps", 5000, 0, &buf, &len, &err), -E2BIG);
        /* sysfs says 4096 and holds a few bytes */
        ck_assert_int_eq(stat("/sys/devices/system/cpu/online", &st), 0);
        ck_assert_int_eq(st.st_size, 4096);
        ck_assert_int_eq(
                file_read_alloc("/sys/devices/system/cpu/online", 100, 0, &buf, &len, &err), 0);
        ck_assert_uint_lt(len, 100);
        ck_assert_int_eq(buf[len - 1], '\n');
        free(buf);
}
END_TEST

START_TEST(test_file_reads_from_an_fd_at_its_offset)
{
        struct attest_err err = {0};
        int fd = open(mkfile("fd", 100, 'f', 0600), O_RDONLY | O_CLOEXEC);
        char *buf = NULL;
        size_t len;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(lseek(fd, 40, SEEK_SET), 40);
        ck_assert_int_eq(file_read_alloc_fd(fd, "fd", 100, FILE_SECRET, &buf, &len, &err), 0);
        ck_assert_uint_eq(len, 60);
        file_free_secret(buf, len);
        close(fd);
}
END_TEST

static Suite *file_suite(void)
{
        Suite *s = suite_create("file");
        TCase *tc = tcase_create("file");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_file_reads_whole_file_nul_terminated);
        tcase_add_test(tc, test_file_cap_at_max_minus_one_max_and_plus_one);
        tcase_add_test(tc, test_file_refuses_what_is_not_a_regular_file);
        tcase_add_test(tc, test_file_secret_refuses_group_or_other_access);
        tcase_add_test(tc, test_file_secret_failure_wipes_the_caller_buffer);
        tcase_add_test(tc, test_file_size_from_fstat_is_only_a_hint);
        tcase_add_test(tc, test_file_reads_from_an_fd_at_its_offset);
        tcase_set_timeout(tc, 20);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(file_suite());
}
