#!/usr/bin/env bash
# attestd under the bench load for a long run (default 600 s), its RSS, fds and database size
# printed every 30 s: memory must level off, not grow with the run. attestd on CPU 0, the client
# on CPU 1, writer mode, 64 agents, 16 client threads, 10 entries a round. Figures only; not run by
# CI (10 minutes).
# Usage: tests/bench/soak.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=$(cd "${1:?usage: soak.sh BUILD_DIR [SECONDS]}" && pwd)
secs=${2:-600}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-soak.XXXXXX")
pid="" cpid=""
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
pin_d=(taskset -c 0)
bench_start "$build" "$work/attestd.log" --threads "${THREADS:-16}" --db-mode writer || exit 1
taskset -c 1 "$build/tests/bench/bench-daemon" --url "https://127.0.0.1:$port" \
        --ca "$work/certs/ca.pem" --token "$tok" --agents 64 --threads 16 --entries 10 \
        --seconds "$secs" --pid "$pid" >"$work/bench" 2>&1 &
cpid=$!
t0=$(date +%s)
echo "# attestd soak: ${secs}s, sampled every 30 s"
while kill -0 "$cpid" 2>/dev/null; do
        n=$(curl -s --cacert "$work/certs/ca.pem" "https://127.0.0.1:$port/metrics" |
                awk '/^attestd_attestations_total/ { s += $2 } END { print s + 0 }')
        printf 't=%ss attestations=%s rss=%s kB hwm=%s kB fds=%s db+wal=%s kB\n' \
                $(($(date +%s) - t0)) "$n" \
                "$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")" \
                "$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")" \
                "$(find "/proc/$pid/fd" -mindepth 1 | wc -l)" \
                "$(du -k "$work"/attestd.db* | awk '{ s += $1 } END { print s }')"
        sleep 30
done
wait "$cpid" || echo "# bench-daemon reported errors"
cpid=""
sed 's/^/# /' "$work/bench"
