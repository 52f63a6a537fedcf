#!/usr/bin/env bash
# Scale-out bench (docs/scaling.md): SQLite against PostgreSQL, 1, 2 and 4 attestd instances, AGENTS
# simulated agents (bench-daemon: their own P-256 AKs, TPM-format quotes, ENTRIES new IMA entries
# per round) spread over the instances' URLs, each agent at one instance. Prints per
# configuration attestations/s, round p50/p99, CPU per attestation of the attestd processes and
# of the PostgreSQL server (postmaster and backends, from /proc), the database statements per
# attestation (attestd_db_statements_total, all instances), then one table side by side.
# SQLite is one instance only: two attestd on one SQLite file are not a supported layout. The
# instances, the database and the client share this machine's cores: compare per-core cost and
# statements, not rates. Never fails on timing. Bounded: each of the two bench-daemon runs (SQLite;
# PostgreSQL with one enrolment and then 1, 2 and 4 instances) is killed after SCALE_BUDGET / 2
# seconds (default 175 in all).
# Usage: run-scale.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]
#   THREADS (attestd worker threads, default 4), CLIENT_THREADS (default 8), SCALE_SQLITE=0 (the
#   PostgreSQL part only), PG_DELAY_US (attestd reaches PostgreSQL through tests/bench/delay-proxy,
#   which holds each direction's bytes that long: a database across a network; db-delay.sh),
#   SCALE_WARM=1 (bench-daemon --warm: every agent's first round, the one that changes its status
#   and writes a webhook event, before the timed parts, so they time following rounds only)
set -euo pipefail
build=$(cd "${1:?usage: run-scale.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]}" && pwd)
secs=${2:-6} agents=${3:-10000} entries=${4:-3} mode=${5:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
budget=${SCALE_BUDGET:-175}
threads=${THREADS:-4} cthreads=${CLIENT_THREADS:-8}
metric=attestd_db_statements_total

if [ -z "$mode" ]; then # the driver: SQLite here, PostgreSQL in a throwaway cluster, the table
        work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-scale.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        export SCALE_T0=${SCALE_T0:-$(date +%s)} SCALE_WORK=$work
        echo "# scale bench: $agents agents, $entries IMA entries a round, ${secs}s timed per configuration, attestd --threads $threads, $cthreads client threads, $(nproc) cores shared"
        if [ "${SCALE_SQLITE:-1}" != 0 ]; then
                "$0" "$build" "$secs" "$agents" "$entries" sqlite || echo "# the SQLite part failed"
        fi
        "$top/tests/lib/pg-run.sh" --max-connections 100 -- \
                "$0" "$build" "$secs" "$agents" "$entries" pg || echo "# the PostgreSQL part failed"
        echo
        echo "# side by side (per attestation: CPU ms of the attestd processes and of PostgreSQL,"
        echo "# DB statements (attestd_db_statements_total), PostgreSQL write transactions and WAL bytes)"
        printf '%-14s %8s %8s %8s %11s %12s %7s %6s %9s %7s\n' config att/s "p50 ms" "p99 ms" \
                "attestd ms" "postgres ms" stmts xacts "WAL B" errors
        cat "$work"/row-* 2>/dev/null || true
        exit 0
fi

# this part's scratch directory: bench-lib.sh's scale_part (certificates, token, nonce key, logs)
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
scale_part "$SCALE_WORK" "$mode"

# row NAME OUT [PGKEY]: the figures of one configuration (bench-daemon's lines OUT), with the
# PostgreSQL counters the hook saved under PGKEY, printed and as a row in $rows/row-NAME
row() {
        local name=$1 out=$2 key=${3:-} n_att x0 w0 x1 w1
        if [ -n "$key" ]; then
                n_att=$(grep -o 'attestations=[0-9]*' <<<"$out" | cut -d= -f2)
                read -r x0 w0 <"pg-before-$key"
                read -r x1 w1 <"pg-after-$key"
                out+=$'\n'"# postgres: $((x1 - x0 - 1)) write transactions, $((w1 - w0)) WAL bytes in the timed part: per attestation $(awk -v x=$((x1 - x0 - 1)) -v w=$((w1 - w0)) -v n="$n_att" 'BEGIN { if (n > 0) printf "%.2f transactions, %.0f WAL bytes", x / n, w / n }')"
        fi
        echo "## $name"
        sed 's/^\([^#]\)/# \1/' <<<"$out"
        awk -v name="$name" '
                /rate=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } ; rate = f["rate"]; err = f["errors"]; sub("/s", "", rate) }
                /round latency/ { split($3, a, "="); p50 = a[2]; split($5, b, "="); p99 = b[2] }
                /attestd cpu=/ { split($NF, c, "="); acpu = c[2] }
                /postgres cpu=/ { split($NF, c, "="); pcpu = c[2] }
                /metric .*per attestation=/ { split($NF, c, "="); st = c[2] }
                /# postgres: .* per attestation/ { xa = $(NF - 4); wal = $(NF - 2) }
                END { printf "%-14s %8s %8s %8s %11s %12s %7s %6s %9s %7s\n", name, rate, p50, p99, acpu,
                        pcpu == "" ? "-" : pcpu, st == "" ? "-" : st, xa == "" ? "-" : xa,
                        wal == "" ? "-" : wal, err }' <<<"$out" >"$rows/row-$name"
}

