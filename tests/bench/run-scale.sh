#!/usr/bin/env bash
# Scale-out bench (docs/scaling.md): SQLite against PostgreSQL, 1, 2 and 4 attestd instances, AGENTS
# simulated agents (bench-daemon: their own P-256 AKs, TPM-format quotes, ENTRIES new IMA entries
# per round) spread over the instances' URLs, each agent at one instance. Prints per
# configuration attestations/s, round p50/p99, CPU per attestation of the attestd processes and
# of the PostgreSQL server (postmaster and backends, from /proc), the database statements per
# attestation (attestd_db_statements_total, all instances), then one table side by side.
# The table's columns, per attestation where not said otherwise: config, att/s, p50 ms, p99 ms
# (round latency), attestd ms (CPU), postgres ms (CPU), stmts (attestd_db_statements_total; for
# PostgreSQL read by the hook below at the timed part's very edges), xacts (PostgreSQL write
# transactions: the growth of pg_current_xact_id, the hook's own one taken off), WAL B
# (pg_current_wal_lsn's growth), errors (a count), txns (all PostgreSQL transactions, read-only
# ones too: the growth of xact_commit + xact_rollback in pg_stat_database for the bench database,
# less the hook's own and the idle instances' in its wait; "-" with SCALE_SETTLE=0). PostgreSQL 15
# flushes a backend's transaction counts to pg_stat_database at most once a second while it is
# busy and 10 s after its last transaction when it goes idle, so the hook waits SCALE_SETTLE
# seconds (default 11) before each timed part and after it (then 5 s more: the idle instances'
# own transaction rate), outside the timed part.
# SQLite is one instance only: two attestd on one SQLite file are not a supported layout. The
# instances, the database and the client share this machine's cores: compare per-core cost and
# statements, not rates. Never fails on timing. Bounded: each of the two bench-daemon runs (SQLite;
# PostgreSQL with one enrolment and then 1, 2 and 4 instances) is killed after SCALE_BUDGET / 2
# seconds (default 175 in all) plus the hook's waits (2 x SCALE_SETTLE + 8 s a part).
# Usage: run-scale.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]
#   THREADS (attestd worker threads, default 4), CLIENT_THREADS (default 8), SCALE_SQLITE=0 (the
#   PostgreSQL part only), PG_DELAY_US (attestd reaches PostgreSQL through tests/bench/delay-proxy,
#   which holds each direction's bytes that long: a database across a network; db-delay.sh),
#   SCALE_RECONNECT=1 (bench-daemon --reconnect: each round on a connection of its own, a TLS
#   handshake per attestation, as agents that attest once a minute make),
#   SCALE_WARM=1 (bench-daemon --warm: every agent's first round, the one that changes its status
#   and writes a webhook event, before the timed parts, so they time following rounds only),
#   SCALE_ARGS (further attestd options for every instance, e.g. "--db-mode pool"),
#   SCALE_FILL=N (PostgreSQL: before the first timed part every agent is brought to N stored
#   results by filler rows, its count written and its seq bumped, then VACUUM ANALYZE; with N =
#   the bench's --retain 20 each timed verdict prunes one result, as in a fleet that has run for
#   a while: default 0, none),
#   SCALE_PHASES (the PostgreSQL timed parts' instance counts, default 1,2,4; as many instances as
#   the largest are started), SCALE_SETTLE (seconds, default 11; 0: no waits, no txns column),
#   ATTESTD_BUILD=DIR (attestd is DIR/daemon/attestd, the client, bench-daemon and delay-proxy,
#   still BUILD_DIR's: two attestd builds under one client, fleet-path.sh)
set -euo pipefail
build=$(cd "${1:?usage: run-scale.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]}" && pwd)
secs=${2:-6} agents=${3:-10000} entries=${4:-3} mode=${5:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
ATTESTD_BUILD=$(cd "${ATTESTD_BUILD:-$build}" && pwd)
export ATTESTD_BUILD
budget=${SCALE_BUDGET:-175} settle=${SCALE_SETTLE:-11} phases=${SCALE_PHASES:-1,2,4}
threads=${THREADS:-4} cthreads=${CLIENT_THREADS:-8}
metric=attestd_db_statements_total

if [ -z "$mode" ]; then # the driver: SQLite here, PostgreSQL in a throwaway cluster, the table
        work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-scale.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        export SCALE_T0=${SCALE_T0:-$(date +%s)} SCALE_WORK=$work
        echo "# scale bench: $agents agents, $entries IMA entries a round, ${secs}s timed per configuration, attestd --threads $threads, $cthreads client threads, $(nproc) cores shared"
        echo "# attestd: $ATTESTD_BUILD/daemon/attestd; client: $build/tests/bench/bench-daemon"
        if [ "${SCALE_SQLITE:-1}" != 0 ]; then
                "$0" "$build" "$secs" "$agents" "$entries" sqlite || echo "# the SQLite part failed"
        fi
        "$top/tests/lib/pg-run.sh" --max-connections 100 -- \
                "$0" "$build" "$secs" "$agents" "$entries" pg || echo "# the PostgreSQL part failed"
        echo
        echo "# side by side (per attestation: CPU ms of the attestd processes and of PostgreSQL,"
        echo "# DB statements (attestd_db_statements_total), PostgreSQL write transactions and WAL bytes;"
        echo "# errors a count; txns: all PostgreSQL transactions, pg_stat_database commits + rollbacks)"
        printf '%-14s %8s %8s %8s %11s %12s %7s %6s %9s %7s %6s\n' config att/s "p50 ms" "p99 ms" \
                "attestd ms" "postgres ms" stmts xacts "WAL B" errors txns
        cat "$work"/row-* 2>/dev/null || true
        exit 0
fi

# this part's scratch directory: bench-lib.sh's scale_part (certificates, token, nonce key, logs)
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
scale_part "$SCALE_WORK" "$mode"

# row NAME OUT [pg [KEY]]: the figures of one configuration (bench-daemon's lines OUT), with
# (pg) the PostgreSQL counters the hook saved in pg-before[-KEY] and pg-after[-KEY], printed and
# as a row in $rows/row-NAME
row() {
        local name=$1 out=$2 pg=${3:-} key=${4:+-$4} n_att x0 w0 x1 w1 t0 s0 s1 k tx
        if [ -n "$pg" ]; then
                n_att=$(grep -o 'attestations=[0-9]*' <<<"$out" | cut -d= -f2)
                read -r x0 w0 t0 s0 k <"pg-before$key" # k: one /metrics read's statements
                read -r x1 w1 s1 <"pg-after$key"
                out+=$'\n'"# postgres: $((x1 - x0 - 1)) write transactions, $((w1 - w0)) WAL bytes in the timed part: per attestation $(awk -v x=$((x1 - x0 - 1)) -v w=$((w1 - w0)) -v n="$n_att" 'BEGIN { if (n > 0) printf "%.2f transactions, %.0f WAL bytes", x / n, w / n }')"
                out+=$'\n'"# attestd statements: $((s1 - s0 - k)) in the timed part (the hook's /metrics reads at its edges, the last one's $k taken off), per attestation $(awk -v s=$((s1 - s0 - k)) -v n="$n_att" 'BEGIN { if (n > 0) printf "%.2f", s / n }')"
                # all transactions (pg-hook.sh): less the hook's own (four of psql, two /metrics
                # reads) and the idle instances' in the wait after the part (their rate in the 5 s
                # after it, less the two of psql there)
                if [ "$settle" != 0 ] && [ -s "pg-after$key.txns" ]; then
                        tx=$(awk -v t0="$t0" -v own=$((4 + 2 * k)) -v n="$n_att" '{
                                bg = ($5 - $3 - 2) / ($4 - $2); t = $3 - t0 - own - bg * ($2 - $1)
                                printf "%.0f transactions in all (commits + rollbacks, read-only ones too; %.0f idle ones in the %.1f s wait taken off, %.1f/s): per attestation %.2f", t, bg * ($2 - $1), $2 - $1, bg, (n > 0 ? t / n : 0) }' "pg-after$key.txns")
                        out+=$'\n'"# postgres txns: $tx"
                fi
                # the agents table's updates in the part and how many were HOT (settled counts)
                if [ -s "pg-before$key.hot" ] && [ -s "pg-after$key.hot" ]; then
                        out+=$'\n'"# postgres agents updates: $(cat "pg-before$key.hot" "pg-after$key.hot" | awk '
                                NR == 1 { u = $1; h = $2 } NR == 2 { u = $1 - u; h = $2 - h
                                printf "%d, HOT %d (%.1f %%)", u, h, (u > 0 ? 100 * h / u : 0) }')"
                fi
        fi
        [ ! -s "$work/filled" ] || out+=$'\n'"# postgres fill (SCALE_FILL): $(cat "$work/filled")"
        echo "## $name"
        sed 's/^\([^#]\)/# \1/' <<<"$out"
        awk -v name="$name" '
                /rate=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } ; rate = f["rate"]; err = f["errors"]; sub("/s", "", rate) }
                /round latency/ { split($3, a, "="); p50 = a[2]; split($5, b, "="); p99 = b[2] }
                /attestd cpu=/ { split($NF, c, "="); acpu = c[2] }
                /postgres cpu=/ { split($NF, c, "="); pcpu = c[2] }
                /metric .*per attestation=/ { split($NF, c, "="); st = c[2] }
                /# postgres: .* per attestation/ { xa = $(NF - 4); wal = $(NF - 2) }
                /# attestd statements: .* per attestation/ { st = $NF }
                /# postgres txns: .* per attestation/ { tx = $NF }
                END { printf "%-14s %8s %8s %8s %11s %12s %7s %6s %9s %7s %6s\n", name, rate, p50, p99, acpu,
                        pcpu == "" ? "-" : pcpu, st == "" ? "-" : st, xa == "" ? "-" : xa,
                        wal == "" ? "-" : wal, err, tx == "" ? "-" : tx }' <<<"$out" >"$rows/row-$name"
}

