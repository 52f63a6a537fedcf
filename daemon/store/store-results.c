/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "daemon/store/pg-array.h"
#include "daemon/store/store-internal.h"
#include "util/log.h"

/* ---- results ---- */

struct result_arg {
        const struct store_result *r;
        uint64_t seq, retain;
        int64_t id;
};

/* Whether the round knew the agent's results count (store_result.kept). */
static bool kept_known(const struct result_arg *a)
{
        return a->r->kept_known && a->r->kept >= 0;
}

/* The agent's results_kept that the verdict writes: the round's count plus its result, at most
 * retain (the oldest beyond are pruned); -1 when the round did not know it (counted then). */
static int64_t kept_after(const struct result_arg *a)
{
        const struct store_result *r = a->r;

        if (!kept_known(a))
                return -1;
        return (uint64_t)r->kept + 1 > a->retain ? (int64_t)a->retain : r->kept + 1;
}

/* A results count as parameter i: NULL when negative (not known). */
static int bind_count(struct db_stmt *st, int i, int64_t v)
{
        return v < 0 ? bind_text(st, i, NULL) : bind_i64(st, i, v);
}

/*
 * The statement path's prune, after the agent's row took kept_after (as PRUNE_SQL in
 * store-schema.c): the oldest results beyond retain in one step when the count was known, else
 * the newest retain kept and the count written.
 */
static int result_prune(struct conn *c, const struct result_arg *a)
{
        const struct store_result *r = a->r;
        struct db_stmt *st;
        int n;

        if (!kept_known(a)) {
                st = st_get(c, ST_RESULT_PRUNE);
                if (!st || bind_text(st, 1, r->agent) < 0 ||
                    bind_i64(st, 2, (int64_t)a->retain) < 0)
                        return -EIO;
                if ((n = step_changes(c, st)) < 0)
                        return n;
                return exec_by_key(c, ST_AGENT_KEPT_COUNT, r->agent) < 0 ? -EIO : 0;
        }
        if ((uint64_t)r->kept < a->retain)
                return 0;
        st = st_get(c, ST_RESULT_PRUNE_OLDEST);
        if (!st || bind_text(st, 1, r->agent) < 0 ||
            bind_i64(st, 2, r->kept - (int64_t)a->retain) < 0)
                return -EIO;
        n = step_changes(c, st);
        return n < 0 ? n : 0;
}

/* The appraisal into parameters first .. first + STORE_TV_COUNT (NULLs for none): 0 or -EIO. */
static int bind_appraisal(struct db_stmt *st, int first, const struct store_appraisal *a)
{
        for (int i = 0; i <= STORE_TV_COUNT; i++) {
                int e = !a       ? bind_text(st, first + i, NULL)
                        : i == 0 ? bind_i64(st, first, a->status)
                                 : bind_i64(st, first + i, a->tv[i - 1]);

                if (e < 0)
                        return -EIO;
        }
        return 0;
}

