/* SPDX-License-Identifier: MIT */
/*
 * The webhook outbox (schema 6): events written in the transaction of the change that causes
 * them, per-receiver cursors, the cap, pruning and the stale scan. docs/webhooks.md says what a
 * receiver sees.
 */
#include <stdio.h>

#include <jansson.h>

#include "daemon/store-internal.h"

/* ---- writing events (inside the caller's transaction) ---- */

struct event_in {
        int64_t time;
        const char *type, *agent, *status, *previous, *claims, *reason;
};

/* The agent's host name when the schema has one (helper fleet's column), else NULL. */
static char *hostname_of(struct conn *c, const char *agent)
{
        sqlite3_stmt *st = st_get(c, ST_OUTBOX_HOSTNAME);
        char *h = NULL;

        if (!st || bind_text(st, 1, agent) < 0)
                return NULL;
        if (sqlite3_step(st) == SQLITE_ROW && col_text(st, 0, &h) < 0)
                h = NULL;
        sqlite3_reset(st);
        return h;
}

/* Insert the event, then drop the oldest beyond the cap (the undelivered ones counted). */
static int event_put(struct conn *c, const struct event_in *ev)
{
        _cleanup_free_ char *host = hostname_of(c, ev->agent);
        sqlite3_stmt *st = st_get(c, ST_EVENT_ADD);
        int64_t id;
        int n;

        if (!st || bind_i64(st, 1, ev->time) < 0 || bind_text(st, 2, ev->type) < 0 ||
            bind_text(st, 3, ev->agent) < 0 || bind_text(st, 4, host) < 0 ||
            bind_text(st, 5, ev->status) < 0 || bind_text(st, 6, ev->previous) < 0 ||
            bind_text(st, 7, ev->claims) < 0 || bind_text(st, 8, ev->reason) < 0)
                return -EIO;
        if (step_changes(c, st) != 1)
                return -EIO;
        id = sqlite3_last_insert_rowid(c->db);
        st = st_get(c, ST_EVENT_CAP_LOST);
        if (!st || bind_i64(st, 1, id) < 0 || sqlite3_step(st) != SQLITE_ROW) {
                if (st)
                        sqlite3_reset(st);
                return -EIO;
        }
        n = sqlite3_column_int(st, 0);
        sqlite3_reset(st);
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

/* The agent's last status and stale mark: 1 with them, 0 when there is no such agent. */
static int agent_prev(struct conn *c, const char *agent, char *status, size_t n, bool *ret_stale,
                      char *state, size_t m)
{
        sqlite3_stmt *st;
        int r = row_by_key(c, ST_OUTBOX_PREV, agent, &st);

        if (r <= 0)
                return r;
        col_str(st, 0, status, n);
        *ret_stale = sqlite3_column_int64(st, 1) != 0;
        col_str(st, 2, state, m);
        sqlite3_reset(st);
        return 1;
}

/*
 * The names of the failing claims of a verdict (JSON text, the network form the store keeps),
 * as a JSON array text, and the code of a failed verification. A verdict that does not parse
 * gives neither: the event still goes out.
 */
static void verdict_details(const char *verdict, char **ret_claims, char **ret_reason)
{
        json_auto_t *v = verdict ? json_loads(verdict, 0, NULL) : NULL;
        json_auto_t *names = json_array();
        json_t *claims = json_object_get(v, "claims"), *cl;
        const char *code = json_string_value(json_object_get(json_object_get(v, "reason"), "code"));
        size_t i;

        *ret_claims = NULL;
        *ret_reason = code ? strdup(code) : NULL;
        if (!names)
                return;
        json_array_foreach(claims, i, cl)
        {
                const char *res = json_string_value(json_object_get(cl, "result"));
                json_t *name = json_object_get(cl, "name");

                if (res && !strcmp(res, "fail") && json_is_string(name) &&
                    json_array_append(names, name) < 0)
                        return;
        }
        *ret_claims = json_dumps(names, JSON_COMPACT);
}

int outbox_on_verdict(struct conn *c, const char *agent, const char *status, const char *verdict,
                      int64_t now)
{
        char prev[16], state[16], type[STORE_EVENT_TYPE_MAX];
        _cleanup_free_ char *claims = NULL, *reason = NULL;
        bool stale = false;
        const char *was;
        int r = agent_prev(c, agent, prev, sizeof(prev), &stale, state, sizeof(state));

        if (r <= 0)
                return r; /* no agent: the update that follows says so */
        /* the verdict's update clears the stale mark (agents.stale_since) */
        was = stale ? "stale" : prev[0] ? prev : NULL;
        if (was && !strcmp(was, status))
                return 0; /* no change */
        if (!strcmp(status, "fail"))
                verdict_details(verdict, &claims, &reason);
        snprintf(type, sizeof(type), "agent.%s", status);
        return event_put(c, &(struct event_in){.time = now,
                                               .type = type,
                                               .agent = agent,
                                               .status = status,
                                               .previous = was,
                                               .claims = claims ? claims : "[]",
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
        char prev[16], state[16];
        bool stale = false;
        int r = agent_prev(c, agent, prev, sizeof(prev), &stale, state, sizeof(state));

        if (r <= 0 || !strcmp(state, "decommissioned"))
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

/* ---- set-up, delivery cursors ---- */

struct setup_arg {
        uint64_t cap;
        const char *const *urls;
        size_t n;
};

static int exec_sql(struct conn *c, const char *sql)
{
        return sqlite3_exec(c->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int setup_fn(struct conn *c, void *arg)
{
        struct setup_arg *a = arg;
        sqlite3_stmt *st = NULL;
        int rc = -EIO;

        /* the cursors of the configured receivers survive; others go (re-added: from now) */
        if (exec_sql(c, "CREATE TEMP TABLE IF NOT EXISTS outbox_keep (url TEXT PRIMARY KEY);"
                        "DELETE FROM outbox_keep;") < 0)
                return -EIO;
        if (sqlite3_prepare_v2(c->db, "INSERT OR IGNORE INTO outbox_keep (url) VALUES (?1)", -1,
                               &st, NULL) != SQLITE_OK)
                return -EIO;
        for (size_t i = 0; i < a->n; i++) {
                sqlite3_reset(st);
                if (bind_text(st, 1, a->urls[i]) < 0 || sqlite3_step(st) != SQLITE_DONE)
                        goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (exec_sql(c, "DELETE FROM webhook_cursors WHERE url NOT IN (SELECT url FROM"
                        " outbox_keep);"
                        "INSERT OR IGNORE INTO webhook_cursors (url, delivered) SELECT url,"
                        " (SELECT coalesce(max(id), 0) FROM events) FROM outbox_keep;"
                        "DROP TABLE outbox_keep;") < 0)
                return -EIO;
        if (sqlite3_prepare_v2(c->db, "UPDATE outbox_meta SET cap = ?1 WHERE id = 1", -1, &st,
                               NULL) != SQLITE_OK ||
            bind_i64(st, 1, (int64_t)a->cap) < 0 || sqlite3_step(st) != SQLITE_DONE)
                goto out;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
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
        sqlite3_stmt *st = NULL;
        int rc;

        if (sqlite3_prepare_v2(c->db, "SELECT delivered FROM webhook_cursors WHERE url = ?1", -1,
                               &st, NULL) != SQLITE_OK ||
            bind_text(st, 1, a->url) < 0) {
                sqlite3_finalize(st);
                return -EIO;
        }
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                a->id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
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
        sqlite3_stmt *st = st_get(c, ST_CURSOR_SET);

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

static const char *col_or_null(sqlite3_stmt *st, int i)
{
        return (const char *)sqlite3_column_text(st, i);
}

static int next_fn(struct conn *c, void *arg)
{
        struct next_arg *a = arg;
        sqlite3_stmt *st = st_get(c, ST_EVENT_NEXT);
        int rc, e = 0;

        if (!st || bind_i64(st, 1, a->after) < 0 || bind_i64(st, 2, a->limit) < 0)
                return -EIO;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_event ev = {
                        .id = sqlite3_column_int64(st, 0),
                        .time = sqlite3_column_int64(st, 1),
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
        if (e == 0 && rc != SQLITE_DONE)
                e = -EIO;
        sqlite3_reset(st);
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
        sqlite3_stmt *st = NULL;
        int rc;

        /* acknowledged by every receiver: at or below the lowest cursor (no receiver: all) */
        if (sqlite3_prepare_v2(c->db,
                               "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE"
                               " id <= (SELECT coalesce(min(delivered), (SELECT max(id) FROM"
                               " events)) FROM webhook_cursors) AND time < ?1 ORDER BY id"
                               " LIMIT ?2)",
                               -1, &st, NULL) != SQLITE_OK ||
            bind_i64(st, 1, a->before) < 0 || bind_i64(st, 2, a->max) < 0) {
                sqlite3_finalize(st);
                return -EIO;
        }
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
                return -EIO;
        a->n = (uint64_t)sqlite3_changes(c->db);
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