# bench DB N [PG_PID]: N attestd (of $ATTESTD_BUILD) on DB, bench-daemon over them (with PG_PID:
# one timed part each for SCALE_PHASES of them, after one enrolment); its output in $out
bench() {
        local db=$1 n=$2 pgpid=${3:-} args=() u p wait=0
        # shellcheck disable=SC2086 # SCALE_ARGS: words, as given
        scale_start "$ATTESTD_BUILD" "$db" "$n" ${SCALE_ARGS:-} || return 1
        printf '%s\n' "${urls[@]}" >"$work/urls"
        for u in "${urls[@]}"; do args+=(--url "$u"); done
        for p in "${pids[@]}"; do args+=(--pid "$p"); done
        if [ -n "$pgpid" ]; then
                args+=(--pid-tree "$pgpid" --hook "$work/pg-hook.sh" --phases "$phases")
                # the hook's waits a part (pg-hook.sh: SCALE_SETTLE twice, 5 s), 3 s for the rest
                wait=$(((2 * settle + 8) * nparts))
        fi
        [ "${SCALE_WARM:-0}" = 0 ] || args+=(--warm)
        [ "${SCALE_RECONNECT:-0}" = 0 ] || args+=(--reconnect)
        out=$(timeout "$((budget / 2 + wait))" "$build/tests/bench/bench-daemon" "${args[@]}" --ca certs/ca.pem --token "$tok" \
                --agents "$agents" --threads "$cthreads" --entries "$entries" \
                --seconds "$secs" --metric "$metric" 2>"bench-$n.err") || {
                if [ $? = 124 ]; then
                        echo "# bench-daemon stopped after $((budget / 2 + wait)) s (SCALE_BUDGET $budget)"
                else
                        echo "# bench-daemon reported errors: $(sort "bench-$n.err" | uniq -c | sort -rn | head -3)"
                fi
        }
        scale_stop
}

