/* SPDX-License-Identifier: MIT */
/*
 * The webhook outbox (schema 6): events written in the transaction of the change that causes
 * them, per-receiver cursors, the cap, pruning and the stale scan. docs/webhooks.md says what a
 * receiver sees.
 */
#include <stdio.h>

#include "daemon/store/store-internal.h"

/* ---- writing events (inside the caller's transaction) ---- */

struct event_in {
        int64_t time;
        const char *type, *agent, *status, *previous, *claims, *reason;
};

/* The agent's host name when the schema has one (helper fleet's column), else NULL. */
static char *hostname_of(struct conn *c, const char *agent)
{
        struct db_stmt *st = st_get(c, ST_OUTBOX_HOSTNAME);
        char *h = NULL;

        if (!st || bind_text(st, 1, agent) < 0)
                return NULL;
        if (db_step(st) == DB_ROW && col_text(st, 0, &h) < 0)
                h = NULL;
        db_reset(st);
        return h;
}

/* Insert the event, then drop the oldest beyond the cap (the undelivered ones counted). */
static int event_put(struct conn *c, const struct event_in *ev)
{
        _cleanup_free_ char *host = hostname_of(c, ev->agent);
        struct db_stmt *st = NULL;
        int64_t id;
        int n;

        /*
         * PostgreSQL: ids come from a sequence, and concurrent transactions of several instances
         * could commit a lower id after a higher one, which a delivery cursor (id > cursor) would
         * then skip for ever. Event-writing transactions take one advisory lock until they end:
         * ids are committed in id order. (SQLite: one writer at a time already.)
         */
        if (c->pg && ((st = st_get(c, ST_EVENT_LOCK)) == NULL || db_step(st) != DB_ROW)) {
                if (st)
                        db_reset(st);
                return -EIO;
        }
        if (c->pg)
                db_reset(st);
        st = st_get(c, ST_EVENT_ADD);
        if (!st || bind_i64(st, 1, ev->time) < 0 || bind_text(st, 2, ev->type) < 0 ||
            bind_text(st, 3, ev->agent) < 0 || bind_text(st, 4, host) < 0 ||
            bind_text(st, 5, ev->status) < 0 || bind_text(st, 6, ev->previous) < 0 ||
            bind_text(st, 7, ev->claims) < 0 || bind_text(st, 8, ev->reason) < 0)
                return -EIO;
        if (step_changes(c, st) != 1)
                return -EIO;
        id = db_last_id(st);
        st = st_get(c, ST_EVENT_CAP_LOST);
        if (!st || bind_i64(st, 1, id) < 0 || db_step(st) != DB_ROW) {
                if (st)
                        db_reset(st);
                return -EIO;
        }
        n = (int)db_col_i64(st, 0);
        db_reset(st);
        st = st_get(c, ST_EVENT_CAP);
        if (!st || bind_i64(st, 1, id) < 0 || step_changes(c, st) < 0)
                return -EIO;
        if (n > 0) {
                st = st_get(c, ST_EVENT_DROPPED);
                if (!st || bind_i64(st, 1, n) < 0 || step_changes(c, st) < 0)
                        return -EIO;
        }
        return 0;
}

/*
 * The agent's last status, stale mark and state: 1 with them, 0 when there is no such agent,
 * -EBADMSG an unknown state.
 */
static int agent_prev(struct conn *c, const char *agent, char *status, size_t n, bool *ret_stale,
                      enum agent_state *ret_state)
{
        struct db_stmt *st;
        int r = row_by_key(c, ST_OUTBOX_PREV, agent, &st);

        if (r <= 0)
                return r;
        col_str(st, 0, status, n);
        *ret_stale = db_col_i64(st, 1) != 0;
        r = col_state(st, 2, ret_state);
        db_reset(st);
        return r < 0 ? r : 1;
}

