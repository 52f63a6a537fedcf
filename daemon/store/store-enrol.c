/* SPDX-License-Identifier: MIT */
/*
 * An agent's identity lifecycle (docs/architecture.md §3.1): enrolment pending a credential,
 * proof, decommission (its EK refused from then on) and readmission.
 */
#include <stdio.h>

#include <openssl/crypto.h>

#include "daemon/store/store-internal.h"

/* The agent's state: 0, -ENOENT when there is no such agent, -EBADMSG an unknown state. */
static int agent_state(struct conn *c, const char *id, enum agent_state *ret)
{
        struct db_stmt *st;
        int r = row_by_key(c, ST_AGENT_STATE, id, &st);

        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        r = col_state(st, 0, ret);
        db_reset(st);
        return r;
}

/* The agent that decommissioned this EK into who (may be NULL): 1 when refused, 0 when not. */
static int ek_refused(struct conn *c, const uint8_t *ek_id, char *who, size_t n)
{
        struct db_stmt *st;
        int rc;

        if (!ek_id)
                return 0;
        st = st_get(c, ST_EK_DECOM_GET);
        if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0)
                return -EIO;
        rc = db_step(st);
        if (rc == DB_ROW && who)
                col_str(st, 0, who, n);
        db_reset(st);
        if (rc == DB_ROW)
                return 1;
        return rc == DB_DONE ? 0 : -EIO;
}

struct pending_arg {
        const struct store_agent *a;
        const uint8_t *ek;
        size_t ek_len;
        const uint8_t *cred_hash;
        int64_t expires, now;
};

static int agent_add_pending_fn(struct conn *c, void *arg)
{
        struct pending_arg *p = arg;
        const uint8_t *ek_id = p->a->has_ek_id ? p->a->ek_id : NULL;
        struct store_agent row = *p->a;
        enum agent_state state;
        struct db_stmt *st;
        int e;

        if ((e = ek_refused(c, ek_id, NULL, 0)) != 0)
                return e < 0 ? e : -EPERM;
        /* the agent row carries no EK until a credential is activated: an unproven claim on an
         * EK must not look like its identity */
        row.ek_cert = NULL;
        row.ek_cert_len = 0;
        row.has_ek_id = false;
        e = store_agent_add_fn(c, &row);
        if (e == -EEXIST) {
                /* enrolling a pending agent again adds a credential beside the others (the
                 * proof picks the right one); an active one stays, a decommissioned one too */
                if ((e = agent_state(c, p->a->id, &state)) < 0)
                        return e == -ENOENT ? -EEXIST : e;
                if (state == AGENT_STATE_DECOMMISSIONED)
                        return -EPERM;
                if (state != AGENT_STATE_PENDING)
                        return -EEXIST;
        } else if (e < 0) {
                return e;
        }
        st = st_get(c, ST_ENROL_PURGE);
        if (!st || bind_text(st, 1, p->a->id) < 0 || bind_i64(st, 2, p->now) < 0 ||
            step_changes(c, st) < 0)
                return -EIO;
        st = st_get(c, ST_ENROL_COUNT);
        if (!st || bind_text(st, 1, p->a->id) < 0 || db_step(st) != DB_ROW) {
                if (st)
                        db_reset(st);
                return -EIO;
        }
        e = (int)db_col_i64(st, 0);
        db_reset(st);
        if (e >= STORE_PENDING_MAX)
                return -EBUSY;
        st = st_get(c, ST_ENROL_PUT);
        if (!st || bind_text(st, 1, p->a->id) < 0 || bind_blob(st, 2, p->ek, p->ek_len) < 0 ||
            bind_blob(st, 3, p->cred_hash, 32) < 0 || bind_i64(st, 4, p->expires) < 0 ||
            bind_blob(st, 5, ek_id, STORE_EK_ID_LEN) < 0 ||
            bind_blob(st, 6, p->a->ek_cert, p->a->ek_cert_len) < 0)
                return -EIO;
        e = step_changes(c, st);
        return e < 0 ? e : 0;
}