# bench DB N [PG_PID]: N attestd on DB, bench-daemon over them (with PG_PID: one timed part
# each for 1, 2 and 4 of them, after one enrolment); its output in $out
bench() {
        local db=$1 n=$2 pgpid=${3:-} args=() u p
        scale_start "$build" "$db" "$n" || return 1
        for u in "${urls[@]}"; do args+=(--url "$u"); done
        for p in "${pids[@]}"; do args+=(--pid "$p"); done
        if [ -n "$pgpid" ]; then
                args+=(--pid-tree "$pgpid" --hook "$work/pg-hook.sh" --phases 1,2,4)
        fi
        [ "${SCALE_WARM:-0}" = 0 ] || args+=(--warm)
        out=$(timeout "$((budget / 2))" "$build/tests/bench/bench-daemon" "${args[@]}" --ca certs/ca.pem --token "$tok" \
                --agents "$agents" --threads "$cthreads" --entries "$entries" \
                --seconds "$secs" --metric "$metric" 2>"bench-$n.err") ||
                echo "# bench-daemon reported errors: $(sort "bench-$n.err" | uniq -c | sort -rn | head -3)"
        scale_stop
}

if [ "$mode" = sqlite ]; then
        bench "$work/attestd.db" 1
        row sqlite-1 "$out"
        exit 0
fi
# PostgreSQL (under pg-run.sh): one database, four instances, the agents enrolled once, then
# 1, 2 and 4 of the instances in turn (the idle ones' CPU is counted with the busy ones')
pgpid=$(head -1 "$PGRUN_DIR/data/postmaster.pid")
psql_q() { "$PGRUN_BIN/psql" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d scale -Atc "$1"; }
# the hook bench-daemon runs at the edges of each timed part: the transaction id counter (one
# per write transaction; this query takes one) and the WAL position
cat >pg-hook.sh <<HOOK
#!/bin/sh
"$PGRUN_BIN/psql" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d scale -At -F ' ' \
        -c "SELECT pg_current_xact_id()::text::bigint, pg_current_wal_lsn() - '0/0'" >"$work/pg-\$1"
HOOK
chmod +x pg-hook.sh
"$PGRUN_BIN/createdb" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest scale
# PG_DELAY_US: attestd's connections go through the delay proxy (its CPU is not attestd's)
dbport=$PGRUN_PORT proxy_pid=""
if [ "${PG_DELAY_US:-0}" != 0 ]; then
        "$build/tests/bench/delay-proxy" --to "$PGRUN_PORT" --delay-us "$PG_DELAY_US" >proxy.out &
        proxy_pid=$!
        trap 'scale_stop; kill "$proxy_pid" 2>/dev/null || true' EXIT
        for _ in $(seq 100); do
                dbport=$(awk '$1 == "port" { print $2 }' proxy.out)
                [ -z "$dbport" ] || break
                sleep 0.05
        done
        [ -n "$dbport" ] || { echo "# delay-proxy did not start" >&2; exit 1; }
        echo "# PostgreSQL through delay-proxy: ${PG_DELAY_US} us each way (port $dbport)"
fi
bench "postgresql://attest@127.0.0.1:$dbport/scale" 4 "$pgpid"
for n in 1 2 4; do
        part=$(awk -v n="$n" '/^phase / { on = ($2 == n ":") ; next } on' <<<"$out")
        row "postgresql-$n" "$part" "$n"
done
psql_q "SELECT 'agents', count(*), pg_total_relation_size('agents') FROM agents UNION ALL SELECT 'results', count(*), pg_total_relation_size('results') FROM results" |
        awk -F'|' '{ printf "# postgres table %s: %d rows, %d bytes (%.0f bytes a row, indexes and TOAST included)\n", $1, $2, $3, $2 ? $3 / $2 : 0 }'