int outbox_on_verdict(struct conn *c, const char *agent, const char *status, const char *failing,
                      const char *reason, int64_t now)
{
        char prev[16], type[STORE_EVENT_TYPE_MAX];
        enum agent_state state;
        bool stale = false;
        const char *was;
        int r = agent_prev(c, agent, prev, sizeof(prev), &stale, &state);

        if (r <= 0)
                return r; /* no agent: the update that follows says so */
        /* the verdict's update clears the stale mark (agents.stale_since) */
        was = stale ? "stale" : prev[0] ? prev : NULL;
        if (was && !strcmp(was, status))
                return 0; /* no change */
        /* what failed comes typed from the judge (api-attest.c), rendered: never re-read here */
        snprintf(type, sizeof(type), "agent.%s", status);
        return event_put(c, &(struct event_in){.time = now,
                                               .type = type,
                                               .agent = agent,
                                               .status = status,
                                               .previous = was,
                                               .claims = failing ? failing : "[]",
                                               .reason = reason});
}

int outbox_on_enrolled(struct conn *c, const char *agent, int64_t now)
{
        return event_put(c, &(struct event_in){.time = now,
                                               .type = "agent.enrolled",
                                               .agent = agent,
                                               .status = "enrolled",
                                               .claims = "[]"});
}

int outbox_on_decommission(struct conn *c, const char *agent, int64_t now)
{
        char prev[16];
        enum agent_state state;
        bool stale = false;
        int r = agent_prev(c, agent, prev, sizeof(prev), &stale, &state);

        if (r <= 0 || state == AGENT_STATE_DECOMMISSIONED)
                return r; /* nothing changes */
        return event_put(c, &(struct event_in){.time = now,
                                               .type = "agent.decommissioned",
                                               .agent = agent,
                                               .status = "decommissioned",
                                               .previous = stale     ? "stale"
                                                           : prev[0] ? prev
                                                                     : NULL,
                                               .claims = "[]"});
}

int outbox_on_readmit(struct conn *c, const char *agent, int64_t now)
{
        return event_put(c, &(struct event_in){.time = now,
                                               .type = "agent.readmitted",
                                               .agent = agent,
                                               .status = "readmitted",
                                               .previous = "decommissioned",
                                               .claims = "[]"});
}

int outbox_on_deleted(struct conn *c, const char *agent, int64_t now)
{
        char prev[16];
        enum agent_state state;
        bool stale = false;
        int r = agent_prev(c, agent, prev, sizeof(prev), &stale, &state);

        if (r <= 0)
                return r; /* no agent: the delete says so */
        return event_put(c, &(struct event_in){.time = now,
                                               .type = "agent.deleted",
                                               .agent = agent,
                                               .status = "deleted",
                                               .previous = state == AGENT_STATE_DECOMMISSIONED
                                                                   ? "decommissioned"
                                                           : stale   ? "stale"
                                                           : prev[0] ? prev
                                                                     : NULL,
                                               .claims = "[]"});
}

/* ---- set-up, delivery cursors ---- */

struct setup_arg {
        uint64_t cap;
        const char *const *urls;
        size_t n;
};

/* A one-off statement with up to two parameters (NULL text: not bound), stepped once. */
static int once(struct conn *c, const char *sql, const char *t1, const int64_t *i1, int64_t *ret,
                int *ret_changes)
{
        struct db_stmt *st = NULL;
        int rc;

        if (db_prepare(c->db, sql, NULL, 0, false, &st) < 0)
                return -EIO;
        if ((t1 && bind_text(st, 1, t1) < 0) || (i1 && bind_i64(st, t1 ? 2 : 1, *i1) < 0)) {
                db_finalize(st);
                return -EIO;
        }
        rc = db_step(st);
        if (rc == DB_ROW && ret)
                *ret = db_col_i64(st, 0);
        if (ret_changes)
                *ret_changes = db_changes(st);
        db_finalize(st);
        return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -EIO;
}

