/* SPDX-License-Identifier: MIT */
/*
 * daemon/db.h on SQLite and on PostgreSQL (libpq). The SQLite half is a thin veneer over
 * sqlite3_stmt (the store's fast path keeps its cost); the PostgreSQL half keeps per statement
 * the bound parameters and the whole result of its last execution.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "daemon/store/db.h"
#include "util/hex.h"

#define DB_PARAMS_MAX 32
#define PG_BYTEA_OID 17
#define PG_TEXT_OID 25

struct db {
        enum db_kind kind;
        sqlite3 *sq;
        PGconn *pg;
        atomic_uint_fast64_t *counter;
        unsigned names; /* PostgreSQL prepared statement names: s1, s2, ... */
        unsigned gen;   /* PostgreSQL: sessions so far (a reconnect drops prepared statements) */
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

/* ---- the WAL write buffer (the "attestd-wal" VFS) ---- */

/*
 * SQLite writes each WAL frame with two pwrite()s, its 24-byte header and then the page: a group
 * commit of 30 pages cost 60 system calls (13 per attestation under bench-daemon). This VFS
 * wraps the default one; a WAL file's writes that follow one another are gathered in a buffer
 * and written with one pwrite() before anything can depend on them:
 * - after the page of a commit frame (a frame header whose "database size" field is not 0): the
 *   commit's last write reports the failure of any of its frames, as without the buffer, and
 *   the frames are in the file before SQLite publishes the commit in the wal-index (whatever
 *   PRAGMA synchronous says: with NORMAL no xSync follows a commit);
 * - before xSync (durability is SQLite's, unchanged), xRead (a spilled page read back, a
 *   checkpoint), xTruncate, xFileSize, xFileControl, xLock/xUnlock and xClose;
 * - when a write does not follow the buffered ones or would pass DB_WALBUF_MAX;
 * in writes of at most DB_WALBUF_CHUNK.
 * Every other file (the database, its shared memory) is the default VFS's own, untouched.
 */
#define DB_WALBUF_MAX (512u * 1024)
/* the unix VFS writes at most 0x1ffff bytes a call (it masks the length: more is a short write,
 * SQLITE_FULL) */
#define DB_WALBUF_CHUNK (124u * 1024)
#define DB_WAL_FRAME_HDR 24
#define DB_VFS_NAME "attestd-wal"

struct walbuf_file {
        sqlite3_file base; /* pMethods = &walbuf_io */
        sqlite3_file *real;
        uint8_t *buf;
        size_t len, cap;
        sqlite3_int64 off; /* file offset of buf[0] */
        bool commit;       /* the last write was a commit frame's header: flush after its page */
};

static sqlite3_vfs *walbuf_real;
static atomic_uint_fast64_t walbuf_writes, walbuf_flushes;

static int walbuf_flush(struct walbuf_file *f)
{
        int rc = SQLITE_OK;

        for (size_t done = 0, n; done < f->len && rc == SQLITE_OK; done += n) {
                n = f->len - done < DB_WALBUF_CHUNK ? f->len - done : DB_WALBUF_CHUNK;
                rc = f->real->pMethods->xWrite(f->real, f->buf + done, (int)n,
                                               f->off + (sqlite3_int64)done);
                atomic_fetch_add_explicit(&walbuf_flushes, 1, memory_order_relaxed);
        }
        /* dropped even on failure: SQLite rolls the transaction back and rewrites its frames */
        f->len = 0;
        f->commit = false;
        return rc;
}

static int walbuf_close(sqlite3_file *pf)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f), rc2 = f->real->pMethods->xClose(f->real);

        sqlite3_free(f->buf);
        f->buf = NULL;
        f->cap = 0;
        return rc != SQLITE_OK ? rc : rc2;
}

static int walbuf_read(sqlite3_file *pf, void *p, int n, sqlite3_int64 off)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, p, n, off);
}

