/* SPDX-License-Identifier: MIT */
/*
 * The WAL write buffer under the SQLite backend (daemon/store/db-sqlite.c): the "attestd-wal"
 * VFS, which SQLite files of the store are opened through.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "daemon/store/db-backend.h"

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
const char *db_wal_vfs_name(void)
{
        pthread_once(&walbuf_once, walbuf_register);
        return walbuf_rc == SQLITE_OK ? DB_VFS_NAME : NULL;
}

void db_wal_stats(uint64_t *ret_writes, uint64_t *ret_flushes)
{
        *ret_writes = atomic_load(&walbuf_writes);
        *ret_flushes = atomic_load(&walbuf_flushes);
}
