/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <time.h>

#include <sqlite3.h>

#include "daemon/store-internal.h"

/* Forward migrations: migration[i] takes user_version i to i + 1. */
static const char *const migration[STORE_SCHEMA_VERSION] = {
        "CREATE TABLE agents ("
        " id TEXT PRIMARY KEY,"
        " ak_public BLOB NOT NULL,"
        " ak_name BLOB NOT NULL UNIQUE,"
        " ek_cert BLOB,"
        " state TEXT NOT NULL,"
        " policy TEXT,"
        " created INTEGER NOT NULL,"
        " last_seen INTEGER NOT NULL DEFAULT 0,"
        " next_due INTEGER NOT NULL DEFAULT 0,"
        " last_status TEXT,"
        " last_policy TEXT,"
        " last_result INTEGER NOT NULL DEFAULT 0,"
        " ima_offset INTEGER NOT NULL DEFAULT 0,"
        " replay_state TEXT,"
        " seq INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE policies ("
        " name TEXT NOT NULL,"
        " version INTEGER NOT NULL,"
        " body TEXT NOT NULL,"
        " created INTEGER NOT NULL,"
        " deleted INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (name, version));"
        "CREATE TABLE results ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " time INTEGER NOT NULL,"
        " status TEXT NOT NULL,"
        " policy TEXT,"
        " verdict TEXT NOT NULL);"
        "CREATE INDEX results_by_agent ON results(agent, id);",
        /* 1 -> 2: enrolment by credential activation (DESIGN §4) */
        "CREATE TABLE enrolments ("
        " agent TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BLOB NOT NULL,"
        " cred_hash BLOB NOT NULL,"
        " expires INTEGER NOT NULL);",
        /* 2 -> 3 (issue 9): one live identity per EK, several pending credentials per agent
         * (a second enrolment never replaces the first), decommissioning, consumed nonces */
        "ALTER TABLE agents ADD COLUMN ek_id BLOB;"
        "ALTER TABLE agents ADD COLUMN prev_state TEXT;"
        "CREATE INDEX agents_by_ek ON agents(ek_id);"
        "CREATE TABLE enrolments3 ("
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BLOB NOT NULL,"
        " ek_id BLOB,"
        " ek_cert BLOB,"
        " cred_hash BLOB NOT NULL,"
        " expires INTEGER NOT NULL);"
        "INSERT INTO enrolments3 (agent, ek_public, cred_hash, expires)"
        " SELECT agent, ek_public, cred_hash, expires FROM enrolments;"
        "DROP TABLE enrolments;"
        "ALTER TABLE enrolments3 RENAME TO enrolments;"
        "CREATE INDEX enrolments_by_agent ON enrolments(agent);"
        "CREATE TABLE ek_decommissioned ("
        " ek_id BLOB PRIMARY KEY,"
        " agent TEXT NOT NULL,"
        " time INTEGER NOT NULL);"
        "CREATE TABLE nonces_used ("
        " nonce BLOB PRIMARY KEY,"
        " expires INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE INDEX nonces_used_by_expiry ON nonces_used(expires);"
        "CREATE TABLE health (id INTEGER PRIMARY KEY, time INTEGER NOT NULL);",
        /* 3 -> 4 (issue 15): the replay state is the typed binary form (verify/replay-state.h),
         * a BLOB. The JSON states are dropped, not converted: each agent's next challenge asks
         * from entry 0 and the agent resends its log once. */
        "ALTER TABLE agents DROP COLUMN replay_state;"
        "ALTER TABLE agents ADD COLUMN replay_state BLOB;"
        "UPDATE agents SET ima_offset = 0;",
        /* 4 -> 5 (issue 11): host identity; labels once as the JSON the API shows and once as
         * rows the ?label= filter finds through an index; indexes for ?hostname= and ?status= */
        "ALTER TABLE agents ADD COLUMN hostname TEXT;"
        "ALTER TABLE agents ADD COLUMN machine_id TEXT;"
        "ALTER TABLE agents ADD COLUMN labels TEXT;"
        "CREATE TABLE agent_labels ("
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " key TEXT NOT NULL,"
        " value TEXT NOT NULL,"
        " PRIMARY KEY (agent, key)) WITHOUT ROWID;"
        "CREATE INDEX agent_labels_by_kv ON agent_labels(key, value, agent);"
        "CREATE INDEX agents_by_hostname ON agents(hostname, id);"
        "CREATE INDEX agents_by_status ON agents(last_status, id);"
        /* the stale scan logs each agent once per transition: when (0: not marked stale) */
        "ALTER TABLE agents ADD COLUMN stale_since INTEGER NOT NULL DEFAULT 0;"
        "CREATE INDEX agents_by_stale ON agents(stale_since, next_due);",
        /* 5 -> 6 (issue 11): the webhook outbox (daemon/store-outbox.c, docs/webhooks.md).
         * events: written in the transaction of the change that causes it; ids never reused, so
         * a receiver deduplicates by id. webhook_cursors: per receiver URL, the last event id it
         * acknowledged (delivery is in id order). outbox_meta: the cap and the events dropped by
         * it. The stale scan's mark is schema 5's agents.stale_since. */
        "CREATE TABLE events ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " time INTEGER NOT NULL,"
        " type TEXT NOT NULL,"
        " agent TEXT NOT NULL,"
        " hostname TEXT,"
        " status TEXT,"
        " previous TEXT,"
        " claims TEXT,"
        " reason TEXT);"
        "CREATE TABLE webhook_cursors ("
        " url TEXT PRIMARY KEY,"
        " delivered INTEGER NOT NULL);"
        "CREATE TABLE outbox_meta ("
        " id INTEGER PRIMARY KEY CHECK (id = 1),"
        " cap INTEGER NOT NULL,"
        " dropped INTEGER NOT NULL);"
        "INSERT INTO outbox_meta (id, cap, dropped) VALUES (1, 100000, 0);",
        /* 7: PostgreSQL's one-statement verdict (attestd_verdict); nothing on SQLite */
        "",
        /* 7 -> 8: each result's EAR appraisal, typed (store_appraisal; daemon/ear.h says what
         * the values are), written when the round is judged, so GET /v1/agents/{id}/ear never
         * reads the verdict text back. Rows written before have NULLs: their EAR is 409
         * ear_no_appraisal until the agent's next round. */
        "ALTER TABLE results ADD COLUMN ear_status INTEGER;"
        "ALTER TABLE results ADD COLUMN ear_tv_instance_identity INTEGER;"
        "ALTER TABLE results ADD COLUMN ear_tv_configuration INTEGER;"
        "ALTER TABLE results ADD COLUMN ear_tv_executables INTEGER;"
        "ALTER TABLE results ADD COLUMN ear_tv_hardware INTEGER;",
};

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
        /* a duplicate (id or AK) inserts nothing: no error, so a PostgreSQL transaction goes on */
        [ST_AGENT_ADD] = "INSERT INTO agents (id, ak_public, ak_name, ek_cert, state, created,"
                         " ek_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
        [ST_AGENT_GET] = "SELECT id, ak_public, ak_name, ek_cert, state, policy, created,"
                         " last_seen, next_due, last_status, last_policy, last_result,"
                         " ima_offset, replay_state, seq, ek_id, hostname, machine_id, labels"
                         " FROM agents WHERE id = ?1",
        [ST_AGENT_LIST] = "SELECT " STORE_AGENT_LIST_COLS " FROM agents ORDER BY id",
        [ST_AGENT_IDENTITY] = "UPDATE agents SET hostname = coalesce(?2, hostname),"
                              " machine_id = coalesce(?3, machine_id),"
                              " labels = coalesce(?4, labels) WHERE id = ?1",
        [ST_LABELS_DELETE] = "DELETE FROM agent_labels WHERE agent = ?1",
        /* ?1 now, ?2 grace, ?3 interval (ms): active agents past due, not yet marked */
        /* next_due alone on one side: a range of agents_by_stale, not a scan of the fleet */
        [ST_STALE_ANY] = "SELECT 1 FROM agents WHERE stale_since = 0 AND state = 'active' AND"
                         " ((next_due > 0 AND next_due < ?1 - ?2) OR"
                         " (next_due = 0 AND created + ?3 + ?2 < ?1)) LIMIT 1",
        [ST_STALE_MARK] = "UPDATE agents SET stale_since = ?1 WHERE stale_since = 0 AND"
                          " state = 'active' AND ((next_due > 0 AND next_due < ?1 - ?2) OR"
                          " (next_due = 0 AND created + ?3 + ?2 < ?1))"
                          " RETURNING id, hostname, last_status, last_seen",
        [ST_LABEL_PUT] = "INSERT INTO agent_labels (agent, key, value) VALUES (?1, ?2, ?3)",
        [ST_AGENT_DELETE] = "DELETE FROM agents WHERE id = ?1",
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
                            " replay_state = ?9, seq = seq + 1, stale_since = 0"
                            " WHERE id = ?1 AND seq = ?2",
        [ST_AGENT_EXISTS] = "SELECT 1 FROM agents WHERE id = ?1",
        [ST_AGENT_OFFSET] = "SELECT ima_offset, state FROM agents WHERE id = ?1",
        [ST_AGENT_RESET_REPLAY] = "UPDATE agents SET ima_offset = 0, seq = seq + 1"
                                  " WHERE id = ?1 AND seq = ?2",
        [ST_RESULT_ADD] =
                "INSERT INTO results (agent, time, status, policy, verdict, " APPRAISAL_COLS
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        [ST_RESULT_PRUNE] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id FROM"
                            " results WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        [ST_RESULT_LIST] = "SELECT id, time, status, policy, verdict FROM results WHERE"
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
        [ST_NONCE_PURGE] = "DELETE FROM nonces_used WHERE expires <= ?1",
        [ST_NONCE_PUT] = "INSERT INTO nonces_used (nonce, expires) VALUES (?1, ?2)"
                         " ON CONFLICT DO NOTHING",
        [ST_NONCE_GET] = "SELECT 1 FROM nonces_used WHERE nonce = ?1",
        [ST_HEALTH_PUT] = "INSERT INTO health (id, time) VALUES (1, ?1)"
                          " ON CONFLICT (id) DO UPDATE SET time = excluded.time",
        /* the webhook outbox (daemon/store-outbox.c) */
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
        [ST_SCHEMA_VERSION] = "PRAGMA user_version",
        [ST_BEGIN] = "BEGIN IMMEDIATE",
        [ST_COMMIT] = "COMMIT",
        [ST_ROLLBACK] = "ROLLBACK",
        [ST_SAVEPOINT] = "SAVEPOINT job",
        [ST_RELEASE] = "RELEASE job",
        [ST_ROLLBACK_TO] = "ROLLBACK TO job",
};