static int walbuf_write(sqlite3_file *pf, const void *p, int n, sqlite3_int64 off)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        size_t un = (size_t)n;
        int rc;

        atomic_fetch_add_explicit(&walbuf_writes, 1, memory_order_relaxed);
        if (n <= 0 || off < 0)
                return f->real->pMethods->xWrite(f->real, p, n, off);
        if (f->len && (off != f->off + (sqlite3_int64)f->len || un > DB_WALBUF_MAX - f->len) &&
            (rc = walbuf_flush(f)) != SQLITE_OK)
                return rc;
        if (un > DB_WALBUF_MAX)
                return f->real->pMethods->xWrite(f->real, p, n, off);
        if (f->len + un > f->cap) {
                size_t cap = f->cap ? f->cap : 64 * 1024;
                uint8_t *nb;

                while (cap < f->len + un)
                        cap *= 2;
                if (cap > DB_WALBUF_MAX)
                        cap = DB_WALBUF_MAX;
                nb = sqlite3_realloc64(f->buf, cap);
                if (!nb) {
                        rc = walbuf_flush(f);
                        return rc != SQLITE_OK ? rc : f->real->pMethods->xWrite(f->real, p, n, off);
                }
                f->buf = nb;
                f->cap = cap;
        }
        if (!f->len)
                f->off = off;
        memcpy(f->buf + f->len, p, un);
        f->len += un;
        /* a frame header (its 24 bytes, written alone, never at offset 0 where the 32-byte WAL
         * header is): bytes 4..7 are the database size after a commit, 0 in other frames */
        if (n == DB_WAL_FRAME_HDR && off > 0) {
                const uint8_t *h = p;

                f->commit = (h[4] | h[5] | h[6] | h[7]) != 0;
                return SQLITE_OK;
        }
        return f->commit ? walbuf_flush(f) : SQLITE_OK;
}

static int walbuf_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int walbuf_sync(sqlite3_file *pf, int flags)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int walbuf_size(sqlite3_file *pf, sqlite3_int64 *ret)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, ret);
}

static int walbuf_lock(sqlite3_file *pf, int level)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xLock(f->real, level);
}

static int walbuf_unlock(sqlite3_file *pf, int level)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xUnlock(f->real, level);
}

static int walbuf_check_reserved(sqlite3_file *pf, int *ret)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;

        return f->real->pMethods->xCheckReservedLock(f->real, ret);
}

static int walbuf_fcntl(sqlite3_file *pf, int op, void *arg)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc = walbuf_flush(f);

        return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int walbuf_sector_size(sqlite3_file *pf)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;

        return f->real->pMethods->xSectorSize(f->real);
}

static int walbuf_device(sqlite3_file *pf)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;

        return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* version 1: SQLite maps no shared memory and no pages of a WAL file */
static const sqlite3_io_methods walbuf_io = {
        .iVersion = 1,
        .xClose = walbuf_close,
        .xRead = walbuf_read,
        .xWrite = walbuf_write,
        .xTruncate = walbuf_truncate,
        .xSync = walbuf_sync,
        .xFileSize = walbuf_size,
        .xLock = walbuf_lock,
        .xUnlock = walbuf_unlock,
        .xCheckReservedLock = walbuf_check_reserved,
        .xFileControl = walbuf_fcntl,
        .xSectorSize = walbuf_sector_size,
        .xDeviceCharacteristics = walbuf_device,
};

static int walbuf_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pf, int flags,
                       int *ret_flags)
{
        struct walbuf_file *f = (struct walbuf_file *)pf;
        int rc;

        (void)vfs;
        /* anything but a WAL file: the default VFS's own file in our slot (it is larger) */
        if (!(flags & SQLITE_OPEN_WAL))
                return walbuf_real->xOpen(walbuf_real, name, pf, flags, ret_flags);
        memset(f, 0, sizeof(*f));
        f->real = (sqlite3_file *)(f + 1);
        rc = walbuf_real->xOpen(walbuf_real, name, f->real, flags, ret_flags);
        if (rc != SQLITE_OK) {
                f->base.pMethods = NULL; /* SQLite calls no xClose then */
                return rc;
        }
        f->base.pMethods = &walbuf_io;
        return SQLITE_OK;
}

static int walbuf_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
        (void)vfs;
        return walbuf_real->xDelete(walbuf_real, name, sync_dir);
}

static int walbuf_access(sqlite3_vfs *vfs, const char *name, int flags, int *ret)
{
        (void)vfs;
        return walbuf_real->xAccess(walbuf_real, name, flags, ret);
}

