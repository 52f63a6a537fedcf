#!/usr/bin/env bash
# Several attestd instances on one PostgreSQL (docs/architecture.md §7): a throwaway PostgreSQL 15
# (tests/lib/pg-run.sh), three attestd over TLS on loopback sharing it and one nonce key, a real
# agent and hand-made rounds on swtpm, a webhook receiver (tests/lib/webhook-receiver.py).
#  1. a challenge from A answered at B (and B's at C) is accepted: the nonce key is shared; an
#     instance with another key refuses A's nonce and leaves the agent's state alone
#  2. the same evidence sent to A and B at once, many times: exactly one 200, the other refused
#     with a JSON error, and the replay state never corrupted (the next challenge's offset is the
#     accepted count, the next round passes, one result per accepted round)
#  3. webhooks and stale detection with three instances running them: each event delivered once
#     (one agent.enrolled, one agent.stale for an agent that stopped attesting)
#  4. kill -9 of A mid-load (bench-daemon's simulated agents on A and B, the real agent on
#     A, B, C): every verdict a client saw acknowledged (200) is in the results afterwards, and
#     the real agent continues on B via failover, one switch line
#  5. an instance with one database connection and --db-wait-ms 1 under 32 parallel requests:
#     the ones that found no connection answer 503 store_busy with Retry-After, counted in
#     attestd_db_pool_exhausted_total; the other instances answer as before
#  6. clients that vanish while waiting for a database connection: the instance's one connection
#     held by a request blocked on a table lock (psql), eight clients queued behind it give up;
#     after the lock goes the instance answers every request, no connection stays taken
# Usage: test-multi-instance.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN BENCH_DAEMON
# (re-runs itself under SWTPM_RUN --ek-cert and then under tests/lib/pg-run.sh)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 7 "$@"
if [ -z "${ATTEST_PG_URL:-}" ]; then
        exec "$TOP/tests/lib/pg-run.sh" --max-connections 100 -- "$0" "$@"
fi
EVGEN=$(realpath "$6") BENCH=$(realpath "$7")
agent_test_begin tpm2_quote python3
cd "$work"
(umask 077 && head -c 32 /dev/urandom >nonce.key && head -c 32 /dev/urandom >other.key)
(umask 077 && openssl rand -hex 32 >secret)

# ---- the webhook receiver ----
rx_pid="" bench_pid=""
kill_at_exit rx_pid bench_pid
webhook_rx

# ---- the instances ----
declare -A ports pids
# inst NAME [ARGS]: attestd NAME on the shared database and nonce key, webhooks, stale checks
inst() {
        local name=$1
        shift
        start_attestd -n "$name" -d "$ATTEST_PG_URL" --nonce-key "$work/nonce.key" \
                --ek-ca "$SWTPM_STATE/ca" --insecure-trust-ak --interval 2 --grace 1 --retain 100000 \
                --webhook "https://127.0.0.1:$(cat rx/port)/hook" --webhook-ca "$CA" \
                --webhook-secret-file "$work/secret" --webhook-backoff-max 1 "$@"
        ports[$name]=$port pids[$name]=$daemon_pid
        at_exit kill -9 "$daemon_pid"
        daemon_pid=""
}
at() { port=${ports[$1]}; } # the instance later api calls go to
boot_host                   # PCR 0-10 and ima.bin: the recorded boot, for both kinds of rounds
inst A
inst B
inst C
ok "three attestd on one PostgreSQL: A :${ports[A]}, B :${ports[B]}, C :${ports[C]}"

# ---- hand-made rounds: an AK of the test's own, the agent's log grown by evgen ----
persist_ak 0x81010021
at A
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol the test\'s AK at A
id=$(jq -r .id <<<"$body")
entries=$("$EVGEN" count ima.bin) accepted=0
# grow N: N new entries in ima.bin, extended into PCR 10 as the kernel would
grow() {
        "$EVGEN" gen ima.bin "files:$1"
        "$EVGEN" extend ima.bin "$entries" $((entries + $1)) | xargs -r -n 40 tpm2_pcrextend >/dev/null
        entries=$((entries + $1))
}
# prepare FROM: challenge at the current instance, quote, ev.json with entries FROM..end
prepare() {
        challenge
        [ "$offset" = "$1" ] || fail "challenge at :$port: ima_offset $offset, want $1 (replay state)"
        quote "$nonce"
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs ima.bin "$1" "$entries" >ev.json
}
vstatus() { jq -r .status <<<"$body"; }
nresults() { # ID: the results any instance holds for agent ID
        api GET "/v1/agents/$1/results?limit=1000" "" "$READER"
        [ "$status" = 200 ] || fail "results of $1: $status $body"
        jq '.results | length' <<<"$body"
}

