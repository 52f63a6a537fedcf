/* SPDX-License-Identifier: MIT */
/*
 * The store's schema (docs/architecture.md §7): the forward migrations of each engine, run at
 * first connection (store_migrate) inside one transaction.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/store/store-internal.h"

/*
 * Schema 10's stale scan, the same in both engines but for the integer type (T): results.due
 * and its index; the agents' index on (stale_since, next_due) dropped; the watch list, filled
 * with every active agent not marked stale, for the scan to look at once; the cursor, from 1
 * (results written before have due 0: the watch list stands for them).
 */
#define STALE_WATCH_SQL(T)                                                                         \
        "ALTER TABLE results ADD COLUMN due " T " NOT NULL DEFAULT 0;"                             \
        "CREATE INDEX results_by_due ON results(due);"                                             \
        "DROP INDEX agents_by_stale;"                                                              \
        "CREATE TABLE stale_watch ("                                                               \
        " agent TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,"                         \
        " due " T " NOT NULL);"                                                                    \
        "CREATE INDEX stale_watch_by_due ON stale_watch(due);"                                     \
        "INSERT INTO stale_watch (agent, due) SELECT id, next_due FROM agents"                     \
        " WHERE state = 'active' AND stale_since = 0;"                                             \
        "CREATE TABLE stale_cursor (id " T " PRIMARY KEY CHECK (id = 1), upto " T " NOT NULL);"    \
        "INSERT INTO stale_cursor (id, upto) VALUES (1, 1);"
#define STALE_WATCH_SQL_SQLITE STALE_WATCH_SQL("INTEGER")
#define STALE_WATCH_SQL_PG STALE_WATCH_SQL("BIGINT")

/*
 * Schema 11's prune of one agent's results in attestd_verdict() and attestd_verdicts(), once the
 * verdict's own result is in (A: the agent's id, K: its results_kept as the round read it, with
 * its seq, R: the retain count; the statement path's ST_RESULT_PRUNE_OLDEST and
 * ST_RESULT_PRUNE + ST_AGENT_KEPT_COUNT do the same). K known: the agent had K results, now
 * K + 1, and the oldest K + 1 - R of them go: the one at offset K - R from the oldest and every
 * older one, one step into the agent's results. K NULL (rows from before schema 11): the newest
 * R are kept, which walks R entries, and the count is written for the next verdict.
 */
