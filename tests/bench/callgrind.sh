#!/usr/bin/env bash
# attestd's instructions per attestation, counted by callgrind: a figure a shared, loaded machine
# does not move (wall and CPU time do). For each build: attestd under valgrind --tool=callgrind
# (writer mode), bench-daemon's agents attest R1 rounds each, attestd stops and callgrind's total
# is read; again with R2 rounds; (total(R2) - total(R1)) / ((R2 - R1) x AGENTS) is what one
# attestation costs beyond start-up and enrolment. With CLIENT=1 the client is counted the same
# way (each build's own bench-daemon; attestd then runs natively). Prints one line per build; with OUT=DIR the R2 runs' callgrind
# files stay in DIR (callgrind_annotate them for the functions); with ALLOCS=1 a second line gives
# heap allocations per attestation (calls to malloc/calloc/realloc, subtracted the same way).
# Figures only; not run by CI.
#
# Usage: tests/bench/callgrind.sh BUILD [BUILD...]      R1 (default 4), R2 (default 14), AGENTS
#        (default 16), CTHREADS (default 4), THREADS (attestd --threads, default 4)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: callgrind.sh BUILD [BUILD...]"; exit 2; }
command -v valgrind >/dev/null || { echo "callgrind: valgrind not found"; exit 1; }
top=$(cd "$(dirname "$0")/../.." && pwd)
r1=${R1:-4} r2=${R2:-14} agents=${AGENTS:-16} cthreads=${CTHREADS:-4}
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-callgrind.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
client_b=$(cd "$1" && pwd)/tests/bench/bench-daemon
BENCH_START_TRIES=1200

# total BUILD ROUNDS: callgrind's instruction total of attestd (or the client) over one run
total() {
        local build=$1 rounds=$2 out=$work/cg.$RANDOM client=() bench=$client_b
        if [ "${CLIENT:-0}" = 1 ]; then
                pin_d=()
                client=(valgrind --tool=callgrind --callgrind-out-file="$out")
                bench=$build/tests/bench/bench-daemon
        else
                pin_d=(valgrind --tool=callgrind --callgrind-out-file="$out")
        fi
        bench_start "$build" "$work/attestd.log" --threads "${THREADS:-4}" --db-mode writer ||
                exit 1
        ${client[@]+"${client[@]}"} "$bench" --url "https://127.0.0.1:$port" \
                --ca "$work/certs/ca.pem" --token "$tok" --agents "$agents" --threads "$cthreads" \
                --entries 10 --rounds "$rounds" --seconds 3600 >"$work/out" 2>"$work/err" || {
                echo "callgrind: bench-daemon failed: $(tail -2 "$work/err")" >&2
                exit 1
        }
        grep -q "fail=0 errors=0" "$work/out" || echo "# note: $(grep attestations= "$work/out")" >&2
        kill "$pid"
        wait "$pid" || true
        pid=""
        [ -z "${OUT:-}" ] || { mkdir -p "$OUT"; cp "$out" "$OUT/$(basename "$build").$rounds"; }
        awk '/^(summary|totals):/ { printf "%s ", $2; exit }' "$out"
        # heap allocations: the calls to malloc/calloc/realloc callgrind recorded (cfn= names the
        # callee, by "(id) name" the first time the file names it (in an fn= or a cfn= line) and
        # "(id)" after; the calls= line that follows counts them)
        awk '/^fn=/ { id = $1; sub(/^fn=/, "", id); if (NF > 1) name[id] = $2; next }
             /^cfn=/ { id = $1; sub(/^cfn=/, "", id); if (NF > 1) name[id] = $2; cur = name[id]; next }
             /^calls=/ { if (cur == "malloc" || cur == "calloc" || cur == "realloc") {
                             split($1, c, "="); n += c[2] }
                         cur = ""; next }
             END { print n + 0 }' "$out"
}

for b in "$@"; do
        build=$(cd "$b" && pwd)
        r=$(total "$build" "$r1")
        read -r t1 a1 <<<"$r"
        r=$(total "$build" "$r2")
        read -r t2 a2 <<<"$r"
        awk -v b="$build" -v t1="$t1" -v t2="$t2" -v n=$(((r2 - r1) * agents)) \
                -v who="$([ "${CLIENT:-0}" = 1 ] && echo client || echo attestd)" 'BEGIN {
                printf "%s: %s %.3f M instructions per attestation (%d attestations: %.1f M - %.1f M)\n",
                        b, who, (t2 - t1) / n / 1e6, n, t2 / 1e6, t1 / 1e6 }'
        # ALLOCS=1: heap allocations per attestation the same way (malloc/calloc/realloc calls)
        [ "${ALLOCS:-0}" != 1 ] || awk -v b="$build" -v a1="$a1" -v a2="$a2" \
                -v n=$(((r2 - r1) * agents)) 'BEGIN {
                printf "%s: %.1f heap allocations per attestation (%d - %d)\n", b, (a2 - a1) / n,
                        a2, a1 }'
done
