#!/usr/bin/env bash
# Where attestd's CPU goes under the benchmark load: attestd on CPU 0, bench-daemon's simulated
# agents on CPU 1 (as PIN=1 in run-daemon.sh / compare.sh), `perf record -g` on the attestd
# process for SECONDS once the load runs, then the share per library (DSO), the top symbols, the
# system calls by share of samples, and with STRACE=1 a second run counting system calls per
# attestation (strace -c -f; strace slows attestd, so the counts are per attestation, not rates).
# Figures only. Needs perf (Debian: linux-perf) and for STRACE=1 strace; not run by CI.
#
# Usage: tests/bench/profile.sh BUILD_DIR [SECONDS] [OUT]      (defaults 8, a temporary file)
#   THREADS=N        attestd --threads (default 16)
#   EXTRA="..."      further attestd flags
#   CALLGRAPH=dwarf  perf --call-graph dwarf (user-space callers; large files) instead of -g
set -euo pipefail
build=$(cd "${1:?usage: profile.sh BUILD_DIR [SECONDS] [OUT]}" && pwd)
secs=${2:-8}
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v perf >/dev/null || { echo "profile: perf not found (apt-get install linux-perf)"; exit 1; }
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-profile.XXXXXX")
out=${3:-$work/perf.data}
pid="" cpid=""
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
pin_d=(taskset -c 0)

start() {
        # shellcheck disable=SC2086
        bench_start "$build" "$work/attestd.log" --threads "${THREADS:-16}" --db-mode writer \
                ${EXTRA:-} || exit 1
}
load() {
        taskset -c 1 "$build/tests/bench/bench-daemon" --url "https://127.0.0.1:$port" \
                --ca "$work/certs/ca.pem" --token "$tok" --agents 64 --threads 16 --entries 10 \
                --seconds "$1" --pid "$pid" >"$work/bench" 2>&1 &
        cpid=$!
}
attestations() {
        curl -s --cacert "$work/certs/ca.pem" "https://127.0.0.1:$port/metrics" |
                awk '/^attestd_attestations_total/ { s += $2 } END { print s + 0 }'
}
stop() {
        wait "$cpid" || true
        cpid=""
        kill "$pid"
        wait "$pid" || true
        pid=""
}

start
load $((secs + 5))
sleep 3
if [ "${CALLGRAPH:-}" = dwarf ]; then
        cg=(--call-graph dwarf,16384 -F 299)
else
        cg=(-g -F 999)
fi
perf record "${cg[@]}" -p "$pid" -o "$out" -- sleep "$secs" >/dev/null 2>&1
stop
echo "# attestd under bench-daemon (64 agents, 16 client threads, 10 entries/round), attestd" \
        "on CPU 0 with --threads ${THREADS:-16}, client on CPU 1; perf ${cg[*]} for ${secs}s: $out"
sed 's/^/# /' "$work/bench"
echo "## share of samples by library"
perf report -i "$out" --no-children --sort dso --stdio -g none 2>/dev/null | grep -E '^ +[0-9]' | awk 'NR <= 14'
echo "## top symbols (self)"
perf report -i "$out" --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -E '^ +[0-9]' | awk 'NR <= 30'
echo "## system calls (kernel time below each, share of all samples)"
perf report -i "$out" --children --sort sym --stdio -g none 2>/dev/null |
        grep -E '\[k\] __x64_sys_|\[k\] (schedule|finish_task_switch)' | awk 'NR <= 16'

if [ "${STRACE:-0}" = 1 ]; then
        command -v strace >/dev/null || { echo "profile: strace not found"; exit 1; }
        start
        load $((secs + 5))
        sleep 3
        a0=$(attestations)
        timeout -s INT "$secs" strace -c -f -p "$pid" -o "$work/strace" >/dev/null 2>&1 || true
        a1=$(attestations)
        stop
        echo "## system calls per attestation (strace -c -f, $((a1 - a0)) attestations)"
        awk -v n=$((a1 - a0)) 'NR > 2 && $4 ~ /^[0-9]+$/ && n > 0 {
                printf "%-16s %8d  %6.2f per attestation\n", $NF, $4, $4 / n }' "$work/strace" |
                sort -k3 -rn | awk 'NR <= 16'
fi
