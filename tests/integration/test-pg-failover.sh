#!/usr/bin/env bash
# Losing the PostgreSQL primary (docs/scaling.md "Failover"): a PostgreSQL 15 primary and its
# synchronous streaming standby (tests/lib/pg-run.sh --standby), two attestd over TLS on loopback
# on the multi-host URL of both (target_session_attrs=read-write), a real agent on swtpm that may
# use either, bench-daemon's simulated agents on both, a webhook receiver. Under load the
# standby is cut off for half a second (its replication connection closed and refused: commits
# wait for it), then the primary's postmaster is killed (kill -9) and the standby promoted
# (pg_ctl promote). Then:
#  a. every verdict a client saw acknowledged (200) is in the promoted database (psql)
#  b. no round judged twice: one result per agent and log length in the promoted database
#  c. service comes back: an acknowledged verdict at each instance after the kill, within
#     FAILOVER_BOUND seconds (default 30); the time from the kill to the first one is printed
#  d. webhooks: every event in the promoted database delivered, none delivered twice
#  e. while the database was gone the clients were answered 5xx with a JSON error (no lost
#     connection, no hang); both instances logged the lost database and answer /healthz 200
#     at the end, and exit 0 on SIGTERM (no crash, no sanitizer report)
# FAILOVER_ASYNC=1 runs it on an asynchronous standby instead, to see it fail: the verdicts
# acknowledged while the standby was cut off are lost (a, not in the suite).
# Usage: test-pg-failover.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP BENCH_DAEMON
# (re-runs itself under SWTPM_RUN --ek-cert and then under tests/lib/pg-run.sh --standby)
set -euo pipefail
# a result's verdict as JSON in SQL: the row keeps it without the head its columns hold (status,
# policy, time, next_due: docs/architecture.md §7), so its text starts "," (a row stored whole,
# "{"); the rest is an object once that first byte is "{"
vjson="('{' || substr(verdict, 2))::json"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
if [ -z "${ATTEST_PG_URL_HA:-}" ]; then
        mode=--standby
        [ "${FAILOVER_ASYNC:-0}" = 1 ] && mode=--standby-async
        exec "$TOP/tests/lib/pg-run.sh" "$mode" --max-connections 60 -- "$0" "$@"
fi
BENCH=$(realpath "$6")
bound=${FAILOVER_BOUND:-30}
agent_test_begin tpm2_quote python3 psql
cd "$work"
(umask 077 && head -c 32 /dev/urandom >nonce.key && openssl rand -hex 32 >secret)
now_ms() { date +%s%3N; }
# the servers as their user: psql over each one's socket (trust)
# shellcheck disable=SC2086 # PGRUN_AS: words
pg1() { (cd / && ${PGRUN_AS} "$PGRUN_BIN/psql" -qtAX -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d attestd -c "$1"); }
# shellcheck disable=SC2086 # PGRUN_AS: words
pg2() { (cd / && ${PGRUN_AS} "$PGRUN_BIN/psql" -qtAX -h "$PGRUN_STANDBY_SOCK" -p "$PGRUN_STANDBY_PORT" -U attest -d attestd -c "$1"); }

# ---- the webhook receiver ----
# shellcheck disable=SC2034 # set by webhook_rx, killed at exit (kill_at_exit)
rx_pid="" bench_pid="" enrol_pid=""
kill_at_exit rx_pid bench_pid enrol_pid
webhook_rx

# ---- the instances, on both servers' URL ----
declare -A ports pids
inst() {
        local name=$1
        shift
        start_attestd -n "$name" -d "$ATTEST_PG_URL_HA" --nonce-key "$work/nonce.key" \
                --ek-ca "$SWTPM_STATE/ca" --insecure-trust-ak --interval 1 --grace 0 --retain 100000 \
                --webhook "https://127.0.0.1:$(cat rx/port)/hook" --webhook-ca "$CA" \
                --webhook-secret-file "$work/secret" --webhook-backoff-max 1 "$@"
        ports[$name]=$port pids[$name]=$daemon_pid
        at_exit kill_quiet "$daemon_pid"
        daemon_pid=""
}
at() { port=${ports[$1]}; }
kill_quiet() { kill -9 "$1" 2>/dev/null || true; }
sync=$(pg1 "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")
[ "$sync" = sync ] || [ "${FAILOVER_ASYNC:-0}" = 1 ] || fail "the standby is not synchronous: '$sync'"
boot_host
inst A
inst B
ok "two attestd on $ATTEST_PG_URL_HA: A :${ports[A]}, B :${ports[B]}"

