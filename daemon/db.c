/* SPDX-License-Identifier: MIT */
/*
 * daemon/db.h on SQLite and on PostgreSQL (libpq). The SQLite half is a thin veneer over
 * sqlite3_stmt (the store's fast path keeps its cost); the PostgreSQL half keeps per statement
 * the bound parameters and the whole result of its last execution.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "daemon/db.h"

#define DB_PARAMS_MAX 32
#define PG_BYTEA_OID 17
#define PG_TEXT_OID 25

struct db {
        enum db_kind kind;
        sqlite3 *sq;
        PGconn *pg;
        atomic_uint_fast64_t *counter;
        unsigned names; /* PostgreSQL prepared statement names: s1, s2, ... */
        char msg[256];
};

struct db_stmt {
        struct db *d;
        sqlite3_stmt *sq;
        bool started; /* SQLite: stepped since the last reset (counted once) */
        /* PostgreSQL */
        char *sql; /* translated to $N */
        unsigned flags;
        bool persistent, prepared;
        char name[16];
        int nparams;
        Oid types[DB_PARAMS_MAX];
        const char *vals[DB_PARAMS_MAX];
        int lens[DB_PARAMS_MAX], fmts[DB_PARAMS_MAX];
        char ints[DB_PARAMS_MAX][24];
        PGresult *res;
        int row, nrows, changes;
        int64_t last_id;
        uint8_t *blob[DB_PARAMS_MAX]; /* decoded bytea columns of the current row */
        size_t blob_len[DB_PARAMS_MAX];
        bool blob_done[DB_PARAMS_MAX];
};

bool db_is_pg(const char *target)
{
        return !strncmp(target, "postgresql://", 13) || !strncmp(target, "postgres://", 11);
}

bool db_pg_loopback(const char *url)
{
        const char *h = strstr(url, "://"), *at, *end;
        size_t n;

        if (!h)
                return false;
        h += 3;
        end = h + strcspn(h, "/?");
        at = memchr(h, '@', (size_t)(end - h));
        if (at)
                h = at + 1;
        if (*h == '[') {
                return !strncmp(h, "[::1]", 5);
        }
        n = strcspn(h, ":/?");
        return (n == 9 && !strncmp(h, "localhost", 9)) || (n >= 4 && !strncmp(h, "127.", 4)) ||
               n == 0;
}

static void count(struct db *d)
{
        if (d->counter)
                atomic_fetch_add_explicit(d->counter, 1, memory_order_relaxed);
}

/* ---- connections ---- */

/* libpq's message without its trailing newline, and never the connection string. */
static void pg_msg(struct db *d, const char *what)
{
        const char *m = d->pg ? PQerrorMessage(d->pg) : "out of memory";
        size_t n;

        snprintf(d->msg, sizeof(d->msg), "%s: %s", what, m && m[0] ? m : "failed");
        n = strlen(d->msg);
        while (n > 0 && (d->msg[n - 1] == '\n' || d->msg[n - 1] == ' '))
                d->msg[--n] = '\0';
}

int db_open(const char *target, const char *password, atomic_uint_fast64_t *counter,
            struct db **ret, struct attest_err *err)
{
        struct db *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        d->counter = counter;
        if (!db_is_pg(target)) {
                int rc;

                d->kind = DB_SQLITE;
                rc = sqlite3_open_v2(
                        target, &d->sq,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
                if (rc != SQLITE_OK) {
                        int e = attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", target,
                                            d->sq ? sqlite3_errmsg(d->sq) : sqlite3_errstr(rc));

                        db_close(d);
                        return e;
                }
                *ret = d;
                return 0;
        }
        d->kind = DB_PG;
        {
                /* the URL as given (expand_dbname), then the password through the keyword list
                 * only, sslmode (unless the URL names one: prefer on loopback, require
                 * elsewhere, docs/attestd.8), a bounded connect */
                const char *keys[6], *vals[6];
                int k = 0;

                keys[k] = "dbname";
                vals[k++] = target;
                if (password) {
                        keys[k] = "password";
                        vals[k++] = password;
                }
                if (!strstr(target, "sslmode=")) {
                        keys[k] = "sslmode";
                        vals[k++] = db_pg_loopback(target) ? "prefer" : "require";
                }
                keys[k] = "connect_timeout";
                vals[k++] = "10";
                keys[k] = "application_name";
                vals[k++] = "attestd";
                keys[k] = NULL;
                vals[k] = NULL;
                d->pg = PQconnectdbParams(keys, vals, 1);
        }
        if (!d->pg || PQstatus(d->pg) != CONNECTION_OK) {
                int e;

                pg_msg(d, "connecting to PostgreSQL");
                e = attest_fail(err, -EIO, AE_STORE_IO, "%s", d->msg);
                db_close(d);
                return e;
        }
        *ret = d;
        return 0;
}

