#!/usr/bin/env bash
# WAL study (analysis only): run-scale.sh's PostgreSQL steady state (4 attestd, bench-daemon
# --warm, AGENTS agents) on a PostgreSQL 15 cluster of our own (kept: OUT/pg), one enrolment and
# warm-up, then one timed part per PHASES word, each on the same database after the hook applied
# that phase's schema variant (variants.sh). Per phase: the LSN and xid before/after (exact
# window), a manual VACUUM after it (autovacuum is off: its WAL is measured per phase, apart),
# the relfilenode -> relation map, pg_stat_user_tables; a 1 s LSN sampler during each phase.
# walsum.py summarises the WAL of each window afterwards (pg_waldump -b).
# Usage: wal-study.sh OUT  (env: AGENTS=10000 SECS=30 PHASES="settle base ..." RETAIN=20
#        ENTRIES=3 BUILD=/work/main/build-rel BUDGET=900 PREFILL=0)
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${BUILD:-/work/main/build-rel}
agents=${AGENTS:-10000} secs=${SECS:-30} retain=${RETAIN:-20} entries=${ENTRIES:-3}
phases=${PHASES:-"settle base"}
budget=${BUDGET:-900}
bin=/usr/lib/postgresql/15/bin
as=(runuser -u nobody --)

chmod 0755 "$out"
mkdir -p "$out/sock"
chown nobody "$out" "$out/sock"
"${as[@]}" "$bin/initdb" -D "$out/pg" -U attest -E UTF8 --locale=C --no-sync --auth-local=trust \
        --auth-host=trust >"$out/initdb.log" 2>&1
port=$((20000 + RANDOM % 20000))
# pg-run.sh's settings, in postgresql.conf (not -c: ALTER SYSTEM must be able to change
# full_page_writes and wal_compression); no checkpoint but the phases' own, every WAL segment kept
# for pg_waldump, autovacuum off (the hook VACUUMs after each phase)
cat >>"$out/pg/postgresql.conf" <<CONF
max_connections = 100
fsync = off
synchronous_commit = on
full_page_writes = off
checkpoint_timeout = 1h
max_wal_size = 40GB
wal_keep_size = 40GB
autovacuum = off
log_checkpoints = on
shared_buffers = ${SHARED_BUFFERS:-128MB}
CONF
"${as[@]}" "$bin/pg_ctl" -D "$out/pg" -l "$out/server.log" -w -t 30 -o "-c listen_addresses=127.0.0.1 \
 -p $port -k $out/sock" start >/dev/null
stop_pg() { "${as[@]}" "$bin/pg_ctl" -D "$out/pg" -m fast -t 30 -w stop >/dev/null 2>&1 || true; }
pids=()
trap 'for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done; wait; stop_pg' EXIT
export PSQL="$bin/psql -X -q -h $out/sock -p $port -U attest -d scale -At -v ON_ERROR_STOP=1"
"$bin/createdb" -h "$out/sock" -p "$port" -U attest scale
echo "$port" >"$out/port"

# the instances (bench-lib.sh's scale_start: --retain 20 there, ours given last wins)
# shellcheck disable=SC2034 # bench-lib.sh's scale_start writes its certificates and logs there
work=$out
cd "$out"
# shellcheck source=../bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
scale_start "$build" "postgresql://attest@127.0.0.1:$port/scale" 4 --retain "$retain" \
        --nonce-ttl "${NONCE_TTL:-60}" ||
        { echo "attestd did not start"; exit 1; }
args=()
for u in "${urls[@]}"; do args+=(--url "$u"); done
for p in "${pids[@]}"; do args+=(--pid "$p"); done

# the phases: bench-daemon --phases 4,4,... and the hook walks $out/phases
: >"$out/phase-idx"
printf '%s\n' $phases >"$out/phases"
plist=$(printf '4,%.0s' $phases)
export OUT=$out HERE=$here
date -u +%FT%TZ >"$out/t-start"
echo "# $(date -u +%FT%TZ) start: $agents agents, ${secs}s a phase, retain $retain, nonce-ttl ${NONCE_TTL:-60}, phases: $phases"
timeout "$budget" "$build/tests/bench/bench-daemon" "${args[@]}" --ca certs/ca.pem --token "$tok" \
        --agents "$agents" --threads "${CLIENT_THREADS:-8}" --entries "$entries" --seconds "$secs" \
        --warm --phases "${plist%,}" --hook "$here/hook.sh" --metric attestd_db_statements_total \
        >"$out/bench.out" 2>"$out/bench.err" || echo "# bench-daemon: rc $? $(sort "$out/bench.err" | uniq -c | sort -rn | head -3)"
date -u +%FT%TZ >"$out/t-end"
echo "# $(date -u +%FT%TZ) bench done"
scale_stop
$PSQL -c "SELECT relname, n_live_tup, pg_relation_size(relid), pg_total_relation_size(relid) FROM pg_stat_user_tables ORDER BY 1" >"$out/sizes-end"
# (e): the results row and its verdict text; the agents row
$PSQL -F ' ' -c "SELECT 'results', count(*), avg(pg_column_size(r.*))::int AS row_bytes,
        avg(pg_column_size(verdict))::int AS verdict_stored, avg(octet_length(verdict))::int AS verdict_text,
        count(*) FILTER (WHERE pg_column_compression(verdict) IS NOT NULL) AS verdict_compressed,
        avg(pg_column_size(agent))::int AS agent_col, avg(pg_column_size(policy))::int AS policy_col,
        avg(pg_column_size(status))::int AS status_col,
        pg_relation_size(reltoastrelid) AS toast_bytes
        FROM results r, pg_class c WHERE c.relname = 'results' GROUP BY reltoastrelid" \
        -c "SELECT 'agents', count(*), avg(pg_column_size(a.*))::int, avg(pg_column_size(replay_state))::int,
        avg(octet_length(replay_state))::int, avg(pg_column_size(ak_public))::int, avg(pg_column_size(ak_name))::int,
        avg(pg_column_size(id))::int, avg(pg_column_size(hostname))::int, avg(pg_column_size(labels))::int FROM agents a" \
        -c "SELECT 'verdict-sample', verdict FROM results ORDER BY id DESC LIMIT 1" >"$out/rows-end"