# ---- 1. challenge at one instance, evidence at another ----------------------------------------
echo "# 1. challenge at A, evidence at B"
prepare 0
at B
submit
expect 200 "" -- "evidence at B for A's challenge"
[ "$(vstatus)" = pass ] || fail "round across A/B: $body"
accepted=$entries
grow 2
at B
prepare "$accepted"
at C
submit
expect 200 "" -- "evidence at C for B's challenge"
[ "$(vstatus)" = pass ] || fail "round across B/C: $body"
accepted=$entries
inst D --nonce-key "$work/other.key"
grow 1
at A
prepare "$accepted"
at D
submit
[ "$status" -ge 400 ] && [ "$status" -lt 500 ] && jq -e .error <<<"$body" >/dev/null ||
        fail "D (another nonce key) answered $status to A's nonce: $body"
code=$(jq -r .error <<<"$body")
kill -9 "${pids[D]}"
at A
submit
expect 200 "" -- "the same evidence at A after D refused it"
accepted=$entries
ok "nonces cross instances with the shared key; another key refuses them ($code)"

# ---- 2. two instances racing on one round -------------------------------------------------------
echo "# 2. the same evidence to A and B at once"
rounds=12 won_a=0 won_b=0 codes=""
for r in $(seq $rounds); do
        grow 2
        at A
        prepare "$accepted"
        cpids=()
        for i in A B; do
                curl -s -m 30 --cacert "$CA" -X POST -H "Content-Type: application/json" \
                        --data-binary @ev.json -o "race-$i.json" -w '%{http_code}' \
                        "https://127.0.0.1:${ports[$i]}/v1/agents/$id/evidence" >"race-$i.code" &
                cpids+=($!)
        done
        wait "${cpids[@]}" || true
        ca=$(cat race-A.code) cb=$(cat race-B.code)
        case "$ca $cb" in
        "200 200") fail "round $r: both instances accepted the same evidence" ;;
        "200 "*) loser=B won_a=$((won_a + 1)) ;;
        *" 200") loser=A won_b=$((won_b + 1)) ;;
        *) fail "round $r: neither accepted: A $ca $(cat race-A.json), B $cb $(cat race-B.json)" ;;
        esac
        lc=$(cat "race-$loser.code")
        [ "$lc" -ge 400 ] && [ "$lc" -lt 500 ] && jq -e .error "race-$loser.json" >/dev/null ||
                fail "round $r: the loser ($loser) answered $lc: $(cat "race-$loser.json")"
        codes="$codes $lc/$(jq -r .error "race-$loser.json")"
        accepted=$entries
done
# the state after the races: the next round, at either instance, starts where the last won
grow 1
at B
prepare "$accepted"
submit
expect 200 "" -- "a round after the races"
[ "$(vstatus)" = pass ] || fail "the round after the races: $body"
accepted=$entries
n=$(nresults "$id")
[ "$n" = $((rounds + 4)) ] || fail "$n results, want $((rounds + 4)): one per accepted round"
ok "$rounds races: one 200 each (A won $won_a, B $won_b), losers:$(tr ' ' '\n' <<<"$codes" | sort | uniq -c | tr -s ' \n' ' '), $n results"

# ---- 3. webhooks and stale detection, once per event ---------------------------------------------
echo "# 3. one event per change across three instances"
# the test's agent stopped attesting after its last round: stale after next_due (2 s) + grace (1 s).
# Under load a round of section 2 can come more than 3 s after the one before: the agent was late,
# went stale and its next round passed again (events stale, pass). That is right; what must hold
# is one event per change: never two stale events without a pass between them, across the three
# instances, and one stale after the last pass.
# changes: the agent's pass and stale events in id order, "pass stale pass stale ..."
changes() { jq -r --arg id "$id" 'select(.agent == $id and (.type == "agent.stale" or
        .type == "agent.pass")) | "\(.id) \(.type)"' rx/events.jsonl 2>/dev/null |
        sort -n | awk '{ printf "%s ", substr($2, 7) }'; }
for _ in $(seq 150); do
        case "$(changes)" in *"stale ") break ;; esac
        nap 0.1
