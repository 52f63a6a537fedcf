/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include <openssl/crypto.h>

#include "daemon/store/store-internal.h"

/* ---- agents ---- */

void store_agent_free(struct store_agent *a)
{
        if (!a)
                return;
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

static int agent_row(struct db_stmt *st, struct store_agent **ret)
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
        col_str(st, 16, a->hostname, sizeof(a->hostname));
        col_str(st, 17, a->machine_id, sizeof(a->machine_id));
        a->has_ek_id = col_blob_fixed(st, 15, a->ek_id, sizeof(a->ek_id));
        *ret = a;
        return 0;
}

static int agent_add_fn(struct conn *c, void *arg)
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
        /* enrolled without credential activation (--insecure-trust-ak): active at once */
        return a->state != AGENT_STATE_ACTIVE ? 0 : outbox_on_enrolled(c, a->id, a->created);
}

int store_agent_add(struct store *s, const struct store_agent *a)
{
        int e = store_write(s, agent_add_fn, (void *)a);

        store_cache_agent_forget(store_cache_of(s), a->id);
        return e;
}
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
        e = agent_add_fn(c, &row);
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
                        if (exec_by_key(c, ST_AGENT_DELETE, old) < 0)
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
        if (exec_by_key(c, ST_ENROL_DELETE, a->id) < 0)
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
                return 0;
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

int store_agent_readmit(struct store *s, const char *id)
{
        struct decom_arg d = {id, 0, true};
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
        e = agent_row(st, &g->a);
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

static int state_active(enum agent_state state)
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
        return state_active(a->state);
}

int store_agent_offset(struct store *s, const char *id, uint64_t *ret)
{
        struct agent_get_arg g = {.id = id};
        enum agent_state state;
        uint64_t gen, offset;
        int e = store_cache_agent_peek(store_cache_of(s), id, &offset, &state, &gen);

        if (e == 0) {
                /* the whole row: the evidence that follows the challenge needs it */
                if ((e = store_read(s, agent_get_fn, &g)) < 0)
                        return e;
                store_cache_agent_add(store_cache_of(s), g.a, gen);
                offset = g.a->ima_offset;
                state = g.a->state;
                store_agent_free(g.a);
        }
        if ((e = state_active(state)) < 0)
                return e;
        *ret = offset;
        return 0;
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

                if ((e = agent_row(st, &a)) < 0)
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

static int agent_delete_fn(struct conn *c, void *arg)
{
        int n = exec_by_key(c, ST_AGENT_DELETE, arg);

        if (n < 0)
                return n;
        return n == 0 ? -ENOENT : 0;
}

int store_agent_delete(struct store *s, const char *id)
{
        int e = store_write(s, agent_delete_fn, (void *)id);

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
};

static int agent_query_fn(struct conn *c, void *arg)
{
        struct query_arg *q = arg;
        const struct store_agent_filter *f = q->f;
        char sql[1024];
        size_t n;
        struct db_stmt *st = NULL;
        int rc, e = 0, p;

        if ((unsigned)f->status >= STORE_STATUS__COUNT || f->n_labels > STORE_LABEL_FILTERS_MAX)
                return -EINVAL;
        /* fixed SQL text only: every value the client gave is a bound parameter */
        n = (size_t)snprintf(sql, sizeof(sql),
                             "SELECT " STORE_AGENT_LIST_COLS " FROM agents WHERE id > ?4%s%s",
                             f->hostname ? " AND hostname = ?5" : "", status_sql[f->status]);
        for (unsigned i = 0; i < f->n_labels && n < sizeof(sql); i++)
                n += (size_t)snprintf(sql + n, sizeof(sql) - n,
                                      " AND id IN (SELECT agent FROM agent_labels WHERE key = ?%u"
                                      " AND value = ?%u)",
                                      7 + 2 * i, 8 + 2 * i);
        if (n < sizeof(sql))
                n += (size_t)snprintf(sql + n, sizeof(sql) - n, " ORDER BY id LIMIT ?6");
        if (n >= sizeof(sql))
                return -E2BIG;
        if (db_prepare(c->db, sql, NULL, 0, false, &st) < 0)
                return -EIO;
        /* parameters the text does not name are simply not bound */
        p = db_param_count(st);
        if ((p >= 1 && bind_i64(st, 1, f->now) < 0) || (p >= 2 && bind_i64(st, 2, f->grace) < 0) ||
            (p >= 3 && bind_i64(st, 3, f->interval) < 0) ||
            bind_text(st, 4, f->after ? f->after : "") < 0 ||
            (f->hostname && bind_text(st, 5, f->hostname) < 0) ||
            bind_i64(st, 6, f->limit > INT64_MAX ? INT64_MAX : (int64_t)f->limit) < 0)
                e = -EIO;
        for (unsigned i = 0; e == 0 && i < f->n_labels; i++)
                if (bind_text(st, (int)(7 + 2 * i), f->label_key[i]) < 0 ||
                    bind_text(st, (int)(8 + 2 * i), f->label_value[i]) < 0)
                        e = -EIO;
        while (e == 0 && (rc = db_step(st)) == DB_ROW) {
                struct store_agent *a;

                if ((e = agent_row(st, &a)) < 0)
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
        struct query_arg q = {f, fn, arg};

        return store_read(s, agent_query_fn, &q);
}

/* ---- the stale scan ---- */

struct stale_arg {
        int64_t now, grace, interval;
        void (*fn)(const char *id, const char *hostname, const char *last_status, int64_t last_seen,
                   void *arg);
        void *arg;
        int n;
};

static int stale_bind(struct db_stmt *st, const struct stale_arg *a)
{
        return bind_i64(st, 1, a->now) < 0 || bind_i64(st, 2, a->grace) < 0 ||
                               bind_i64(st, 3, a->interval) < 0
                       ? -EIO
                       : 0;
}

static int stale_any_fn(struct conn *c, void *arg)
{
        struct db_stmt *st = st_get(c, ST_STALE_ANY);
        int rc;

        if (!st || stale_bind(st, arg) < 0)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -EIO;
}

static int stale_mark_fn(struct conn *c, void *arg)
{
        struct stale_arg *a = arg;
        struct db_stmt *st = st_get(c, ST_STALE_MARK);
        int rc;

        if (!st || stale_bind(st, a) < 0)
                return -EIO;
        a->n = 0;
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

int store_agent_stale_scan(struct store *s, int64_t now, int64_t grace, int64_t interval,
                           void (*fn)(const char *id, const char *hostname, const char *last_status,
                                      int64_t last_seen, void *arg),
                           void *arg)
{
        struct stale_arg a = {now, grace, interval, fn, arg, 0};
        int e = store_read(s, stale_any_fn, &a);

        if (e <= 0)
                return e;
        if ((e = store_write(s, stale_mark_fn, &a)) < 0)
                return e;
        return a.n;
}