# ---- load: the real agent (either instance), simulated agents on both ----
exec_agent() {
        exec "$AGENT" --verifier "https://127.0.0.1:${ports[A]}" \
                --verifier "https://127.0.0.1:${ports[B]}" --ca "$CA" --token-file enroll.token \
                --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st --timeout 5 --retry-max 2
}
exec_agent >agent.log 2>&1 &
agent_pid=$!
wait_lines agent.log '^<[56]>verdict: pass' 1 60
"$BENCH" --url "https://127.0.0.1:${ports[A]}" --url "https://127.0.0.1:${ports[B]}" --ca "$CA" \
        --token "$ADMIN" --agents 16 --threads 4 --entries 3 --seconds 12 --retry-ms 100 \
        --acks acks.txt --errors errors.txt >bench.out 2>bench.err &
bench_pid=$!
# events all along (webhooks, d): two more simulated agents enrolled and attesting once, again
# and again (an agent.enrolled, an agent.pass and, a second later, an agent.stale event each),
# until told to stop (bounded). An enrolment refused during the outage ends the bench at once,
# its exit not judged (nor its allocations at that exit: no leak check for it).
enrol_loop() {
        for _ in $(seq 400); do
                [ -e enrol.stop ] && break
                ASAN_OPTIONS=detect_leaks=0 "$BENCH" --url "https://127.0.0.1:${ports[A]}" --url "https://127.0.0.1:${ports[B]}" \
                        --ca "$CA" --token "$ADMIN" --agents 2 --threads 2 --entries 1 --rounds 1 \
                        --seconds 5 >/dev/null 2>&1 || true
        done
}
enrol_loop &
enrol_pid=$!
for _ in $(seq 400); do [ "$(count acks.txt .)" -ge 60 ] && break; nap 0.05; done
[ "$(count acks.txt .)" -ge 60 ] || fail "the load did not start: $(cat bench.err)"
nap 1.5 # a steady state before the loss

# ---- the standby cut off, the primary lost (its postmaster killed), the standby promoted ----
# the replication role refused from now on (pg-run.sh: the first line of pg_hba.conf is its), its
# connection closed: the primary's commits wait for the standby (synchronous), none is answered
sed -i '1s/ trust$/ reject/' "$PGRUN_DATA/pg_hba.conf"
[ "$(sed -n 1p "$PGRUN_DATA/pg_hba.conf")" = "host replication replicator 127.0.0.1/32 reject" ] ||
        fail "pg_hba.conf: $(sed -n 1p "$PGRUN_DATA/pg_hba.conf")"
pg1 "SELECT pg_reload_conf()" >/dev/null
pg1 "SELECT pg_terminate_backend(pid) FROM pg_stat_replication WHERE application_name = 'standby1'" >/dev/null
for _ in $(seq 100); do
        [ "$(pg1 "SELECT count(*) FROM pg_stat_replication")" = 0 ] && break
        nap 0.05
done
[ "$(pg1 "SELECT count(*) FROM pg_stat_replication")" = 0 ] || fail "the standby is still connected"
t_cut=$(now_ms)
nap 0.5
pm=$(sed -n 1p "$PGRUN_DATA/postmaster.pid")
t_kill=$(now_ms)
kill -9 "$pm"
acks_at_kill=$(count acks.txt .)
nap 2 # the outage: nothing takes writes (the real agent attests every second: it meets it)
t_promote=$(now_ms)
# shellcheck disable=SC2086 # PGRUN_AS: words
(cd / && ${PGRUN_AS} "$PGRUN_BIN/pg_ctl" -D "$PGRUN_STANDBY_DATA" -w -t 30 promote) \
        >promote.log 2>&1 || fail "pg_ctl promote: $(cat promote.log)"
t_promoted=$(now_ms)
[ "$(pg2 "SELECT pg_is_in_recovery()")" = f ] || fail "the standby is still in recovery after promote"
ok "standby cut off $((t_kill - t_cut)) ms before the kill; primary killed (postmaster $pm) with $acks_at_kill verdicts acknowledged; standby promoted at +$((t_promote - t_kill)) ms, done at +$((t_promoted - t_kill)) ms"
for _ in $(seq 600); do kill -0 "$bench_pid" 2>/dev/null || break; nap 0.1; done
kill -0 "$bench_pid" 2>/dev/null && fail "bench-daemon still running 60 s after its end"
wait "$bench_pid" || true
bench_pid=""
touch enrol.stop
for _ in $(seq 600); do kill -0 "$enrol_pid" 2>/dev/null || break; nap 0.1; done
wait "$enrol_pid" || true
enrol_pid=""
sed 's/^/# /' bench.out