/*
 * PostgreSQL: the same logical schema and version numbers, each migration[i] taking version i to
 * i + 1 in the engine's types (INTEGER -> BIGINT, BLOB -> BYTEA, AUTOINCREMENT -> an identity
 * column, rowid -> an id column); the version is the one row of schema_version. All pending
 * migrations run in one transaction under an advisory lock, so instances starting at once
 * migrate once.
 */
static const char *const pg_migration[STORE_SCHEMA_VERSION] = {
        "CREATE TABLE agents ("
        " id TEXT PRIMARY KEY,"
        " ak_public BYTEA NOT NULL,"
        " ak_name BYTEA NOT NULL UNIQUE,"
        " ek_cert BYTEA,"
        " state TEXT NOT NULL,"
        " policy TEXT,"
        " created BIGINT NOT NULL,"
        " last_seen BIGINT NOT NULL DEFAULT 0,"
        " next_due BIGINT NOT NULL DEFAULT 0,"
        " last_status TEXT,"
        " last_policy TEXT,"
        " last_result BIGINT NOT NULL DEFAULT 0,"
        " ima_offset BIGINT NOT NULL DEFAULT 0,"
        " replay_state TEXT,"
        " seq BIGINT NOT NULL DEFAULT 0);"
        "CREATE TABLE policies ("
        " name TEXT NOT NULL,"
        " version BIGINT NOT NULL,"
        " body TEXT NOT NULL,"
        " created BIGINT NOT NULL,"
        " deleted BIGINT NOT NULL DEFAULT 0,"
        " PRIMARY KEY (name, version));"
        "CREATE TABLE results ("
        " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " time BIGINT NOT NULL,"
        " status TEXT NOT NULL,"
        " policy TEXT,"
        " verdict TEXT NOT NULL);"
        "CREATE INDEX results_by_agent ON results(agent, id);",
        "CREATE TABLE enrolments ("
        " agent TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BYTEA NOT NULL,"
        " cred_hash BYTEA NOT NULL,"
        " expires BIGINT NOT NULL);",
        "ALTER TABLE agents ADD COLUMN ek_id BYTEA;"
        "ALTER TABLE agents ADD COLUMN prev_state TEXT;"
        "CREATE INDEX agents_by_ek ON agents(ek_id);"
        "ALTER TABLE enrolments DROP CONSTRAINT enrolments_pkey;"
        "ALTER TABLE enrolments ADD COLUMN id BIGINT GENERATED BY DEFAULT AS IDENTITY"
        " PRIMARY KEY;"
        "ALTER TABLE enrolments ADD COLUMN ek_id BYTEA;"
        "ALTER TABLE enrolments ADD COLUMN ek_cert BYTEA;"
        "CREATE INDEX enrolments_by_agent ON enrolments(agent);"
        "CREATE TABLE ek_decommissioned ("
        " ek_id BYTEA PRIMARY KEY,"
        " agent TEXT NOT NULL,"
        " time BIGINT NOT NULL);"
        "CREATE TABLE nonces_used ("
        " nonce BYTEA PRIMARY KEY,"
        " expires BIGINT NOT NULL);"
        "CREATE INDEX nonces_used_by_expiry ON nonces_used(expires);"
        "CREATE TABLE health (id BIGINT PRIMARY KEY, time BIGINT NOT NULL);",
        "ALTER TABLE agents DROP COLUMN replay_state;"
        "ALTER TABLE agents ADD COLUMN replay_state BYTEA;"
        "UPDATE agents SET ima_offset = 0;",
        "ALTER TABLE agents ADD COLUMN hostname TEXT;"
        "ALTER TABLE agents ADD COLUMN machine_id TEXT;"
        "ALTER TABLE agents ADD COLUMN labels TEXT;"
        "CREATE TABLE agent_labels ("
        " agent TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
        " key TEXT NOT NULL,"
        " value TEXT NOT NULL,"
        " PRIMARY KEY (agent, key));"
        "CREATE INDEX agent_labels_by_kv ON agent_labels(key, value, agent);"
        "CREATE INDEX agents_by_hostname ON agents(hostname, id);"
        "CREATE INDEX agents_by_status ON agents(last_status, id);"
        "ALTER TABLE agents ADD COLUMN stale_since BIGINT NOT NULL DEFAULT 0;"
        "CREATE INDEX agents_by_stale ON agents(stale_since, next_due);",
        "CREATE TABLE events ("
        " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
        " time BIGINT NOT NULL,"
        " type TEXT NOT NULL,"
        " agent TEXT NOT NULL,"
        " hostname TEXT,"
        " status TEXT,"
        " previous TEXT,"
        " claims TEXT,"
        " reason TEXT);"
        "CREATE TABLE webhook_cursors ("
        " url TEXT PRIMARY KEY,"
        " delivered BIGINT NOT NULL);"
        "CREATE TABLE outbox_meta ("
        " id BIGINT PRIMARY KEY CHECK (id = 1),"
        " cap BIGINT NOT NULL,"
        " dropped BIGINT NOT NULL);"
        "INSERT INTO outbox_meta (id, cap, dropped) VALUES (1, 100000, 0);",
        /*
         * 7: a verdict whose status is unchanged (the steady state) recorded by one statement,
         * one round trip instead of seven (store-results.c, result_add_one_fn): the checks and
         * writes of result_add_fn's statements. rc 0 written (rid: the result's id), 1 no such
         * agent, 2 its seq moved on, 3 the nonce was used before, 4 the status changes (nothing
         * written: the caller takes the path that writes the webhook event), 5 an error (msg;
         * its subtransaction rolled back, the caller's transaction stays usable, as a savepoint
         * would leave it). The agent's row is locked first, so the checks hold until the end.
         */
        "CREATE FUNCTION attestd_verdict(p_agent TEXT, p_seq BIGINT, p_time BIGINT,"
        " p_next_due BIGINT, p_status TEXT, p_policy TEXT, p_verdict TEXT, p_ima_offset BIGINT,"
        " p_state BYTEA, p_retain BIGINT, p_nonce BYTEA, p_nonce_expires BIGINT,"
        " p_purge BIGINT) RETURNS TABLE (rc INTEGER, rid BIGINT, msg TEXT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD; n BIGINT;"
        " BEGIN"
        "  rc := 0; rid := 0; msg := NULL;"
        "  BEGIN"
        "   SELECT last_status, stale_since, seq INTO a FROM agents WHERE id = p_agent"
        "    FOR UPDATE;"
        "   IF NOT FOUND THEN rc := 1;"
        "   ELSIF a.seq <> p_seq THEN rc := 2;"
        "   ELSIF a.stale_since <> 0 OR coalesce(a.last_status, '') = ''"
        "    OR a.last_status <> p_status THEN rc := 4;"
        "   END IF;"
        "   IF rc <> 0 THEN RETURN NEXT; RETURN; END IF;"
        "   IF p_purge > 0 THEN DELETE FROM nonces_used WHERE expires <= p_purge; END IF;"
        "   IF p_nonce IS NOT NULL THEN"
        "    INSERT INTO nonces_used (nonce, expires) VALUES (p_nonce, p_nonce_expires)"
        "     ON CONFLICT DO NOTHING;"
        "    GET DIAGNOSTICS n = ROW_COUNT;"
        "    IF n = 0 THEN rc := 3; RETURN NEXT; RETURN; END IF;"
        "   END IF;"
        "   INSERT INTO results (agent, time, status, policy, verdict)"
        "    VALUES (p_agent, p_time, p_status, p_policy, p_verdict) RETURNING id INTO rid;"
        "   UPDATE agents SET last_seen = p_time, next_due = p_next_due, last_status = p_status,"
        "    last_policy = p_policy, last_result = rid, ima_offset = p_ima_offset,"
        "    replay_state = p_state, seq = seq + 1, stale_since = 0"
        "    WHERE id = p_agent AND seq = p_seq;"
        "   DELETE FROM results WHERE agent = p_agent AND id <= (SELECT r.id FROM results r"
        "    WHERE r.agent = p_agent ORDER BY r.id DESC LIMIT 1 OFFSET p_retain);"
        "  EXCEPTION WHEN OTHERS THEN"
        "   rc := 5; rid := 0; msg := SQLSTATE || ' ' || SQLERRM;"
        "  END;"
        "  RETURN NEXT;"
        " END $f$;",
        /*
         * 8: the results' EAR appraisal (as on SQLite), and attestd_verdict() writing it: the
         * function of 7 with five more parameters, so 7's is dropped (every new database runs
         * both: this step is the upgrade path of each store-pg test).
         */
        "ALTER TABLE results ADD COLUMN ear_status INTEGER,"
        " ADD COLUMN ear_tv_instance_identity INTEGER, ADD COLUMN ear_tv_configuration INTEGER,"
        " ADD COLUMN ear_tv_executables INTEGER, ADD COLUMN ear_tv_hardware INTEGER;"
        "DROP FUNCTION attestd_verdict(TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT,"
        " BYTEA, BIGINT, BYTEA, BIGINT, BIGINT);"
        "CREATE FUNCTION attestd_verdict(p_agent TEXT, p_seq BIGINT, p_time BIGINT,"
        " p_next_due BIGINT, p_status TEXT, p_policy TEXT, p_verdict TEXT, p_ima_offset BIGINT,"
        " p_state BYTEA, p_retain BIGINT, p_nonce BYTEA, p_nonce_expires BIGINT,"
        " p_purge BIGINT, p_ear_status INTEGER, p_tv_instance INTEGER, p_tv_config INTEGER,"
        " p_tv_exec INTEGER, p_tv_hardware INTEGER)"
        " RETURNS TABLE (rc INTEGER, rid BIGINT, msg TEXT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD; n BIGINT;"
        " BEGIN"
        "  rc := 0; rid := 0; msg := NULL;"
        "  BEGIN"
        "   SELECT last_status, stale_since, seq INTO a FROM agents WHERE id = p_agent"
        "    FOR UPDATE;"
        "   IF NOT FOUND THEN rc := 1;"
        "   ELSIF a.seq <> p_seq THEN rc := 2;"
        "   ELSIF a.stale_since <> 0 OR coalesce(a.last_status, '') = ''"
        "    OR a.last_status <> p_status THEN rc := 4;"
        "   END IF;"
        "   IF rc <> 0 THEN RETURN NEXT; RETURN; END IF;"
        "   IF p_purge > 0 THEN DELETE FROM nonces_used WHERE expires <= p_purge; END IF;"
        "   IF p_nonce IS NOT NULL THEN"
        "    INSERT INTO nonces_used (nonce, expires) VALUES (p_nonce, p_nonce_expires)"
        "     ON CONFLICT DO NOTHING;"
        "    GET DIAGNOSTICS n = ROW_COUNT;"
        "    IF n = 0 THEN rc := 3; RETURN NEXT; RETURN; END IF;"
        "   END IF;"
        "   INSERT INTO results (agent, time, status, policy, verdict, ear_status,"
        "    ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"
        "    ear_tv_hardware) VALUES (p_agent, p_time, p_status, p_policy, p_verdict,"
        "    p_ear_status, p_tv_instance, p_tv_config, p_tv_exec, p_tv_hardware)"
        "    RETURNING id INTO rid;"
        "   UPDATE agents SET last_seen = p_time, next_due = p_next_due, last_status = p_status,"
        "    last_policy = p_policy, last_result = rid, ima_offset = p_ima_offset,"
        "    replay_state = p_state, seq = seq + 1, stale_since = 0"
        "    WHERE id = p_agent AND seq = p_seq;"
        "   DELETE FROM results WHERE agent = p_agent AND id <= (SELECT r.id FROM results r"
        "    WHERE r.agent = p_agent ORDER BY r.id DESC LIMIT 1 OFFSET p_retain);"
        "  EXCEPTION WHEN OTHERS THEN"
        "   rc := 5; rid := 0; msg := SQLSTATE || ' ' || SQLERRM;"
        "  END;"
        "  RETURN NEXT;"
        " END $f$;",
};