static int result_add_fn(struct conn *c, void *arg)
{
        struct result_arg *a = arg;
        const struct store_result *r = a->r;
        struct db_stmt *st;
        int n;

        st = st_get(c, ST_RESULT_ADD);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, r->time) < 0 ||
            bind_text(st, 3, r->status) < 0 || bind_text(st, 4, r->policy) < 0 ||
            bind_text(st, 5, r->verdict) < 0 || bind_appraisal(st, 6, r->appraisal) < 0 ||
            bind_i64(st, 11, r->next_due) < 0)
                return -EIO;
        n = db_step(st);
        db_reset(st);
        if (n == DB_CONSTRAINT && !c->pg) {
                /* SQLite: the agent's row is gone (a foreign key), or a value is missing */
                n = exists(c, ST_AGENT_EXISTS, r->agent);
                return n == 0 ? -ENOENT : -EIO;
        }
        if (n != DB_DONE)
                return -EIO;
        a->id = db_last_id(st);

        /* a verdict change is a webhook event, committed with the verdict or not at all */
        if ((n = outbox_on_verdict(c, r->agent, r->status, r->failing, r->reason, r->time)) < 0)
                return n;
        st = st_get(c, ST_AGENT_UPDATE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0 ||
            bind_i64(st, 3, r->time) < 0 || bind_i64(st, 4, r->next_due) < 0 ||
            bind_text(st, 5, r->status) < 0 || bind_text(st, 6, r->policy) < 0 ||
            bind_i64(st, 7, a->id) < 0 || bind_i64(st, 8, (int64_t)r->ima_offset) < 0 ||
            bind_blob(st, 9, r->replay_state, r->replay_state_len) < 0 ||
            bind_count(st, 10, kept_after(a)) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, r->agent);
                return n < 0 ? n : n == 0 ? -ENOENT : -ESTALE;
        }
        /* the stale scan finds the agent through this result now: off its watch list, so that
         * the list holds only agents not yet judged (or readmitted) and the scan writes nothing
         * for the others */
        if (exec_by_key(c, ST_STALE_WATCH_DONE, r->agent) < 0)
                return -EIO;

        return result_prune(c, a);
}

/* attestd_verdict()'s and attestd_verdicts()' rc as result_add_one_fn returns it. */
static int verdict_rc(int rc)
{
        switch (rc) {
        case 0:
                return 0;
        case 1:
                return -ENOENT;
        case 2:
                return -ESTALE;
        case 3:
                return -EALREADY;
        case 4:
                return 1; /* the status changes: nothing written */
        default:
                return -EIO;
        }
}

/*
 * PostgreSQL: the same write as result_add_fn in one statement, attestd_verdict() (schema 7),
 * when the agent's status does not change (the steady state: no webhook event to write). 1
 * when the status changes: nothing was written, result_add_fn writes it with its event.
 */
static int result_add_one_fn(struct conn *c, void *arg)
{
        struct result_arg *a = arg;
        const struct store_result *r = a->r;
        struct db_stmt *st;
        int rc;

        st = st_get(c, ST_VERDICT_ONE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0 ||
            bind_i64(st, 3, r->time) < 0 || bind_i64(st, 4, r->next_due) < 0 ||
            bind_text(st, 5, r->status) < 0 || bind_text(st, 6, r->policy) < 0 ||
            bind_text(st, 7, r->verdict) < 0 || bind_i64(st, 8, (int64_t)r->ima_offset) < 0 ||
            bind_blob(st, 9, r->replay_state, r->replay_state_len) < 0 ||
            bind_i64(st, 10, (int64_t)a->retain) < 0 || bind_appraisal(st, 11, r->appraisal) < 0 ||
            bind_count(st, 16, kept_known(a) ? r->kept : -1) < 0)
                return -EIO;
        if (db_step(st) != DB_ROW) {
                db_reset(st);
                return -EIO;
        }
        rc = (int)db_col_i64(st, 0);
        a->id = db_col_i64(st, 1);
        if (rc == 5) {
                const char *m = db_col_text(st, 2);

                log_err("store: attestd_verdict: %s", m ? m : "?");
        }
        db_reset(st);
        return verdict_rc(rc);
}

/* The arrays of one group's call (attestd_verdicts, schema 9), in ST_VERDICTS' order. */
enum {
        VA_AGENT,
        VA_SEQ,
        VA_TIME,
        VA_NEXT_DUE,
        VA_STATUS,
        VA_POLICY,
        VA_VERDICT,
        VA_IMA_OFFSET,
        VA_STATE,
        VA_EAR,
        VA_KEPT,
        VA__COUNT
};
static const uint32_t va_oid[VA__COUNT] = {
        [VA_AGENT] = PG_OID_TEXT,    [VA_SEQ] = PG_OID_INT8,        [VA_TIME] = PG_OID_INT8,
        [VA_NEXT_DUE] = PG_OID_INT8, [VA_STATUS] = PG_OID_TEXT,     [VA_POLICY] = PG_OID_TEXT,
        [VA_VERDICT] = PG_OID_TEXT,  [VA_IMA_OFFSET] = PG_OID_INT8, [VA_STATE] = PG_OID_BYTEA,
        [VA_EAR] = PG_OID_INT4,      [VA_KEPT] = PG_OID_INT8,
};
/* each array's parameter in ST_VERDICTS (?10 is the retain count) */
static const int va_param[VA__COUNT] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12};