int store_agent_add_pending(struct store *s, const struct store_agent *a, const uint8_t *ek_public,
                            size_t ek_len, const uint8_t *cred_hash, int64_t expires)
{
        struct pending_arg p = {a, ek_public, ek_len, cred_hash, expires, 0};
        int e;

        /* credentials expire: the ones past it make room (now = their creation time) */
        p.now = a->created;
        e = store_write(s, agent_add_pending_fn, &p);
        store_cache_agent_forget(store_cache_of(s), a->id);
        return e;
}

struct activate_arg {
        const char *id;
        const uint8_t *proof_hash;
        int64_t now;
        char *replaced;
};

static int agent_activate_fn(struct conn *c, void *arg)
{
        struct activate_arg *a = arg;
        struct db_stmt *st;
        enum agent_state state;
        char old[STORE_ID_MAX + 1];
        uint8_t ek_id[STORE_EK_ID_LEN];
        _cleanup_free_ uint8_t *ek_cert = NULL;
        size_t ek_cert_len = 0;
        bool have_ek = false, any = false, live = false, match = false, match_live = false;
        int64_t match_row = 0;
        int rc, e;

        if ((e = agent_state(c, a->id, &state)) < 0)
                return e;
        if (state == AGENT_STATE_DECOMMISSIONED)
                return -EPERM;
        if (state != AGENT_STATE_PENDING)
                return -EALREADY;
        st = st_get(c, ST_ENROL_GET);
        if (!st || bind_text(st, 1, a->id) < 0)
                return -EIO;
        /* every credential of the agent is compared (constant time each) */
        while ((rc = db_step(st)) == DB_ROW) {
                size_t hn = 0;
                const uint8_t *h = db_col_blob(st, 0, &hn);
                bool ok = h && hn == 32 && CRYPTO_memcmp(h, a->proof_hash, 32) == 0;
                bool alive = db_col_i64(st, 1) >= a->now;

                any = true;
                live = live || alive;
                if (ok && !match) {
                        match = true;
                        match_live = alive;
                        match_row = db_col_i64(st, 2);
                }
        }
        db_reset(st);
        if (rc != DB_DONE)
                return -EIO;
        if (!any)
                return -EALREADY;
        if (match && !match_live)
                return -ETIME;
        if (!match)
                return live ? -EKEYREJECTED : -ETIME;
        st = st_get(c, ST_ENROL_LIST);
        if (!st || bind_i64(st, 1, match_row) < 0 || db_step(st) != DB_ROW) {
                if (st)
                        db_reset(st);
                return -EIO;
        }
        have_ek = col_blob_fixed(st, 0, ek_id, STORE_EK_ID_LEN);
        e = col_blob(st, 1, &ek_cert, &ek_cert_len);
        db_reset(st);
        if (e < 0)
                return e;
        if ((e = ek_refused(c, have_ek ? ek_id : NULL, NULL, 0)) != 0)
                return e < 0 ? e : -EACCES;
        /* the proof came from the TPM of this EK: this agent takes over the EK's identity */
        if (have_ek) {
                st = st_get(c, ST_AGENT_TAKEOVER);
                if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0 ||
                    bind_text(st, 2, a->id) < 0)
                        return -EIO;
                rc = db_step(st);
                if (rc == DB_ROW)
                        col_str(st, 0, old, sizeof(old));
                db_reset(st);
                if (rc != DB_ROW && rc != DB_DONE)
                        return -EIO;
                if (rc == DB_ROW) {
                        /* at most one live identity per EK exists, so one row at most */
                        if (exec_by_key(c, ST_AGENT_DELETE, old) < 0 ||
                            exec_by_key(c, ST_RESULTS_DELETE, old) < 0)
                                return -EIO;
                        if (a->replaced)
                                snprintf(a->replaced, STORE_ID_MAX + 1, "%s", old);
                }
        }
        st = st_get(c, ST_AGENT_ACTIVATE);
        if (!st || bind_text(st, 1, a->id) < 0 ||
            bind_blob(st, 2, have_ek ? ek_id : NULL, STORE_EK_ID_LEN) < 0 ||
            bind_blob(st, 3, ek_cert, ek_cert_len) < 0 || (e = step_changes(c, st)) < 0)
                return -EIO;
        if (exec_by_key(c, ST_ENROL_DELETE, a->id) < 0 ||
            exec_by_key(c, ST_STALE_WATCH_ADD, a->id) < 0)
                return -EIO;
        return outbox_on_enrolled(c, a->id, a->now);
}