struct db *db_close(struct db *d)
{
        if (!d)
                return NULL;
        if (d->sq)
                sqlite3_close(d->sq);
        if (d->pg)
                PQfinish(d->pg);
        free(d);
        return NULL;
}

enum db_kind db_kind_of(const struct db *d)
{
        return d->kind;
}

const char *db_errmsg(struct db *d)
{
        if (d->kind == DB_SQLITE)
                return sqlite3_errmsg(d->sq);
        return d->msg;
}

void *db_handle(struct db *d)
{
        return d->kind == DB_SQLITE ? (void *)d->sq : (void *)d->pg;
}

bool db_ok(struct db *d)
{
        return d->kind == DB_SQLITE || PQstatus(d->pg) == CONNECTION_OK;
}

/* ---- statements ---- */

/*
 * ?N to $N outside quoted text; the highest N in *ret_max, the ones used marked in used[].
 */
static char *pg_translate(const char *sql, int *ret_max, bool used[DB_PARAMS_MAX + 1])
{
        size_t n = strlen(sql);
        char *out = malloc(n + 1), *o = out;
        char quote = 0;
        int max = 0;

        if (!out)
                return NULL;
        for (const char *p = sql; *p; p++) {
                if (quote) {
                        if (*p == quote)
                                quote = 0;
                        *o++ = *p;
                        continue;
                }
                if (*p == '\'' || *p == '"') {
                        quote = *p;
                        *o++ = *p;
                        continue;
                }
                if ((*p == '?' || *p == '$') && p[1] >= '0' && p[1] <= '9') {
                        int v = 0;

                        *o++ = '$';
                        while (p[1] >= '0' && p[1] <= '9') {
                                v = v * 10 + (p[1] - '0');
                                *o++ = *++p;
                                if (v > DB_PARAMS_MAX) {
                                        free(out);
                                        return NULL;
                                }
                        }
                        if (v > max)
                                max = v;
                        used[v] = true;
                        continue;
                }
                *o++ = *p;
        }
        *o = '\0';
        *ret_max = max;
        return out;
}

int db_prepare(struct db *d, const char *sql, const char *pg_sql, unsigned flags, bool persistent,
               struct db_stmt **ret)
{
        struct db_stmt *st = calloc(1, sizeof(*st));
        bool used[DB_PARAMS_MAX + 1] = {false};

        if (!st)
                return -ENOMEM;
        st->d = d;
        st->flags = flags;
        st->persistent = persistent;
        if (d->kind == DB_SQLITE) {
                if (sqlite3_prepare_v3(d->sq, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0,
                                       &st->sq, NULL) != SQLITE_OK) {
                        free(st);
                        return -EIO;
                }
                *ret = st;
                return 0;
        }
        st->sql = pg_translate(pg_sql ? pg_sql : sql, &st->nparams, used);
        if (!st->sql) {
                free(st);
                return -ENOMEM;
        }
        /* a number the text skips would have no type: text (its value is never read) */
        for (int i = 1; i <= st->nparams; i++)
                st->types[i - 1] = used[i] ? 0 : PG_TEXT_OID;
        if (persistent)
                snprintf(st->name, sizeof(st->name), "s%u", ++d->names);
        st->row = -1;
        *ret = st;
        return 0;
}

static void pg_drop_row(struct db_stmt *st)
{
        for (int i = 0; i < DB_PARAMS_MAX; i++) {
                free(st->blob[i]);
                st->blob[i] = NULL;
                st->blob_len[i] = 0;
                st->blob_done[i] = false;
        }
}

void db_reset(struct db_stmt *st)
{
        if (!st)
                return;
        if (st->sq) {
                sqlite3_reset(st->sq);
                st->started = false;
                return;
        }
        pg_drop_row(st);
        PQclear(st->res);
        st->res = NULL;
        st->row = -1;
        st->nrows = 0;
}

void db_clear(struct db_stmt *st)
{
        db_reset(st);
        if (st->sq) {
                sqlite3_clear_bindings(st->sq);
                return;
        }
        memset(st->vals, 0, sizeof(st->vals));
        memset(st->lens, 0, sizeof(st->lens));
        memset(st->fmts, 0, sizeof(st->fmts));
}

void db_finalize(struct db_stmt *st)
{
        if (!st)
                return;
        if (st->sq) {
                sqlite3_finalize(st->sq);
        } else {
                db_reset(st);
                if (st->prepared && st->d->pg && PQstatus(st->d->pg) == CONNECTION_OK) {
                        char sql[48];

                        snprintf(sql, sizeof(sql), "DEALLOCATE %s", st->name);
                        PQclear(PQexec(st->d->pg, sql));
                }
        }
        free(st->sql);
        free(st);
}

