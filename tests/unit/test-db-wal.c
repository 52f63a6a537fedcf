/* SPDX-License-Identifier: MIT */
/*
 * The WAL write buffer of daemon/store/db-wal.c (the "attestd-wal" VFS): a commit's frames reach
 * the file in one write (or a few of at most 124 KiB), yet every commit is in the file when the
 * commit returns, whatever PRAGMA synchronous says: another connection reads it at once, and a
 * process killed right after the commit loses nothing. Transactions larger than the buffer (spilled
 * pages read back, several chunks) commit whole.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/store/db.h"
#include "tests/unit/testutil.h"

static void exec_ok(struct db *d, const char *sql)
{
        char msg[200] = "";

        ck_assert_msg(db_exec(d, sql, msg, sizeof(msg)) == 0, "%s: %s", sql, msg);
}

static struct db *open_db(const struct tu_dbdir *f, const char *sync)
{
        struct attest_err err = {0};
        struct db *d = NULL;
        char sql[128];

        ck_assert_msg(db_open(f->db, NULL, NULL, &d, &err) == 0, "%s", err.msg);
        snprintf(sql, sizeof(sql), "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s", sync);
        exec_ok(d, sql);
        return d;
}

static int64_t query_i64(struct db *d, const char *sql)
{
        struct db_stmt *st = NULL;
        int64_t v;

        ck_assert_int_eq(db_prepare(d, sql, NULL, 0, false, &st), 0);
        ck_assert_int_eq(db_step(st), DB_ROW);
        v = db_col_i64(st, 0);
        db_finalize(st);
        return v;
}

/* rows rows of 1000 random bytes in one transaction: four a page */
static void fill(struct db *d, int rows)
{
        char sql[160];

        snprintf(sql, sizeof(sql),
                 "BEGIN IMMEDIATE; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                 " WHERE i < %d) INSERT INTO t (b) SELECT randomblob(1000) FROM n; COMMIT",
                 rows);
        exec_ok(d, sql);
}

