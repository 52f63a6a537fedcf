#!/usr/bin/env bash
# ima.runtime evaluation figures (goal: >= 1 M entries/s on one core): bench-runtime pinned to
# one core, then callgrind's instructions per entry for the read pass and the read + judge pass
# (a figure a loaded machine does not move). Never fails on timing; fails on a wrong count.
# Usage: run-runtime.sh BUILD_DIR [PATHS] [ENTRIES]
set -euo pipefail
build=$(cd "$1" && pwd)
paths=${2:-100000} entries=${3:-1000000}
bench=$build/tests/bench/bench-runtime
pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then pin=(taskset -c 0); fi
"${pin[@]}" "$bench" --paths "$paths" --entries "$entries"
if ! command -v valgrind >/dev/null; then
        echo "runtime: valgrind not installed: no instruction counts"
        exit 0
fi
out=$(mktemp -d /tmp/bench-runtime.XXXXXX)
trap 'rm -rf "$out"' EXIT
# a tenth of the log keeps callgrind's run short; the per-entry figure does not depend on it
n=$((entries / 10))
for pass in bench_read_pass bench_eval_pass; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$pass.cg" --toggle-collect="$pass" \
                "$bench" --paths "$paths" --entries "$n" --rounds 1 >/dev/null 2>"$out/$pass.log"
        ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out/$pass.cg")
        [ -n "$ir" ] || ir=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out/$pass.cg")
        echo "runtime: callgrind $pass: $((ir / n)) instructions per entry ($n entries)"
done
