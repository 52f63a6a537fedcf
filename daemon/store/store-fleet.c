/* SPDX-License-Identifier: MIT */
/*
 * The fleet's views of agents: host identity (hostname, machine id, labels), the filtered and
 * paged list, the stale scan.
 */
#include <stdio.h>

#include "daemon/store/store-internal.h"

/* ---- host identity ---- */

int store_labels_json(const struct evidence_host *h, char *buf, size_t n)
{
        size_t at = 0;
        int w;

        if (n < 3)
                return -E2BIG;
        buf[at++] = '{';
        for (unsigned i = 0; i < h->n_labels && i < EVIDENCE_LABELS_MAX; i++) {
                /* keys and values are of the identity syntax: nothing to escape */
                w = snprintf(buf + at, n - at, "%s\"%s\":\"%s\"", i ? "," : "", h->labels[i].key,
                             h->labels[i].value);
                if (w < 0 || (size_t)w >= n - at)
                        return -E2BIG;
                at += (size_t)w;
        }
        if (n - at < 2)
                return -E2BIG;
        buf[at++] = '}';
        buf[at] = '\0';
        return 0;
}

bool store_agent_identity_differs(const struct store_agent *a, const struct evidence_host *h)
{
        char labels[STORE_LABELS_JSON_MAX];

        if (h->hostname[0] && strcmp(h->hostname, a->hostname) != 0)
                return true;
        if (h->machine_id[0] && strcmp(h->machine_id, a->machine_id) != 0)
                return true;
        if (!h->labels_present)
                return false;
        if (store_labels_json(h, labels, sizeof(labels)) < 0)
                return true;
        return !a->labels || strcmp(labels, a->labels) != 0;
}

struct identity_arg {
        const char *id;
        const struct evidence_host *h;
        char labels[STORE_LABELS_JSON_MAX];
};

static int agent_identity_fn(struct conn *c, void *arg)
{
        struct identity_arg *a = arg;
        const struct evidence_host *h = a->h;
        struct db_stmt *st = st_get(c, ST_AGENT_IDENTITY);
        int n;

        if (!st || bind_text(st, 1, a->id) < 0 ||
            bind_text(st, 2, h->hostname[0] ? h->hostname : NULL) < 0 ||
            bind_text(st, 3, h->machine_id[0] ? h->machine_id : NULL) < 0 ||
            bind_text(st, 4, h->labels_present ? a->labels : NULL) < 0)
                return -EIO;
        if ((n = step_changes(c, st)) < 0)
                return n;
        if (n == 0)
                return -ENOENT;
        if (!h->labels_present)
                return 0;
        if (exec_by_key(c, ST_LABELS_DELETE, a->id) < 0)
                return -EIO;
        for (unsigned i = 0; i < h->n_labels && i < EVIDENCE_LABELS_MAX; i++) {
                st = st_get(c, ST_LABEL_PUT);
                if (!st || bind_text(st, 1, a->id) < 0 || bind_text(st, 2, h->labels[i].key) < 0 ||
                    bind_text(st, 3, h->labels[i].value) < 0 || step_changes(c, st) < 0)
                        return -EIO;
        }
        return 0;
}

int store_agent_set_identity(struct store *s, const char *id, const struct evidence_host *h)
{
        struct identity_arg a = {.id = id, .h = h};
        int e;

        if (h->labels_present && (e = store_labels_json(h, a.labels, sizeof(a.labels))) < 0)
                return e;
        e = store_write(s, agent_identity_fn, &a);
        /* the cached row carries the identity too (a round compares against it) */
        store_cache_agent_forget(store_cache_of(s), id);
        return e;
}

/* ---- the filtered, paged list ---- */

static const char *const status_names[STORE_STATUS__COUNT] = {
        [STORE_STATUS_ANY] = "",
#define STATUS_NAME(id, name) [STORE_STATUS_##id] = name,
        AGENT_STATES(STATUS_NAME)
#undef STATUS_NAME
                [STORE_STATUS_PASS] = "pass",
        [STORE_STATUS_FAIL] = "fail",
        [STORE_STATUS_FAILING] = "failing",
        [STORE_STATUS_STALE] = "stale",
        [STORE_STATUS_NEVER] = "never",
};

