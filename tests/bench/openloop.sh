#!/usr/bin/env bash
# Open-loop latency bench (docs/scaling.md "Latency under open-loop load"): run-scale.sh's load
# (AGENTS simulated agents, bench-daemon: their own P-256 AKs, TPM-format quotes, ENTRIES new IMA
# entries a round, nonce then evidence over HTTPS) on SQLite (1 attestd instance) and on a
# throwaway PostgreSQL (PG_INSTANCES attestd, default 4, as run-scale.sh's widest row). For each:
# the capacity first, a closed-loop timed part of CAP_SECONDS (default 6) with CLIENT_THREADS
# (default 8) clients back to back as run-scale.sh measures it, then, on the same agents and
# database, one open-loop part per share of that capacity in PCTS (default 50,70,90), SECONDS
# (default 10) each: arrivals on a fixed schedule (ARRIVALS: poisson, the default, or even),
# latency from each one's scheduled start, INFLIGHT (default 256) attestations in flight at
# most (bench-daemon's comment). One table at the end: config, target rate, achieved rate,
# p50/p99/p99.9/max from the scheduled start, errors, client lag (LAGGED: the client fell
# behind its schedule, the row's tail may be the client's).
# Fails only when a part errs or answers wrong (errors, or a verdict other than pass), never on
# timing. Bounded: OPENLOOP_BUDGET seconds in all (default 300): the SQLite bench-daemon run is
# killed after half of it, the PostgreSQL one at what is left, every attestd stopped and the
# cluster removed at the end.
# Not run by tests/bench/run.sh (CI): about two minutes with the defaults (docs/scaling.md).
# Usage: openloop.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]
#   THREADS (attestd worker threads, default 4), CLIENT_THREADS, CAP_SECONDS, PCTS, ARRIVALS,
#   INFLIGHT, PG_INSTANCES, OPENLOOP_BUDGET
set -euo pipefail
build=$(cd "${1:?usage: openloop.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]}" && pwd)
secs=${2:-10} agents=${3:-10000} entries=${4:-3} mode=${5:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
budget=${OPENLOOP_BUDGET:-300}
threads=${THREADS:-4} cthreads=${CLIENT_THREADS:-8} capsecs=${CAP_SECONDS:-6}
pcts=${PCTS:-50,70,90} arrivals=${ARRIVALS:-poisson} inflight=${INFLIGHT:-256}
pgn=${PG_INSTANCES:-4}

if [ -z "$mode" ]; then # the driver: SQLite here, PostgreSQL in a throwaway cluster, the table
        work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-openloop.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        export OPENLOOP_END=$(($(date +%s) + budget)) OPENLOOP_WORK=$work
        echo "# open-loop bench: $agents agents, $entries IMA entries a round, capacity ${capsecs}s closed loop ($cthreads clients), then ${secs}s open loop at $pcts % of it ($arrivals arrivals, $inflight in flight at most), attestd --threads $threads, $(nproc) cores shared; $(uptime)"
        rc=0
        "$0" "$build" "$secs" "$agents" "$entries" 1-sqlite || rc=1
        "$top/tests/lib/pg-run.sh" --max-connections 100 -- \
                "$0" "$build" "$secs" "$agents" "$entries" 2-pg || rc=1
        echo
        echo "# latency from the scheduled start (ms); capacity: the closed loop's, its latency"
        echo "# from each round's own start; client lag: starts more than 1 ms late (LAGGED:"
        echo "# over 0.1 % of them, or all $inflight in flight at once)"
        printf '%-13s %-9s %7s %8s %7s %7s %7s %7s %6s  %s\n' config load "rate/s" achieved \
                p50 p99 p99.9 max errors "client lag"
        cat "$work"/row-* 2>/dev/null || true
        echo "# $((budget - OPENLOOP_END + $(date +%s))) s in all; $(uptime)"
        [ $rc = 0 ] || echo "# a part failed or answered wrong (above)"
        exit $rc
fi

# one configuration (1-sqlite, or 2-pg under pg-run.sh: the rows' order), its scratch directory
# bench-lib.sh's scale_part
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
scale_part "$OPENLOOP_WORK" "$mode"

if [ "$mode" = 1-sqlite ]; then
        name=sqlite-1 n=1 db=$work/attestd.db extra=()
else
        name=postgresql-$pgn n=$pgn db="postgresql://attest@127.0.0.1:$PGRUN_PORT/scale"
        extra=(--pid-tree "$(head -1 "$PGRUN_DIR/data/postmaster.pid")")
        "$PGRUN_BIN/createdb" -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest scale
fi
# every pool thread holds a connection to every instance, all from 127.0.0.1
scale_start "$build" "$db" "$n" --max-connections-per-ip $((inflight + cthreads + 16)) ||
        exit 1
args=()
for u in "${urls[@]}"; do args+=(--url "$u"); done
for p in "${pids[@]}"; do args+=(--pid "$p"); done
# SQLite gets half the budget, PostgreSQL what is left (10 s kept for the teardown)
left=$((OPENLOOP_END - $(date +%s) - 10))
[ "$mode" != 1-sqlite ] || [ "$left" -le $((budget / 2)) ] || left=$((budget / 2))
[ "$left" -gt 0 ] || { echo "# $name: no budget left (OPENLOOP_BUDGET=$budget)"; exit 1; }
rc=0
pcts_arg=${pcts//,/%,}%
out=$(timeout -k 5 "$left" "$build/tests/bench/bench-daemon" "${args[@]}" "${extra[@]}" \
        --ca certs/ca.pem --token "$tok" --agents "$agents" --threads "$cthreads" \
        --entries "$entries" --seconds "$capsecs" --rates "$pcts_arg" --open-seconds "$secs" \
        --arrivals "$arrivals" --inflight "$inflight" --warm 2>bench.err) || rc=$?
scale_stop
echo "## $name"
printf '%s\n' "$out" | sed 's/^/# /'
if [ $rc != 0 ]; then
        [ $rc = 124 ] && echo "# $name: bench-daemon killed at the budget ($left s)"
        echo "# $name: bench-daemon exit $rc: $(sort bench.err | uniq -c | sort -rn | head -3)"
fi
# the rows: the closed loop's capacity, then each open-loop part
awk -v name="$name" -v cthreads="$cthreads" '
        function kv(line, key,    i, n, a, b) {
                n = split(line, a, " ")
                for (i = 1; i <= n; i++)
                        if (index(a[i], key "=") == 1) { b = substr(a[i], length(key) + 2); sub("(/s|%)$", "", b); return b }
                return ""
        }
        /^attestations=.* rate=/ { rate = kv($0, "rate"); err = kv($0, "errors") + kv($0, "fail") }
        /^round latency/ { printf "%-13s %-9s %7s %8s %7s %7s %7s %7s %6s  %s\n", name, "closed", "-", rate, kv($0, "p50"), kv($0, "p99"), "-", kv($0, "max"), err, cthreads " clients" }
        /^open loop: rate=/ { target = kv($0, "rate"); pct = $4; sub("^\\(", "", pct); load = (pct ~ /^[0-9]/ ? pct " %" : "fixed") }
        /^attestations=.* achieved=/ { ach = kv($0, "achieved"); err = kv($0, "errors") + kv($0, "fail") }
        /^latency from scheduled start/ { p50 = kv($0, "p50"); p99 = kv($0, "p99"); p999 = kv($0, "p99.9"); mx = kv($0, "max") }
        /^client lag:/ { late = $3; sub("^late=", "", late); share = $4; sub("^\\(", "", share)
                verdict = $NF; lag = verdict " (" late ", " share " %)"
                if (verdict != "ok") lag = lag " max " kv($0, "max") " ms"
                printf "%-13s %-9s %7s %8s %7s %7s %7s %7s %6s  %s\n", name, load, target, ach, p50, p99, p999, mx, err, lag }
' <<<"$out" >"$rows/row-$mode"
# wrong answers or errors fail the bench; a lagging client or a long tail does not
bad=$(awk '/^attestations=/ { for (i = 1; i <= NF; i++) if ($i ~ /^(fail|errors)=/) { split($i, a, "="); e += a[2] } }
        END { print e + 0 }' <<<"$out")
if [ $rc != 0 ] || [ "$bad" != 0 ] || ! grep -q '^open loop:' <<<"$out"; then
        echo "# $name: failed (exit $rc, $bad errors or failed verdicts)"
        exit 1
fi
