/* SPDX-License-Identifier: MIT */
#ifndef ATTEST_STORE_DB_H
#define ATTEST_STORE_DB_H

/*
 * The store's database connections on two engines (docs/architecture.md §7): SQLite (a file path,
 * and PostgreSQL through libpq (a postgresql:// or postgres:// URL). SQL is written once with ?N
 * placeholders; the PostgreSQL side translates them to $N and runs each statement as a prepared
 * statement of its connection (PQprepare on first use, PQexecPrepared after), blobs bound in
 * binary, integers as decimal text (the server's inferred type parses them), results in text
 * form (bytea decoded from hex). A statement may carry a PostgreSQL text of its own where the
 * dialect differs. Only daemon/store/ includes this.
 *
 * Errors: negative errno; a unique violation is DB_CONSTRAINT from db_step, not an error. The
 * foreign error texts stay inside (db_errmsg for the open path's message; never a password).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum db_kind {
        DB_SQLITE,
        DB_PG,
};

/* db_step() results (negative: an error, -EIO) */
enum {
        DB_DONE = 0,
        DB_ROW = 1,
        DB_CONSTRAINT = 2, /* a unique (or other constraint) violation */
};

/* statement flags */
enum {
        /* PostgreSQL: the statement ends in RETURNING id; the row is not shown, db_last_id()
         * reads it (SQLite: sqlite3_last_insert_rowid) */
        DB_F_LAST_ID = 1u << 0,
};

struct db;
struct db_stmt;

/* A URL of PostgreSQL (postgresql:// or postgres://), not a file path. */
bool db_is_pg(const char *target);
/* Whether every host a PostgreSQL URL names (one, or the list of a multi-host URL) is a loopback
 * host (or none: the local socket). */
bool db_pg_loopback(const char *url);

/*
 * Connect: a path opens (creates) a SQLite file, a URL connects to PostgreSQL with password (NULL:
 * none, or what the URL or libpq's environment says). counter (may be NULL) counts every
 * statement execution (sqlite3_step starting a statement, PQexec*).
 */
int db_open(const char *target, const char *password, atomic_uint_fast64_t *counter,
            struct db **ret, struct attest_err *err);
struct db *db_close(struct db *d);
enum db_kind db_kind_of(const struct db *d);
/* The engine's last message (for the open path's errors only). */
const char *db_errmsg(struct db *d);
/* Whether the connection is still usable (PostgreSQL: CONNECTION_OK). */
bool db_ok(struct db *d);
/* PostgreSQL: a broken connection connected again (statements re-prepared on use); 0 or -EIO. */
int db_reconnect(struct db *d);
/* Which session of d this is (bumped by every reconnect): session state (locks) lives in one. */
unsigned db_session(const struct db *d);
/*
 * The pages the last transaction on d wrote to the WAL, read by the thread using d (and reset):
 * SQLite's page cache writes; 0 on PostgreSQL, whose WAL is the server's.
 */
uint64_t db_pages_written(struct db *d);

/*
 * A statement of d, prepared for reuse (persistent) or once (db_finalize after use). sql uses ?N;
 * pg_sql (NULL: sql) is the PostgreSQL text. SQLite prepares at once (-EIO when the schema is
 * missing); PostgreSQL at the first execution.
 */
int db_prepare(struct db *d, const char *sql, const char *pg_sql, unsigned flags, bool persistent,
               struct db_stmt **ret);
void db_finalize(struct db_stmt *st);
/* Drop the result (the statement can run again); db_clear also unbinds. */
void db_reset(struct db_stmt *st);
void db_clear(struct db_stmt *st);
/* Parameters are 1-based; text and blobs are borrowed until the statement runs (db_step). */
int db_bind_text(struct db_stmt *st, int i, const char *s);
int db_bind_blob(struct db_stmt *st, int i, const uint8_t *p, size_t n);
int db_bind_i64(struct db_stmt *st, int i, int64_t v);
int db_param_count(struct db_stmt *st);
/* Run (the first call after a reset) or advance: DB_ROW, DB_DONE, DB_CONSTRAINT or -EIO. */
int db_step(struct db_stmt *st);
/* Columns of the current row (0-based); text and blobs borrowed until the next step/reset. */
int64_t db_col_i64(struct db_stmt *st, int i);
const char *db_col_text(struct db_stmt *st, int i);
const uint8_t *db_col_blob(struct db_stmt *st, int i, size_t *ret_len);
bool db_col_null(struct db_stmt *st, int i);
/* Rows the last execution changed (DB_DONE of an INSERT/UPDATE/DELETE). */
int db_changes(struct db_stmt *st);
int64_t db_last_id(struct db_stmt *st);

/*
 * SQLite files are opened through a VFS that gathers a WAL file's frame writes into one write
 * per commit (db-wal.c): the writes SQLite asked for, and the writes that reached the file.
 */
void db_wal_stats(uint64_t *ret_writes, uint64_t *ret_flushes);

/* Statements without parameters, several separated by ';': 0 or -EIO (msg, if any, says why). */
int db_exec(struct db *d, const char *sql, char *msg, size_t n);

#endif