done
sleep 4 # three more stale scans on every instance: none may fire again
per_type() { jq -r --arg id "$1" --arg t "$2" 'select(.agent == $id and .type == $t) | .id' \
        rx/events.jsonl | wc -l; }
ch=$(changes)
case "$ch" in
*"stale stale"*) fail "agent.stale twice without a pass between: $ch" ;;
*"pass stale ") ;;
*) fail "want one agent.stale after the last agent.pass: $ch; $(jq -c '[.id,.type,.agent]' rx/events.jsonl | tr '\n' ' ')" ;;
esac
[ "$(per_type "$id" agent.enrolled)" = 1 ] || fail "agent.enrolled events: $(per_type "$id" agent.enrolled)"
dups=$(awk '{ print $1 }' rx/requests | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "$dups event ids delivered more than once: $(sort rx/requests | uniq -d)"
ok "one agent.enrolled, one agent.stale per lapse ($ch) for the agent across 3 instances, no id delivered twice"

# ---- 4. kill -9 of A mid-load -------------------------------------------------------------------
echo "# 4. kill -9 of A under load"
agent_exec=exec "$AGENT" --verifier "https://127.0.0.1:${ports[A]}" \
        --verifier "https://127.0.0.1:${ports[B]}" --verifier "https://127.0.0.1:${ports[C]}" \
        --ca "$CA" --token-file enroll.token --tcti "$SWTPM_TCTI" --ima-log ima.bin \
        --state-dir st --timeout 5 >agent.log 2>&1 &
agent_pid=$!
wait_lines agent.log '^<[56]>verdict: pass' 2 60
"$BENCH" --url "https://127.0.0.1:${ports[A]}" --url "https://127.0.0.1:${ports[B]}" --ca "$CA" \
        --token "$ADMIN" --agents 16 --threads 4 --entries 3 --seconds 12 --acks acks.txt \
        >bench.out 2>bench.err &
bench_pid=$!
for _ in $(seq 300); do [ "$(count acks.txt .)" -ge 40 ] && break; nap 0.05; done
[ "$(count acks.txt .)" -ge 40 ] || fail "the load did not start: $(cat bench.err)"
before=$(verdicts agent.log)
kill -9 "${pids[A]}"
acks_at_kill=$(count acks.txt .)
wait "$bench_pid" || true
bench_pid=""
wait_lines agent.log '^<[56]>verdict: pass' $((before + 2)) 60
grep -qE 'verifier #1 \(https://127[^)]*\) unavailable \((transport|protocol)\): round goes to verifier #2' agent.log ||
        fail "no failover line: $(grep -E 'verifier' agent.log)"
stop_agent
at B
aid=$(cat st/agent-id)
nv=$(verdicts agent.log)
nr=$(nresults "$aid")
[ "$nr" -ge "$nv" ] || fail "the agent saw $nv verdicts, the results hold $nr"
# every acknowledged verdict of the simulated agents is in the results, by its log length
# (the results of each simulated agent read page by page, then every acknowledged log length
# looked up in them)
missing=0 checked=0
for bid in $(awk '{ print $1 }' acks.txt | sort -u); do
        # every page (an agent may have more than a page's 1000 in the bench's seconds)
        q="limit=1000" && : >"held-$bid"
        while :; do
                api GET "/v1/agents/$bid/results?$q" "" "$READER"
                expect 200 "" -- "results of $bid"
                jq -r '.results[].verdict.ima.entries' <<<"$body" >>"held-$bid"
                next=$(jq -r '.next_before' <<<"$body")
                [ "$next" != null ] || break
                q="limit=1000&before=$next"
        done
        sort -u -o "held-$bid" "held-$bid"
        awk -v b="$bid" '$1 == b { print $2 }' acks.txt | sort -u >"want-$bid"
        n=$(comm -23 "want-$bid" "held-$bid" | wc -l)
        [ "$n" = 0 ] || echo "missing: $bid $(comm -23 "want-$bid" "held-$bid" | tr '\n' ' ')" >&2
        missing=$((missing + n))
        checked=$((checked + $(wc -l <"want-$bid")))
done
[ "$missing" = 0 ] || fail "$missing of $checked acknowledged verdicts missing after kill -9"
ok "kill -9 of A with $acks_at_kill verdicts acknowledged: all $checked acknowledged verdicts in the results; the agent failed over to B ($nv verdicts, $nr results)"

# ---- 5. pool exhaustion ----------------------------------------------------------------------
echo "# 5. pool exhaustion: 503 store_busy and the metric"
inst E --db-connections 1 --db-wait-ms 1 --threads 8
busy=0 okn=0
for batch in $(seq 5); do
        cpids=()
        for i in $(seq 32); do
                curl -s -m 30 --cacert "$CA" -H "Authorization: Bearer $READER" -D "hdr-$i" \
                        -o "pool-$i.json" -w '%{http_code}' \
                        "https://127.0.0.1:${ports[E]}/v1/agents?limit=100" >"pool-$i.code" &
                cpids+=($!)
        done
        wait "${cpids[@]}" || true
        for i in $(seq 32); do
                case $(cat "pool-$i.code") in
                200) okn=$((okn + 1)) ;;
                503)
                        [ "$(jq -r .error "pool-$i.json")" = store_busy ] ||
                                fail "503 without store_busy: $(cat "pool-$i.json")"
                        grep -qi '^Retry-After: [0-9]' "hdr-$i" || fail "503 store_busy without Retry-After"
                        busy=$((busy + 1)) ;;
                *) fail "pool request: $(cat "pool-$i.code") $(cat "pool-$i.json")" ;;
                esac
        done
        [ "$busy" -gt 0 ] && break
