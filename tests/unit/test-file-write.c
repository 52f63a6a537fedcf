/* SPDX-License-Identifier: MIT */
/*
 * util/file: atomic whole-file writes. The content and mode land; a failure (from the source, from
 * fsync) leaves the target as it was and no temporary file behind; a symlinked target is refused
 * and the file it points to untouched; a stale temporary file from a crash is not followed; the
 * file is fsync()ed before the rename and the directory after it. fsync is wrapped
 * (-Wl,--wrap=fsync, tests/unit/meson.build) so the test sees each call and can make one fail.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/testutil.h"
#include "util/file.h"

int __real_fsync(int fd);
int __wrap_fsync(int fd);

static char dir[] = "/tmp/test-file-write-XXXXXX";

/* What __wrap_fsync saw and what it is told to do */
static struct {
        unsigned files, dirs; /* calls on a regular file, on a directory */
        char seen_at_dir[64]; /* the target's content when the directory was synced */
        const char *target;   /* the path read into seen_at_dir */
        int fail_file;        /* errno to fail a regular file's fsync with, 0 none */
        unsigned eintr;       /* fail this many calls with EINTR first */
} fs;

int __wrap_fsync(int fd)
{
        struct stat st;

        if (fs.eintr) {
                fs.eintr--;
                errno = EINTR;
                return -1;
        }
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                fs.dirs++;
                if (fs.target) {
                        int t = open(fs.target, O_RDONLY | O_CLOEXEC);
                        ssize_t n =
                                t < 0 ? -1 : read(t, fs.seen_at_dir, sizeof(fs.seen_at_dir) - 1);

                        fs.seen_at_dir[n > 0 ? n : 0] = '\0';
                        if (t >= 0)
                                close(t);
                }
        } else {
                fs.files++;
                if (fs.fail_file) {
                        errno = fs.fail_file;
                        return -1;
                }
        }
        return __real_fsync(fd);
}

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        memset(&fs, 0, sizeof(fs));
}

static void teardown(void)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static const char *path_of(const char *name)
{
        static char p[4][256];
        static unsigned i;

        i = (i + 1) % 4;
        snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
        return p[i];
}

/* The whole file at path as a NUL-terminated string in a static buffer ("" when absent). */
static const char *slurp(const char *path)
{
        static char b[70000];
        ssize_t n = 0, r;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return "";
        while ((r = read(fd, b + n, sizeof(b) - 1 - (size_t)n)) > 0)
                n += r;
        close(fd);
        b[n] = '\0';
        return b;
}

/* How many entries the directory holds besides . and .. */
static unsigned entries(void)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        unsigned n = 0;

        ck_assert_ptr_nonnull(d);
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

static int write_str(const char *path, const char *s, mode_t mode, struct attest_err *err)
{
        struct file_bytes b = FILE_BYTES(s, strlen(s));

        return file_write_atomic(path, mode, file_bytes_read, &b, err);
}

START_TEST(test_file_write_content_mode_and_replace)
{
        struct attest_err err = {0};
        const char *p = path_of("id");
        struct stat st;

        umask(022);
        ck_assert_int_eq(write_str(p, "first", 0640, &err), 0);
        ck_assert_str_eq(slurp(p), "first");
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0640);
        /* replaced whole, shorter than before, mode of the new write */
        ck_assert_int_eq(write_str(p, "2nd", 0600, &err), 0);
        ck_assert_str_eq(slurp(p), "2nd");
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        /* the umask still applies, as with open() */
        ck_assert_int_eq(write_str(p, "x", 0666, &err), 0);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0644);
        ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* A source larger than the internal buffer, in pieces: every byte lands, in order. */
START_TEST(test_file_write_large_source_whole)
{
        static char big[65537];
        struct attest_err err = {0};
        const char *p = path_of("big");

        for (size_t i = 0; i < sizeof(big) - 1; i++)
                big[i] = (char)('a' + i % 26);
        ck_assert_int_eq(write_str(p, big, 0600, &err), 0);
        ck_assert_str_eq(slurp(p), big);
}
END_TEST

/* The file is synced before the rename, the directory after it (the new content is in place). */
START_TEST(test_file_write_fsyncs_file_then_directory)
{
        struct attest_err err = {0};
        const char *p = path_of("ak.pub");

        ck_assert_int_eq(write_str(p, "old", 0600, &err), 0);
        memset(&fs, 0, sizeof(fs));
        fs.target = p;
        ck_assert_int_eq(write_str(p, "new", 0600, &err), 0);
        ck_assert_uint_eq(fs.files, 1);
        ck_assert_uint_eq(fs.dirs, 1);
        ck_assert_str_eq(fs.seen_at_dir, "new");
}
END_TEST

START_TEST(test_file_write_retries_eintr)
{
        struct attest_err err = {0};
        const char *p = path_of("id");

        fs.eintr = 2;
        ck_assert_int_eq(write_str(p, "abc", 0600, &err), 0);
        ck_assert_str_eq(slurp(p), "abc");
        ck_assert_uint_eq(fs.eintr, 0);
        ck_assert_uint_eq(fs.files, 1);
        ck_assert_uint_eq(fs.dirs, 1);
}
END_TEST