int db_param_count(struct db_stmt *st)
{
        return st->sq ? sqlite3_bind_parameter_count(st->sq) : st->nparams;
}

/* PostgreSQL: a parameter the statement does not have is ignored (as its count says). */
static bool pg_param(struct db_stmt *st, int i)
{
        return i >= 1 && i <= st->nparams;
}

int db_bind_text(struct db_stmt *st, int i, const char *s)
{
        if (st->sq) {
                int rc = s ? sqlite3_bind_text(st->sq, i, s, -1, SQLITE_STATIC)
                           : sqlite3_bind_null(st->sq, i);

                return rc == SQLITE_OK ? 0 : -EIO;
        }
        if (!pg_param(st, i))
                return -EIO;
        st->vals[i - 1] = s;
        st->lens[i - 1] = 0;
        st->fmts[i - 1] = 0;
        return 0;
}

int db_bind_blob(struct db_stmt *st, int i, const uint8_t *p, size_t n)
{
        if (st->sq) {
                int rc = p ? sqlite3_bind_blob64(st->sq, i, p, n, SQLITE_STATIC)
                           : sqlite3_bind_null(st->sq, i);

                return rc == SQLITE_OK ? 0 : -EIO;
        }
        if (!pg_param(st, i) || n > INT32_MAX)
                return -EIO;
        /* binary: the bytes as they are (an empty blob needs a non-NULL pointer) */
        st->vals[i - 1] = p ? (const char *)p : NULL;
        st->lens[i - 1] = (int)n;
        st->fmts[i - 1] = 1;
        if (p && n == 0)
                st->vals[i - 1] = "";
        return 0;
}

int db_bind_i64(struct db_stmt *st, int i, int64_t v)
{
        if (st->sq)
                return sqlite3_bind_int64(st->sq, i, v) == SQLITE_OK ? 0 : -EIO;
        if (!pg_param(st, i))
                return -EIO;
        snprintf(st->ints[i - 1], sizeof(st->ints[i - 1]), "%" PRId64, v);
        st->vals[i - 1] = st->ints[i - 1];
        st->lens[i - 1] = 0;
        st->fmts[i - 1] = 0;
        return 0;
}

static int pg_run(struct db_stmt *st)
{
        struct db *d = st->d;
        const char *state;
        bool constraint;
        ExecStatusType t;

        if (st->persistent && !st->prepared) {
                PGresult *r = PQprepare(d->pg, st->name, st->sql, st->nparams, st->types);

                count(d);
                t = PQresultStatus(r);
                if (t != PGRES_COMMAND_OK) {
                        pg_msg(d, "prepare");
                        PQclear(r);
                        return -EIO;
                }
                PQclear(r);
                st->prepared = true;
        }
        count(d);
        if (st->persistent)
                st->res = PQexecPrepared(d->pg, st->name, st->nparams, st->vals, st->lens, st->fmts,
                                         0);
        else
                st->res = PQexecParams(d->pg, st->sql, st->nparams, st->types, st->vals, st->lens,
                                       st->fmts, 0);
        t = PQresultStatus(st->res);
        /* COMMIT of a transaction a failed statement aborted answers "ROLLBACK", not an error:
         * nothing was written, and no caller may be told otherwise */
        if (t == PGRES_COMMAND_OK && !strcmp(st->sql, "COMMIT") &&
            !strcmp(PQcmdStatus(st->res), "ROLLBACK")) {
                snprintf(d->msg, sizeof(d->msg), "commit: the transaction was rolled back");
                PQclear(st->res);
                st->res = NULL;
                return -EIO;
        }
        if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK) {
                const char *ct = PQcmdTuples(st->res);

                st->nrows = t == PGRES_TUPLES_OK ? PQntuples(st->res) : 0;
                st->changes = ct && ct[0] ? (int)strtol(ct, NULL, 10) : 0;
                st->row = -1;
                if (st->flags & DB_F_LAST_ID) {
                        st->last_id =
                                st->nrows > 0 ? strtoll(PQgetvalue(st->res, 0, 0), NULL, 10) : 0;
                        st->nrows = 0;
                }
                return 0;
        }
        state = PQresultErrorField(st->res, PG_DIAG_SQLSTATE);
        /* class 23: integrity constraint violation (23505 unique, 23502 not null, ...) */
        constraint = state && !strncmp(state, "23", 2);
        pg_msg(d, "statement");
        PQclear(st->res);
        st->res = NULL;
        return constraint ? DB_CONSTRAINT : -EIO;
}

