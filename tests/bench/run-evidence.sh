#!/usr/bin/env bash
# Evidence decode figures: the pull reader (evidence_from_json) against the jansson decoder it
# replaced, 100 and 10,000 IMA entries. CPU ns per decode (bench-evidence, pinned to CPU 0 when
# taskset works), then, with valgrind installed, instructions per decode of the decode alone
# (callgrind, --toggle-collect on each decoder) and heap allocations per decode (memcheck's heap
# summary, less a run with no decode). Never fails on timing.
# Usage: run-evidence.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
bin=$build/tests/bench/bench-evidence
pin=()
taskset -c 0 true 2>/dev/null && pin=(taskset -c 0)
"${pin[@]}" "$bin"
command -v valgrind >/dev/null || { echo "evidence: valgrind missing, no instruction counts"; exit 0; }
tmp=$(mktemp -d /tmp/bench-evidence.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# instructions inside one decoder's calls (callgrind's "Collected" total), per decode
ir_per_decode() { # which entries iterations function
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect="$4" \
                "$bin" --only "$1" --entries "$2" --iterations "$3" 2>"$tmp/log" ||
                { cat "$tmp/log" >&2; return 1; }
        awk -v k="$3" '/^(summary|totals):/ { print int($2 / k); exit }' "$tmp/cg"
}

# heap allocations per decode: valgrind's count with K decodes less the count with none
allocs_per_decode() { # which entries iterations
        local with without
        with=$(valgrind "$bin" --only "$1" --entries "$2" --iterations "$3" 2>&1 |
                sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,)
        without=$(valgrind "$bin" --only "$1" --entries "$2" --iterations 0 2>&1 |
                sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,)
        echo $(((with - without) / $3))
}

for spec in 100:50 10000:3; do
        n=${spec%%:*} k=${spec##*:}
        old_ir=$(ir_per_decode old "$n" "$k" evidence_from_json_jansson)
        new_ir=$(ir_per_decode new "$n" "$k" evidence_from_json)
        old_al=$(allocs_per_decode old "$n" "$k")
        new_al=$(allocs_per_decode new "$n" "$k")
        printf 'evidence decode, %6s entries (callgrind): jansson %11s instructions %7s allocs' \
                "$n" "$old_ir" "$old_al"
        printf '  reader %10s instructions %3s allocs  %5.1fx fewer instructions\n' "$new_ir" \
                "$new_al" "$(awk -v a="$old_ir" -v b="$new_ir" 'BEGIN { print a / b }')"
done
