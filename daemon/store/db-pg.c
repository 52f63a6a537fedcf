/* SPDX-License-Identifier: MIT */
/*
 * daemon/store/db.h on PostgreSQL (libpq): per statement the bound parameters and the whole
 * result of its last execution; ?N translated to $N; persistent statements prepared on a
 * connection at their first execution in each session.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "daemon/store/db-backend.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/log.h"

#define DB_PARAMS_MAX 32
#define PG_BYTEA_OID 17
#define PG_TEXT_OID 25

struct pg_db {
        struct db base;
        PGconn *pg;
        unsigned names;  /* prepared statement names: s1, s2, ... */
        int64_t lost_ms; /* when the connection was found broken (mono_ms), 0 while it is up */
};

struct pg_stmt {
        struct db_stmt base;
        char *sql; /* translated to $N */
        unsigned flags;
        bool persistent, prepared;
        unsigned gen; /* the session it was prepared in */
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

static struct pg_db *pg_db(struct db *d)
{
        return DB_CONTAINER_OF(d, struct pg_db, base);
}

static struct pg_stmt *pg_st(struct db_stmt *st)
{
        return DB_CONTAINER_OF(st, struct pg_stmt, base);
}

/* One host of the URL's host list, [h, end): loopback (or empty: the local socket)? */
static bool pg_host_loopback(const char *h, const char *end)
{
        size_t n;

        if (*h == '[')
                return (size_t)(end - h) >= 5 && !strncmp(h, "[::1]", 5);
        n = strcspn(h, ":,/?");
        if (n > (size_t)(end - h))
                n = (size_t)(end - h);
        return (n == 9 && !strncmp(h, "localhost", 9)) || (n >= 4 && !strncmp(h, "127.", 4)) ||
               n == 0;
}

/* Every host of the URL (one, or a list for failover: h1:p1,h2:p2) is loopback. */
bool db_pg_loopback(const char *url)
{
        const char *h = strstr(url, "://"), *at, *end;

        if (!h)
                return false;
        h += 3;
        end = h + strcspn(h, "/?");
        at = memchr(h, '@', (size_t)(end - h));
        if (at)
                h = at + 1;
        for (;;) {
                const char *comma = memchr(h, ',', (size_t)(end - h));

                if (!pg_host_loopback(h, comma ? comma : end))
                        return false;
                if (!comma)
                        return true;
                h = comma + 1;
        }
}

/* libpq's message without its trailing newline, and never the connection string. */
static void pg_msg(struct pg_db *p, const char *what)
{
        const char *m = p->pg ? PQerrorMessage(p->pg) : "out of memory";
        char *msg = p->base.msg;
        size_t n;

        snprintf(msg, sizeof(p->base.msg), "%s: %s", what, m && m[0] ? m : "failed");
        n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                msg[--n] = '\0';
}

static void pg_close(struct db *d)
{
        struct pg_db *p = pg_db(d);

        if (p->pg)
                PQfinish(p->pg);
        free(p);
}

/* libpq's message on one line (its messages span several), for the log */
static void pg_one_line(char *m)
{
        for (; *m; m++)
                if (*m == '\n' || *m == '\t' || *m == '\r')
                        *m = ' ';
}

/* A server notice or warning (libpq would write it to stderr as it is, over several lines): one
 * log line. A backend that dies with its server sends one ("terminating connection due to
 * unexpected postmaster exit"). */
static void pg_notice(void *arg, const char *message)
{
        char line[512];

        (void)arg;
        snprintf(line, sizeof(line), "%s", message);
        pg_one_line(line);
        for (size_t n = strlen(line); n > 0 && line[n - 1] == ' ';)
                line[--n] = '\0';
        log_info("store: PostgreSQL: %s", line);
}

static int pg_open(const char *target, const char *password, struct db **ret,
                   struct attest_err *err)
{
        struct pg_db *p = calloc(1, sizeof(*p));
        /* the URL as given (expand_dbname), then the password through the keyword list only,
         * sslmode (unless the URL names one: prefer on loopback, require elsewhere,
         * docs/attestd.8), a bounded connect */
        const char *keys[6], *vals[6];
        int k = 0;