# ---- a. every acknowledged verdict is in the promoted database ----
pg2 "SELECT agent || ' ' || ($vjson->'ima'->>'entries') FROM results" | sort -u >held.txt
awk '{ print $1, $2 }' acks.txt | sort -u >want.txt
comm -23 want.txt held.txt >missing.txt
nack=$(count want.txt .)
[ "$nack" -ge "$acks_at_kill" ] || fail "$nack distinct acknowledged verdicts, $acks_at_kill at the kill"
if [ -s missing.txt ]; then
        sed 's/^/missing: /' missing.txt | sed -n 1,20p >&2
        fail "$(count missing.txt .) of $nack acknowledged verdicts are not in the promoted database"
fi
stop_agent
aid=$(cat st/agent-id)
nv=$(verdicts agent.log)
nr=$(pg2 "SELECT count(*) FROM results WHERE agent = '$aid'")
[ "$nr" -ge "$nv" ] || fail "the real agent saw $nv verdicts, the promoted database holds $nr"
# it met the outage: 503 store_unavailable, the round retried on the other verifier or later
ne=$(count agent.log 'unavailable \(HTTP 503 store_unavailable')
[ "$ne" -ge 1 ] || fail "the real agent never met the outage: $(grep -v 'IMA log\|firmware' agent.log | tail -5)"
ok "all $nack acknowledged verdicts of the simulated agents in the promoted database ($acks_at_kill before the kill); the real agent's $nv verdicts too ($nr results; it was answered 503 store_unavailable $ne times)"