static int setup_fn(struct conn *c, void *arg)
{
        struct setup_arg *a = arg;
        struct db_stmt *st = NULL;
        int64_t cap = (int64_t)a->cap;
        int rc;

        /* the cursors of the configured receivers survive (a new one starts after the newest
         * event); others go */
        for (size_t i = 0; i < a->n; i++)
                if (once(c,
                         "INSERT INTO webhook_cursors (url, delivered) SELECT ?1, (SELECT"
                         " coalesce(max(id), 0) FROM events) WHERE true ON CONFLICT DO NOTHING",
                         a->urls[i], NULL, NULL, NULL) < 0)
                        return -EIO;
        if (db_prepare(c->db, "SELECT url FROM webhook_cursors", NULL, 0, false, &st) < 0)
                return -EIO;
        /* gone receivers: collected first, deleted after (one statement at a time) */
        {
                char **gone = NULL;
                size_t ngone = 0;

                while ((rc = db_step(st)) == DB_ROW) {
                        const char *u = db_col_text(st, 0);
                        bool keep = false;
                        char **g;

                        for (size_t i = 0; u && i < a->n && !keep; i++)
                                keep = !strcmp(u, a->urls[i]);
                        if (keep || !u)
                                continue;
                        g = realloc(gone, (ngone + 1) * sizeof(*gone));
                        if (!g || !(g[ngone] = strdup(u))) {
                                rc = -ENOMEM;
                                if (g)
                                        gone = g;
                                break;
                        }
                        gone = g;
                        ngone++;
                }
                db_finalize(st);
                for (size_t i = 0; rc == DB_DONE && i < ngone; i++)
                        if (once(c, "DELETE FROM webhook_cursors WHERE url = ?1", gone[i], NULL,
                                 NULL, NULL) < 0)
                                rc = -EIO;
                for (size_t i = 0; i < ngone; i++)
                        free(gone[i]);
                free(gone);
                if (rc != DB_DONE)
                        return rc < 0 ? rc : -EIO;
        }
        return once(c, "UPDATE outbox_meta SET cap = ?1 WHERE id = 1", NULL, &cap, NULL, NULL) < 0
                       ? -EIO
                       : 0;
}

int store_outbox_setup(struct store *s, uint64_t cap, const char *const *urls, size_t n)
{
        struct setup_arg a = {cap, urls, n};

        if (cap == 0 || cap > INT64_MAX)
                return -EINVAL;
        return store_write(s, setup_fn, &a);
}

struct cursor_arg {
        const char *url;
        int64_t id;
};

static int cursor_fn(struct conn *c, void *arg)
{
        struct cursor_arg *a = arg;
        int rc = once(c, "SELECT delivered FROM webhook_cursors WHERE url = ?1", a->url, NULL,
                      &a->id, NULL);

        return rc == 1 ? 0 : rc == 0 ? -ENOENT : -EIO;
}

int store_outbox_cursor(struct store *s, const char *url, int64_t *ret)
{
        struct cursor_arg a = {url, 0};
        int e = store_read(s, cursor_fn, &a);

        if (e == 0)
                *ret = a.id;
        return e;
}

static int delivered_fn(struct conn *c, void *arg)
{
        struct cursor_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_CURSOR_SET);

        if (!st || bind_text(st, 1, a->url) < 0 || bind_i64(st, 2, a->id) < 0)
                return -EIO;
        return step_changes(c, st) < 0 ? -EIO : 0;
}

int store_outbox_delivered(struct store *s, const char *url, int64_t id)
{
        struct cursor_arg a = {url, id};

        return store_write(s, delivered_fn, &a);
}

struct next_arg {
        int64_t after;
        unsigned limit;
        int (*fn)(const struct store_event *ev, void *arg);
        void *arg;
};

static const char *col_or_null(struct db_stmt *st, int i)
{
        return db_col_text(st, i);
}