START_TEST(test_wal_commit_is_one_file_write)
{
        struct tu_dbdir f;
        struct db *d;
        uint64_t w0, f0, w1, f1;

        tu_dbdir_init(&f, "dbwal");
        d = open_db(&f, "FULL");
        exec_ok(d, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
        db_wal_stats(&w0, &f0);
        fill(d, 100);
        db_wal_stats(&w1, &f1);
        /* ~27 frames: SQLite asks for a header and a page each, the file gets one write */
        ck_assert_uint_ge(w1 - w0, 40);
        ck_assert_uint_le(f1 - f0, 2);
        ck_assert_int_eq(query_i64(d, "SELECT count(*) FROM t"), 100);
        db_close(d);
        tu_dbdir_done(&f);
}
END_TEST

/* synchronous=NORMAL: no xSync after a commit, only the commit frame's flush puts it in the file */
START_TEST(test_wal_commit_visible_to_another_connection)
{
        struct tu_dbdir f;
        struct db *w, *r;

        tu_dbdir_init(&f, "dbwal");
        w = open_db(&f, "NORMAL");
        r = open_db(&f, "NORMAL");
        exec_ok(w, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
        for (int i = 1; i <= 5; i++) {
                fill(w, 7);
                ck_assert_int_eq(query_i64(r, "SELECT count(*) FROM t"), 7 * i);
                ck_assert_int_eq(query_i64(r, "SELECT count(*) FROM t WHERE length(b) = 1000"),
                                 7 * i);
        }
        db_close(r);
        db_close(w);
        tu_dbdir_done(&f);
}
END_TEST

static void commit_then_die(const struct tu_dbdir *f, const char *sync)
{
        pid_t pid = fork();
        int status = 0;

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct attest_err err = {0};
                struct db *d = NULL;
                char sql[64];

                if (db_open(f->db, NULL, NULL, &d, &err) < 0)
                        _exit(2);
                snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s", sync);
                if (db_exec(d, "PRAGMA journal_mode=WAL", NULL, 0) < 0 ||
                    db_exec(d, sql, NULL, 0) < 0 ||
                    db_exec(d,
                            "BEGIN IMMEDIATE; INSERT INTO t (b) VALUES (randomblob(1000));"
                            " INSERT INTO t (b) VALUES (randomblob(3000)); COMMIT",
                            NULL, 0) < 0)
                        _exit(3);
                /* as kill -9 right after the commit returned: nothing closes or flushes */
                raise(SIGKILL);
                _exit(4);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d",
                      status);
}

START_TEST(test_wal_commit_survives_kill)
{
        static const char *const sync[] = {"FULL", "NORMAL"};
        struct tu_dbdir f;
        struct db *d;

        tu_dbdir_init(&f, "dbwal");
        d = open_db(&f, "FULL");
        exec_ok(d, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
        for (int i = 0; i < 2; i++) {
                commit_then_die(&f, sync[i]);
                ck_assert_int_eq(query_i64(d, "SELECT count(*) FROM t"), 2 * (i + 1));
                ck_assert_int_eq(query_i64(d, "SELECT sum(length(b)) FROM t"), 4000 * (i + 1));
        }
        db_close(d);
        /* and after a fresh open (recovery from the WAL file alone) */
        d = open_db(&f, "FULL");
        ck_assert_int_eq(query_i64(d, "SELECT count(*) FROM t"), 4);
        {
                struct db_stmt *st = NULL;

                ck_assert_int_eq(db_prepare(d, "PRAGMA integrity_check", NULL, 0, false, &st), 0);
                ck_assert_int_eq(db_step(st), DB_ROW);
                ck_assert_str_eq(db_col_text(st, 0), "ok");
                db_finalize(st);
        }
        db_close(d);
        tu_dbdir_done(&f);
}
END_TEST

/* more than the buffer and more than one write may carry (0x1ffff bytes), pages spilled to the
 * WAL mid-transaction and read back */
START_TEST(test_wal_large_transaction)
{
        struct tu_dbdir f;
        struct db *d, *r;
        uint64_t w0, f0, w1, f1;

        tu_dbdir_init(&f, "dbwal");
        d = open_db(&f, "FULL");
        r = open_db(&f, "FULL");
        exec_ok(d, "PRAGMA cache_size=-256");
        exec_ok(d, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
        db_wal_stats(&w0, &f0);
        fill(d, 3000);
        db_wal_stats(&w1, &f1);
        ck_assert_uint_gt(f1 - f0, 1);
        ck_assert_uint_lt(f1 - f0, (w1 - w0) / 8);
        ck_assert_int_eq(query_i64(r, "SELECT count(*) FROM t"), 3000);
        ck_assert_int_eq(query_i64(r, "SELECT sum(length(b)) FROM t"), 3000 * 1000);
        exec_ok(d, "UPDATE t SET b = randomblob(900) WHERE id % 3 = 0");
        ck_assert_int_eq(query_i64(r, "SELECT sum(length(b)) FROM t"), 3000 * 1000 - 1000 * 100);
        exec_ok(d, "PRAGMA wal_checkpoint(TRUNCATE)");
        fill(d, 10);
        db_close(r);
        db_close(d);
        d = open_db(&f, "FULL");
        ck_assert_int_eq(query_i64(d, "SELECT count(*) FROM t"), 3010);
        db_close(d);
        tu_dbdir_done(&f);
}
END_TEST

int main(void)
{
        Suite *su = suite_create("db-wal");
        TCase *tc = tcase_create("walbuf");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_wal_commit_is_one_file_write);
        tcase_add_test(tc, test_wal_commit_visible_to_another_connection);
        tcase_add_test(tc, test_wal_commit_survives_kill);
        tcase_add_test(tc, test_wal_large_transaction);
        suite_add_tcase(su, tc);
        return tu_run(su);
}