# ---- b. no round judged twice ----
# a simulated agent's log grows every round, so its rounds are told apart by the log length a
# verdict covers; the real agent's log does not grow: its rounds are told apart by the TPM's
# clock in the quote (one quote a round)
# (the real agent: no more results than its verdicts and the rounds it saw fail)
[ "$nr" -le $((nv + ne)) ] || fail "the real agent has $nr results for $nv verdicts and $ne failed rounds"
dups=$(pg2 "SELECT agent || ' ' || ($vjson->'ima'->>'entries') || ' x' || count(*) FROM results
        WHERE agent <> '$aid' GROUP BY agent, $vjson->'ima'->>'entries' HAVING count(*) > 1")
[ -z "$dups" ] || fail "rounds judged twice (agent, log length, results): $dups"
nres=$(pg2 "SELECT count(*) FROM results WHERE agent <> '$aid'")
ok "no round judged twice: $nres results of the simulated agents, one per agent and log length; the real agent's $nr for $nv verdicts and $ne failed rounds"

# ---- c. service back: the first acknowledged verdict after the promotion began, per instance ----
# (a verdict acknowledged between the kill and the promotion was committed before the kill: with
# no primary nothing commits; they are counted apart)
stragglers=$(awk -v a="$t_kill" -v b="$t_promote" '$3 >= a && $3 < b' acks.txt | wc -l)
during_cut=$(awk -v a="$t_cut" -v b="$t_kill" '$3 >= a && $3 < b' acks.txt | wc -l)
back=""
for i in A B; do
        first=$(awk -v t="$t_promote" -v u="https://127.0.0.1:${ports[$i]}" '$3 >= t && $4 == u { print $3 }' \
                acks.txt | sort -n | sed -n 1,1p)
        [ -n "$first" ] || fail "no verdict acknowledged by $i after the promotion ($(count acks.txt .) in all)"
        [ $((first - t_kill)) -le $((bound * 1000)) ] ||
                fail "$i acknowledged its first verdict $((first - t_kill)) ms after the kill, over ${bound} s"
        back="$back $i +$((first - t_kill)) ms"
done
first=$(awk -v t="$t_promote" '$3 >= t { print $3 }' acks.txt | sort -n | sed -n 1,1p)
after=$(awk -v t="$t_promote" '$3 >= t' acks.txt | wc -l)
ok "service back: first verdict acknowledged $((first - t_kill)) ms after the kill (per instance:$back), $after after the promotion, $stragglers between the kill and the promotion, $during_cut while the standby was cut off"

# ---- e. the errors clients saw: 5xx with a JSON error, only while the database was gone ----
nerr=$(count errors.txt .)
[ "$nerr" -gt 0 ] || fail "no client saw an error while the database was gone: the outage was not under load"
bad=$(awk '$4 < 500 || $4 > 599 || $5 == "-"' errors.txt | sed -n 1,5p)
[ -z "$bad" ] || fail "errors that are not a 5xx JSON error (no answer, or not 5xx, or a round the bench could not make): $bad"
early=$(awk -v t="$t_kill" '$1 < t' errors.txt | sed -n 1,3p)
[ -z "$early" ] || fail "errors before the kill: $early"
late=$(awk -v t="$((t_kill + bound * 1000))" '$1 > t' errors.txt | sed -n 1,3p)
[ -z "$late" ] || fail "errors ${bound} s after the kill: $late"
ok "clients saw $nerr errors, all 5xx with a JSON error, from +$(($(sort -n errors.txt | sed -n 1,1p | cut -d' ' -f1) - t_kill)) to +$(($(sort -n errors.txt | tail -1 | cut -d' ' -f1) - t_kill)) ms: $(awk '{ print $2 == "" ? "" : $3 " " $4 " " $5 }' errors.txt | sort | uniq -c | tr -s ' \n' ' ')"

# ---- d. webhooks: each event of the promoted database delivered once, none that it lacks ----
# (--interval 1 --grace 0: the agents that could not attest during the outage went stale, and
# passed again after it: events on both sides of the failover)
pg2 "SELECT id || ' ' || type || ' ' || agent FROM events ORDER BY id" >events.db
nev=$(count events.db .)
for _ in $(seq $((bound * 10))); do
        jq -r '"\(.id) \(.type) \(.agent)"' rx/events.jsonl 2>/dev/null | sort -n >events.rx
        [ -z "$(comm -23 <(sort events.db) <(sort events.rx))" ] && break
        nap 0.1
done
undelivered=$(comm -23 <(sort events.db) <(sort events.rx) | sed -n 1,5p)
[ -z "$undelivered" ] || fail "events of the promoted database not delivered within ${bound} s: $undelivered"
phantom=$(comm -13 <(sort events.db) <(sort events.rx) | sed -n 1,5p)
[ -z "$phantom" ] || fail "events delivered that the promoted database does not hold: $phantom"
twice=$(awk '$3 ~ /^2/ { print $1 }' rx/requests | sort | uniq -d | sed -n 1,5p)
[ -z "$twice" ] || fail "event ids delivered more than once: $twice"
# one event per change: per agent, never two stale (or two pass) events in a row
again=$(sort -n events.db | awk '$2 == "agent.stale" || $2 == "agent.pass" {
        if (last[$3] == $2) print $3, $2, "twice in a row at", $1; last[$3] = $2 }' | sed -n 1,5p)
[ -z "$again" ] || fail "an event fired twice for one change: $again"
after_ev=$(awk -v m="$(pg2 "SELECT coalesce(max(id), 0) FROM events WHERE time < $t_kill")" '$1 > m' events.db | wc -l)
before_ev=$((nev - after_ev))
if [ "$before_ev" -lt 1 ] || [ "$after_ev" -lt 1 ]; then
        fail "events on one side of the failover only ($before_ev before the kill, $after_ev after)"
fi
ok "webhooks: all $nev events delivered once ($before_ev before the kill, $after_ev after: $(awk '{ print $2 }' events.db | sort | uniq -c | tr -s ' \n' ' '))"

# ---- e. both instances logged the reconnection, answer, and stop cleanly ----
for i in A B; do
        grep -q 'store: PostgreSQL connected again' "daemon-$i.log" ||
                fail "$i logged no reconnection: $(grep 'store:' "daemon-$i.log" | tail -5)"
        at "$i"
        api GET /healthz
        expect 200 "" -- "$i /healthz after the failover"
        kill -0 "${pids[$i]}" || fail "$i exited"
        kill -TERM "${pids[$i]}"
        rc=0
        for _ in $(seq 200); do kill -0 "${pids[$i]}" 2>/dev/null || break; nap 0.05; done
        kill -0 "${pids[$i]}" 2>/dev/null && fail "$i still running 10 s after SIGTERM"
        wait "${pids[$i]}" || rc=$?
        [ "$rc" = 0 ] || fail "$i exited $rc after SIGTERM"
done
sanitizer_check
ok "A and B logged the lost connection and the reconnection ($(grep -c 'connected again' daemon-A.log) and $(grep -c 'connected again' daemon-B.log) connections), answer /healthz and exit 0 on SIGTERM"