static int next_fn(struct conn *c, void *arg)
{
        struct next_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_EVENT_NEXT);
        int rc, e = 0;

        if (!st || bind_i64(st, 1, a->after) < 0 || bind_i64(st, 2, a->limit) < 0)
                return -EIO;
        while ((rc = db_step(st)) == DB_ROW) {
                struct store_event ev = {
                        .id = db_col_i64(st, 0),
                        .time = db_col_i64(st, 1),
                        .type = col_or_null(st, 2),
                        .agent = col_or_null(st, 3),
                        .hostname = col_or_null(st, 4),
                        .status = col_or_null(st, 5),
                        .previous = col_or_null(st, 6),
                        .claims = col_or_null(st, 7),
                        .reason = col_or_null(st, 8),
                };

                if (!ev.type || !ev.agent) {
                        e = -EIO;
                        break;
                }
                if ((e = a->fn(&ev, a->arg)) < 0)
                        break;
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_reset(st);
        return e;
}

int store_outbox_next(struct store *s, int64_t after, unsigned limit,
                      int (*fn)(const struct store_event *ev, void *arg), void *arg)
{
        struct next_arg a = {after, limit, fn, arg};

        return store_read(s, next_fn, &a);
}

/* ---- the stale scan (store_agent_stale_scan marks, this records the event) ---- */

int outbox_on_stale(struct conn *c, const char *agent, const char *last_status, int64_t now)
{
        return event_put(c, &(struct event_in){.time = now,
                                               .type = "agent.stale",
                                               .agent = agent,
                                               .status = "stale",
                                               .previous = last_status,
                                               .claims = "[]"});
}

/* ---- pruning, statistics ---- */

struct prune_arg {
        int64_t before;
        unsigned max;
        uint64_t n;
};

static int prune_fn(struct conn *c, void *arg)
{
        struct prune_arg *a = arg;
        struct db_stmt *st = NULL;
        int rc, n;

        /* acknowledged by every receiver: at or below the lowest cursor (no receiver: all) */
        if (db_prepare(c->db,
                       "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE"
                       " id <= (SELECT coalesce(min(delivered), (SELECT max(id) FROM"
                       " events)) FROM webhook_cursors) AND time < ?1 ORDER BY id"
                       " LIMIT ?2)",
                       NULL, 0, false, &st) < 0)
                return -EIO;
        if (bind_i64(st, 1, a->before) < 0 || bind_i64(st, 2, a->max) < 0) {
                db_finalize(st);
                return -EIO;
        }
        rc = db_step(st);
        n = db_changes(st);
        db_finalize(st);
        if (rc != DB_DONE)
                return -EIO;
        a->n = (uint64_t)n;
        return 0;
}

int store_outbox_prune(struct store *s, int64_t before, unsigned max, uint64_t *ret_n)
{
        struct prune_arg a = {before, max, 0};
        int e = store_write(s, prune_fn, &a);

        if (e == 0 && ret_n)
                *ret_n = a.n;
        return e;
}

static int stats_fn(struct conn *c, void *arg)
{
        struct store_outbox_stats *r = arg;
        int64_t events, pending, dropped;

        if (store_query_i64(c, "SELECT count(*) FROM events", &events) < 0 ||
            store_query_i64(c,
                            "SELECT count(*) FROM events WHERE id > (SELECT coalesce(min("
                            "delivered), (SELECT coalesce(max(id), 0) FROM events)) FROM"
                            " webhook_cursors)",
                            &pending) < 0 ||
            store_query_i64(c, "SELECT dropped FROM outbox_meta WHERE id = 1", &dropped) < 0)
                return -EIO;
        r->events = (uint64_t)events;
        r->pending = (uint64_t)pending;
        r->dropped = (uint64_t)dropped;
        return 0;
}

int store_outbox_stats(struct store *s, struct store_outbox_stats *ret)
{
        struct store_outbox_stats r = {0};
        int e = store_read(s, stats_fn, &r);

        if (e == 0)
                *ret = r;
        return e;
}
