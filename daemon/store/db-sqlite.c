/* SPDX-License-Identifier: MIT */
/*
 * daemon/store/db.h on SQLite: a thin veneer over sqlite3_stmt (the store's fast path keeps its
 * cost). Files are opened through the WAL write buffer (db-wal.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "daemon/store/db-backend.h"

/* how long a connection waits for another's write lock before SQLITE_BUSY (ms) */
#define DB_SQLITE_BUSY_MS 10000

struct sq_db {
        struct db base;
        sqlite3 *sq;
};

struct sq_stmt {
        struct db_stmt base;
        sqlite3_stmt *sq;
        bool started; /* stepped since the last reset (counted once) */
};

static struct sq_db *sq_db(struct db *d)
{
        return DB_CONTAINER_OF(d, struct sq_db, base);
}

static struct sq_stmt *sq_st(struct db_stmt *st)
{
        return DB_CONTAINER_OF(st, struct sq_stmt, base);
}

static void sq_close(struct db *d)
{
        struct sq_db *q = sq_db(d);

        sqlite3_close(q->sq);
        free(q);
}

static int sq_open(const char *target, const char *password, struct db **ret,
                   struct attest_err *err)
{
        struct sq_db *q = calloc(1, sizeof(*q));
        int rc;

        (void)password;
        if (!q)
                return -ENOMEM;
        rc = sqlite3_open_v2(target, &q->sq,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             db_wal_vfs_name());
        if (rc != SQLITE_OK) {
                int e = attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", target,
                                    q->sq ? sqlite3_errmsg(q->sq) : sqlite3_errstr(rc));

                sq_close(&q->base);
                return e;
        }
        sqlite3_busy_timeout(q->sq, DB_SQLITE_BUSY_MS);
        *ret = &q->base;
        return 0;
}

static const char *sq_errmsg(struct db *d)
{
        return sqlite3_errmsg(sq_db(d)->sq);
}

static bool sq_ok(struct db *d)
{
        (void)d;
        return true;
}

static int sq_reconnect(struct db *d)
{
        (void)d;
        return 0;
}

/* the pages the last transaction wrote to the WAL (read by the thread using d, then reset) */
static uint64_t sq_pages_written(struct db *d)
{
        int cur = 0, hi = 0;

        if (sqlite3_db_status(sq_db(d)->sq, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1) !=
                    SQLITE_OK ||
            cur < 0)
                return 0;
        return (uint64_t)cur;
}

static int sq_exec(struct db *d, const char *sql, char *msg, size_t n)
{
        char *m = NULL;
        int rc = sqlite3_exec(sq_db(d)->sq, sql, NULL, NULL, &m);

        db_count(d);
        if (rc != SQLITE_OK && msg)
                snprintf(msg, n, "%s", m ? m : sqlite3_errstr(rc));
        sqlite3_free(m);
        return rc == SQLITE_OK ? 0 : -EIO;
}

static int sq_prepare(struct db *d, const char *sql, const char *pg_sql, unsigned flags,
                      bool persistent, struct db_stmt **ret)
{
        struct sq_stmt *st = calloc(1, sizeof(*st));

        (void)pg_sql;
        (void)flags;
        if (!st)
                return -ENOMEM;
        st->base.d = d;
        if (sqlite3_prepare_v3(sq_db(d)->sq, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0,
                               &st->sq, NULL) != SQLITE_OK) {
                free(st);
                return -EIO;
        }
        *ret = &st->base;
        return 0;
}

static void sq_finalize(struct db_stmt *st)
{
        struct sq_stmt *s = sq_st(st);

        sqlite3_finalize(s->sq);
        free(s);
}

static void sq_reset(struct db_stmt *st)
{
        struct sq_stmt *s = sq_st(st);

        sqlite3_reset(s->sq);
        s->started = false;
}

static void sq_clear(struct db_stmt *st)
{
        sq_reset(st);
        sqlite3_clear_bindings(sq_st(st)->sq);
}

static int sq_param_count(struct db_stmt *st)
{
        return sqlite3_bind_parameter_count(sq_st(st)->sq);
}

static int sq_bind_text(struct db_stmt *st, int i, const char *s)
{
        sqlite3_stmt *q = sq_st(st)->sq;
        int rc = s ? sqlite3_bind_text(q, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(q, i);

        return rc == SQLITE_OK ? 0 : -EIO;
}

static int sq_bind_blob(struct db_stmt *st, int i, const uint8_t *p, size_t n)
{
        sqlite3_stmt *q = sq_st(st)->sq;
        int rc = p ? sqlite3_bind_blob64(q, i, p, n, SQLITE_STATIC) : sqlite3_bind_null(q, i);

        return rc == SQLITE_OK ? 0 : -EIO;
}

static int sq_bind_i64(struct db_stmt *st, int i, int64_t v)
{
        return sqlite3_bind_int64(sq_st(st)->sq, i, v) == SQLITE_OK ? 0 : -EIO;
}

static int sq_step(struct db_stmt *st)
{
        struct sq_stmt *s = sq_st(st);
        int rc;

        if (!s->started) {
                s->started = true;
                db_count(st->d);
        }
        rc = sqlite3_step(s->sq);
        if (rc == SQLITE_ROW)
                return DB_ROW;
        if (rc == SQLITE_DONE)
                return DB_DONE;
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
                return DB_CONSTRAINT;
        return -EIO;
}

static bool sq_col_null(struct db_stmt *st, int i)
{
        return sqlite3_column_type(sq_st(st)->sq, i) == SQLITE_NULL;
}

static int64_t sq_col_i64(struct db_stmt *st, int i)
{
        return sqlite3_column_int64(sq_st(st)->sq, i);
}

static const char *sq_col_text(struct db_stmt *st, int i)
{
        return (const char *)sqlite3_column_text(sq_st(st)->sq, i);
}

static const uint8_t *sq_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
        sqlite3_stmt *q = sq_st(st)->sq;
        const void *b = sqlite3_column_blob(q, i);
        int len = sqlite3_column_bytes(q, i);

        *ret_len = b && len > 0 ? (size_t)len : 0;
        return b;
}

static int sq_changes(struct db_stmt *st)
{
        return sqlite3_changes(sqlite3_db_handle(sq_st(st)->sq));
}

static int64_t sq_last_id(struct db_stmt *st)
{
        return sqlite3_last_insert_rowid(sqlite3_db_handle(sq_st(st)->sq));
}

const struct db_ops db_sqlite_ops = {
        .kind = DB_SQLITE,
        .open = sq_open,
        .close = sq_close,
        .errmsg = sq_errmsg,
        .ok = sq_ok,
        .reconnect = sq_reconnect,
        .pages_written = sq_pages_written,
        .exec = sq_exec,
        .prepare = sq_prepare,
        .finalize = sq_finalize,
        .reset = sq_reset,
        .clear = sq_clear,
        .bind_text = sq_bind_text,
        .bind_blob = sq_bind_blob,
        .bind_i64 = sq_bind_i64,
        .param_count = sq_param_count,
        .step = sq_step,
        .col_i64 = sq_col_i64,
        .col_text = sq_col_text,
        .col_blob = sq_col_blob,
        .col_null = sq_col_null,
        .changes = sq_changes,
        .last_id = sq_last_id,
};
