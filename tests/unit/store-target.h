/* SPDX-License-Identifier: MIT */
#ifndef ATTEST_TEST_STORE_TARGET_H
#define ATTEST_TEST_STORE_TARGET_H

/*
 * The store tests on both backends: without ATTEST_PG_URL a store is a SQLite file in the test's
 * directory; with it (tests/lib/pg-run.sh sets it, meson's store-pg suite) each call creates a
 * fresh database in that PostgreSQL cluster and gives its URL, so every test starts empty as it
 * does on a new file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "daemon/store/store.h"

/* Whether the store tests run on PostgreSQL. */
static inline int store_target_pg(void)
{
        const char *url = getenv("ATTEST_PG_URL");

        return url && url[0];
}

/* db (n bytes): dir/file for SQLite, or the URL of a new PostgreSQL database. */
static inline void store_target(const char *dir, const char *file, char *db, size_t n)
{
        static unsigned seq;
        const char *url = getenv("ATTEST_PG_URL");
        const char *slash;
        char name[64], sql[128];
        PGconn *c;
        PGresult *r;

        if (!store_target_pg()) {
                ck_assert_int_lt(snprintf(db, n, "%s/%s", dir, file), (int)n);
                return;
        }
        snprintf(name, sizeof(name), "t_%ld_%u_%ld", (long)getpid(), seq++, random() % 100000);
        c = PQconnectdb(url);
        ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
        snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
        r = PQexec(c, sql);
        ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        slash = strrchr(url, '/');
        ck_assert_ptr_nonnull(slash);
        ck_assert_int_lt(snprintf(db, n, "%.*s/%s", (int)(slash - url), url, name), (int)n);
}

/* One SQL statement on the store's database (PostgreSQL), 0 or -1. */
static inline int store_target_sql(const char *db, const char *sql)
{
        PGconn *c = PQconnectdb(db);
        PGresult *r = PQexec(c, sql);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

        PQclear(r);
        PQfinish(c);
        return ok ? 0 : -1;
}

/* A stale scan's callback that logs nothing (store_agent_stale_scan's fn). */
static inline void store_stale_quiet(const char *id, const char *hostname, const char *last_status,
                                     int64_t last_seen, void *arg)
{
        (void)id, (void)hostname, (void)last_status, (void)last_seen, (void)arg;
}

/*
 * The IMA offset a challenge to agent id hands out, read as attestd reads it (store_agent_get,
 * through the agent cache), with the state as the answer: 0, -EACCES not yet activated, -EPERM
 * decommissioned, -ENOENT none.
 */
static inline int store_test_offset(struct store *s, const char *id, uint64_t *ret)
{
        struct store_agent *a = NULL;
        int e = store_agent_get(s, id, &a);

        if (e < 0)
                return e;
        if ((e = store_agent_active(a)) == 0)
                *ret = a->ima_offset;
        store_agent_free(a);
        return e;
}

#endif