static void va_add(struct pg_array *v, const struct result_arg *a)
{
        const struct store_result *r = a->r;

        pg_array_add_text(&v[VA_AGENT], r->agent);
        pg_array_add_i64(&v[VA_SEQ], (int64_t)a->seq);
        pg_array_add_i64(&v[VA_TIME], r->time);
        pg_array_add_i64(&v[VA_NEXT_DUE], r->next_due);
        pg_array_add_text(&v[VA_STATUS], r->status);
        pg_array_add_text(&v[VA_POLICY], r->policy);
        pg_array_add_text(&v[VA_VERDICT], r->verdict);
        pg_array_add_i64(&v[VA_IMA_OFFSET], (int64_t)r->ima_offset);
        pg_array_add(&v[VA_STATE], r->replay_state, r->replay_state_len); /* NULL: none */
        for (int i = 0; i <= STORE_TV_COUNT; i++) {
                if (!r->appraisal)
                        pg_array_add(&v[VA_EAR], NULL, 0);
                else
                        pg_array_add_i32(&v[VA_EAR], (int32_t)(i == 0 ? r->appraisal->status
                                                                      : r->appraisal->tv[i - 1]));
        }
        if (!kept_known(a))
                pg_array_add(&v[VA_KEPT], NULL, 0); /* NULL: not known */
        else
                pg_array_add_i64(&v[VA_KEPT], r->kept);
}

struct va_order {
        const struct result_arg *a;
        size_t at; /* its place in the caller's args */
};

static int va_cmp(const void *x, const void *y)
{
        const struct va_order *p = x, *q = y;

        return strcmp(p->a->r->agent, q->a->r->agent);
}

/*
 * PostgreSQL: the verdicts of one group commit in one statement, attestd_verdicts() (the
 * writer's store_group). In agent id order, so that two instances' groups lock the agent rows
 * they share in one order (no deadlock between them). rcs as result_add_one_fn returns.
 */
static int verdicts_group(struct conn *c, void *const *args, int *rcs, size_t n)
{
        struct pg_array v[VA__COUNT];
        struct va_order o[STORE_COMMIT_JOBS_MAX];
        uint64_t retain = ((const struct result_arg *)args[0])->retain;
        struct db_stmt *st;
        size_t rows = 0;
        int e = 0, rc;

        if (n > STORE_COMMIT_JOBS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                o[i] = (struct va_order){args[i], i};
                /* one count for the group: a group that mixes them is written one by one */
                if (o[i].a->retain != retain)
                        return -EINVAL;
        }
        qsort(o, n, sizeof(o[0]), va_cmp);
        for (int k = 0; k < VA__COUNT; k++)
                pg_array_init(&v[k], va_oid[k]);
        for (size_t i = 0; i < n; i++)
                va_add(v, o[i].a);
        st = st_get(c, ST_VERDICTS);
        if (!st)
                e = -EIO;
        for (int k = 0; k < VA__COUNT && e == 0; k++)
                if ((e = pg_array_finish(&v[k])) == 0 &&
                    bind_blob(st, va_param[k], v[k].p, v[k].len) < 0)
                        e = -EIO;
        if (e == 0 && bind_i64(st, 10, (int64_t)retain) < 0)
                e = -EIO;
        while (e == 0 && (rc = db_step(st)) == DB_ROW) {
                int64_t i = db_col_i64(st, 0);

                if (i < 1 || (uint64_t)i > n || rows >= n) {
                        e = -EIO;
                        break;
                }
                rcs[o[i - 1].at] = verdict_rc((int)db_col_i64(st, 1));
                ((struct result_arg *)args[o[i - 1].at])->id = db_col_i64(st, 2);
                rows++;
        }
        if (e == 0 && (rc != DB_DONE || rows != n)) {
                e = -EIO;
                log_warning("store: attestd_verdicts (%zu verdicts): %s; writing them one by one",
                            n, db_errmsg(c->db));
        }
        if (st)
                db_reset(st);
        for (int k = 0; k < VA__COUNT; k++)
                pg_array_done(&v[k]);
        return e;
}