done
[ "$busy" -gt 0 ] || fail "no 503 store_busy in $((batch * 32)) parallel requests to one connection"
at E
exhausted=$(metric attestd_db_pool_exhausted_total)
[ "${exhausted:-0}" -ge "$busy" ] || fail "attestd_db_pool_exhausted_total ${exhausted:-absent}, $busy answers 503"
at B
api GET "/v1/agents?limit=5" "" "$READER"
expect 200 "" -- "B unaffected by E's exhausted pool"
ok "one connection, 32 at once: $busy x 503 store_busy with Retry-After, $okn x 200, attestd_db_pool_exhausted_total $exhausted"
# /metrics while E's one connection is held (blocked behind a table lock): answered,
# the pool's counters in it, the series read from the database (agent counts, the outbox's
# three) left out
pgq() { psql -qtAX "$ATTEST_PG_URL" -c "$1"; }
agents_locks() { # GRANTED: true or false
        pgq "SELECT count(*) FROM pg_locks WHERE relation = 'agents'::regclass AND granted = $1"
}
# lock_agents NAME: an ACCESS EXCLUSIVE lock on agents, held by a psql that reads its commands
# from the fifo NAME.fifo (its output in NAME.out) until unlock_agents NAME; returns once the
# lock is granted (waiting for that state in pg_locks, not for a guessed time: under load psql
# takes longer to start than any sleep would allow)
lock_agents() {
        mkfifo "$1.fifo"
        psql -q -X -v ON_ERROR_STOP=1 "$ATTEST_PG_URL" <"$1.fifo" >"$1.out" 2>&1 &
        lock_pid=$!
        exec {lockfd}>"$1.fifo"
        echo "BEGIN; LOCK TABLE agents IN ACCESS EXCLUSIVE MODE;" >&"$lockfd"
        for _ in $(seq 200); do [ "$(agents_locks true)" -ge 1 ] && break; nap 0.05; done
        [ "$(agents_locks true)" -ge 1 ] || fail "the table lock was not granted within 10 s: $(cat "$1.out")"
}
unlock_agents() {
        echo "COMMIT;" >&"$lockfd"
        exec {lockfd}>&-
        wait "$lock_pid" || fail "psql lock: $(cat "$1.out")"
}
lock_agents hold
# the request that holds E's connection: the agents list, waiting on the lock (E's own stale scan
# may take the one connection first, once a second, and the request is then refused at once,
# --db-wait-ms 1: it is sent again)
holding() {
        pgq "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
             AND query LIKE 'SELECT id, NULL, NULL, NULL%'"
}
held=""
for _ in $(seq 50); do
        curl -s -m 60 --cacert "$CA" -H "Authorization: Bearer $READER" -o held.json \
                -w '%{http_code}' "https://127.0.0.1:${ports[E]}/v1/agents?limit=5" >held.code &
        held=$!
        for _ in $(seq 100); do
                [ "$(holding)" -ge 1 ] && break
                kill -0 "$held" 2>/dev/null || break
                nap 0.05
        done
        [ "$(holding)" -ge 1 ] && break
        wait "$held" || true
        held=""
