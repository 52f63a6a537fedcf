#!/usr/bin/env bash
# The PostgreSQL fleet path with the database across a network (docs/scaling.md, "A database
# across the network"): run-scale.sh's PostgreSQL part (1, 2 and 4 attestd on one database,
# AGENTS simulated agents) with attestd's connections through tests/bench/delay-proxy holding each
# direction's bytes DELAYS microseconds (default "0 500 1000": loopback, then 1 and 2 ms of round
# trip), one table: rate, latency, CPU per attestation, statements and PostgreSQL transactions per
# attestation (run-scale.sh's columns). The agents' first rounds (status changes, webhook events)
# run untimed first (SCALE_WARM=0: timed too). This machine's kernel has no netem, hence the proxy
# (its own CPU is not counted as attestd's).
# Figures only, never fails on timing; not in tests/bench/run.sh (about 5 minutes, run-scale.sh's
# waits for PostgreSQL's transaction counts included).
# Usage: db-delay.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]   (DELAYS, SCALE_BUDGET per delay)
set -euo pipefail
build=$(cd "${1:?usage: db-delay.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]}" && pwd)
secs=${2:-6} agents=${3:-2000} entries=${4:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/tests/bench/delay-proxy" ] || { echo "db-delay: no $build/tests/bench/delay-proxy" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# db-delay: $agents agents, ${secs}s per part, delays (us each way): ${DELAYS:-0 500 1000}; $(uptime)"
printf '%-9s %-14s %8s %8s %8s %11s %12s %7s %6s %9s %7s %6s\n' "delay us" config att/s "p50 ms" \
        "p99 ms" "attestd ms" "postgres ms" stmts xacts "WAL B" errors txns >"$out.table"
for d in ${DELAYS:-0 500 1000}; do
        SCALE_SQLITE=0 SCALE_WARM=${SCALE_WARM:-1} PG_DELAY_US=$d "$top/tests/bench/run-scale.sh" "$build" "$secs" "$agents" \
                "$entries" >"$out" 2>&1 || true
        grep -E '^# (PostgreSQL through|bench-daemon reported|the PostgreSQL part failed)' "$out" || true
        awk -v d="$d" '/^postgresql-[0-9]/ { printf "%-9s %s\n", d, $0 }' "$out" >>"$out.table"
done
echo
cat "$out.table"
rm -f "$out.table"