static const struct store_group verdicts = {.run = verdicts_group};

int store_result_add(struct store *s, const struct store_result *r, uint64_t expect_seq,
                     uint64_t retain, int64_t *ret_id)
{
        struct result_arg a = {.r = r, .seq = expect_seq, .retain = retain};
        int e = store_on_pg(s) ? store_write_grouped(s, &verdicts, result_add_one_fn, &a) : 1;

        if (e == 1)
                e = store_write(s, result_add_fn, &a);

        if (e < 0) {
                store_cache_agent_forget(store_cache_of(s), r->agent);
                return e;
        }
        /* a count the round did not know was written by the database: read it with the row */
        if (!kept_known(&a))
                store_cache_agent_forget(store_cache_of(s), r->agent);
        else
                store_cache_agent_verdict(store_cache_of(s), r, expect_seq, a.id, kept_after(&a));
        if (ret_id)
                *ret_id = a.id;
        return 0;
}

struct reset_arg {
        const char *id;
        uint64_t seq;
};

static int agent_reset_fn(struct conn *c, void *arg)
{
        struct reset_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_AGENT_RESET_REPLAY);
        int n;

        if (!st || bind_text(st, 1, a->id) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, a->id);
                return n < 0 ? n : n == 0 ? -ENOENT : -ESTALE;
        }
        return 0;
}

int store_agent_reset_replay(struct store *s, const char *id, uint64_t expect_seq)
{
        struct reset_arg a = {id, expect_seq};
        int e = store_write(s, agent_reset_fn, &a);

        if (e < 0)
                store_cache_agent_forget(store_cache_of(s), id);
        else
                store_cache_agent_replay_reset(store_cache_of(s), id, expect_seq);
        return e;
}

/* One row of ST_RESULT_LIST or the export's statement (id, time, status, policy, verdict, due). */
static int result_row(struct db_stmt *st, int (*fn)(const struct store_result_row *row, void *arg),
                      void *arg)
{
        struct store_result_row row = {
                .id = db_col_i64(st, 0),
                .time = db_col_i64(st, 1),
                .status = db_col_text(st, 2),
                .policy = db_col_text(st, 3),
                .verdict = db_col_text(st, 4),
                .due = db_col_i64(st, 5),
        };

        return fn(&row, arg);
}

struct results_arg {
        const char *agent;
        uint64_t limit;
        int64_t before;
        int (*fn)(const struct store_result_row *row, void *arg);
        void *arg;
};