const char *store_status_name(enum store_status st)
{
        return (unsigned)st < STORE_STATUS__COUNT ? status_names[st] : NULL;
}

/* ?1 now, ?2 grace, ?3 interval (ms) */
#define STALE_SQL "((CASE WHEN next_due = 0 THEN created + ?3 ELSE next_due END) + ?2 < ?1)"

static const char *const status_sql[STORE_STATUS__COUNT] = {
        [STORE_STATUS_ANY] = "",
#define STATUS_SQL(id, name) [STORE_STATUS_##id] = " AND state = '" name "'",
        AGENT_STATES(STATUS_SQL)
#undef STATUS_SQL
                [STORE_STATUS_PASS] =
                        " AND last_status = 'pass' AND state = 'active' AND NOT " STALE_SQL,
        [STORE_STATUS_FAIL] = " AND last_status = 'fail' AND state = 'active' AND NOT " STALE_SQL,
        [STORE_STATUS_FAILING] = " AND last_status IN ('fail', 'error') AND state = 'active'",
        [STORE_STATUS_STALE] = " AND state <> 'decommissioned' AND " STALE_SQL,
        [STORE_STATUS_NEVER] = " AND last_status IS NULL AND state = 'active'",
};

struct query_arg {
        const struct store_agent_filter *f;
        int (*fn)(const struct store_agent *a, void *arg);
        void *arg;
        uint64_t *count; /* non-NULL: count the rows instead */
};

/*
 * The filter's SQL: fixed text only, every value the client gave is a bound parameter (?1 now,
 * ?2 grace, ?3 interval, ?4 after, ?5 hostname, ?6 limit, ?7.. the labels, ?15 ?16 the prefix's
 * length and text, ?17 the policy).
 */
static int query_sql(const struct store_agent_filter *f, bool count, char *sql, size_t size)
{
        size_t n;

        n = (size_t)snprintf(sql, size, "SELECT %s FROM agents WHERE id > ?4%s%s%s%s",
                             count ? "count(*)" : STORE_AGENT_LIST_COLS,
                             f->hostname ? " AND hostname = ?5" : "",
                             f->prefix ? " AND substr(id, 1, CAST(?15 AS INTEGER)) = ?16" : "",
                             f->policy ? " AND policy = ?17" : "", status_sql[f->status]);
        for (unsigned i = 0; i < f->n_labels && n < size; i++)
                n += (size_t)snprintf(sql + n, size - n,
                                      " AND id IN (SELECT agent FROM agent_labels WHERE key = ?%u"
                                      " AND value = ?%u)",
                                      7 + 2 * i, 8 + 2 * i);
        if (!count && n < size)
                n += (size_t)snprintf(sql + n, size - n, " ORDER BY id LIMIT ?6");
        return n < size ? 0 : -E2BIG;
}

static int query_bind(struct db_stmt *st, const struct store_agent_filter *f, bool count)
{
        /* parameters the text does not name are simply not bound */
        int p = db_param_count(st);

        if ((p >= 1 && bind_i64(st, 1, f->now) < 0) || (p >= 2 && bind_i64(st, 2, f->grace) < 0) ||
            (p >= 3 && bind_i64(st, 3, f->interval) < 0) ||
            bind_text(st, 4, f->after && !count ? f->after : "") < 0 ||
            (f->hostname && bind_text(st, 5, f->hostname) < 0) ||
            (!count && bind_i64(st, 6, f->limit > INT64_MAX ? INT64_MAX : (int64_t)f->limit) < 0) ||
            (f->prefix && (bind_i64(st, 15, (int64_t)strlen(f->prefix)) < 0 ||
                           bind_text(st, 16, f->prefix) < 0)) ||
            (f->policy && bind_text(st, 17, f->policy) < 0))
                return -EIO;
        for (unsigned i = 0; i < f->n_labels; i++)
                if (bind_text(st, (int)(7 + 2 * i), f->label_key[i]) < 0 ||
                    bind_text(st, (int)(8 + 2 * i), f->label_value[i]) < 0)
                        return -EIO;
        return 0;
}

