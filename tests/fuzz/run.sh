#!/usr/bin/env bash
# Run every libFuzzer target of a -Dfuzz=true build for SECONDS each, starting from a scratch copy
# of its corpus (tests/fuzz/corpus/<name>/); a crash fails and its input is left in the corpus
# folder as crash-* (ignored by git: minimise it and add it to the corpus with a test).
# Usage: run.sh BUILD_DIR [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 seconds=${2:-30}
rc=0
shopt -s nullglob
for bin in "$build"/tests/fuzz/fuzz-*; do
        [ -f "$bin" ] && [ -x "$bin" ] || continue
        name=${bin##*/fuzz-}
        work=$(mktemp -d /tmp/fuzz-$name.XXXXXX)
        cp "$top/tests/fuzz/corpus/$name"/* "$work/" 2>/dev/null || true
        echo "fuzz-$name: ${seconds}s"
        if ! "$bin" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
                -artifact_prefix="$top/tests/fuzz/corpus/$name/" "$work" 2>"$work.log"; then
                tail -40 "$work.log"
                rc=1
        else
                grep -E 'stat::number_of_executed_units|Done' "$work.log" || true
        fi
        rm -rf "$work" "$work.log"
done
exit $rc