#define PRUNE_SQL(A, K, R)                                                                         \
        " IF " K " IS NULL THEN"                                                                   \
        "  DELETE FROM results WHERE agent = " A " AND id <= (SELECT r.id FROM results r"          \
        "   WHERE r.agent = " A " ORDER BY r.id DESC LIMIT 1 OFFSET " R ");"                       \
        "  UPDATE agents SET results_kept = (SELECT count(*) FROM results r"                       \
        "   WHERE r.agent = " A ") WHERE id = " A ";"                                              \
        " ELSIF " K " >= " R " THEN"                                                               \
        "  DELETE FROM results WHERE agent = " A " AND id <= (SELECT r.id FROM results r"          \
        "   WHERE r.agent = " A " ORDER BY r.id LIMIT 1 OFFSET " K " - " R ");"                    \
        " END IF;"

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
        /* 1 -> 2: enrolment by credential activation (docs/architecture.md §3.1) */
        "CREATE TABLE enrolments ("
        " agent TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,"
        " ek_public BLOB NOT NULL,"
        " cred_hash BLOB NOT NULL,"
        " expires INTEGER NOT NULL);",
        /* 2 -> 3: one live identity per EK, several pending credentials per agent
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
        /* 3 -> 4: the replay state is the typed binary form (verify/replay-state.h),
         * a BLOB. The JSON states are dropped, not converted: each agent's next challenge asks
         * from entry 0 and the agent resends its log once. */
        "ALTER TABLE agents DROP COLUMN replay_state;"
        "ALTER TABLE agents ADD COLUMN replay_state BLOB;"
        "UPDATE agents SET ima_offset = 0;",
        /* 4 -> 5: host identity; labels once as the JSON the API shows and once as
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
        /* 5 -> 6: the webhook outbox (daemon/store/store-outbox.c, docs/webhooks.md).
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
        /* 8 -> 9: no consumed nonces: a nonce is bound to the agent's last result, so the
         * verdict that stores a new one makes it stale (daemon/nonce.h); PostgreSQL also gets
         * the verdicts of one group commit in one call (attestd_verdicts) */
        "DROP TABLE IF EXISTS nonces_used;",
        /* 9 -> 10: no index holds a column a verdict changes (PostgreSQL's HOT updates). The
         * stale scan finds due times through the results (each carries its agent's next_due
         * when written) past stale_cursor.upto, and through stale_watch: the agents that became
         * active without a verdict (enrolled, readmitted), every active one at this migration. */
        STALE_WATCH_SQL_SQLITE,
        /* 10 -> 11: each agent's count of stored results (at most --retain after a verdict),
         * so that a verdict's prune deletes its oldest one in one step instead of walking
         * --retain of them to find where to cut. NULL: not known (every agent at this
         * migration): its next verdict prunes the old way and counts. */
        "ALTER TABLE agents ADD COLUMN results_kept INTEGER;",
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
        /*
         * 9: no consumed nonces (the table dropped: a nonce is bound to the agent's last result,
         * daemon/nonce.h), so attestd_verdict() loses its nonce parameters; and the verdicts of
         * one group commit in one statement (store-results.c, verdicts_group):
         * attestd_verdicts(), attestd_verdict()'s checks and writes for each element of the
         * arrays, in their order, one row (i, rc, rid) each with rc as there (0 written, 1 no
         * agent, 2 seq moved on, 4 status changes: nothing written). p_ear holds five per verdict
         * (status and the four trust vector claims, NULL for none). No exception block: a
         * failure fails the statement, nothing of it is written, and the caller writes each
         * verdict alone (attestd_verdict, whose exception block keeps one failure to itself), so
         * the common case costs no subtransaction, no xid of its own per verdict.
         */
        "DROP TABLE IF EXISTS nonces_used;"
        "DROP FUNCTION attestd_verdict(TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT,"
        " BYTEA, BIGINT, BYTEA, BIGINT, BIGINT, INTEGER, INTEGER, INTEGER, INTEGER, INTEGER);"
        "CREATE FUNCTION attestd_verdict(p_agent TEXT, p_seq BIGINT, p_time BIGINT,"
        " p_next_due BIGINT, p_status TEXT, p_policy TEXT, p_verdict TEXT, p_ima_offset BIGINT,"
        " p_state BYTEA, p_retain BIGINT, p_ear_status INTEGER, p_tv_instance INTEGER,"
        " p_tv_config INTEGER, p_tv_exec INTEGER, p_tv_hardware INTEGER)"
        " RETURNS TABLE (rc INTEGER, rid BIGINT, msg TEXT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD;"
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
        " END $f$;"
        "CREATE FUNCTION attestd_verdicts(p_agent TEXT[], p_seq BIGINT[], p_time BIGINT[],"
        " p_next_due BIGINT[], p_status TEXT[], p_policy TEXT[], p_verdict TEXT[],"
        " p_ima_offset BIGINT[], p_state BYTEA[], p_retain BIGINT, p_ear INTEGER[])"
        " RETURNS TABLE (i INTEGER, rc INTEGER, rid BIGINT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD; k INTEGER; e INTEGER;"
        " BEGIN"
        "  FOR k IN 1 .. coalesce(array_length(p_agent, 1), 0) LOOP"
        "   i := k; rc := 0; rid := 0; e := 5 * k - 4;"
        "   SELECT last_status, stale_since, seq INTO a FROM agents WHERE id = p_agent[k]"
        "    FOR UPDATE;"
        "   IF NOT FOUND THEN rc := 1;"
        "   ELSIF a.seq <> p_seq[k] THEN rc := 2;"
        "   ELSIF a.stale_since <> 0 OR coalesce(a.last_status, '') = ''"
        "    OR a.last_status <> p_status[k] THEN rc := 4;"
        "   END IF;"
        "   IF rc = 0 THEN"
        "    INSERT INTO results (agent, time, status, policy, verdict, ear_status,"
        "     ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"
        "     ear_tv_hardware) VALUES (p_agent[k], p_time[k], p_status[k], p_policy[k],"
        "     p_verdict[k], p_ear[e], p_ear[e + 1], p_ear[e + 2], p_ear[e + 3], p_ear[e + 4])"
        "     RETURNING id INTO rid;"
        "    UPDATE agents SET last_seen = p_time[k], next_due = p_next_due[k],"
        "     last_status = p_status[k], last_policy = p_policy[k], last_result = rid,"
        "     ima_offset = p_ima_offset[k], replay_state = p_state[k], seq = seq + 1,"
        "     stale_since = 0 WHERE id = p_agent[k];"
        "    DELETE FROM results WHERE agent = p_agent[k] AND id <= (SELECT r.id FROM results r"
        "     WHERE r.agent = p_agent[k] ORDER BY r.id DESC LIMIT 1 OFFSET p_retain);"
        "   END IF;"
        "   RETURN NEXT;"
        "  END LOOP;"
        " END $f$;",
        /*
         * 10: a verdict's writes without index churn on agents and with one index less on
         * results (docs/scaling.md, "Where the WAL goes"):
         * - the stale scan without an index on next_due (STALE_WATCH_SQL), so a verdict's update
         *   of agents is a HOT update: no index entry, the new version on the same page when it
         *   has room (fillfactor 70; existing pages get it as they are rewritten);
         * - results keyed by (agent, id), the only way they are read, instead of by id with an
         *   index on (agent, id) beside it (the index is built here: minutes at 10^8 results);
         * - no foreign key from results to agents: its check locked the agent's row (a lock
         *   record a verdict) after the verdict's own update had. attestd_verdict() and
         *   attestd_verdicts() update the agent first (the row lock that keeps it from being
         *   deleted meanwhile, and the checks: seq, status, stale mark) and insert the result
         *   only then, with the id taken ahead; deleting an agent deletes its results
         *   (ST_RESULTS_DELETE, after the agent's row: a verdict committing meanwhile is seen).
         * rc as in 9; a failed update is read once more to say which check it failed.
         */
        STALE_WATCH_SQL_PG
        "ALTER TABLE agents SET (fillfactor = 70);"
        "ALTER TABLE results DROP CONSTRAINT results_agent_fkey;"
        "ALTER TABLE results DROP CONSTRAINT results_pkey;"
        "DROP INDEX results_by_agent;"
        "ALTER TABLE results ADD PRIMARY KEY (agent, id);"
        "CREATE OR REPLACE FUNCTION attestd_verdict(p_agent TEXT, p_seq BIGINT, p_time BIGINT,"
        " p_next_due BIGINT, p_status TEXT, p_policy TEXT, p_verdict TEXT, p_ima_offset BIGINT,"
        " p_state BYTEA, p_retain BIGINT, p_ear_status INTEGER, p_tv_instance INTEGER,"
        " p_tv_config INTEGER, p_tv_exec INTEGER, p_tv_hardware INTEGER)"
        " RETURNS TABLE (rc INTEGER, rid BIGINT, msg TEXT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD;"
        " BEGIN"
        "  rc := 0; msg := NULL;"
        "  BEGIN"
        "   rid := nextval('results_id_seq');"
        "   UPDATE agents SET last_seen = p_time, next_due = p_next_due, last_status = p_status,"
        "    last_policy = p_policy, last_result = rid, ima_offset = p_ima_offset,"
        "    replay_state = p_state, seq = seq + 1"
        "    WHERE id = p_agent AND seq = p_seq AND stale_since = 0 AND last_status = p_status;"
        "   IF NOT FOUND THEN"
        "    rid := 0;"
        "    SELECT seq INTO a FROM agents WHERE id = p_agent;"
        "    rc := CASE WHEN NOT FOUND THEN 1 WHEN a.seq <> p_seq THEN 2 ELSE 4 END;"
        "    RETURN NEXT; RETURN;"
        "   END IF;"
        "   INSERT INTO results (id, agent, time, status, policy, verdict, ear_status,"
        "    ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"
        "    ear_tv_hardware, due) VALUES (rid, p_agent, p_time, p_status, p_policy, p_verdict,"
        "    p_ear_status, p_tv_instance, p_tv_config, p_tv_exec, p_tv_hardware, p_next_due);"
        "   DELETE FROM results WHERE agent = p_agent AND id <= (SELECT r.id FROM results r"
        "    WHERE r.agent = p_agent ORDER BY r.id DESC LIMIT 1 OFFSET p_retain);"
        "  EXCEPTION WHEN OTHERS THEN"
        "   rc := 5; rid := 0; msg := SQLSTATE || ' ' || SQLERRM;"
        "  END;"
        "  RETURN NEXT;"
        " END $f$;"
        "CREATE OR REPLACE FUNCTION attestd_verdicts(p_agent TEXT[], p_seq BIGINT[],"
        " p_time BIGINT[], p_next_due BIGINT[], p_status TEXT[], p_policy TEXT[],"
        " p_verdict TEXT[], p_ima_offset BIGINT[], p_state BYTEA[], p_retain BIGINT,"
        " p_ear INTEGER[])"
        " RETURNS TABLE (i INTEGER, rc INTEGER, rid BIGINT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD; k INTEGER; e INTEGER;"
        " BEGIN"
        "  FOR k IN 1 .. coalesce(array_length(p_agent, 1), 0) LOOP"
        "   i := k; rc := 0; e := 5 * k - 4;"
        "   rid := nextval('results_id_seq');"
        "   UPDATE agents SET last_seen = p_time[k], next_due = p_next_due[k],"
        "    last_status = p_status[k], last_policy = p_policy[k], last_result = rid,"
        "    ima_offset = p_ima_offset[k], replay_state = p_state[k], seq = seq + 1"
        "    WHERE id = p_agent[k] AND seq = p_seq[k] AND stale_since = 0"
        "    AND last_status = p_status[k];"
        "   IF FOUND THEN"
        "    INSERT INTO results (id, agent, time, status, policy, verdict, ear_status,"
        "     ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"
        "     ear_tv_hardware, due) VALUES (rid, p_agent[k], p_time[k], p_status[k],"
        "     p_policy[k], p_verdict[k], p_ear[e], p_ear[e + 1], p_ear[e + 2], p_ear[e + 3],"
        "     p_ear[e + 4], p_next_due[k]);"
        "    DELETE FROM results WHERE agent = p_agent[k] AND id <= (SELECT r.id FROM results r"
        "     WHERE r.agent = p_agent[k] ORDER BY r.id DESC LIMIT 1 OFFSET p_retain);"
        "   ELSE"
        "    rid := 0;"
        "    SELECT seq INTO a FROM agents WHERE id = p_agent[k];"
        "    rc := CASE WHEN NOT FOUND THEN 1 WHEN a.seq <> p_seq[k] THEN 2 ELSE 4 END;"
        "   END IF;"
        "   RETURN NEXT;"
        "  END LOOP;"
        " END $f$;",
        /*
         * 11: agents.results_kept (as on SQLite), which the verdict functions take as the round
         * read it (p_kept, checked by the seq it was read with) and keep: the prune is one step
         * (PRUNE_SQL) instead of a walk over --retain results a verdict. Instances of an older
         * attestd cannot write verdicts past this migration (their functions are gone): upgrade
         * them together, as for schemas 8 and 9.
         */
        "ALTER TABLE agents ADD COLUMN results_kept BIGINT;"
        "DROP FUNCTION attestd_verdict(TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT,"
        " BYTEA, BIGINT, INTEGER, INTEGER, INTEGER, INTEGER, INTEGER);"
        "DROP FUNCTION attestd_verdicts(TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[], TEXT[],"
        " TEXT[], BIGINT[], BYTEA[], BIGINT, INTEGER[]);"
        "CREATE FUNCTION attestd_verdict(p_agent TEXT, p_seq BIGINT, p_time BIGINT,"
        " p_next_due BIGINT, p_status TEXT, p_policy TEXT, p_verdict TEXT, p_ima_offset BIGINT,"
        " p_state BYTEA, p_retain BIGINT, p_ear_status INTEGER, p_tv_instance INTEGER,"
        " p_tv_config INTEGER, p_tv_exec INTEGER, p_tv_hardware INTEGER, p_kept BIGINT)"
        " RETURNS TABLE (rc INTEGER, rid BIGINT, msg TEXT)"
        " LANGUAGE plpgsql AS $f$"
        " DECLARE a RECORD;"
        " BEGIN"
        "  rc := 0; msg := NULL;"
        "  BEGIN"
        "   rid := nextval('results_id_seq');"
        "   UPDATE agents SET last_seen = p_time, next_due = p_next_due, last_status = p_status,"
        "    last_policy = p_policy, last_result = rid, ima_offset = p_ima_offset,"
        "    replay_state = p_state, seq = seq + 1, results_kept = least(p_kept + 1, p_retain)"
        "    WHERE id = p_agent AND seq = p_seq AND stale_since = 0 AND last_status = p_status;"
        "   IF NOT FOUND THEN"
        "    rid := 0;"
        "    SELECT seq INTO a FROM agents WHERE id = p_agent;"
        "    rc := CASE WHEN NOT FOUND THEN 1 WHEN a.seq <> p_seq THEN 2 ELSE 4 END;"
        "    RETURN NEXT; RETURN;"
        "   END IF;"
        "   INSERT INTO results (id, agent, time, status, policy, verdict, ear_status,"
        "    ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables,"
        "    ear_tv_hardware, due) VALUES (rid, p_agent, p_time, p_status, p_policy, p_verdict,"
        "    p_ear_status, p_tv_instance, p_tv_config, p_tv_exec, p_tv_hardware, "
        "p_next_due);" PRUNE_SQL(
                "p_agent", "p_kept",
                "p_retain") "  EXCEPTION WHEN OTHERS THEN"
                            "   rc := 5; rid := 0; msg := SQLSTATE || ' ' || SQLERRM;"
                            "  END;"
                            "  RETURN NEXT;"
                            " END $f$;"
                            "CREATE FUNCTION attestd_verdicts(p_agent TEXT[], p_seq BIGINT[],"
                            " p_time BIGINT[], p_next_due BIGINT[], p_status TEXT[], p_policy "
                            "TEXT[],"
                            " p_verdict TEXT[], p_ima_offset BIGINT[], p_state BYTEA[], p_retain "
                            "BIGINT,"
                            " p_ear INTEGER[], p_kept BIGINT[])"
                            " RETURNS TABLE (i INTEGER, rc INTEGER, rid BIGINT)"
                            " LANGUAGE plpgsql AS $f$"
                            " DECLARE a RECORD; k INTEGER; e INTEGER;"
                            " BEGIN"
                            "  FOR k IN 1 .. coalesce(array_length(p_agent, 1), 0) LOOP"
                            "   i := k; rc := 0; e := 5 * k - 4;"
                            "   rid := nextval('results_id_seq');"
                            "   UPDATE agents SET last_seen = p_time[k], next_due = p_next_due[k],"
                            "    last_status = p_status[k], last_policy = p_policy[k], last_result "
                            "= rid,"
                            "    ima_offset = p_ima_offset[k], replay_state = p_state[k], seq = "
                            "seq + 1,"
                            "    results_kept = least(p_kept[k] + 1, p_retain)"
                            "    WHERE id = p_agent[k] AND seq = p_seq[k] AND stale_since = 0"
                            "    AND last_status = p_status[k];"
                            "   IF FOUND THEN"
                            "    INSERT INTO results (id, agent, time, status, policy, verdict, "
                            "ear_status,"
                            "     ear_tv_instance_identity, ear_tv_configuration, "
                            "ear_tv_executables,"
                            "     ear_tv_hardware, due) VALUES (rid, p_agent[k], p_time[k], "
                            "p_status[k],"
                            "     p_policy[k], p_verdict[k], p_ear[e], p_ear[e + 1], p_ear[e + 2], "
                            "p_ear[e + 3],"
                            "     p_ear[e + 4], p_next_due[k]);" PRUNE_SQL(
                                    "p_agent[k]", "p_kept[k]",
                                    "p_retain") "   ELSE"
                                                "    rid := 0;"
                                                "    SELECT seq INTO a FROM agents WHERE id = "
                                                "p_agent[k];"
                                                "    rc := CASE WHEN NOT FOUND THEN 1 WHEN a.seq "
                                                "<> p_seq[k] THEN 2 ELSE 4 END;"
                                                "   END IF;"
                                                "   RETURN NEXT;"
                                                "  END LOOP;"
                                                " END $f$;",
};

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

int store_migrate(struct conn *c, struct attest_err *err)
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
                return store_db_fail(c->db, err, "schema version");
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
