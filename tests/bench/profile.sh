#!/usr/bin/env bash
# Where attestd's CPU goes under the benchmark load: attestd on CPU 0, bench-daemon's simulated
# agents on CPU 1 (as PIN=1 in run-daemon.sh / compare.sh), `perf record -g` on the attestd
# process for SECONDS once the load runs, then the share per library (DSO), the top symbols, the
# system calls by share of samples, and with STRACE=1 a second run counting system calls per
# attestation (strace -c -f; strace slows attestd, so the counts are per attestation, not rates).
# strace stops attestd at every system call: commits then group fewer verdicts than at full speed
# and the writer's calls per attestation come out too high. SYSCALLS=1 counts them with
# `perf stat` on the system call tracepoints instead (exact counts, attestd nearly at full
# speed), per thread kind: the HTTP pool (threads that call recvfrom), the writer (fdatasync and
# no recvfrom), the rest (the total counts every system call, the named ones are the usual ones).
# Figures only. Needs perf (Debian: linux-perf) and for STRACE=1 strace; not run by CI.
#
# Usage: tests/bench/profile.sh BUILD_DIR [SECONDS] [OUT]      (defaults 8, a temporary file)
#   THREADS=N        attestd --threads (default 16)
#   EXTRA="..."      further attestd flags
#   CALLGRAPH=dwarf  perf --call-graph dwarf (user-space callers; large files) instead of -g
#   PERF=0           skip the perf record part (with STRACE=1 or SYSCALLS=1)
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

if [ "${PERF:-1}" = 1 ]; then
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
fi

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

if [ "${SYSCALLS:-0}" = 1 ]; then
        calls="pwrite64 pread64 fdatasync fcntl futex poll recvfrom sendmsg setsockopt getpid"
        calls="$calls read write writev accept4 close mprotect openat"
        ev=raw_syscalls:sys_enter
        for c in $calls; do ev="$ev,syscalls:sys_enter_$c"; done
        start
        load $((secs + 5))
        sleep 3
        # the attestations are read inside perf's window: attaching its counters to every
        # thread takes a while, attestations then are not in its counts
        export -f attestations
        export work port
        perf stat --per-thread -x, -e "$ev" -p "$pid" -o "$work/count" -- bash -c \
                "attestations >$work/a0; sleep $secs; attestations >$work/a1" >/dev/null 2>&1 || true
        a0=$(cat "$work/a0") a1=$(cat "$work/a1")
        stop
        echo "# $(grep -E 'attestations=|context switches' "$work/bench" | tr '\n' ' ')"
        echo "## system calls per attestation (perf stat, tracepoints, $((a1 - a0)) attestations)"
        # rows "comm-TID,count,,event,...": per thread, then the thread's kind
        awk -F, -v n=$((a1 - a0)) '
                $4 ~ /^(raw_)?syscalls:sys_enter/ && $2 ~ /^[0-9]+$/ {
                        s = $4; sub(/^syscalls:sys_enter_/, "", s); sub(/^raw_syscalls:sys_enter$/, "total", s)
                        c[$1, s] += $2; seen[$1] = 1; sys[s] = 1
                        if (s == "fdatasync" && $2 > 0) w[$1] = 1
                        if (s == "recvfrom" && $2 > 0) h[$1] = 1 }
                END {
                        if (n <= 0) exit
                        for (t in seen) kind[t] = h[t] ? "http" : w[t] ? "writer" : "other"
                        for (s in sys) {
                                tot = 0; split("", k)
                                for (t in seen) if ((t, s) in c) {
                                        tot += c[t, s]; k[kind[t]] += c[t, s] }
                                if (tot == 0) continue
                                printf "%-11s %6.2f  (http pool %.2f, writer %.2f, other %.2f)\n",
                                        s, tot / n, k["http"] / n, k["writer"] / n, k["other"] / n
                        }
                }' "$work/count" | sort -k2 -rn
fi