        if (!p)
                return -ENOMEM;
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
        p->pg = PQconnectdbParams(keys, vals, 1);
        if (!p->pg || PQstatus(p->pg) != CONNECTION_OK) {
                int e;

                pg_msg(p, "connecting to PostgreSQL");
                e = attest_fail(err, -EIO, AE_STORE_IO, "%s", p->base.msg);
                pg_close(&p->base);
                return e;
        }
        PQsetNoticeProcessor(p->pg, pg_notice, NULL);
        *ret = &p->base;
        return 0;
}

static const char *pg_errmsg(struct db *d)
{
        return d->msg;
}

static bool pg_ok(struct db *d)
{
        return PQstatus(pg_db(d)->pg) == CONNECTION_OK;
}

/*
 * A broken connection (server restart, the primary lost) connected again, to whichever host of
 * the URL now takes it (target_session_attrs). One log line when the connection is found lost
 * and one when it is back, per connection: not one per failed attempt during an outage.
 */
static int pg_reconnect(struct db *d)
{
        struct pg_db *p = pg_db(d);
        PGconn *c = p->pg;
        int64_t now;

        if (PQstatus(c) == CONNECTION_OK)
                return 0;
        now = mono_ms();
        if (!p->lost_ms) {
                p->lost_ms = now > 0 ? now : 1;
                pg_msg(p, "PostgreSQL connection lost");
                pg_one_line(p->base.msg);
                log_warning("store: %s; connecting again", p->base.msg);
        }
        PQreset(c);
        /* the new session has none of the old one's prepared statements nor locks */
        __atomic_fetch_add(&d->gen, 1, __ATOMIC_RELEASE);
        if (PQstatus(c) != CONNECTION_OK)
                return -EIO;
        log_notice("store: PostgreSQL connected again (%s:%s), %lld ms after the connection was "
                   "found lost",
                   PQhost(c) ? PQhost(c) : "?", PQport(c) ? PQport(c) : "?",
                   (long long)(mono_ms() - p->lost_ms));
        p->lost_ms = 0;
        return 0;
}

/* the server's WAL is not this process's to count */
static uint64_t pg_pages_written(struct db *d)
{
        (void)d;
        return 0;
}

static int pg_exec(struct db *d, const char *sql, char *msg, size_t n)
{
        struct pg_db *p = pg_db(d);
        PGresult *r = PQexec(p->pg, sql);
        ExecStatusType t = PQresultStatus(r);

        db_count(d);
        if (t == PGRES_COMMAND_OK && !strcmp(sql, "COMMIT") && !strcmp(PQcmdStatus(r), "ROLLBACK"))
                t = PGRES_FATAL_ERROR; /* an aborted transaction: nothing written */
        PQclear(r);
        if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK)
                return 0;
        pg_msg(p, "statement");
        if (msg)
                snprintf(msg, n, "%s", d->msg);
        return -EIO;
}

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

static int pg_prepare(struct db *d, const char *sql, const char *pg_sql, unsigned flags,
                      bool persistent, struct db_stmt **ret)
{
        struct pg_stmt *st = calloc(1, sizeof(*st));
        bool used[DB_PARAMS_MAX + 1] = {false};

        if (!st)
                return -ENOMEM;
        st->base.d = d;
        st->flags = flags;
        st->persistent = persistent;
        st->sql = pg_translate(pg_sql ? pg_sql : sql, &st->nparams, used);
        if (!st->sql) {
                free(st);
                return -ENOMEM;
        }
        /* a number the text skips would have no type: text (its value is never read) */
        for (int i = 1; i <= st->nparams; i++)
                st->types[i - 1] = used[i] ? 0 : PG_TEXT_OID;
        if (persistent)
                snprintf(st->name, sizeof(st->name), "s%u", ++pg_db(d)->names);
        st->row = -1;
        *ret = &st->base;
        return 0;
}

static void pg_drop_row(struct pg_stmt *st)
{
        for (int i = 0; i < DB_PARAMS_MAX; i++) {
                free(st->blob[i]);
                st->blob[i] = NULL;
                st->blob_len[i] = 0;
                st->blob_done[i] = false;
        }
}

static void pg_reset(struct db_stmt *base)
{
        struct pg_stmt *st = pg_st(base);

        pg_drop_row(st);
        PQclear(st->res);
        st->res = NULL;
        st->row = -1;
        st->nrows = 0;
}

static void pg_clear(struct db_stmt *base)
{
        struct pg_stmt *st = pg_st(base);

        pg_reset(base);
        memset(st->vals, 0, sizeof(st->vals));
        memset(st->lens, 0, sizeof(st->lens));
        memset(st->fmts, 0, sizeof(st->fmts));
}

static void pg_finalize(struct db_stmt *base)
{
        struct pg_stmt *st = pg_st(base);
        PGconn *c = pg_db(base->d)->pg;

        pg_reset(base);
        if (st->prepared && c && PQstatus(c) == CONNECTION_OK) {
                char sql[48];

                snprintf(sql, sizeof(sql), "DEALLOCATE %s", st->name);
                PQclear(PQexec(c, sql));
        }
        free(st->sql);
        free(st);
}

static int pg_param_count(struct db_stmt *base)
{
        return pg_st(base)->nparams;
}

/* A parameter the statement does not have is refused (as its count says). */
static bool pg_param(struct pg_stmt *st, int i)
{
        return i >= 1 && i <= st->nparams;
}