static int results_list_fn(struct conn *c, void *arg)
{
        struct results_arg *a = arg;
        struct db_stmt *st;
        int rc, e = 0, n;

        if ((n = exists(c, ST_AGENT_EXISTS, a->agent)) <= 0)
                return n < 0 ? n : -ENOENT;
        st = st_get(c, ST_RESULT_LIST);
        if (!st || bind_text(st, 1, a->agent) < 0 ||
            bind_i64(st, 2, a->before > 0 ? a->before : INT64_MAX) < 0 ||
            bind_i64(st, 3, (int64_t)a->limit) < 0)
                return -EIO;
        while ((rc = db_step(st)) == DB_ROW) {
                e = result_row(st, a->fn, a->arg);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_reset(st);
        return e;
}

int store_results_list(struct store *s, const char *agent, uint64_t limit, int64_t before,
                       int (*fn)(const struct store_result_row *row, void *arg), void *arg)
{
        struct results_arg a = {agent, limit, before, fn, arg};

        return store_read(s, results_list_fn, &a);
}

struct latest_arg {
        const char *agent;
        struct store_result_head *ret;
};

static int result_latest_fn(struct conn *c, void *arg)
{
        struct latest_arg *a = arg;
        struct store_result_head h = {0};
        const char *policy;
        struct db_stmt *st;
        unsigned nulls = 0;
        int n = row_by_key(c, ST_RESULT_LATEST, a->agent, &st);

        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, a->agent);
                return n < 0 ? n : n == 0 ? -ENOENT : -ENODATA;
        }
        if (n < 0)
                return n;
        h.id = db_col_i64(st, 0);
        h.time = db_col_i64(st, 1);
        policy = db_col_text(st, 2);
        if (policy && strlen(policy) >= sizeof(h.policy)) {
                db_reset(st);
                return -EBADMSG;
        }
        snprintf(h.policy, sizeof(h.policy), "%s", policy ? policy : "");
        /* columns 3 .. 3 + STORE_TV_COUNT: all NULL (a row from before schema 8) or none */
        for (int i = 0; i <= STORE_TV_COUNT; i++)
                nulls += db_col_null(st, 3 + i);
        h.appraisal.status = db_col_i64(st, 3);
        for (int t = 0; t < STORE_TV_COUNT; t++)
                h.appraisal.tv[t] = db_col_i64(st, 4 + t);
        db_reset(st);
        if (nulls != 0 && nulls != STORE_TV_COUNT + 1)
                return -EBADMSG;
        h.has_appraisal = nulls == 0;
        if (!h.has_appraisal)
                h.appraisal = (struct store_appraisal){0};
        *a->ret = h;
        return 0;
}

int store_result_latest(struct store *s, const char *agent, struct store_result_head *ret)
{
        struct latest_arg a = {agent, ret};

        return store_read(s, result_latest_fn, &a);
}

struct since_arg {
        const char *agent;
        uint64_t limit;
        int64_t after, since;
        int (*fn)(const struct store_result_row *row, void *arg);
        void *arg;
};

static int results_since_fn(struct conn *c, void *arg)
{
        struct since_arg *a = arg;
        struct db_stmt *st = NULL;
        int rc = DB_DONE, e = 0, n;

        if ((n = exists(c, ST_AGENT_EXISTS, a->agent)) <= 0)
                return n < 0 ? n : -ENOENT;
        /* the results index (agent, id) serves the order; the time bound only filters */
        if (db_prepare(c->db,
                       "SELECT id, time, status, policy, verdict, due FROM results"
                       " WHERE agent = ?1 AND id > ?2 AND time >= ?3 ORDER BY id LIMIT ?4",
                       NULL, 0, false, &st) < 0)
                return -EIO;
        if (bind_text(st, 1, a->agent) < 0 || bind_i64(st, 2, a->after) < 0 ||
            bind_i64(st, 3, a->since) < 0 ||
            bind_i64(st, 4, a->limit > INT64_MAX ? INT64_MAX : (int64_t)a->limit) < 0)
                e = -EIO;
        while (e == 0 && (rc = db_step(st)) == DB_ROW)
                e = result_row(st, a->fn, a->arg);
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_finalize(st);
        return e;
}

int store_results_since(struct store *s, const char *agent, uint64_t limit, int64_t after,
                        int64_t since, int (*fn)(const struct store_result_row *row, void *arg),
                        void *arg)
{
        struct since_arg a = {agent, limit, after, since, fn, arg};

        return store_read(s, results_since_fn, &a);
}
