/* SPDX-License-Identifier: MIT */
/*
 * Agent rows: read (one, all, the IMA offset), added, deleted, bound to a policy, counted by
 * status. Enrolment and decommission are store-enrol.c; identity, the filtered list and the stale
 * scan store-fleet.c.
 */
#include <stdio.h>

#include "daemon/store/store-internal.h"

void store_agent_free(struct store_agent *a)
{
        if (!a)
                return;
        if (a->packed) {
                free(a);
                return;
        }
        free(a->ak_public);
        free(a->ak_name);
        free(a->ek_cert);
        free(a->policy);
        free(a->last_status);
        free(a->last_policy);
        free(a->replay_state);
        free(a->labels);
        free(a);
}

int store_agent_row(struct db_stmt *st, struct store_agent **ret)
{
        struct store_agent *a = calloc(1, sizeof(*a));
        int e = 0;

        if (!a)
                return -ENOMEM;
        col_str(st, 0, a->id, sizeof(a->id));
        if ((e = col_state(st, 4, &a->state)) < 0 ||
            (e = col_blob(st, 1, &a->ak_public, &a->ak_public_len)) < 0 ||
            (e = col_blob(st, 2, &a->ak_name, &a->ak_name_len)) < 0 ||
            (e = col_blob(st, 3, &a->ek_cert, &a->ek_cert_len)) < 0 ||
            (e = col_text(st, 5, &a->policy)) < 0 || (e = col_text(st, 9, &a->last_status)) < 0 ||
            (e = col_text(st, 10, &a->last_policy)) < 0 ||
            (e = col_blob(st, 13, &a->replay_state, &a->replay_state_len)) < 0 ||
            (e = col_text(st, 18, &a->labels)) < 0) {
                store_agent_free(a);
                return e;
        }
        a->created = db_col_i64(st, 6);
        a->last_seen = db_col_i64(st, 7);
        a->next_due = db_col_i64(st, 8);
        a->last_result = db_col_i64(st, 11);
        a->ima_offset = (uint64_t)db_col_i64(st, 12);
        a->seq = (uint64_t)db_col_i64(st, 14);
        a->results_kept = -1; /* ST_AGENT_GET's column 19 (agent_get_fn) */
        col_str(st, 16, a->hostname, sizeof(a->hostname));
        col_str(st, 17, a->machine_id, sizeof(a->machine_id));
        a->has_ek_id = col_blob_fixed(st, 15, a->ek_id, sizeof(a->ek_id));
        *ret = a;
        return 0;
}

int store_agent_add_fn(struct conn *c, void *arg)
{
        const struct store_agent *a = arg;
        struct db_stmt *st = st_get(c, ST_AGENT_ADD);
        int rc, n;

        if (!st || bind_text(st, 1, a->id) < 0 ||
            bind_blob(st, 2, a->ak_public, a->ak_public_len) < 0 ||
            bind_blob(st, 3, a->ak_name, a->ak_name_len) < 0 ||
            bind_blob(st, 4, a->ek_cert, a->ek_cert_len) < 0 || bind_state(st, 5, a->state) < 0 ||
            bind_i64(st, 6, a->created) < 0 ||
            bind_blob(st, 7, a->has_ek_id ? a->ek_id : NULL, sizeof(a->ek_id)) < 0)
                return -EIO;
        rc = db_step(st);
        n = db_changes(st);
        db_reset(st);
        /* ON CONFLICT DO NOTHING: a duplicate id or AK inserts no row */
        if (rc == DB_CONSTRAINT || (rc == DB_DONE && n == 0))
                return -EEXIST;
        if (rc != DB_DONE)
                return -EIO;
        /* enrolled without credential activation (--insecure-trust-ak): active at once, and
         * watched for its first round (the stale scan) */
        if (a->state != AGENT_STATE_ACTIVE)
                return 0;
        if (exec_by_key(c, ST_STALE_WATCH_ADD, a->id) < 0)
                return -EIO;
        return outbox_on_enrolled(c, a->id, a->created);
}

int store_agent_add(struct store *s, const struct store_agent *a)
{
        int e = store_write(s, store_agent_add_fn, (void *)a);

        store_cache_agent_forget(store_cache_of(s), a->id);
        return e;
}

struct agent_get_arg {
        const char *id;
        struct store_agent *a;
};

static int agent_get_fn(struct conn *c, void *arg)
{
        struct agent_get_arg *g = arg;
        struct db_stmt *st;
        int e = row_by_key(c, ST_AGENT_GET, g->id, &st);

        if (e <= 0)
                return e < 0 ? e : -ENOENT;
        e = store_agent_row(st, &g->a);
        if (e == 0 && !db_col_null(st, 19))
                g->a->results_kept = db_col_i64(st, 19);
        db_reset(st);
        return e;
}

