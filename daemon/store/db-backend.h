/* SPDX-License-Identifier: MIT */
#ifndef ATTEST_STORE_DB_BACKEND_H
#define ATTEST_STORE_DB_BACKEND_H

/*
 * What a database backend implements for daemon/store/db.h: one struct db_ops a backend, chosen
 * by db_open() from the target (db-sqlite.c for a file path, db-pg.c for a PostgreSQL URL); db.c
 * dispatches every call through it. A backend's connection and statement embed struct db and
 * struct db_stmt and reach their own fields with DB_CONTAINER_OF(). Only daemon/store/db*.c
 * include this; only the backend files include sqlite3.h or libpq-fe.h.
 */
#include <stdatomic.h>
#include <stddef.h>

#include "daemon/store/db.h"

#define DB_CONTAINER_OF(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

struct db_ops {
        enum db_kind kind;
        /* Connect to target (the backend's own kind, db_is_pg): *ret with only the backend's
         * fields set; db_open() fills the common ones. */
        int (*open)(const char *target, const char *password, struct db **ret,
                    struct attest_err *err);
        void (*close)(struct db *d);
        const char *(*errmsg)(struct db *d);
        bool (*ok)(struct db *d);
        int (*reconnect)(struct db *d);
        uint64_t (*pages_written)(struct db *d);
        int (*exec)(struct db *d, const char *sql, char *msg, size_t n);
        int (*prepare)(struct db *d, const char *sql, const char *pg_sql, unsigned flags,
                       bool persistent, struct db_stmt **ret);
        void (*finalize)(struct db_stmt *st);
        void (*reset)(struct db_stmt *st);
        void (*clear)(struct db_stmt *st);
        int (*bind_text)(struct db_stmt *st, int i, const char *s);
        int (*bind_blob)(struct db_stmt *st, int i, const uint8_t *p, size_t n);
        int (*bind_i64)(struct db_stmt *st, int i, int64_t v);
        int (*param_count)(struct db_stmt *st);
        int (*step)(struct db_stmt *st);
        int64_t (*col_i64)(struct db_stmt *st, int i);
        const char *(*col_text)(struct db_stmt *st, int i);
        const uint8_t *(*col_blob)(struct db_stmt *st, int i, size_t *ret_len);
        bool (*col_null)(struct db_stmt *st, int i);
        int (*changes)(struct db_stmt *st);
        int64_t (*last_id)(struct db_stmt *st);
};

/* The part of a connection every backend has (the first member of the backend's own). */
struct db {
        const struct db_ops *ops;
        atomic_uint_fast64_t *counter;
        unsigned gen; /* sessions so far (a reconnect drops prepared statements and locks) */
        char msg[256];
};

/* The part of a statement every backend has. */
struct db_stmt {
        struct db *d;
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

/* One statement execution counted (db_open's counter). */
static inline void db_count(struct db *d)
{
        if (d->counter)
                atomic_fetch_add_explicit(d->counter, 1, memory_order_relaxed);
}

/* The VFS to open SQLite files with: "attestd-wal", or NULL (the default) if it could not be
 * registered (db-wal.c). */
const char *db_wal_vfs_name(void);

#endif