/* advisory lock keys (pg_advisory_xact_lock): the migration, the event writers */
#define PG_LOCK_MIGRATE "7631463249"
#define PG_LOCK_EVENTS "7631463250"

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
        [ST_STALE_ANY] = "SELECT 1 FROM agents WHERE stale_since = 0 AND state = 'active' AND"
                         " ((next_due > 0 AND next_due < ?1::bigint - ?2::bigint) OR"
                         " (next_due = 0 AND created + ?3::bigint + ?2::bigint < ?1::bigint))"
                         " LIMIT 1",
        [ST_STALE_MARK] = "UPDATE agents SET stale_since = ?1::bigint WHERE stale_since = 0 AND"
                          " state = 'active' AND ((next_due > 0 AND next_due < ?1::bigint -"
                          " ?2::bigint) OR (next_due = 0 AND created + ?3::bigint + ?2::bigint <"
                          " ?1::bigint)) RETURNING id, hostname, last_status, last_seen",
        [ST_RESULT_ADD] =
                "INSERT INTO results (agent, time, status, policy, verdict, " APPRAISAL_COLS
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
        [ST_RESULT_PRUNE] = "DELETE FROM results WHERE agent = ?1 AND id <= (SELECT id FROM"
                            " results WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET"
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
                           " ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        [ST_SCHEMA_VERSION] = "SELECT coalesce(max(version), 0) FROM schema_version",
        [ST_BEGIN] = "BEGIN",
};