static int pg_bind_text(struct db_stmt *base, int i, const char *s)
{
        struct pg_stmt *st = pg_st(base);

        if (!pg_param(st, i))
                return -EIO;
        st->vals[i - 1] = s;
        st->lens[i - 1] = 0;
        st->fmts[i - 1] = 0;
        return 0;
}

static int pg_bind_blob(struct db_stmt *base, int i, const uint8_t *p, size_t n)
{
        struct pg_stmt *st = pg_st(base);

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

static int pg_bind_i64(struct db_stmt *base, int i, int64_t v)
{
        struct pg_stmt *st = pg_st(base);

        if (!pg_param(st, i))
                return -EIO;
        snprintf(st->ints[i - 1], sizeof(st->ints[i - 1]), "%" PRId64, v);
        st->vals[i - 1] = st->ints[i - 1];
        st->lens[i - 1] = 0;
        st->fmts[i - 1] = 0;
        return 0;
}

static int pg_run(struct pg_stmt *st)
{
        struct db *d = st->base.d;
        struct pg_db *p = pg_db(d);
        const char *state;
        bool constraint;
        ExecStatusType t;

        if (st->persistent && (!st->prepared || st->gen != d->gen)) {
                PGresult *r = PQprepare(p->pg, st->name, st->sql, st->nparams, st->types);

                db_count(d);
                t = PQresultStatus(r);
                if (t != PGRES_COMMAND_OK) {
                        pg_msg(p, "prepare");
                        PQclear(r);
                        return -EIO;
                }
                PQclear(r);
                st->prepared = true;
                st->gen = d->gen;
        }
        db_count(d);
        if (st->persistent)
                st->res = PQexecPrepared(p->pg, st->name, st->nparams, st->vals, st->lens, st->fmts,
                                         0);
        else
                st->res = PQexecParams(p->pg, st->sql, st->nparams, st->types, st->vals, st->lens,
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
        pg_msg(p, "statement");
        PQclear(st->res);
        st->res = NULL;
        return constraint ? DB_CONSTRAINT : -EIO;
}

static int pg_step(struct db_stmt *base)
{
        struct pg_stmt *st = pg_st(base);

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

static bool pg_has(struct pg_stmt *st, int i)
{
        return st->res && st->row >= 0 && st->row < st->nrows && i >= 0 && i < PQnfields(st->res) &&
               i < DB_PARAMS_MAX;
}

static bool pg_col_null(struct db_stmt *base, int i)
{
        struct pg_stmt *st = pg_st(base);

        return !pg_has(st, i) || PQgetisnull(st->res, st->row, i);
}

static int64_t pg_col_i64(struct db_stmt *base, int i)
{
        struct pg_stmt *st = pg_st(base);
        const char *v;

        if (pg_col_null(base, i))
                return 0;
        v = PQgetvalue(st->res, st->row, i);
        /* booleans as SQLite has them */
        if (!strcmp(v, "t"))
                return 1;
        if (!strcmp(v, "f"))
                return 0;
        return strtoll(v, NULL, 10);
}

static const char *pg_col_text(struct db_stmt *base, int i)
{
        struct pg_stmt *st = pg_st(base);

        if (pg_col_null(base, i))
                return NULL;
        return PQgetvalue(st->res, st->row, i);
}

static const uint8_t *pg_col_blob(struct db_stmt *base, int i, size_t *ret_len)
{
        struct pg_stmt *st = pg_st(base);
        const char *v;
        size_t n;

        *ret_len = 0;
        if (pg_col_null(base, i))
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
                        if (hex_decode(v + 2, n - 2, b, m, &m) < 0) {
                                free(b);
                                return NULL;
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

static int pg_changes(struct db_stmt *base)
{
        return pg_st(base)->changes;
}

static int64_t pg_last_id(struct db_stmt *base)
{
        return pg_st(base)->last_id;
}

const struct db_ops db_pg_ops = {
        .kind = DB_PG,
        .open = pg_open,
        .close = pg_close,
        .errmsg = pg_errmsg,
        .ok = pg_ok,
        .reconnect = pg_reconnect,
        .pages_written = pg_pages_written,
        .exec = pg_exec,
        .prepare = pg_prepare,
        .finalize = pg_finalize,
        .reset = pg_reset,
        .clear = pg_clear,
        .bind_text = pg_bind_text,
        .bind_blob = pg_bind_blob,
        .bind_i64 = pg_bind_i64,
        .param_count = pg_param_count,
        .step = pg_step,
        .col_i64 = pg_col_i64,
        .col_text = pg_col_text,
        .col_blob = pg_col_blob,
        .col_null = pg_col_null,
        .changes = pg_changes,
        .last_id = pg_last_id,
};