START_TEST(test_file_write_fsync_failure_leaves_target_and_no_temp)
{
        struct attest_err err = {0};
        const char *p = path_of("id");

        ck_assert_int_eq(write_str(p, "kept", 0600, &err), 0);
        fs.fail_file = EIO;
        ck_assert_int_eq(write_str(p, "lost", 0600, &err), -EIO);
        ck_assert_int_eq(err.code, AE_FILE);
        ck_assert_ptr_nonnull(strstr(err.msg, p));
        ck_assert_str_eq(slurp(p), "kept");
        ck_assert_uint_eq(entries(), 1);
}
END_TEST

static ssize_t failing_source(void *ctx, uint8_t *buf, size_t n, struct attest_err *err)
{
        unsigned *calls = ctx;

        if ((*calls)++ == 0) {
                memset(buf, 'z', n < 10 ? n : 10);
                return n < 10 ? (ssize_t)n : 10;
        }
        return attest_fail(err, -EBADMSG, AE_IMA_TRUNCATED, "source broke");
}

/* The source's own error and code come back; the half-written temporary file is gone. */
START_TEST(test_file_write_source_failure_leaves_no_temp)
{
        struct attest_err err = {0};
        unsigned calls = 0;

        ck_assert_int_eq(file_write_atomic(path_of("dump"), 0644, failing_source, &calls, &err),
                         -EBADMSG);
        ck_assert_int_eq(err.code, AE_IMA_TRUNCATED);
        ck_assert_str_eq(err.msg, "source broke");
        ck_assert_uint_eq(entries(), 0);
        ck_assert_uint_eq(fs.dirs, 0);
}
END_TEST

/* A target that is a symlink is refused; neither the link nor what it points to changes. */
START_TEST(test_file_write_refuses_symlinked_target)
{
        struct attest_err err = {0};
        const char *victim = path_of("victim"), *link = path_of("id");
        char buf[256];
        ssize_t n;

        ck_assert_int_eq(write_str(victim, "victim", 0600, &err), 0);
        ck_assert_int_eq(symlink(victim, link), 0);
        ck_assert_int_eq(write_str(link, "attacker", 0600, &err), -ELOOP);
        ck_assert_int_eq(err.code, AE_FILE);
        ck_assert_str_eq(slurp(victim), "victim");
        n = readlink(link, buf, sizeof(buf) - 1);
        ck_assert_int_gt(n, 0);
        buf[n] = '\0';
        ck_assert_str_eq(buf, victim);
        ck_assert_uint_eq(entries(), 2);
}
END_TEST

/* A stale temporary file (here a symlink planted where it goes) is removed, not written through. */
START_TEST(test_file_write_stale_temp_not_followed)
{
        struct attest_err err = {0};
        const char *victim = path_of("victim"), *p = path_of("id");

        ck_assert_int_eq(write_str(victim, "victim", 0600, &err), 0);
        ck_assert_int_eq(symlink(victim, path_of(".id.tmp")), 0);
        ck_assert_int_eq(write_str(p, "mine", 0600, &err), 0);
        ck_assert_str_eq(slurp(p), "mine");
        ck_assert_str_eq(slurp(victim), "victim");
        ck_assert_uint_eq(entries(), 2);
}
END_TEST

/* The dirfd form takes one path component; the path form works relative to the cwd. */
START_TEST(test_file_write_at_and_relative)
{
        struct attest_err err = {0};
        struct file_bytes b = FILE_BYTES("at", 2);
        char cwd[4096];
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(dfd, 0);
        ck_assert_int_eq(file_write_atomic_at(dfd, "ak.priv", 0600, file_bytes_read, &b, &err), 0);
        ck_assert_str_eq(slurp(path_of("ak.priv")), "at");
        b = FILE_BYTES("at", 2);
        ck_assert_int_eq(file_write_atomic_at(dfd, "a/b", 0600, file_bytes_read, &b, &err),
                         -EINVAL);
        ck_assert_int_eq(file_write_atomic_at(dfd, "", 0600, file_bytes_read, &b, &err), -EINVAL);
        close(dfd);
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        ck_assert_int_eq(chdir(dir), 0);
        ck_assert_int_eq(write_str("rel", "rel", 0600, &err), 0);
        ck_assert_int_eq(chdir(cwd), 0);
        ck_assert_str_eq(slurp(path_of("rel")), "rel");
        ck_assert_int_eq(write_str(path_of("nodir/x"), "x", 0600, &err), -ENOENT);
        ck_assert_uint_eq(entries(), 2);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("file-write");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_file_write_content_mode_and_replace);
        tcase_add_test(tc, test_file_write_large_source_whole);
        tcase_add_test(tc, test_file_write_fsyncs_file_then_directory);
        tcase_add_test(tc, test_file_write_retries_eintr);
        tcase_add_test(tc, test_file_write_fsync_failure_leaves_target_and_no_temp);
        tcase_add_test(tc, test_file_write_source_failure_leaves_no_temp);
        tcase_add_test(tc, test_file_write_refuses_symlinked_target);
        tcase_add_test(tc, test_file_write_stale_temp_not_followed);
        tcase_add_test(tc, test_file_write_at_and_relative);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(suite());
}