static int walbuf_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
        (void)vfs;
        return walbuf_real->xFullPathname(walbuf_real, name, n, out);
}

static void *walbuf_dlopen(sqlite3_vfs *vfs, const char *name)
{
        (void)vfs;
        return walbuf_real->xDlOpen(walbuf_real, name);
}

static void walbuf_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
        (void)vfs;
        walbuf_real->xDlError(walbuf_real, n, msg);
}

static void (*walbuf_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
        (void)vfs;
        return walbuf_real->xDlSym(walbuf_real, h, sym);
}

static void walbuf_dlclose(sqlite3_vfs *vfs, void *h)
{
        (void)vfs;
        walbuf_real->xDlClose(walbuf_real, h);
}

static int walbuf_randomness(sqlite3_vfs *vfs, int n, char *out)
{
        (void)vfs;
        return walbuf_real->xRandomness(walbuf_real, n, out);
}

static int walbuf_sleep(sqlite3_vfs *vfs, int us)
{
        (void)vfs;
        return walbuf_real->xSleep(walbuf_real, us);
}

static int walbuf_time(sqlite3_vfs *vfs, double *ret)
{
        (void)vfs;
        return walbuf_real->xCurrentTime(walbuf_real, ret);
}

static int walbuf_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
        (void)vfs;
        return walbuf_real->xGetLastError(walbuf_real, n, msg);
}

static int walbuf_time64(sqlite3_vfs *vfs, sqlite3_int64 *ret)
{
        (void)vfs;
        return walbuf_real->xCurrentTimeInt64(walbuf_real, ret);
}

static sqlite3_vfs walbuf_vfs = {
        .iVersion = 2,
        .zName = DB_VFS_NAME,
        .xOpen = walbuf_open,
        .xDelete = walbuf_delete,
        .xAccess = walbuf_access,
        .xFullPathname = walbuf_full_pathname,
        .xDlOpen = walbuf_dlopen,
        .xDlError = walbuf_dlerror,
        .xDlSym = walbuf_dlsym,
        .xDlClose = walbuf_dlclose,
        .xRandomness = walbuf_randomness,
        .xSleep = walbuf_sleep,
        .xCurrentTime = walbuf_time,
        .xGetLastError = walbuf_last_error,
        .xCurrentTimeInt64 = walbuf_time64,
};

static pthread_once_t walbuf_once = PTHREAD_ONCE_INIT;
static int walbuf_rc = SQLITE_ERROR;

static void walbuf_register(void)
{
        sqlite3_vfs *real = sqlite3_vfs_find(NULL);

        if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
                return;
        walbuf_real = real;
        walbuf_vfs.szOsFile = (int)sizeof(struct walbuf_file) + real->szOsFile;
        walbuf_vfs.mxPathname = real->mxPathname;
        walbuf_rc = sqlite3_vfs_register(&walbuf_vfs, 0);
}

/* The VFS to open SQLite files with: "attestd-wal", or NULL (the default) if it could not be. */
static const char *walbuf_name(void)
{
        pthread_once(&walbuf_once, walbuf_register);
        return walbuf_rc == SQLITE_OK ? DB_VFS_NAME : NULL;
}

void db_wal_stats(uint64_t *ret_writes, uint64_t *ret_flushes)
{
        *ret_writes = atomic_load(&walbuf_writes);
        *ret_flushes = atomic_load(&walbuf_flushes);
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
                rc = sqlite3_open_v2(target, &d->sq,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                             SQLITE_OPEN_NOMUTEX,
                                     walbuf_name());
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

unsigned db_session(const struct db *d)
{
        return __atomic_load_n(&d->gen, __ATOMIC_ACQUIRE);
}

int db_reconnect(struct db *d)
{
        if (d->kind == DB_SQLITE || PQstatus(d->pg) == CONNECTION_OK)
                return 0;
        PQreset(d->pg);
        /* the new session has none of the old one's prepared statements nor locks */
        __atomic_fetch_add(&d->gen, 1, __ATOMIC_RELEASE);
        return PQstatus(d->pg) == CONNECTION_OK ? 0 : -EIO;
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

        if (st->persistent && (!st->prepared || st->gen != d->gen)) {
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
                st->gen = d->gen;
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