int store_agent_activate(struct store *s, const char *id, const uint8_t *proof_hash, int64_t now,
                         char ret_replaced[STORE_ID_MAX + 1])
{
        char replaced[STORE_ID_MAX + 1] = "";
        struct activate_arg a = {id, proof_hash, now, replaced};
        int e = store_write(s, agent_activate_fn, &a);

        /* the agent changed, and the one whose EK it took over is gone */
        store_cache_agent_forget(store_cache_of(s), id);
        store_cache_agent_forget(store_cache_of(s), replaced);
        if (ret_replaced)
                snprintf(ret_replaced, STORE_ID_MAX + 1, "%s", e < 0 ? "" : replaced);
        return e;
}

struct decom_arg {
        const char *id;
        int64_t now;
        bool readmit;
};

static int agent_decom_fn(struct conn *c, void *arg)
{
        struct decom_arg *d = arg;
        struct db_stmt *st = st_get(c, ST_AGENT_EK);
        uint8_t ek_id[STORE_EK_ID_LEN];
        bool have_ek = false;
        int rc, n, m;

        if (!st || bind_text(st, 1, d->id) < 0)
                return -EIO;
        rc = db_step(st);
        if (rc == DB_ROW)
                have_ek = col_blob_fixed(st, 0, ek_id, STORE_EK_ID_LEN);
        db_reset(st);
        if (rc != DB_ROW && rc != DB_DONE)
                return -EIO;
        if (d->readmit) {
                if ((n = exec_by_key(c, ST_EK_DECOM_DELETE, d->id)) < 0 ||
                    (m = exec_by_key(c, ST_AGENT_READMIT, d->id)) < 0)
                        return -EIO;
                /* the agent may have been forgotten (DELETE) while its EK stayed refused */
                if (n == 0 && m == 0)
                        return rc == DB_DONE ? -ENOENT : -EALREADY;
                /* active again with the due time it had: the stale scan looks at it anew */
                if (m > 0 && exec_by_key(c, ST_STALE_WATCH_ADD, d->id) < 0)
                        return -EIO;
                /* receivers that saw agent.decommissioned learn it is lifted */
                return outbox_on_readmit(c, d->id, d->now);
        }
        if (rc == DB_DONE)
                return -ENOENT;
        /* its pending credentials die with it; the event commits with the change */
        if ((n = outbox_on_decommission(c, d->id, d->now)) < 0)
                return n; /* -EBADMSG: an unknown stored state */
        if (exec_by_key(c, ST_AGENT_DECOM, d->id) < 0 || exec_by_key(c, ST_ENROL_DELETE, d->id) < 0)
                return -EIO;
        if (have_ek) {
                st = st_get(c, ST_EK_DECOM_PUT);
                if (!st || bind_blob(st, 1, ek_id, STORE_EK_ID_LEN) < 0 ||
                    bind_text(st, 2, d->id) < 0 || bind_i64(st, 3, d->now) < 0 ||
                    step_changes(c, st) < 0)
                        return -EIO;
        }
        return 0;
}

int store_agent_decommission(struct store *s, const char *id, int64_t now)
{
        struct decom_arg d = {id, now, false};
        int e = store_write(s, agent_decom_fn, &d);

        store_cache_agent_forget(store_cache_of(s), id);
        return e;
}