int db_step(struct db_stmt *st)
{
        if (st->sq) {
                int rc;

                if (!st->started) {
                        st->started = true;
                        count(st->d);
                }
                rc = sqlite3_step(st->sq);
                if (rc == SQLITE_ROW)
                        return DB_ROW;
                if (rc == SQLITE_DONE)
                        return DB_DONE;
                if ((rc & 0xff) == SQLITE_CONSTRAINT)
                        return DB_CONSTRAINT;
                return -EIO;
        }
        if (!st->res) {
                int rc = pg_run(st);

                if (rc != 0)
                        return rc;
        }
        pg_drop_row(st);
        if (st->row + 1 < st->nrows) {
                st->row++;
                return DB_ROW;
        }
        st->row = st->nrows;
        return DB_DONE;
}

static bool pg_has(struct db_stmt *st, int i)
{
        return st->res && st->row >= 0 && st->row < st->nrows && i >= 0 && i < PQnfields(st->res) &&
               i < DB_PARAMS_MAX;
}

bool db_col_null(struct db_stmt *st, int i)
{
        if (st->sq)
                return sqlite3_column_type(st->sq, i) == SQLITE_NULL;
        return !pg_has(st, i) || PQgetisnull(st->res, st->row, i);
}

int64_t db_col_i64(struct db_stmt *st, int i)
{
        const char *v;

        if (st->sq)
                return sqlite3_column_int64(st->sq, i);
        if (db_col_null(st, i))
                return 0;
        v = PQgetvalue(st->res, st->row, i);
        /* booleans as SQLite has them */
        if (!strcmp(v, "t"))
                return 1;
        if (!strcmp(v, "f"))
                return 0;
        return strtoll(v, NULL, 10);
}

const char *db_col_text(struct db_stmt *st, int i)
{
        if (st->sq)
                return (const char *)sqlite3_column_text(st->sq, i);
        if (db_col_null(st, i))
                return NULL;
        return PQgetvalue(st->res, st->row, i);
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

const uint8_t *db_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
        const char *v;
        size_t n;

        *ret_len = 0;
        if (st->sq) {
                const void *b = sqlite3_column_blob(st->sq, i);
                int len = sqlite3_column_bytes(st->sq, i);

                *ret_len = b && len > 0 ? (size_t)len : 0;
                return b;
        }
        if (db_col_null(st, i))
                return NULL;
        if (!st->blob_done[i]) {
                v = PQgetvalue(st->res, st->row, i);
                n = (size_t)PQgetlength(st->res, st->row, i);
                if (PQftype(st->res, i) == PG_BYTEA_OID && n >= 2 && v[0] == '\\' && v[1] == 'x' &&
                    n % 2 == 0) {
                        size_t m = (n - 2) / 2;
                        uint8_t *b = malloc(m ? m : 1);

                        if (!b)
                                return NULL;
                        for (size_t k = 0; k < m; k++) {
                                int hi = hexval(v[2 + 2 * k]), lo = hexval(v[3 + 2 * k]);

                                if (hi < 0 || lo < 0) {
                                        free(b);
                                        return NULL;
                                }
                                b[k] = (uint8_t)(hi << 4 | lo);
                        }
                        st->blob[i] = b;
                        st->blob_len[i] = m;
                } else {
                        /* not bytea: the text's bytes */
                        uint8_t *b = malloc(n ? n : 1);

                        if (!b)
                                return NULL;
                        memcpy(b, v, n);
                        st->blob[i] = b;
                        st->blob_len[i] = n;
                }
                st->blob_done[i] = true;
        }
        *ret_len = st->blob_len[i];
        return st->blob[i];
}

int db_changes(struct db_stmt *st)
{
        if (st->sq)
                return sqlite3_changes(sqlite3_db_handle(st->sq));
        return st->changes;
}

int64_t db_last_id(struct db_stmt *st)
{
        if (st->sq)
                return sqlite3_last_insert_rowid(sqlite3_db_handle(st->sq));
        return st->last_id;
}

int db_exec(struct db *d, const char *sql, char *msg, size_t n)
{
        if (d->kind == DB_SQLITE) {
                char *m = NULL;
                int rc = sqlite3_exec(d->sq, sql, NULL, NULL, &m);

                count(d);
                if (rc != SQLITE_OK && msg)
                        snprintf(msg, n, "%s", m ? m : sqlite3_errstr(rc));
                sqlite3_free(m);
                return rc == SQLITE_OK ? 0 : -EIO;
        }
        {
                PGresult *r = PQexec(d->pg, sql);
                ExecStatusType t = PQresultStatus(r);

                count(d);
                if (t == PGRES_COMMAND_OK && !strcmp(sql, "COMMIT") &&
                    !strcmp(PQcmdStatus(r), "ROLLBACK"))
                        t = PGRES_FATAL_ERROR; /* an aborted transaction: nothing written */
                PQclear(r);
                if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK)
                        return 0;
                pg_msg(d, "statement");
                if (msg)
                        snprintf(msg, n, "%s", d->msg);
                return -EIO;
        }
}
