/* SPDX-License-Identifier: MIT */

#include "daemon/store/store-internal.h"

/* ---- policies ---- */

struct policy_put_arg {
        const char *name, *body;
        int64_t now, version;
};

static int policy_put_fn(struct conn *c, void *arg)
{
        struct policy_put_arg *p = arg;
        struct db_stmt *st = st_get(c, ST_POLICY_NEXT);
        int rc;

        if (!st || bind_text(st, 1, p->name) < 0)
                return -EIO;
        rc = db_step(st);
        if (rc != DB_ROW) {
                db_reset(st);
                return -EIO;
        }
        p->version = db_col_i64(st, 0);
        db_reset(st);
        st = st_get(c, ST_POLICY_ADD);
        if (!st || bind_text(st, 1, p->name) < 0 || bind_i64(st, 2, p->version) < 0 ||
            bind_text(st, 3, p->body) < 0 || bind_i64(st, 4, p->now) < 0)
                return -EIO;
        rc = step_changes(c, st);
        return rc < 0 ? rc : 0;
}

int store_policy_put(struct store *s, const char *name, const char *body, int64_t now,
                     int64_t *ret_version)
{
        struct policy_put_arg p = {name, body, now, 0};
        int e = store_write(s, policy_put_fn, &p);

        store_cache_policy_forget(store_cache_of(s));
        if (e < 0)
                return e;
        *ret_version = p.version;
        return 0;
}

struct policy_get_arg {
        const char *name;
        int64_t version, created;
        char *body;
};

static int policy_get_fn(struct conn *c, void *arg)
{
        struct policy_get_arg *p = arg;
        struct db_stmt *st = st_get(c, p->version ? ST_POLICY_GET_VERSION : ST_POLICY_GET_LATEST);
        int rc, e;

        if (!st || bind_text(st, 1, p->name) < 0 || (p->version && bind_i64(st, 2, p->version) < 0))
                return -EIO;
        rc = db_step(st);
        if (rc != DB_ROW) {
                db_reset(st);
                return rc == DB_DONE ? -ENOENT : -EIO;
        }
        e = col_text(st, 0, &p->body);
        p->version = db_col_i64(st, 1);
        p->created = db_col_i64(st, 2);
        db_reset(st);
        return e;
}

int store_policy_get(struct store *s, const char *name, int64_t version, char **ret_body,
                     int64_t *ret_version, int64_t *ret_created)
{
        struct policy_get_arg p = {.name = name, .version = version};
        int e = store_read(s, policy_get_fn, &p);

        if (e < 0)
                return e;
        *ret_body = p.body;
        if (ret_version)
                *ret_version = p.version;
        if (ret_created)
                *ret_created = p.created;
        return 0;
}

struct policy_version_arg {
        const char *name;
        int64_t version;
};

static int policy_version_fn(struct conn *c, void *arg)
{
        struct policy_version_arg *p = arg;
        struct db_stmt *st;
        int r = row_by_key(c, ST_POLICY_LATEST, p->name, &st);

        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        p->version = db_col_i64(st, 0);
        db_reset(st);
        return 0;
}

int store_policy_version(struct store *s, const char *name, int64_t *ret_version)
{
        struct policy_version_arg p = {name, 0};
        uint64_t gen;
        int e = store_cache_policy_get(store_cache_of(s), name, &p.version, &gen);

        if (e == 0) {
                e = store_read(s, policy_version_fn, &p);
                if (e < 0 && e != -ENOENT)
                        return e;
                /* "none live" is cached too: an agent without a policy looks up "default" */
                store_cache_policy_add(store_cache_of(s), name, e < 0 ? 0 : p.version, gen);
        }
        if (p.version == 0)
                return -ENOENT;
        *ret_version = p.version;
        return 0;
}

struct policy_list_arg {
        int (*fn)(const char *name, int64_t version, int64_t created, void *arg);
        void *arg;
};

static int policy_list_fn(struct conn *c, void *arg)
{
        struct policy_list_arg *l = arg;
        struct db_stmt *st = st_get(c, ST_POLICY_LIST);
        int rc, e = 0;

        if (!st)
                return -EIO;
        while ((rc = db_step(st)) == DB_ROW) {
                e = l->fn(db_col_text(st, 0), db_col_i64(st, 1), db_col_i64(st, 2), l->arg);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_reset(st);
        return e;
}

int store_policy_list(struct store *s,
                      int (*fn)(const char *name, int64_t version, int64_t created, void *arg),
                      void *arg)
{
        struct policy_list_arg l = {fn, arg};

        return store_read(s, policy_list_fn, &l);
}

static int policy_delete_fn(struct conn *c, void *arg)
{
        int n;

        if ((n = exists(c, ST_POLICY_BOUND, arg)) != 0)
                return n < 0 ? n : -EBUSY;
        n = exec_by_key(c, ST_POLICY_DELETE, arg);
        if (n < 0)
                return n;
        return n == 0 ? -ENOENT : 0;
}

int store_policy_delete(struct store *s, const char *name)
{
        int e = store_write(s, policy_delete_fn, (void *)name);

        store_cache_policy_forget(store_cache_of(s));
        return e;
}
