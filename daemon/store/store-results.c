/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "daemon/store/store-internal.h"
#include "util/log.h"

/* ---- results ---- */

struct result_arg {
        const struct store_result *r;
        uint64_t seq, retain;
        int64_t id;
};

/* Whether this connection purges the expired nonces with a verdict of time t (at most every
 * STORE_NONCE_PURGE_MS, and again after the clock went back). */
static bool nonce_purge_due(const struct conn *c, int64_t t)
{
        return t - c->nonce_purge_at >= STORE_NONCE_PURGE_MS || t < c->nonce_purge_at;
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
        int n, rc;

        /* the nonce the verified quote consumed: remembered until it expires, then purged */
        if (r->nonce) {
                if (nonce_purge_due(c, r->time)) {
                        st = st_get(c, ST_NONCE_PURGE);
                        if (!st || bind_i64(st, 1, r->time) < 0 || step_changes(c, st) < 0)
                                return -EIO;
                        c->nonce_purge_at = r->time;
                }
                st = st_get(c, ST_NONCE_PUT);
                if (!st || bind_blob(st, 1, r->nonce, STORE_NONCE_LEN) < 0 ||
                    bind_i64(st, 2, r->nonce_expires) < 0)
                        return -EIO;
                rc = db_step(st);
                n = db_changes(st);
                db_reset(st);
                /* ON CONFLICT DO NOTHING: a nonce used before inserts no row, and no statement
                 * fails (a failed one would abort a PostgreSQL transaction) */
                if (rc == DB_CONSTRAINT || (rc == DB_DONE && n == 0))
                        return -EALREADY;
                if (rc != DB_DONE)
                        return -EIO;
        }
        st = st_get(c, ST_RESULT_ADD);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, r->time) < 0 ||
            bind_text(st, 3, r->status) < 0 || bind_text(st, 4, r->policy) < 0 ||
            bind_text(st, 5, r->verdict) < 0 || bind_appraisal(st, 6, r->appraisal) < 0)
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
            bind_blob(st, 9, r->replay_state, r->replay_state_len) < 0)
                return -EIO;
        n = step_changes(c, st);
        if (n < 0)
                return n;
        if (n == 0) {
                n = exists(c, ST_AGENT_EXISTS, r->agent);
                return n < 0 ? n : n == 0 ? -ENOENT : -ESTALE;
        }

        st = st_get(c, ST_RESULT_PRUNE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->retain) < 0)
                return -EIO;
        n = step_changes(c, st);
        return n < 0 ? n : 0;
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
        int64_t purge = 0;
        struct db_stmt *st;
        int rc;

        if (r->nonce && nonce_purge_due(c, r->time))
                purge = r->time;
        st = st_get(c, ST_VERDICT_ONE);
        if (!st || bind_text(st, 1, r->agent) < 0 || bind_i64(st, 2, (int64_t)a->seq) < 0 ||
            bind_i64(st, 3, r->time) < 0 || bind_i64(st, 4, r->next_due) < 0 ||
            bind_text(st, 5, r->status) < 0 || bind_text(st, 6, r->policy) < 0 ||
            bind_text(st, 7, r->verdict) < 0 || bind_i64(st, 8, (int64_t)r->ima_offset) < 0 ||
            bind_blob(st, 9, r->replay_state, r->replay_state_len) < 0 ||
            bind_i64(st, 10, (int64_t)a->retain) < 0 ||
            bind_blob(st, 11, r->nonce, r->nonce ? STORE_NONCE_LEN : 0) < 0 ||
            bind_i64(st, 12, r->nonce_expires) < 0 || bind_i64(st, 13, purge) < 0 ||
            bind_appraisal(st, 14, r->appraisal) < 0)
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
        if ((rc == 0 || rc == 3) && purge)
                c->nonce_purge_at = purge;
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
                return 1;
        default:
                return -EIO;
        }
}

int store_result_add(struct store *s, const struct store_result *r, uint64_t expect_seq,
                     uint64_t retain, int64_t *ret_id)
{
        struct result_arg a = {.r = r, .seq = expect_seq, .retain = retain};
        int e = store_on_pg(s) ? store_write_one(s, result_add_one_fn, &a) : 1;

        if (e == 1)
                e = store_write(s, result_add_fn, &a);

        if (e < 0) {
                store_cache_agent_forget(store_cache_of(s), r->agent);
                return e;
        }
        store_cache_agent_verdict(store_cache_of(s), r, expect_seq, a.id);
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

struct results_arg {
        const char *agent;
        uint64_t limit;
        int64_t before;
        int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                  const char *verdict, void *arg);
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
                e = a->fn(db_col_i64(st, 0), db_col_i64(st, 1), db_col_text(st, 2),
                          db_col_text(st, 3), db_col_text(st, 4), a->arg);
                if (e < 0)
                        break;
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_reset(st);
        return e;
}

int store_results_list(struct store *s, const char *agent, uint64_t limit, int64_t before,
                       int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                                 const char *verdict, void *arg),
                       void *arg)
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

static int nonce_used_fn(struct conn *c, void *arg)
{
        const uint8_t *nonce = arg;
        struct db_stmt *st = st_get(c, ST_NONCE_GET);
        int rc;

        if (!st || bind_blob(st, 1, nonce, STORE_NONCE_LEN) < 0)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        if (rc == DB_ROW)
                return -EALREADY;
        return rc == DB_DONE ? 0 : -EIO;
}

int store_nonce_used(struct store *s, const uint8_t nonce[STORE_NONCE_LEN])
{
        return store_read(s, nonce_used_fn, (void *)nonce);
}

static int nonces_used_count_fn(struct conn *c, void *arg)
{
        int64_t n = 0;
        int rc = store_query_i64(c, "SELECT count(*) FROM nonces_used", &n);

        if (rc == 0)
                *(uint64_t *)arg = (uint64_t)n;
        return rc;
}

int store_nonces_used_count(struct store *s, uint64_t *ret)
{
        return store_read(s, nonces_used_count_fn, ret);
}

struct since_arg {
        const char *agent;
        uint64_t limit;
        int64_t after, since;
        int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                  const char *verdict, void *arg);
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
                       "SELECT id, time, status, policy, verdict FROM results"
                       " WHERE agent = ?1 AND id > ?2 AND time >= ?3 ORDER BY id LIMIT ?4",
                       NULL, 0, false, &st) < 0)
                return -EIO;
        if (bind_text(st, 1, a->agent) < 0 || bind_i64(st, 2, a->after) < 0 ||
            bind_i64(st, 3, a->since) < 0 ||
            bind_i64(st, 4, a->limit > INT64_MAX ? INT64_MAX : (int64_t)a->limit) < 0)
                e = -EIO;
        while (e == 0 && (rc = db_step(st)) == DB_ROW)
                e = a->fn(db_col_i64(st, 0), db_col_i64(st, 1), db_col_text(st, 2),
                          db_col_text(st, 3), db_col_text(st, 4), a->arg);
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_finalize(st);
        return e;
}

int store_results_since(struct store *s, const char *agent, uint64_t limit, int64_t after,
                        int64_t since,
                        int (*fn)(int64_t id, int64_t time, const char *status, const char *policy,
                                  const char *verdict, void *arg),
                        void *arg)
{
        struct since_arg a = {agent, limit, after, since, fn, arg};

        return store_read(s, results_since_fn, &a);
}