static unsigned stmt_flags(enum stmt i)
{
        return i == ST_RESULT_ADD || i == ST_EVENT_ADD ? DB_F_LAST_ID : 0;
}

/* page cache of each pooled connection (KiB); the writer keeps SQLite's default */
#define STORE_POOL_CACHE_KIB 256
#define STR_(x) #x
#define STR(x) STR_(x)

struct job {
        int (*fn)(struct conn *c, void *arg);
        void *arg;
        bool one; /* fn runs one statement that never aborts the transaction: no savepoint */
        int rc;
        bool done;
        pthread_cond_t done_cv; /* its caller waits on it: a commit wakes only its own callers */
        struct job *next;
};

struct store {
        enum store_mode mode;
        pthread_mutex_t lock;      /* the writer's queue */
        pthread_mutex_t pool_lock; /* the pooled connections: readers do not wait on the queue */
        pthread_cond_t conn_free;  /* a pooled connection came back */
        struct conn *free;         /* pooled connections */
        struct conn *conns;        /* all pooled connections */
        unsigned nconns;
        /* writer mode */
        struct conn writer;
        pthread_t writer_thread;
        bool writer_running, stopping;
        pthread_cond_t job_ready;
        struct job *queue, *queue_tail;
        atomic_uint_fast64_t commits, writes; /* write transactions, writes in them */
        atomic_uint_fast64_t wal_pages;       /* pages those commits wrote to the WAL */
        char *path;                           /* a SQLite file or a PostgreSQL URL */
        char *password;                       /* PostgreSQL, or NULL */
        bool pg;
        int64_t wait_ms; /* how long a caller waits for a pooled connection (<= 0: for ever) */
        atomic_uint_fast64_t statements;            /* executions (sqlite3_step / PQexec*) */
        atomic_uint_fast64_t pool_waits, pool_busy; /* waited for a connection, gave up */
        atomic_uint_fast64_t in_use;                /* pooled connections taken */
        /* PostgreSQL session locks this store holds (store_claim): duties of one instance */
        pthread_mutex_t claim_lock;
        char *claimed[STORE_CLAIMS_MAX];
        struct conn *claimed_on[STORE_CLAIMS_MAX];  /* the connection holding the lock */
        unsigned claimed_session[STORE_CLAIMS_MAX]; /* and its session then */
        /* readiness probe: at most one real write per interval, the last answer cached */
        pthread_mutex_t probe_lock;
        int64_t probe_at;
        atomic_int probe_rc;
        char probe_msg[160];
        struct store_cache *cache; /* store-cache.c */
};