done
[ -n "$held" ] || fail "no agents list of E's came to wait on the lock"
code=$(curl -s --cacert "$CA" -o held-metrics.txt -w '%{http_code}' "https://127.0.0.1:${ports[E]}/metrics")
unlock_agents hold
wait "$held" || true
[ "$code" = 200 ] || fail "/metrics with the pool held: $code $(head -c 300 held-metrics.txt)"
grep -q '^attestd_db_pool_in_use 1$' held-metrics.txt || fail "the connection was not held: $(grep pool_in_use held-metrics.txt)"
grep -q '^attestd_db_pool_exhausted_total [0-9]' held-metrics.txt || fail "no pool counter with the pool held"
grep -q '^attestd_webhook_delivered_total ' held-metrics.txt || fail "no webhook counters with the pool held"
! grep -q '^attestd_webhook_outbox_pending' held-metrics.txt ||
        fail "the outbox read from the database with its one connection held"
! grep -q '^attestd_agents{' held-metrics.txt || fail "agent counts read with the one connection held"
[ "$(cat held.code)" = 200 ] || fail "the request behind the lock: $(cat held.code) $(cat held.json)"
at E
[ -n "$(metric attestd_webhook_outbox_pending)" ] && [ -n "$(metric 'attestd_agents{state="active"}')" ] ||
        fail "the outbox and agent series not back after the hold"
ok "/metrics with E's one connection held: 200, the pool's counters in it, the agent counts and the outbox series left out (and back after)"

# ---- 6. clients vanishing while they wait for the pool -------------------------------------------
echo "# 6. clients that give up while waiting for a database connection"
# more workers than the holder and the 8 clients: a worker blocked in a request neither accepts
# nor reads, so with 8 at most 7 clients could reach the pool and the 8th wait came (or not)
# only after the lock was gone (CI, ASan: 7 of 8)
inst F --db-connections 1 --db-wait-ms 20000 --threads 16
at F
waits0=$(metric attestd_db_pool_waits_total)
# the lock is held until the clients are gone (lock_agents: part 5), and each step waits for the
# state it needs in pg_locks, not for a guessed time: under load curl takes longer to start than
# any sleep would allow
lock_agents lock
# the holder: takes F's one connection and blocks on the lock
curl -s -m 60 --cacert "$CA" -H "Authorization: Bearer $READER" -o holder.json -w '%{http_code}' \
        "https://127.0.0.1:${ports[F]}/v1/agents?limit=5" >holder.code &
holder=$!
for _ in $(seq 200); do [ "$(agents_locks false)" -ge 1 ] && break; nap 0.05; done
[ "$(agents_locks false)" -ge 1 ] || fail "the holder's request did not wait on the lock within 10 s"
gone=()
for i in $(seq 8); do
        curl -s -m 15 --cacert "$CA" -H "Authorization: Bearer $READER" -o /dev/null \
                "https://127.0.0.1:${ports[F]}/v1/agents?limit=5" >/dev/null &
        gone+=($!)
done
# each gives up once all 8 are queued for the pool (counted as a request starts to wait), not
# after a fixed time that under load could run out first
for _ in $(seq 200); do
        w=$(metric attestd_db_pool_waits_total)
        [ "$((${w:-0} - waits0))" -ge 8 ] && break
        nap 0.05
done
kill "${gone[@]}" 2>/dev/null || true
for c in "${gone[@]}"; do
        if wait "$c"; then fail "a client expected to give up got its answer (the lock did not hold)"; fi
done
unlock_agents lock
wait "$holder" || true
[ "$(cat holder.code)" = 200 ] || fail "the request behind the lock: $(cat holder.code) $(cat holder.json)"
waits=$(metric attestd_db_pool_waits_total)
[ "$((waits - waits0))" -ge 8 ] || fail "attestd_db_pool_waits_total went $waits0 -> $waits: the 8 clients did not wait for the pool"
# every queued request of a vanished client has run and given its connection back
for _ in $(seq 100); do [ "$(metric attestd_db_pool_in_use)" = 0 ] && break; nap 0.1; done
[ "$(metric attestd_db_pool_in_use)" = 0 ] || fail "attestd_db_pool_in_use $(metric attestd_db_pool_in_use) after the clients left"
for i in $(seq 20); do
        api GET "/v1/agents?limit=5" "" "$READER"
        [ "$status" = 200 ] || fail "request $i after the vanished clients: $status $body"
done
kill -0 "${pids[F]}" || fail "F exited"
ok "8 clients gave up while queued for F's one connection ($((waits - waits0)) pool waits): the holder got 200 after the lock, the pool is free (in_use 0), 20 requests after all 200"
sanitizer_check
