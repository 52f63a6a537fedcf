/* SPDX-License-Identifier: MIT */
/*
 * The store's statements: each written once with ?N (stmt_sql), a PostgreSQL text where the
 * dialect differs (stmt_pg), all prepared on every connection of the store (store_conn_open).
 */
#include <errno.h>
#include <string.h>

#include "daemon/store/store-internal.h"

/* The appraisal's columns (schema 8), in store_appraisal's order: status, then the vector. */
#define APPRAISAL_COLS                                                                             \
        "ear_status, ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"          \
        " ear_tv_hardware"

/*
 * Every change of an agent's state (verdict, replay reset, decommission, readmit, policy bind,
 * activation) bumps its seq: a verdict is recorded only at the seq its round read, so a row
 * another instance (or another request) changed meanwhile is never written over (-ESTALE).
 * A deleted agent has no row to update (-ENOENT).
 */
static const char *const stmt_sql[ST_COUNT] = {
        /* a duplicate (id or AK) inserts nothing: no error, so a PostgreSQL transaction goes on;
         * a new agent has no results (an earlier one of its id took them along) */
        [ST_AGENT_ADD] = "INSERT INTO agents (id, ak_public, ak_name, ek_cert, state, created,"
                         " ek_id, results_kept) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0)"
                         " ON CONFLICT DO NOTHING",
        [ST_AGENT_GET] = "SELECT id, ak_public, ak_name, ek_cert, state, policy, created,"
                         " last_seen, next_due, last_status, last_policy, last_result,"
                         " ima_offset, replay_state, seq, ek_id, hostname, machine_id, labels,"
                         " results_kept FROM agents WHERE id = ?1",
        [ST_AGENT_LIST] = "SELECT " STORE_AGENT_LIST_COLS " FROM agents ORDER BY id",
        [ST_AGENT_IDENTITY] = "UPDATE agents SET hostname = coalesce(?2, hostname),"
                              " machine_id = coalesce(?3, machine_id),"
                              " labels = coalesce(?4, labels) WHERE id = ?1",
        [ST_LABELS_DELETE] = "DELETE FROM agent_labels WHERE agent = ?1",
        /*
         * The stale scan (store-fleet.c, schema 10). No index holds a column a verdict changes,
         * so a verdict's update of agents can be HOT on PostgreSQL: the due times are found
         * through the results (results_by_due) and the watch list (stale_watch), never through
         * agents. stale_cursor.upto: every result due before it was looked at.
         */
        /* ?1 now - grace: anything to look at (a read: nothing is written while nothing is) */
        [ST_STALE_DUE] = "SELECT 1 FROM results WHERE due >= (SELECT upto FROM stale_cursor WHERE"
                         " id = 1) AND due < ?1 UNION ALL SELECT 1 FROM stale_watch WHERE"
                         " due < ?1 LIMIT 1",
        [ST_STALE_TURN] = "SELECT 1", /* PostgreSQL only */
        [ST_STALE_CURSOR] = "SELECT upto FROM stale_cursor WHERE id = 1",
        [ST_STALE_CURSOR_SET] = "UPDATE stale_cursor SET upto = ?1 WHERE id = 1 AND upto < ?1",
        /* ?1 from, ?2 to, ?3 a chunk: the due of the first result past the chunk, if any */
        [ST_STALE_HI] = "SELECT due FROM results WHERE due >= ?1 AND due < ?2 ORDER BY due"
                        " LIMIT 1 OFFSET ?3",
        /* ?1 now, ?2 from, ?3 to: agents whose last result fell due in [from, to) */
        [ST_STALE_MARK] = "UPDATE agents SET stale_since = ?1 FROM results AS r WHERE r.due >= ?2"
                          " AND r.due < ?3 AND agents.id = r.agent AND agents.last_result = r.id"
                          " AND agents.stale_since = 0 AND agents.state = 'active'"
                          " RETURNING id, hostname, last_status, last_seen",
        /* ?1 now, ?2 grace, ?3 interval (ms): the watched agents past due, not yet marked */
        [ST_STALE_MARK_WATCH] = "UPDATE agents SET stale_since = ?1 FROM stale_watch AS w WHERE"
                                " w.due < ?1 - ?2 AND agents.id = w.agent AND"
                                " agents.stale_since = 0 AND agents.state = 'active' AND"
                                " ((agents.next_due > 0 AND agents.next_due < ?1 - ?2) OR"
                                " (agents.next_due = 0 AND agents.created + ?3 + ?2 < ?1))"
                                " RETURNING id, hostname, last_status, last_seen",
        /* looked at: done with, but for an active agent that has not attested yet */
        [ST_STALE_WATCH_DROP] = "DELETE FROM stale_watch WHERE due < ?1 - ?2 AND NOT EXISTS"
                                " (SELECT 1 FROM agents AS a WHERE a.id = stale_watch.agent AND"
                                " a.state = 'active' AND a.stale_since = 0 AND a.next_due = 0)",
        /* which is looked at again when its first round falls due */
        [ST_STALE_WATCH_LATER] = "UPDATE stale_watch SET due = (SELECT a.created + ?3 FROM"
                                 " agents AS a WHERE a.id = stale_watch.agent) WHERE"
                                 " due < ?1 - ?2",
        /* a verdict's result stands for the agent now (the status path's, so every first one) */
        [ST_STALE_WATCH_DONE] = "DELETE FROM stale_watch WHERE agent = ?1",
        /* an agent that became active without a verdict (enrolled, activated, readmitted) */
        [ST_STALE_WATCH_ADD] = "INSERT INTO stale_watch (agent, due) SELECT id, next_due FROM"
                               " agents WHERE id = ?1 AND state = 'active' ON CONFLICT (agent)"
                               " DO UPDATE SET due = excluded.due",
        [ST_LABEL_PUT] = "INSERT INTO agent_labels (agent, key, value) VALUES (?1, ?2, ?3)",
        [ST_AGENT_DELETE] = "DELETE FROM agents WHERE id = ?1",
        /* after the agent's row (SQLite's foreign key has done it; PostgreSQL has none since
         * schema 10): a verdict that held the row and committed meanwhile is seen and deleted */
        [ST_RESULTS_DELETE] = "DELETE FROM results WHERE agent = ?1",
        [ST_AGENT_SET_POLICY] = "UPDATE agents SET policy = ?2, seq = seq + 1 WHERE id = ?1",
        [ST_POLICY_LIVE] = "SELECT 1 FROM policies WHERE name = ?1 AND deleted = 0 LIMIT 1",
        [ST_AGENT_COUNTS] =
                "SELECT coalesce(sum(decom), 0),"
                " coalesce(sum(NOT decom AND last_status IN ('fail', 'error')), 0),"
                " coalesce(sum(NOT decom AND stale AND coalesce(last_status, '') NOT IN"
                " ('fail', 'error')), 0),"
                " coalesce(sum(NOT decom AND NOT stale AND last_status IS 'pass'), 0),"
                " coalesce(sum(NOT decom AND NOT stale AND last_status IS NULL), 0)"
                " FROM (SELECT last_status, state = 'decommissioned' AS decom,"
                " (CASE WHEN next_due = 0 THEN created + ?3 ELSE next_due END) + ?2 < ?1 AS stale"
                " FROM agents)",
        [ST_AGENT_UPDATE] = "UPDATE agents SET last_seen = ?3, next_due = ?4, last_status = ?5,"
                            " last_policy = ?6, last_result = ?7, ima_offset = ?8,"
                            " replay_state = ?9, seq = seq + 1, stale_since = 0,"
                            " results_kept = ?10 WHERE id = ?1 AND seq = ?2",
        [ST_AGENT_EXISTS] = "SELECT 1 FROM agents WHERE id = ?1",
        [ST_AGENT_RESET_REPLAY] = "UPDATE agents SET ima_offset = 0, seq = seq + 1"
                                  " WHERE id = ?1 AND seq = ?2",
        [ST_RESULT_ADD] =
                "INSERT INTO results (agent, time, status, policy, verdict, " APPRAISAL_COLS
                ", due) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        [ST_RESULT_PRUNE] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id FROM"
                            " results WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        /* schema 11: the oldest ?2 + 1 results (PRUNE_SQL in store-schema.c), and the count */
        [ST_RESULT_PRUNE_OLDEST] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id"
                                   " FROM results WHERE agent = ?1 ORDER BY id LIMIT 1 OFFSET ?2)",
        [ST_AGENT_KEPT_COUNT] = "UPDATE agents SET results_kept = (SELECT count(*) FROM results"
                                " WHERE agent = ?1) WHERE id = ?1",
        [ST_RESULT_LIST] = "SELECT id, time, status, policy, verdict, due FROM results WHERE"
                           " agent = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
        [ST_RESULT_LATEST] = "SELECT id, time, policy, " APPRAISAL_COLS " FROM results WHERE"
                             " agent = ?1 ORDER BY id DESC LIMIT 1",
        [ST_POLICY_NEXT] = "SELECT coalesce(max(version), 0) + 1 FROM policies WHERE name = ?1",
        [ST_POLICY_ADD] = "INSERT INTO policies (name, version, body, created)"
                          " VALUES (?1, ?2, ?3, ?4)",
        [ST_POLICY_GET_LATEST] = "SELECT body, version, created FROM policies WHERE name = ?1"
                                 " AND deleted = 0 ORDER BY version DESC LIMIT 1",
        [ST_POLICY_GET_VERSION] = "SELECT body, version, created FROM policies WHERE name = ?1"
                                  " AND deleted = 0 AND version = ?2",
        [ST_POLICY_LATEST] = "SELECT version FROM policies WHERE name = ?1 AND deleted = 0"
                             " ORDER BY version DESC LIMIT 1",
        [ST_POLICY_LIST] = "SELECT name, max(version), max(created) FROM policies WHERE"
                           " deleted = 0 GROUP BY name ORDER BY name",
        [ST_POLICY_BOUND] = "SELECT 1 FROM agents WHERE policy = ?1 LIMIT 1",
        [ST_POLICY_DELETE] = "UPDATE policies SET deleted = 1 WHERE name = ?1 AND deleted = 0",
        [ST_ENROL_PUT] = "INSERT INTO enrolments (agent, ek_public, cred_hash, expires, ek_id,"
                         " ek_cert) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        [ST_ENROL_GET] = "SELECT cred_hash, expires, rowid FROM enrolments WHERE agent = ?1",
        [ST_ENROL_DELETE] = "DELETE FROM enrolments WHERE agent = ?1",
        [ST_AGENT_STATE] = "SELECT state FROM agents WHERE id = ?1",
        [ST_AGENT_SET_STATE] = "UPDATE agents SET state = ?2 WHERE id = ?1",
        [ST_ENROL_COUNT] = "SELECT count(*) FROM enrolments WHERE agent = ?1",
        [ST_ENROL_PURGE] = "DELETE FROM enrolments WHERE agent = ?1 AND expires < ?2",
        [ST_ENROL_LIST] = "SELECT ek_id, ek_cert FROM enrolments WHERE rowid = ?1",
        [ST_AGENT_ACTIVATE] = "UPDATE agents SET state = 'active', ek_id = ?2, ek_cert = ?3,"
                              " seq = seq + 1 WHERE id = ?1",
        [ST_AGENT_TAKEOVER] = "SELECT id FROM agents WHERE ek_id = ?1 AND id <> ?2"
                              " AND state <> 'pending'",
        [ST_EK_DECOM_GET] = "SELECT agent FROM ek_decommissioned WHERE ek_id = ?1",
        [ST_EK_DECOM_PUT] = "INSERT INTO ek_decommissioned (ek_id, agent, time)"
                            " VALUES (?1, ?2, ?3) ON CONFLICT (ek_id) DO UPDATE SET"
                            " agent = excluded.agent, time = excluded.time",
        [ST_EK_DECOM_DELETE] = "DELETE FROM ek_decommissioned WHERE agent = ?1",
        [ST_AGENT_DECOM] = "UPDATE agents SET prev_state = state, state = 'decommissioned',"
                           " seq = seq + 1 WHERE id = ?1 AND state <> 'decommissioned'",
        [ST_AGENT_READMIT] = "UPDATE agents SET state = coalesce(prev_state, 'active'),"
                             " prev_state = NULL, seq = seq + 1 WHERE id = ?1 AND"
                             " state = 'decommissioned'",
        [ST_AGENT_EK] = "SELECT ek_id FROM agents WHERE id = ?1",
        [ST_HEALTH_PUT] = "INSERT INTO health (id, time) VALUES (1, ?1)"
                          " ON CONFLICT (id) DO UPDATE SET time = excluded.time",
        /* the webhook outbox (daemon/store/store-outbox.c) */
        [ST_OUTBOX_PREV] = "SELECT last_status, stale_since, state FROM agents WHERE id = ?1",
        [ST_OUTBOX_HOSTNAME] = "SELECT hostname FROM agents WHERE id = ?1",
        [ST_EVENT_ADD] = "INSERT INTO events (time, type, agent, hostname, status, previous,"
                         " claims, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        [ST_EVENT_CAP] = "DELETE FROM events WHERE id <= ?1 - (SELECT cap FROM outbox_meta"
                         " WHERE id = 1)",
        [ST_EVENT_DROPPED] = "UPDATE outbox_meta SET dropped = dropped + ?1 WHERE id = 1",
        /* beyond the cap: the undelivered among them (delivered ones were only kept) */
        [ST_EVENT_CAP_LOST] = "SELECT count(*) FROM events WHERE id <= ?1 - (SELECT cap FROM"
                              " outbox_meta WHERE id = 1) AND id > (SELECT coalesce(min("
                              "delivered), ?1) FROM webhook_cursors)",
        [ST_EVENT_NEXT] = "SELECT id, time, type, agent, hostname, status, previous, claims,"
                          " reason FROM events WHERE id > ?1 ORDER BY id LIMIT ?2",
        [ST_CURSOR_SET] = "UPDATE webhook_cursors SET delivered = ?2 WHERE url = ?1"
                          " AND delivered < ?2",
        [ST_EVENT_LOCK] = "SELECT 1",
        [ST_VERDICT_ONE] = "SELECT 0, 0, NULL", /* PostgreSQL only */
        [ST_VERDICTS] = "SELECT 0, 0, 0",       /* PostgreSQL only */
        [ST_SCHEMA_VERSION] = "PRAGMA user_version",
        [ST_BEGIN] = "BEGIN IMMEDIATE",
        [ST_COMMIT] = "COMMIT",
        [ST_ROLLBACK] = "ROLLBACK",
        [ST_SAVEPOINT] = "SAVEPOINT job",
        [ST_RELEASE] = "RELEASE job",
        [ST_ROLLBACK_TO] = "ROLLBACK TO job",
};

/* PostgreSQL texts where the dialect differs (NULL: the common text) */
static const char *const stmt_pg[ST_COUNT] = {
        [ST_AGENT_COUNTS] =
                "SELECT count(*) FILTER (WHERE decom),"
                " count(*) FILTER (WHERE NOT decom AND last_status IN ('fail', 'error')),"
                " count(*) FILTER (WHERE NOT decom AND stale AND coalesce(last_status, '') NOT IN"
                " ('fail', 'error')),"
                " count(*) FILTER (WHERE NOT decom AND NOT stale AND last_status IS NOT DISTINCT"
                " FROM 'pass'),"
                " count(*) FILTER (WHERE NOT decom AND NOT stale AND last_status IS NULL)"
                " FROM (SELECT last_status, state = 'decommissioned' AS decom,"
                " (CASE WHEN next_due = 0 THEN created + ?3::bigint ELSE next_due END)"
                " + ?2::bigint < ?1::bigint AS stale FROM agents) AS a",
        [ST_STALE_DUE] = "SELECT 1 FROM results WHERE due >= (SELECT upto FROM stale_cursor WHERE"
                         " id = 1) AND due < ?1::bigint UNION ALL SELECT 1 FROM stale_watch"
                         " WHERE due < ?1::bigint LIMIT 1",
        /*
         * The scans of instances take turns: one at a time, the others skip theirs. A lock it
         * would wait for longer than 250 ms fails it (retried at the next scan), well before a
         * deadlock check (1 s by default) could pick a client's transaction to fail instead.
         * Its joins go from the few rows due to agents by key: with a chunk of 20,000 results
         * and a million agents the planner otherwise hashes all of agents (measured: 515 ms a
         * chunk against 49 ms).
         */
        [ST_STALE_TURN] = "SELECT pg_try_advisory_xact_lock(" PG_LOCK_STALE "),"
                          " set_config('lock_timeout', '250ms', true),"
                          " set_config('enable_hashjoin', 'off', true),"
                          " set_config('enable_mergejoin', 'off', true)",
        [ST_STALE_CURSOR_SET] = "UPDATE stale_cursor SET upto = ?1::bigint WHERE id = 1 AND"
                                " upto < ?1::bigint",
        [ST_STALE_HI] = "SELECT due FROM results WHERE due >= ?1::bigint AND due < ?2::bigint"
                        " ORDER BY due LIMIT 1 OFFSET ?3::bigint",
        [ST_STALE_MARK] = "UPDATE agents AS a SET stale_since = ?1::bigint FROM results AS r"
                          " WHERE r.due >= ?2::bigint AND r.due < ?3::bigint AND a.id = r.agent"
                          " AND a.last_result = r.id AND a.stale_since = 0 AND a.state ="
                          " 'active' RETURNING a.id, a.hostname, a.last_status, a.last_seen",
        [ST_STALE_MARK_WATCH] = "UPDATE agents AS a SET stale_since = ?1::bigint FROM"
                                " stale_watch AS w WHERE w.due < ?1::bigint - ?2::bigint AND"
                                " a.id = w.agent AND a.stale_since = 0 AND a.state = 'active'"
                                " AND ((a.next_due > 0 AND a.next_due < ?1::bigint - ?2::bigint)"
                                " OR (a.next_due = 0 AND a.created + ?3::bigint + ?2::bigint <"
                                " ?1::bigint)) RETURNING a.id, a.hostname, a.last_status,"
                                " a.last_seen",
        [ST_STALE_WATCH_DROP] = "DELETE FROM stale_watch AS w WHERE w.due < ?1::bigint -"
                                " ?2::bigint AND NOT EXISTS (SELECT 1 FROM agents AS a WHERE"
                                " a.id = w.agent AND a.state = 'active' AND a.stale_since = 0"
                                " AND a.next_due = 0)",
        [ST_STALE_WATCH_LATER] = "UPDATE stale_watch AS w SET due = (SELECT a.created +"
                                 " ?3::bigint FROM agents AS a WHERE a.id = w.agent) WHERE"
                                 " w.due < ?1::bigint - ?2::bigint",
        [ST_RESULT_ADD] =
                "INSERT INTO results (agent, time, status, policy, verdict, " APPRAISAL_COLS
                ", due) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id",
        [ST_RESULT_PRUNE] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id FROM"
                            " results WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET"
                            " ?2::bigint)",
        [ST_RESULT_PRUNE_OLDEST] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id"
                                   " FROM results WHERE agent = ?1 ORDER BY id LIMIT 1 OFFSET"
                                   " ?2::bigint)",
        [ST_ENROL_GET] = "SELECT cred_hash, expires, id FROM enrolments WHERE agent = ?1",
        [ST_ENROL_LIST] = "SELECT ek_id, ek_cert FROM enrolments WHERE id = ?1",
        [ST_EVENT_ADD] = "INSERT INTO events (time, type, agent, hostname, status, previous,"
                         " claims, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        [ST_EVENT_CAP] = "DELETE FROM events WHERE id <= ?1::bigint - (SELECT cap FROM"
                         " outbox_meta WHERE id = 1)",
        [ST_EVENT_CAP_LOST] = "SELECT count(*) FROM events WHERE id <= ?1::bigint - (SELECT cap"
                              " FROM outbox_meta WHERE id = 1) AND id > (SELECT coalesce(min("
                              "delivered), ?1::bigint) FROM webhook_cursors)",
        [ST_EVENT_LOCK] = "SELECT pg_advisory_xact_lock(" PG_LOCK_EVENTS ")",
        [ST_VERDICT_ONE] = "SELECT rc, rid, msg FROM attestd_verdict(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                           " ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        /* the arrays in the binary format (pg-array.h), cast so that it is what they are */
        [ST_VERDICTS] = "SELECT i, rc, rid FROM attestd_verdicts(?1::text[], ?2::bigint[],"
                        " ?3::bigint[], ?4::bigint[], ?5::text[], ?6::text[], ?7::text[],"
                        " ?8::bigint[], ?9::bytea[], ?10::bigint, ?11::integer[],"
                        " ?12::bigint[])",
        [ST_SCHEMA_VERSION] = "SELECT coalesce(max(version), 0) FROM schema_version",
        [ST_BEGIN] = "BEGIN",
};

static unsigned stmt_flags(enum stmt i)
{
        return i == ST_RESULT_ADD || i == ST_EVENT_ADD ? DB_F_LAST_ID : 0;
}

void store_conn_close(struct conn *c)
{
        for (int i = 0; i < ST_COUNT; i++)
                db_finalize(c->st[i]);
        memset(c->st, 0, sizeof(c->st));
        c->db = db_close(c->db);
}

int store_conn_open(struct store *s, struct conn *c, struct attest_err *err)
{
        char msg[200] = "";
        int e;

        memset(c, 0, sizeof(*c));
        if ((e = db_open(s->path, s->password, &s->statements, &c->db, err)) < 0)
                return e;
        c->pg = db_kind_of(c->db) == DB_PG;
        if (!c->pg) {
                if (db_exec(c->db,
                            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                            " PRAGMA foreign_keys=ON;",
                            msg, sizeof(msg)) < 0) {
                        e = attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", s->path,
                                        msg[0] ? msg : "pragma");
                        store_conn_close(c);
                        return e;
                }
        }
        for (int i = 0; i < ST_COUNT; i++) {
                /* PostgreSQL prepares on first use; SQLite now, lazily before the migration
                 * made the tables */
                e = db_prepare(c->db, stmt_sql[i], stmt_pg[i], stmt_flags(i), true, &c->st[i]);
                if (e < 0 && i < ST_BEGIN) {
                        c->st[i] = NULL;
                        continue;
                }
                if (e < 0) {
                        e = store_db_fail(c->db, err, "prepare");
                        store_conn_close(c);
                        return e;
                }
        }
        return 0;
}

int store_stmt_prepare(struct conn *c, enum stmt i)
{
        return db_prepare(c->db, stmt_sql[i], stmt_pg[i], stmt_flags(i), true, &c->st[i]) < 0 ? -EIO
                                                                                              : 0;
}

int store_st_exec(struct conn *c, enum stmt i)
{
        struct db_stmt *st = st_get(c, i);
        int rc;

        if (!st)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_DONE || rc == DB_ROW ? 0 : -EIO;
}

int store_query_i64(struct conn *c, const char *sql, int64_t *ret)
{
        struct db_stmt *st = NULL;
        int rc = -EIO;

        if (db_prepare(c->db, sql, NULL, 0, false, &st) == 0 && db_step(st) == DB_ROW) {
                *ret = db_col_i64(st, 0);
                rc = 0;
        }
        db_finalize(st);
        return rc;
}