if [ "$mode" = sqlite ]; then
        bench "$work/attestd.db" 1
        row sqlite-1 "$out"
        exit 0
fi
# PostgreSQL (under pg-run.sh): one database, four instances (the largest of SCALE_PHASES), the
# agents enrolled once, then 1, 2 and 4 of the instances in turn (the idle ones' CPU is counted
# with the busy ones')
pgpid=$(head -1 "$PGRUN_DIR/data/postmaster.pid")
psql_q() { "$PGRUN_BIN/psql" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d scale -Atc "$1"; }
case "$phases" in '' | *[!0-9,]* | ,* | *, | *,,*) echo "# bad SCALE_PHASES $phases" >&2; exit 2 ;; esac
nparts=$(tr ',' '\n' <<<"$phases" | wc -l)
ninst=$(tr ',' '\n' <<<"$phases" | sort -n | tail -1)
# the hook bench-daemon runs at the edges of each timed part ($1: before[-N], after[-N]): the
# transaction id counter (one per write transaction; this query takes one), the WAL position,
# attestd_db_statements_total summed over the instances (their URLs in $work/urls), and all
# transactions (xact_commit + xact_rollback of this database in pg_stat_database) once every
# backend's counts have reached it: PostgreSQL 15 flushes a busy backend's at most once a second,
# and an idle one's 10 s after its last transaction. So "before" reads the statements three times
# (the smaller step is what one /metrics read of every instance costs: a few single-statement
# reads an instance; a read may add a health row write after its count, hence two steps), waits
# SCALE_SETTLE s (the warm-up's, the last part's, bench-daemon's and its own /metrics reads'
# counts), then reads the counters and the statements; "after" reads the counter, the WAL
# position and the statements at once, all transactions SCALE_SETTLE s later, and again 5 s after
# that: the idle instances' own rate (a webhook outbox check a second and the like), taken off
# for the wait. The statements column is the hook's (the timed part's very edges, the last read's
# own statements taken off; bench-daemon's own figure spans the hook's waits). The transactions
# column takes off the hook's own: its two /metrics reads in the window, a statement a
# transaction (a build whose /metrics also writes a health row, at most once a second an
# instance, has up to one more an instance a read: not taken off), and four of psql (a psql
# counts its connection's transaction in its own read and its query in the next: the "before"
# query, the first "after" psql's connection and query, the second's connection).
cat >pg-hook.sh <<HOOK
#!/bin/sh
q() { "$PGRUN_BIN/psql" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d scale -At -F ' ' -c "\$1"; }
s() {
        for u in \$(cat "$work/urls"); do curl -s --cacert "$work/certs/ca.pem" "\$u/metrics"; done |
                awk '{ split(\$1, m, "{") } m[1] == "$metric" { n += \$2 } END { printf "%.0f\\n", n }'
}
txns="SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
hot="SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'agents'"
case "\$1" in
before*)
        if [ "${SCALE_FILL:-0}" -gt 0 ] && [ ! -e "$work/filled" ]; then
                # filler results up to SCALE_FILL an agent (both schemas' columns), the count for a
                # build that keeps one (schema 11), seq bumped so no round read before goes on
                q "INSERT INTO results (agent, time, status, policy, verdict)
                   SELECT a.id, 1, 'pass', 'default@1', '{\"filler\":\"' || repeat('x', 216) || '\"}'
                   FROM agents a CROSS JOIN generate_series(1, ${SCALE_FILL:-0}) g
                   WHERE g > (SELECT count(*) FROM results r WHERE r.agent = a.id)" >/dev/null
                q "UPDATE agents SET seq = seq + 1" >/dev/null
                q "DO \\\$\\\$ BEGIN IF EXISTS (SELECT 1 FROM information_schema.columns
                   WHERE table_name = 'agents' AND column_name = 'results_kept') THEN
                   UPDATE agents a SET results_kept = (SELECT count(*) FROM results r
                   WHERE r.agent = a.id); END IF; END \\\$\\\$" >/dev/null
                q "VACUUM ANALYZE" >/dev/null
                echo "\$(q "SELECT count(*) FROM results") results after the fill" >"$work/filled"
        fi
        ka=\$(s) kb=\$(s) kc=\$(s)
        k=\$((kb - ka)) && [ \$((kc - kb)) -ge \$k ] || k=\$((kc - kb))
        sleep $settle
        q "\$hot" >"$work/pg-\$1.hot"
        echo "\$(q "SELECT pg_current_xact_id()::text::bigint, pg_current_wal_lsn() - '0/0', (\$txns)") \$(s) \$k" >"$work/pg-\$1" ;;
