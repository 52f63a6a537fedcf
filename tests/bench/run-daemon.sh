#!/usr/bin/env bash
# attestd benchmark: one attestd (TLS, SQLite in WAL with synchronous=FULL on local disk) and
# bench-daemon's simulated agents over HTTPS keep-alive, 10-entry increments. The simulated
# agents have no TPM to activate a credential with, so attestd runs with --insecure-trust-ak.
# Prints the figures;
# never fails on timing. Usage: run-daemon.sh BUILD_DIR [SECONDS] [AGENTS] [CLIENT_THREADS]
#   DB_MODES="writer pool"  storage write paths to compare (default both)
#   THREADS=N               attestd worker threads (default 16: requests wait for the group commit)
#   PIN=1                   attestd on CPU 0, the simulated agents on CPU 1 (taskset): the figure
#                           is then what one dedicated core of attestd sustains
#   FLOOR=1                 (the default; 0 skips it) then the same load against http-floor:
#                           libmicrohttpd and GnuTLS set up as attestd's front end, answering with
#                           attestd's sizes and doing no attestation work; its CPU per attestation
#                           is the floor under attestd's
set -euo pipefail
failed=0
build=$(cd "${1:?usage: run-daemon.sh BUILD_DIR [SECONDS] [AGENTS] [CLIENT_THREADS]}" && pwd)
secs=${2:-10} agents=${3:-64} cthreads=${4:-16}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-bench.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
threads=${THREADS:-16}
pin_d=() pin_c=()
if [ "${PIN:-0}" = 1 ]; then
        pin_d=(taskset -c 0)
        pin_c=(taskset -c 1)
fi
echo "# attestd benchmark: $(nproc) cores, $(uname -r), attestd threads=$threads, db on $(df --output=source "$work" | tail -1)${pin_d:+, attestd pinned to CPU 0 and agents to CPU 1}"
# load: bench-daemon's agents against the server at $port (pid $pid) for $secs seconds
load() {
        "${pin_c[@]}" /usr/bin/time -f "# bench client CPU: %U s user %S s sys, wall %e s" \
                "$build/tests/bench/bench-daemon" --url "https://127.0.0.1:$port" \
                --ca "$work/certs/ca.pem" --token "$tok" --agents "$agents" --threads "$cthreads" \
                --entries 10 --seconds "$secs" --pid "$pid" ||
                { echo "# bench-daemon reported errors"; failed=1; }
}
stop() {
        kill "$pid"
        wait "$pid" || true
        pid=""
}
for mode in ${DB_MODES:-writer pool}; do
        bench_start "$build" "$work/attestd-$mode.log" --threads "$threads" --db-mode "$mode" ||
                exit 1
        echo "## --db-mode $mode"
        cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
        load
        curl -s --cacert "$work/certs/ca.pem" "https://127.0.0.1:$port/metrics" |
                grep -E '^attestd_(attestations_total|verification_seconds_(sum|count)|ima_entries_replayed_total|store_)' |
                sed 's/^/# /'
        cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
        echo "# attestd CPU: $(awk -v t=$((cpu1 - cpu0)) -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / h }') s"
        stop
done
if [ "${FLOOR:-1}" = 1 ]; then
        echo "## http-floor (libmicrohttpd + GnuTLS as attestd sets them up, no attestation work;" \
                "the attestd lines are http-floor's)"
        floor_start "$build" || exit 1
        load
        stop
fi
exit $failed