int store_agent_get(struct store *s, const char *id, struct store_agent **ret)
{
        struct agent_get_arg g = {.id = id};
        uint64_t gen;
        int e = store_cache_agent_get(store_cache_of(s), id, ret, &gen);

        if (e != 0)
                return e < 0 ? e : 0;
        if ((e = store_read(s, agent_get_fn, &g)) < 0)
                return e;
        store_cache_agent_add(store_cache_of(s), g.a, gen);
        *ret = g.a;
        return 0;
}

int store_state_active(enum agent_state state)
{
        switch (state) {
        case AGENT_STATE_ACTIVE:
                return 0;
        case AGENT_STATE_DECOMMISSIONED:
                return -EPERM;
        case AGENT_STATE_PENDING:
        default:
                return -EACCES; /* enrolled, not yet activated */
        }
}

int store_agent_active(const struct store_agent *a)
{
        return store_state_active(a->state);
}

struct list_arg {
        int (*fn)(const struct store_agent *a, void *arg);
        void *arg;
};

static int agent_list_fn(struct conn *c, void *arg)
{
        struct list_arg *l = arg;
        struct db_stmt *st = st_get(c, ST_AGENT_LIST);
        int rc, e = 0;

        if (!st)
                return -EIO;
        while ((rc = db_step(st)) == DB_ROW) {
                struct store_agent *a;

                if ((e = store_agent_row(st, &a)) < 0)
                        break;
                e = l->fn(a, l->arg);
                store_agent_free(a);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_reset(st);
        return e;
}

int store_agent_list(struct store *s, int (*fn)(const struct store_agent *a, void *arg), void *arg)
{
        struct list_arg l = {fn, arg};

        return store_read(s, agent_list_fn, &l);
}

struct delete_arg {
        const char *id;
        int64_t now;
};

static int agent_delete_fn(struct conn *c, void *arg)
{
        struct delete_arg *d = arg;
        int n;

        /* the event first: it reads the last status; it commits with the delete or not at all */
        if ((n = outbox_on_deleted(c, d->id, d->now)) < 0)
                return n;
        n = exec_by_key(c, ST_AGENT_DELETE, d->id);
        if (n < 0)
                return n;
        if (exec_by_key(c, ST_RESULTS_DELETE, d->id) < 0)
                return -EIO;
        return n == 0 ? -ENOENT : 0;
}

int store_agent_delete(struct store *s, const char *id, int64_t now)
{
        struct delete_arg d = {id, now};
        int e = store_write(s, agent_delete_fn, &d);

        store_cache_agent_forget(store_cache_of(s), id);
        return e;
}

struct set_policy_arg {
        const char *id, *policy;
};

static int agent_set_policy_fn(struct conn *c, void *arg)
{
        struct set_policy_arg *p = arg;
        struct db_stmt *st;
        int n;

        if ((n = exists(c, ST_AGENT_EXISTS, p->id)) <= 0)
                return n < 0 ? n : -ENOENT;
        if (p->policy && (n = exists(c, ST_POLICY_LIVE, p->policy)) <= 0)
                return n < 0 ? n : -ENODATA;
        st = st_get(c, ST_AGENT_SET_POLICY);
        if (!st || bind_text(st, 1, p->id) < 0 || bind_text(st, 2, p->policy) < 0)
                return -EIO;
        n = step_changes(c, st);
        return n < 0 ? n : 0;
}

int store_agent_set_policy(struct store *s, const char *id, const char *policy)
{
        struct set_policy_arg p = {id, policy};
        int e = store_write(s, agent_set_policy_fn, &p);

        store_cache_agent_forget(store_cache_of(s), id);
        return e;
}

struct counts_arg {
        int64_t now, grace, interval;
        struct store_counts c;
};

static int agent_counts_fn(struct conn *c, void *arg)
{
        struct counts_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_AGENT_COUNTS);
        int rc;

        if (!st || bind_i64(st, 1, a->now) < 0 || bind_i64(st, 2, a->grace) < 0 ||
            bind_i64(st, 3, a->interval) < 0)
                return -EIO;
        rc = db_step(st);
        if (rc == DB_ROW) {
                a->c.decommissioned = (uint64_t)db_col_i64(st, 0);
                a->c.failing = (uint64_t)db_col_i64(st, 1);
                a->c.stale = (uint64_t)db_col_i64(st, 2);
                a->c.active = (uint64_t)db_col_i64(st, 3);
                a->c.never = (uint64_t)db_col_i64(st, 4);
        }
        db_reset(st);
        return rc == DB_ROW ? 0 : -EIO;
}

int store_agent_counts(struct store *s, int64_t now, int64_t grace, int64_t interval,
                       struct store_counts *ret)
{
        struct counts_arg a = {.now = now, .grace = grace, .interval = interval};
        int e = store_read(s, agent_counts_fn, &a);

        if (e < 0)
                return e;
        *ret = a.c;
        return 0;
}
