/* SPDX-License-Identifier: MIT */
/*
 * daemon/store/db.h: the backend chosen at open (db-sqlite.c or db-pg.c, each a struct db_ops in
 * db-backend.h), every call dispatched through it. Nothing here knows an engine.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/store/db-backend.h"

bool db_is_pg(const char *target)
{
        return !strncmp(target, "postgresql://", 13) || !strncmp(target, "postgres://", 11);
}

int db_open(const char *target, const char *password, atomic_uint_fast64_t *counter,
            struct db **ret, struct attest_err *err)
{
        const struct db_ops *ops = db_is_pg(target) ? &db_pg_ops : &db_sqlite_ops;
        struct db *d = NULL;
        int e;

        if ((e = ops->open(target, password, &d, err)) < 0)
                return e;
        d->ops = ops;
        d->counter = counter;
        *ret = d;
        return 0;
}

struct db *db_close(struct db *d)
{
        if (d)
                d->ops->close(d);
        return NULL;
}

enum db_kind db_kind_of(const struct db *d)
{
        return d->ops->kind;
}

const char *db_errmsg(struct db *d)
{
        return d->ops->errmsg(d);
}

bool db_ok(struct db *d)
{
        return d->ops->ok(d);
}

unsigned db_session(const struct db *d)
{
        return __atomic_load_n(&d->gen, __ATOMIC_ACQUIRE);
}

int db_reconnect(struct db *d)
{
        return d->ops->reconnect(d);
}

uint64_t db_pages_written(struct db *d)
{
        return d->ops->pages_written(d);
}

int db_exec(struct db *d, const char *sql, char *msg, size_t n)
{
        return d->ops->exec(d, sql, msg, n);
}

int db_prepare(struct db *d, const char *sql, const char *pg_sql, unsigned flags, bool persistent,
               struct db_stmt **ret)
{
        return d->ops->prepare(d, sql, pg_sql, flags, persistent, ret);
}

void db_finalize(struct db_stmt *st)
{
        if (st)
                st->d->ops->finalize(st);
}

void db_reset(struct db_stmt *st)
{
        if (st)
                st->d->ops->reset(st);
}

void db_clear(struct db_stmt *st)
{
        st->d->ops->clear(st);
}

int db_param_count(struct db_stmt *st)
{
        return st->d->ops->param_count(st);
}

int db_bind_text(struct db_stmt *st, int i, const char *s)
{
        return st->d->ops->bind_text(st, i, s);
}

int db_bind_blob(struct db_stmt *st, int i, const uint8_t *p, size_t n)
{
        return st->d->ops->bind_blob(st, i, p, n);
}

int db_bind_i64(struct db_stmt *st, int i, int64_t v)
{
        return st->d->ops->bind_i64(st, i, v);
}

int db_step(struct db_stmt *st)
{
        return st->d->ops->step(st);
}

bool db_col_null(struct db_stmt *st, int i)
{
        return st->d->ops->col_null(st, i);
}

int64_t db_col_i64(struct db_stmt *st, int i)
{
        return st->d->ops->col_i64(st, i);
}

const char *db_col_text(struct db_stmt *st, int i)
{
        return st->d->ops->col_text(st, i);
}

const uint8_t *db_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
        return st->d->ops->col_blob(st, i, ret_len);
}

int db_changes(struct db_stmt *st)
{
        return st->d->ops->changes(st);
}

int64_t db_last_id(struct db_stmt *st)
{
        return st->d->ops->last_id(st);
}