int store_agent_readmit(struct store *s, const char *id, int64_t now)
{
        struct decom_arg d = {id, now, true};
        int e = store_write(s, agent_decom_fn, &d);

        store_cache_agent_forget(store_cache_of(s), id);
        return e;
}

struct ek_check_arg {
        const uint8_t *ek_id;
        char *who;
        size_t n;
};

static int ek_check_fn(struct conn *c, void *arg)
{
        struct ek_check_arg *a = arg;
        int e = ek_refused(c, a->ek_id, a->who, a->n);

        return e < 0 ? e : e ? -EPERM : 0;
}

int store_ek_refused(struct store *s, const uint8_t ek_id[STORE_EK_ID_LEN], char *ret_agent,
                     size_t n)
{
        struct ek_check_arg a = {ek_id, ret_agent, n};

        return store_read(s, ek_check_fn, &a);
}

/* ---- the refused EKs ---- */

struct refused_arg {
        const char *after, *prefix;
        const uint8_t *after_ek;
        uint64_t limit;
        int (*fn)(const uint8_t ek_id[STORE_EK_ID_LEN], const char *agent, int64_t time,
                  bool agent_exists, void *arg);
        void *arg;
};

static int ek_refused_list_fn(struct conn *c, void *arg)
{
        struct refused_arg *a = arg;
        char sql[400];
        struct db_stmt *st = NULL;
        int rc = DB_DONE, e = 0;

        /* fixed text; the cursor, prefix and limit are bound parameters */
        snprintf(sql, sizeof(sql),
                 "SELECT ek_id, agent, time,"
                 " CASE WHEN EXISTS (SELECT 1 FROM agents WHERE id = agent) THEN 1 ELSE 0 END"
                 " FROM ek_decommissioned WHERE (agent > ?1 OR (agent = ?1 AND ek_id > ?5))%s"
                 " ORDER BY agent, ek_id LIMIT ?2",
                 a->prefix ? " AND substr(agent, 1, CAST(?3 AS INTEGER)) = ?4" : "");
        if (db_prepare(c->db, sql, NULL, 0, false, &st) < 0)
                return -EIO;
        if (bind_text(st, 1, a->after ? a->after : "") < 0 ||
            bind_i64(st, 2, a->limit > INT64_MAX ? INT64_MAX : (int64_t)a->limit) < 0 ||
            (a->prefix && (bind_i64(st, 3, (int64_t)strlen(a->prefix)) < 0 ||
                           bind_text(st, 4, a->prefix) < 0)) ||
            bind_blob(st, 5, a->after_ek ? a->after_ek : (const uint8_t *)"",
                      a->after_ek ? STORE_EK_ID_LEN : 0) < 0)
                e = -EIO;
        while (e == 0 && (rc = db_step(st)) == DB_ROW) {
                char agent[STORE_ID_MAX + 1];
                size_t n = 0;
                const uint8_t *ek = db_col_blob(st, 0, &n);

                /* a row this store did not write (a short EK id) is not handed out */
                if (!ek || n != STORE_EK_ID_LEN) {
                        e = -EBADMSG;
                        break;
                }
                col_str(st, 1, agent, sizeof(agent));
                e = a->fn(ek, agent, db_col_i64(st, 2), db_col_i64(st, 3) != 0, a->arg);
        }
        if (e == 0 && rc != DB_DONE)
                e = -EIO;
        db_finalize(st);
        return e;
}

int store_ek_refused_list(struct store *s, const char *after, const uint8_t *after_ek,
                          const char *prefix, uint64_t limit,
                          int (*fn)(const uint8_t ek_id[STORE_EK_ID_LEN], const char *agent,
                                    int64_t time, bool agent_exists, void *arg),
                          void *arg)
{
        struct refused_arg a = {after, prefix, after_ek, limit, fn, arg};

        return store_read(s, ek_refused_list_fn, &a);
}