struct store_cache *store_cache_of(struct store *s)
{
        return s->cache;
}

bool store_on_pg(const struct store *s)
{
        return s->pg;
}

void store_cache_stats(struct store *s, struct store_cache_stats *ret)
{
        store_cache_stats_read(s->cache, ret);
}

void store_cache_limit(struct store *s, size_t max)
{
        store_cache_set_max(s->cache, max);
}

static int db_fail(struct db *db, struct attest_err *err, const char *what)
{
        return attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", what, db ? db_errmsg(db) : "?");
}

static void conn_close(struct conn *c)
{
        for (int i = 0; i < ST_COUNT; i++)
                db_finalize(c->st[i]);
        memset(c->st, 0, sizeof(c->st));
        c->db = db_close(c->db);
}

static int conn_open(struct store *s, struct conn *c, struct attest_err *err)
{
        char msg[200] = "";
        int e;

        memset(c, 0, sizeof(*c));
        if ((e = db_open(s->path, s->password, &s->statements, &c->db, err)) < 0)
                return e;
        c->pg = db_kind_of(c->db) == DB_PG;
        if (!c->pg) {
                sqlite3_busy_timeout(db_handle(c->db), 10000);
                if (db_exec(c->db,
                            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                            " PRAGMA foreign_keys=ON;",
                            msg, sizeof(msg)) < 0) {
                        e = attest_fail(err, -EIO, AE_STORE_IO, "%s: %s", s->path,
                                        msg[0] ? msg : "pragma");
                        conn_close(c);
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
                        e = db_fail(c->db, err, "prepare");
                        conn_close(c);
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

static int st_exec(struct conn *c, enum stmt i)
{
        struct db_stmt *st = st_get(c, i);
        int rc;

        if (!st)
                return -EIO;
        rc = db_step(st);
        db_reset(st);
        return rc == DB_DONE || rc == DB_ROW ? 0 : -EIO;
}

/* How each engine keeps its schema version; the migrations themselves are the same steps. */
struct migrator {
        const char *begin;         /* the transaction, locked against a concurrent migration */
        const char *version;       /* the current version, one integer */
        const char *set, *set_end; /* record a version: set, the number, set_end */
        const char *const *steps;
};

static const struct migrator migrator_sqlite = {
        .begin = "BEGIN IMMEDIATE",
        .version = "PRAGMA user_version",
        .set = "PRAGMA user_version = ",
        .set_end = "",
        .steps = migration,
};

static const struct migrator migrator_pg = {
        .begin = "BEGIN; SELECT pg_advisory_xact_lock(" PG_LOCK_MIGRATE ");"
                 " CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
        .version = "SELECT coalesce(max(version), 0) FROM schema_version",
        .set = "DELETE FROM schema_version; INSERT INTO schema_version VALUES (",
        .set_end = ")",
        .steps = pg_migration,
};

static int migrate(struct conn *c, struct attest_err *err)
{
        const struct migrator *m = c->pg ? &migrator_pg : &migrator_sqlite;
        int64_t version;
        char msg[200] = "";

        if (db_exec(c->db, m->begin, msg, sizeof(msg)) < 0) {
                (void)db_exec(c->db, "ROLLBACK", NULL, 0);
                return attest_fail(err, -EIO, AE_STORE_IO, "begin: %s", msg[0] ? msg : "?");
        }
        if (store_query_i64(c, m->version, &version) < 0) {
                (void)db_exec(c->db, "ROLLBACK", NULL, 0);
                return db_fail(c->db, err, "schema version");
        }
        if (version > STORE_SCHEMA_VERSION) {
                (void)db_exec(c->db, "ROLLBACK", NULL, 0);
                return attest_fail(err, -EINVAL, AE_STORE_SCHEMA,
                                   "database schema %d is newer than this attestd (%d)",
                                   (int)version, STORE_SCHEMA_VERSION);
        }
        for (int v = (int)version; v < STORE_SCHEMA_VERSION; v++) {
                char set[96];

                snprintf(set, sizeof(set), "%s%d%s", m->set, v + 1, m->set_end);
                if (db_exec(c->db, m->steps[v], msg, sizeof(msg)) < 0 ||
                    db_exec(c->db, set, msg, sizeof(msg)) < 0) {
                        int e = attest_fail(err, -EIO, AE_STORE_SCHEMA, "migration %d: %s", v + 1,
                                            msg[0] ? msg : "?");

                        (void)db_exec(c->db, "ROLLBACK", NULL, 0);
                        return e;
                }
        }
        if (db_exec(c->db, "COMMIT", msg, sizeof(msg)) < 0)
                return attest_fail(err, -EIO, AE_STORE_IO, "commit: %s", msg[0] ? msg : "?");
        return 0;
}

/* After a commit on c (by the thread using c): the pages it wrote to the WAL. */
static void count_wal_pages(struct store *s, struct conn *c)
{
        int cur = 0, hi = 0;

        if (!c->pg &&
            sqlite3_db_status(db_handle(c->db), SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1) ==
                    SQLITE_OK &&
            cur > 0)
                atomic_fetch_add(&s->wal_pages, (uint64_t)cur);
}

static void *writer_main(void *arg)
{
        struct store *s = arg;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                struct job *batch;
                unsigned n;
                int rc;

                while (!s->queue && !s->stopping)
                        pthread_cond_wait(&s->job_ready, &s->lock);
                if (!s->queue)
                        break;
                batch = s->queue;
                s->queue = s->queue_tail = NULL;
                pthread_mutex_unlock(&s->lock);

                /* one transaction, one fsync, for the whole batch; a failing job is rolled back
                 * to its savepoint and does not take the others with it. A PostgreSQL connection
                 * that broke (server restart, failover) is connected again first. */
                rc = db_reconnect(s->writer.db);
                if (rc == 0)
                        rc = st_exec(&s->writer, ST_BEGIN);
                n = 0;
                for (struct job *j = batch; j; j = j->next) {
                        n++;
                        if (rc < 0) {
                                j->rc = rc;
                                continue;
                        }
                        /* a one-statement job needs no savepoint: its function undoes its
                         * own failure (store-results.c) */
                        if (j->one) {
                                j->rc = j->fn(&s->writer, j->arg);
                        } else if (st_exec(&s->writer, ST_SAVEPOINT) < 0) {
                                j->rc = -EIO;
                        } else {
                                j->rc = j->fn(&s->writer, j->arg);
                                if (j->rc < 0)
                                        (void)st_exec(&s->writer, ST_ROLLBACK_TO);
                                (void)st_exec(&s->writer, ST_RELEASE);
                        }
                        /* the callers that queued while this batch ran join it, before its
                         * commit: they are answered a whole fsync sooner, and the callers
                         * already in it wait only for their statements (joining stops at
                         * STORE_COMMIT_JOBS_MAX jobs), never for a timer */
                        if (!j->next && n < STORE_COMMIT_JOBS_MAX) {
                                pthread_mutex_lock(&s->lock);
                                if (s->queue) {
                                        struct job *last = s->queue;

                                        for (unsigned k = n + 1;
                                             last->next && k < STORE_COMMIT_JOBS_MAX; k++)
                                                last = last->next;
                                        j->next = s->queue;
                                        s->queue = last->next;
                                        if (!s->queue)
                                                s->queue_tail = NULL;
                                        last->next = NULL;
                                }
                                pthread_mutex_unlock(&s->lock);
                        }
                }
                if (rc == 0)
                        atomic_fetch_add(&s->commits, 1);
                if (rc == 0 && st_exec(&s->writer, ST_COMMIT) < 0) {
                        (void)st_exec(&s->writer, ST_ROLLBACK);
                        for (struct job *j = batch; j; j = j->next)
                                j->rc = -EIO;
                }
                count_wal_pages(s, &s->writer);

                /* wake exactly the callers of this batch (a broadcast woke every thread
                 * waiting, also those whose jobs were still queued, to sleep again) */
                pthread_mutex_lock(&s->lock);
                for (struct job *j = batch, *next; j; j = next) {
                        next = j->next;
                        j->done = true;
                        if (!(j->one && j->rc > 0)) /* > 0: it wrote nothing */
                                atomic_fetch_add(&s->writes, 1);
                        pthread_cond_signal(&j->done_cv);
                }
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

/*
 * A pooled connection; NULL when none came back within wait_ms (the pool is exhausted: the
 * caller answers store_busy). wait_ms <= 0 waits for ever.
 */
static struct conn *conn_get(struct store *s)
{
        struct timespec until;
        struct conn *c;

        pthread_mutex_lock(&s->pool_lock);
        if (!s->free) {
                atomic_fetch_add(&s->pool_waits, 1);
                if (s->wait_ms > 0) {
                        clock_gettime(CLOCK_REALTIME, &until);
                        until.tv_sec += s->wait_ms / 1000;
                        until.tv_nsec += (long)(s->wait_ms % 1000) * 1000000L;
                        if (until.tv_nsec >= 1000000000L) {
                                until.tv_sec++;
                                until.tv_nsec -= 1000000000L;
                        }
                }
        }
        while (!s->free) {
                if (s->wait_ms <= 0) {
                        pthread_cond_wait(&s->conn_free, &s->pool_lock);
                        continue;
                }
                if (pthread_cond_timedwait(&s->conn_free, &s->pool_lock, &until) == ETIMEDOUT &&
                    !s->free) {
                        pthread_mutex_unlock(&s->pool_lock);
                        atomic_fetch_add(&s->pool_busy, 1);
                        return NULL;
                }
        }
        c = s->free;
        s->free = c->next_free;
        atomic_fetch_add(&s->in_use, 1);
        pthread_mutex_unlock(&s->pool_lock);
        /* broken (PostgreSQL restarted): connected again; if that fails the statements fail */
        (void)db_reconnect(c->db);
        return c;
}

static void conn_put(struct store *s, struct conn *c)
{
        pthread_mutex_lock(&s->pool_lock);
        c->next_free = s->free;
        s->free = c;
        atomic_fetch_sub(&s->in_use, 1);
        pthread_cond_signal(&s->conn_free);
        pthread_mutex_unlock(&s->pool_lock);
}
/* Run fn inside a write transaction, durable when this returns 0. */
static int write_job(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg, bool one)
{
        struct conn *c;
        int rc;

        if (s->mode == STORE_WRITER) {
                struct job j = {.fn = fn, .arg = arg, .one = one};

                pthread_cond_init(&j.done_cv, NULL);
                pthread_mutex_lock(&s->lock);
                if (s->queue_tail)
                        s->queue_tail->next = &j;
                else
                        s->queue = &j;
                s->queue_tail = &j;
                pthread_cond_signal(&s->job_ready);
                while (!j.done)
                        pthread_cond_wait(&j.done_cv, &s->lock);
                pthread_mutex_unlock(&s->lock);
                pthread_cond_destroy(&j.done_cv);
                return j.rc;
        }
        c = conn_get(s);
        if (!c)
                return -EAGAIN;
        if (one) {
                /* one statement outside a transaction block: its own durable transaction */
                rc = fn(c, arg);
                if (rc <= 0) { /* > 0: it wrote nothing */
                        atomic_fetch_add(&s->commits, 1);
                        atomic_fetch_add(&s->writes, 1);
                }
                count_wal_pages(s, c);
                conn_put(s, c);
                return rc;
        }
        atomic_fetch_add(&s->commits, 1);
        atomic_fetch_add(&s->writes, 1);
        rc = st_exec(c, ST_BEGIN);
        if (rc == 0) {
                rc = fn(c, arg);
                if (rc < 0)
                        (void)st_exec(c, ST_ROLLBACK);
                else if (st_exec(c, ST_COMMIT) < 0) {
                        (void)st_exec(c, ST_ROLLBACK);
                        rc = -EIO;
                }
                count_wal_pages(s, c);
        }
        conn_put(s, c);
        return rc;
}

int store_write(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        return write_job(s, fn, arg, false);
}

int store_write_one(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        return write_job(s, fn, arg, true);
}

/* Run fn on a pooled connection, outside any explicit transaction (one statement reads). */
int store_read(struct store *s, int (*fn)(struct conn *c, void *arg), void *arg)
{
        struct conn *c = conn_get(s);
        int rc;

        if (!c)
                return -EAGAIN;
        rc = fn(c, arg);

        conn_put(s, c);
        return rc;
}

/* The database directory dir could not be made (errno e): which directory, and what to do. */
static int store_dir_fail(const char *dir, int e, struct attest_err *err)
{
        char up[4096], top[4096];
        struct stat st;

        if (e != ENOENT)
                return attest_fail(err, -e, AE_STORE_IO,
                                   "cannot create database directory %s: %s; create it for "
                                   "attestd's user (install -d -m 0700 %s), set "
                                   "StateDirectory=attestd, or choose another --db",
                                   dir, strerror(e), dir);
        /* name the topmost directory that is missing: mkdir makes only the last one */
        snprintf(up, sizeof(up), "%s", dir);
        snprintf(top, sizeof(top), "%s", dir);
        for (unsigned i = 0; i < 64; i++) {
                char *slash = strrchr(up, '/');

                if (!slash || slash == up)
                        break;
                *slash = '\0';
                if (stat(up, &st) == 0)
                        break;
                snprintf(top, sizeof(top), "%s", up);
        }
        return attest_fail(err, -ENOENT, AE_STORE_IO,
                           "database directory %s missing (%s does not exist): create it "
                           "(install -d -m 0700 %s), set StateDirectory=attestd, or choose "
                           "another --db",
                           dir, top, dir);
}

/*
 * The database holds agent identities and verdicts: its directory is created 0700 when missing
 * and refused when anyone may write to it; the file is created 0600 before SQLite opens it (the
 * WAL and SHM files inherit the mode of the database) and narrowed to 0600 when it was wider.
 */
static int store_prepare_files(const char *path, struct attest_err *err)
{
        char dir[4096], side[4096 + 8];
        const char *slash = strrchr(path, '/');
        struct stat st;
        int fd;

        if (!path[0] || path[0] == ':' || !strncmp(path, "file:", 5))
                return 0;
        if (slash) {
                size_t n = slash == path ? 1 : (size_t)(slash - path);

                if (n >= sizeof(dir))
                        return attest_fail(err, -ENAMETOOLONG, AE_STORE_IO, "%s: path too long",
                                           path);
                memcpy(dir, path, n);
                dir[n] = '\0';
        } else {
                snprintf(dir, sizeof(dir), ".");
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return store_dir_fail(dir, errno, err);
        if (stat(dir, &st) < 0)
                return attest_fail(err, -errno, AE_STORE_IO, "%s: %s", dir, strerror(errno));
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
                return attest_fail(err, -EPERM, AE_STORE_IO,
                                   "%s: the database directory is writable by anyone", dir);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return attest_fail(err, -errno, AE_STORE_IO, "%s: %s", path, strerror(errno));
        if (fstat(fd, &st) == 0 && (st.st_mode & 0077) && fchmod(fd, 0600) < 0) {
                int e = -errno;

                close(fd);
                return attest_fail(err, e, AE_STORE_IO, "chmod %s: %s", path, strerror(-e));
        }
        close(fd);
        for (int i = 0; i < 2; i++) {
                snprintf(side, sizeof(side), "%s%s", path, i ? "-shm" : "-wal");
                if (chmod(side, 0600) < 0 && errno != ENOENT)
                        return attest_fail(err, -errno, AE_STORE_IO, "chmod %s: %s", side,
                                           strerror(errno));
        }
        return 0;
}

bool store_is_url(const char *target)
{
        return db_is_pg(target);
}

int store_open(const char *path, enum store_mode mode, unsigned connections, struct store **ret,
               struct attest_err *err)
{
        struct store_options o = {.target = path, .mode = mode, .connections = connections};

        return store_open_opts(&o, ret, err);
}

int store_open_opts(const struct store_options *o, struct store **ret, struct attest_err *err)
{
        const char *path = o->target;
        unsigned connections = o->connections;
        enum store_mode mode = o->mode;
        struct store *s;
        int e;

        if (connections == 0 || connections > 1024)
                return attest_fail(err, -EINVAL, AE_STORE_CONFIG, "connections: %u", connections);
        if (!db_is_pg(path) && (e = store_prepare_files(path, err)) < 0)
                return e;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->pg = db_is_pg(path);
        s->wait_ms = o->wait_ms;
        s->path = strdup(path);
        s->password = o->password ? strdup(o->password) : NULL;
        if (!s->path || (o->password && !s->password)) {
                free(s->path);
                free(s->password);
                free(s);
                return -ENOMEM;
        }
        pthread_mutex_init(&s->probe_lock, NULL);
        pthread_mutex_init(&s->claim_lock, NULL);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->pool_lock, NULL);
        pthread_cond_init(&s->conn_free, NULL);
        pthread_cond_init(&s->job_ready, NULL);
        s->conns = calloc(connections, sizeof(*s->conns));
        if (!s->conns || store_cache_new(s->pg ? STORE_PG_AGENT_CACHE_MAX : STORE_AGENT_CACHE_MAX,
                                         &s->cache) < 0) {
                store_close(s);
                return -ENOMEM;
        }
        if (s->pg)
                store_cache_set_policy_max_age(s->cache, STORE_PG_POLICY_MAX_AGE_MS);
        /* the first connection migrates before the others prepare their statements */
        for (unsigned i = 0; i < connections; i++) {
                if ((e = conn_open(s, &s->conns[i], err)) < 0) {
                        store_close(s);
                        return e;
                }
                s->nconns = i + 1;
                if (i == 0 && (e = migrate(&s->conns[0], err)) < 0) {
                        store_close(s);
                        return e;
                }
                /*
                 * A pooled connection's page cache is dropped whenever another connection has
                 * committed since its last transaction: under load (hundreds of commits a
                 * second) every read starts cold, so SQLite's default 2 MiB per connection only
                 * grew RSS with the database (18 -> 41 MiB over 10 minutes of bench-daemon,
                 * 16 connections) without saving a read.
                 */
                if (!s->pg &&
                    db_exec(s->conns[i].db, "PRAGMA cache_size=-" STR(STORE_POOL_CACHE_KIB), NULL,
                            0) < 0) {
                        e = db_fail(s->conns[i].db, err, "cache_size");
                        store_close(s);
                        return e;
                }
                s->conns[i].next_free = s->free;
                s->free = &s->conns[i];
        }
        if (mode == STORE_WRITER) {
                if ((e = conn_open(s, &s->writer, err)) < 0) {
                        store_close(s);
                        return e;
                }
                if (pthread_create(&s->writer_thread, NULL, writer_main, s) != 0) {
                        store_close(s);
                        return -ENOMEM;
                }
                s->writer_running = true;
        }
        *ret = s;
        return 0;
}

struct store *store_close(struct store *s)
{
        if (!s)
                return NULL;
        if (s->writer_running) {
                pthread_mutex_lock(&s->lock);
                s->stopping = true;
                pthread_cond_signal(&s->job_ready);
                pthread_mutex_unlock(&s->lock);
                pthread_join(s->writer_thread, NULL);
        }
        if (s->writer.db)
                conn_close(&s->writer);
        for (unsigned i = 0; i < s->nconns; i++)
                conn_close(&s->conns[i]);
        free(s->conns);
        store_cache_free(s->cache);
        pthread_cond_destroy(&s->job_ready);
        pthread_cond_destroy(&s->conn_free);
        pthread_mutex_destroy(&s->pool_lock);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->probe_lock);
        pthread_mutex_destroy(&s->claim_lock);
        for (unsigned i = 0; i < STORE_CLAIMS_MAX; i++)
                free(s->claimed[i]);
        free(s->path);
        if (s->password) {
                explicit_bzero(s->password, strlen(s->password));
                free(s->password);
        }
        free(s);
        return NULL;
}

void store_stats(struct store *s, uint64_t *ret_commits, uint64_t *ret_writes)
{
        *ret_commits = atomic_load(&s->commits);
        *ret_writes = atomic_load(&s->writes);
}

struct claim_arg {
        const char *key;
        struct conn *on;
        unsigned session;
};

static int claim_fn(struct conn *c, void *arg)
{
        struct claim_arg *a = arg;
        struct db_stmt *st = NULL;
        int rc;

        /* a session lock: held while this connection lives (the store's lifetime), released by
         * the server when the instance dies, so another instance's next claim takes it over */
        if (db_prepare(c->db, "SELECT pg_try_advisory_lock(hashtextextended(?1, 0))", NULL, 0,
                       false, &st) < 0)
                return -EIO;
        if (bind_text(st, 1, a->key) < 0 || db_step(st) != DB_ROW) {
                db_finalize(st);
                return -EIO;
        }
        rc = db_col_i64(st, 0) ? 1 : 0;
        db_finalize(st);
        a->on = c;
        a->session = db_session(c->db);
        return rc;
}

int store_claim(struct store *s, const char *key)
{
        int rc, free_slot = -1;

        if (!s->pg)
                return 1; /* SQLite: one instance per database */
        pthread_mutex_lock(&s->claim_lock);
        for (int i = 0; i < STORE_CLAIMS_MAX; i++) {
                if (s->claimed[i] && !strcmp(s->claimed[i], key)) {
                        /* the session holding the lock ended (a reconnect): the server dropped
                         * it, so it is claimed anew (another instance may have it now) */
                        if (db_session(s->claimed_on[i]->db) == s->claimed_session[i]) {
                                pthread_mutex_unlock(&s->claim_lock);
                                return 1;
                        }
                        free(s->claimed[i]);
                        s->claimed[i] = NULL;
                }
                if (!s->claimed[i] && free_slot < 0)
                        free_slot = i;
        }
        if (free_slot < 0) {
                pthread_mutex_unlock(&s->claim_lock);
                return -E2BIG;
        }
        {
                struct claim_arg a = {key, NULL, 0};

                rc = store_read(s, claim_fn, &a);
                if (rc == 1 && !(s->claimed[free_slot] = strdup(key)))
                        rc = -ENOMEM; /* the lock stays held: the next claim fails, nothing is
                                       * doubled */
                if (rc == 1) {
                        s->claimed_on[free_slot] = a.on;
                        s->claimed_session[free_slot] = a.session;
                }
        }
        pthread_mutex_unlock(&s->claim_lock);
        return rc;
}

void store_db_stats(struct store *s, struct store_db_stats *ret)
{
        ret->statements = atomic_load(&s->statements);
        ret->pool_waits = atomic_load(&s->pool_waits);
        ret->pool_exhausted = atomic_load(&s->pool_busy);
        ret->pool_size = s->nconns;
        ret->pool_in_use = atomic_load(&s->in_use);
        ret->postgresql = s->pg;
}

uint64_t store_wal_pages(struct store *s)
{
        return atomic_load(&s->wal_pages);
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

static int schema_version_fn(struct conn *c, void *arg)
{
        int64_t v = 0;
        struct db_stmt *st = st_get(c, ST_SCHEMA_VERSION);
        int rc = -EIO;

        if (st && db_step(st) == DB_ROW) {
                v = db_col_i64(st, 0);
                rc = 0;
        }
        if (st)
                db_reset(st);

        if (rc == 0)
                *(int *)arg = (int)v;
        return rc;
}

int store_schema_version(struct store *s, int *ret)
{
        return store_read(s, schema_version_fn, ret);
}

static int health_put_fn(struct conn *c, void *arg)
{
        struct db_stmt *st = st_get(c, ST_HEALTH_PUT);

        if (!st || bind_i64(st, 1, *(int64_t *)arg) < 0)
                return -EIO;
        return step_changes(c, st) < 0 ? -EIO : 0;
}

/* A page-sized file written, synced and removed beside the database: SQLite may still reuse
 * room in its WAL when the file system is full, a new file cannot be written. */
static int probe_file(const char *path, char *msg, size_t n)
{
        char p[4096 + 8];
        uint8_t page[4096];
        size_t put = 0;
        int fd, e = 0;

        if (!path[0] || path[0] == ':' || !strncmp(path, "file:", 5))
                return 0;
        memset(page, 0, sizeof(page));
        snprintf(p, sizeof(p), "%s-probe", path);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                e = -errno;
                snprintf(msg, n, "cannot create a file beside the database: %s", strerror(-e));
                return e;
        }
        while (put < sizeof(page)) {
                ssize_t w = write(fd, page + put, sizeof(page) - put);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        e = w < 0 ? -errno : -EIO;
                        break;
                }
                put += (size_t)w;
        }
        if (e == 0 && fsync(fd) < 0)
                e = -errno;
        close(fd);
        unlink(p);
        if (e < 0)
                snprintf(msg, n, "writing beside the database failed: %s", strerror(-e));
        return e;
}

int store_probe(struct store *s, int64_t now, int64_t min_interval_ms, char *ret_msg, size_t n)
{
        int rc;

        if (pthread_mutex_trylock(&s->probe_lock) != 0) {
                /* another request is probing: its previous answer stands */
                rc = atomic_load(&s->probe_rc);
                snprintf(ret_msg, n, "%s", rc < 0 ? "the last probe failed" : "");
                return rc;
        }
        if (s->probe_at && now >= s->probe_at && now - s->probe_at < min_interval_ms) {
                rc = atomic_load(&s->probe_rc);
                snprintf(ret_msg, n, "%s", s->probe_msg);
                pthread_mutex_unlock(&s->probe_lock);
                return rc;
        }
        s->probe_msg[0] = '\0';
        rc = s->pg ? 0 : probe_file(s->path, s->probe_msg, sizeof(s->probe_msg));
        if (rc == 0 && (rc = store_write(s, health_put_fn, &now)) < 0)
                snprintf(s->probe_msg, sizeof(s->probe_msg), "a database write failed");
        s->probe_at = now;
        atomic_store(&s->probe_rc, rc);
        snprintf(ret_msg, n, "%s", s->probe_msg);
        pthread_mutex_unlock(&s->probe_lock);
        return rc;
}