*)
        t1=\$(date +%s.%N)
        echo "\$(q "SELECT pg_current_xact_id()::text::bigint, pg_current_wal_lsn() - '0/0'") \$(s)" >"$work/pg-\$1"
        if [ $settle != 0 ]; then
                sleep $settle
                t2=\$(date +%s.%N) n2=\$(q "\$txns")
                q "\$hot" >"$work/pg-\$1.hot"
                sleep 5
                echo "\$t1 \$t2 \$n2 \$(date +%s.%N) \$(q "\$txns")" >"$work/pg-\$1.txns"
        fi ;;
esac
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
bench "postgresql://attest@127.0.0.1:$dbport/scale" "$ninst" "$pgpid"
if [ "$nparts" = 1 ]; then # one timed part: no "phase" lines, the hook's files have no suffix
        row "postgresql-$phases" "$out" pg
else
        for n in ${phases//,/ }; do
                part=$(awk -v n="$n" '/^phase / { on = ($2 == n ":") ; next } on' <<<"$out")
                if [ ! -s "pg-after-$n" ] || ! grep -q '^attestations=' <<<"$part"; then
                        echo "# postgresql-$n: no figures (bench-daemon did not finish that part)"
                        continue
                fi
                row "postgresql-$n" "$part" pg "$n"
        done
fi
# (nonces_used: older builds have it, schema 9 dropped it; a table the build lacks is said so)
for t in agents results nonces_used; do
        psql_q "SELECT '$t', count(*), pg_total_relation_size('$t') FROM $t" 2>/dev/null ||
                echo "# postgres table $t: none"
done |
        awk -F'|' '/^#/ { print; next } { printf "# postgres table %s: %d rows, %d bytes (%.0f bytes a row, indexes and TOAST included)\n", $1, $2, $3, $2 ? $3 / $2 : 0 }'