static int agent_query_fn(struct conn *c, void *arg)
{
        struct query_arg *q = arg;
        const struct store_agent_filter *f = q->f;
        char sql[1200];
        struct db_stmt *st = NULL;
        int rc = DB_DONE, e;

        if ((unsigned)f->status >= STORE_STATUS__COUNT || f->n_labels > STORE_LABEL_FILTERS_MAX)
                return -EINVAL;
        if ((e = query_sql(f, q->count != NULL, sql, sizeof(sql))) < 0)
                return e;
        if (db_prepare(c->db, sql, NULL, 0, false, &st) < 0)
                return -EIO;
        e = query_bind(st, f, q->count != NULL);
        if (e == 0 && q->count) {
                rc = db_step(st);
                if (rc == DB_ROW)
                        *q->count = (uint64_t)db_col_i64(st, 0);
                else
                        e = -EIO;
                rc = DB_DONE;
        }
        while (e == 0 && !q->count && (rc = db_step(st)) == DB_ROW) {
                struct store_agent *a;

                if ((e = store_agent_row(st, &a)) < 0)
                        break;
                e = q->fn(a, q->arg);
                store_agent_free(a);
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_finalize(st);
        return e;
}

int store_agent_query(struct store *s, const struct store_agent_filter *f,
                      int (*fn)(const struct store_agent *a, void *arg), void *arg)
{
        struct query_arg q = {f, fn, arg, NULL};

        return store_read(s, agent_query_fn, &q);
}

int store_agent_query_count(struct store *s, const struct store_agent_filter *f, uint64_t *ret)
{
        struct query_arg q = {f, NULL, NULL, ret};

        *ret = 0;
        return store_read(s, agent_query_fn, &q);
}

/* ---- the stale scan ---- */

/*
 * A transaction of the scan looks at s->stale_chunk results at most (STORE_STALE_CHUNK: in
 * steady state a second's worth of a million agents' verdicts; after an outage the backlog,
 * one interval of them, takes several), and a scan runs STALE_CHUNKS at most: the next goes on.
 */
#define STALE_CHUNKS 16

struct stale_arg {
        int64_t now, grace, interval, chunk;
        void (*fn)(const char *id, const char *hostname, const char *last_status, int64_t last_seen,
                   void *arg);
        void *arg;
        int n;
        bool more; /* the chunk was full: results are left before now - grace */
};

/* ?1, ?2 and (n == 3) ?3: 0 or -EIO */
static int stale_bind(struct db_stmt *st, int n, int64_t p1, int64_t p2, int64_t p3)
{
        return bind_i64(st, 1, p1) < 0 || bind_i64(st, 2, p2) < 0 ||
                               (n == 3 && bind_i64(st, 3, p3) < 0)
                       ? -EIO
                       : 0;
}

/* Step a marking UPDATE's RETURNING rows: log each and record its event. 0 or -EIO. */
static int stale_marked(struct conn *c, struct db_stmt *st, struct stale_arg *a)
{
        int rc;

        while ((rc = db_step(st)) == DB_ROW) {
                char id[STORE_ID_MAX + 1], host[EVIDENCE_HOSTNAME_MAX + 1], status[16];
                bool have_status = !db_col_null(st, 2);

                col_str(st, 0, id, sizeof(id));
                col_str(st, 1, host, sizeof(host));
                col_str(st, 2, status, sizeof(status));
                /* called inside the transaction: fn only logs */
                a->fn(id, host, have_status ? status : NULL, db_col_i64(st, 3), a->arg);
                a->n++;
                /* the webhook event commits with the mark (RETURNING rows are buffered) */
                if (outbox_on_stale(c, id, have_status ? status : NULL, a->now) < 0) {
                        db_reset(st);
                        return -EIO;
                }
        }
        db_reset(st);
        return rc == DB_DONE ? 0 : -EIO;
}

/* One statement of the scan, no rows: 0 or -EIO. */
static int stale_exec(struct conn *c, enum stmt i, int n, int64_t p1, int64_t p2, int64_t p3)
{
        struct db_stmt *st = st_get(c, i);
        int rc;

        if (!st || stale_bind(st, n, p1, p2, p3) < 0)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_DONE ? 0 : -EIO;
}

/*
 * The results from the cursor to now - grace (a chunk of them at most): the agents each is
 * still the last result of are stale, unless already marked or not active. Then the cursor
 * moves past them. On PostgreSQL only the instance whose turn it is gets here (stale_turn).
 */
static int stale_results(struct conn *c, struct stale_arg *a)
{
        struct db_stmt *st = st_get(c, ST_STALE_CURSOR);
        int64_t from, to, end = a->now - a->grace;
        int rc;

        if (!st)
                return -EIO;
        rc = db_step(st);
        from = rc == DB_ROW ? db_col_i64(st, 0) : 0;
        db_reset(st);
        if (rc != DB_ROW)
                return -EIO; /* schema 10 writes the row; no row is a damaged database */
        if (from >= end)
                return 0;
        if (!(st = st_get(c, ST_STALE_HI)) || stale_bind(st, 3, from, end, a->chunk) < 0)
                return -EIO;
        rc = db_step(st);
        to = rc == DB_ROW ? db_col_i64(st, 0) : end;
        db_reset(st);
        if (rc != DB_ROW && rc != DB_DONE)
                return -EIO;
        /* a full chunk ends before the first result past it; results due at one instant are
         * never split (a chunk of them alone goes whole) */
        a->more = rc == DB_ROW;
        if (to <= from)
                to = from + 1;
        if (!(st = st_get(c, ST_STALE_MARK)) || stale_bind(st, 3, a->now, from, to) < 0 ||
            stale_marked(c, st, a) < 0)
                return -EIO;
        st = st_get(c, ST_STALE_CURSOR_SET);
        if (!st || bind_i64(st, 1, to) < 0)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_DONE ? 0 : -EIO;
}

/* PostgreSQL: 1 when this scan has the turn (its lock timeout set), 0 when another instance's
 * scan has it (this one skips), -EIO */
static int stale_turn(struct conn *c)
{
        struct db_stmt *st = st_get(c, ST_STALE_TURN);
        int rc, turn;

        if (!st)
                return -EIO;
        rc = db_step(st);
        turn = rc == DB_ROW && db_col_i64(st, 0) == 1; /* a boolean: 1 for true */
        db_reset(st);
        return rc == DB_ROW ? turn : -EIO;
}

static int stale_mark_fn(struct conn *c, void *arg)
{
        struct stale_arg *a = arg;
        struct db_stmt *st;
        int e;

        a->n = 0;
        a->more = false;
        if (c->pg && (e = stale_turn(c)) <= 0)
                return e;
        if (stale_results(c, a) < 0)
                return -EIO;
        /* the watch list: agents active without a verdict of their own since (or never) */
        st = st_get(c, ST_STALE_MARK_WATCH);
        if (!st || stale_bind(st, 3, a->now, a->grace, a->interval) < 0 ||
            stale_marked(c, st, a) < 0)
                return -EIO;
        return stale_exec(c, ST_STALE_WATCH_DROP, 2, a->now, a->grace, 0) < 0 ||
                               stale_exec(c, ST_STALE_WATCH_LATER, 3, a->now, a->grace,
                                          a->interval) < 0
                       ? -EIO
                       : 0;
}

static int stale_due_fn(struct conn *c, void *arg)
{
        const struct stale_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_STALE_DUE);
        int rc;

        if (!st || bind_i64(st, 1, a->now - a->grace) < 0)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -EIO;
}

int store_agent_stale_scan(struct store *s, int64_t now, int64_t grace, int64_t interval,
                           void (*fn)(const char *id, const char *hostname, const char *last_status,
                                      int64_t last_seen, void *arg),
                           void *arg)
{
        struct stale_arg a = {now, grace, interval, s->stale_chunk, fn, arg, 0, false};
        int n = 0, e = store_read(s, stale_due_fn, &a);

        if (e <= 0)
                return e;
        for (int i = 0; i < STALE_CHUNKS; i++) {
                if ((e = store_write_apart(s, stale_mark_fn, &a)) < 0)
                        return e;
                n += a.n;
                if (!a.more)
                        break;
        }
        return n;
}
