#!/usr/bin/env bash
# Run every libFuzzer binary (BUILD_DIR/tests/fuzz/fuzz-*) for SECONDS each, on a scratch copy of
# its seed corpus so the repository is not polluted. Fails if any target crashes, leaks, times out
# or exits non-zero; prints the executions each one made. Crash inputs are kept in the scratch
# directory (printed) so they can be added to tests/fuzz/corpus/<name>/.
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS
set -euo pipefail
if [ $# -ne 2 ]; then
        echo "Usage: $0 BUILD_DIR SECONDS" >&2
        exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/attestd-fuzz.XXXXXX")
failed=0
ran=0

mapfile -t targets < <(find "$build/tests/fuzz" -maxdepth 1 -type f -name 'fuzz-*' -perm -u+x |
        sort)
if [ ${#targets[@]} -eq 0 ]; then
        echo "fuzz: no fuzz-* binaries in $build/tests/fuzz (configure with CC=clang -Dfuzz=true)" >&2
        exit 1
fi

printf '%-14s %10s %12s %8s %6s  %s\n' target seconds execs exec/s cov result
for bin in "${targets[@]}"; do
        name=${bin##*/fuzz-}
        seeds="$top/tests/fuzz/corpus/$name"
        work="$scratch/$name"
        mkdir -p "$work/corpus" "$work/artifacts"
        [ -d "$seeds" ] && cp -r "$seeds/." "$work/corpus/"
        set +e
        ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 \
                -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
                "$work/corpus" >"$work/log" 2>&1
        rc=$?
        set -e
        ran=$((ran + 1))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
        cov=$(grep -oE 'cov: [0-9]+' "$work/log" | tail -1 | cut -d' ' -f2)
        result=ok
        if [ $rc -ne 0 ] || ls "$work/artifacts/"* >/dev/null 2>&1; then
                result="FAILED rc=$rc"
                failed=1
        fi
        printf '%-14s %10s %12s %8s %6s  %s\n' "$name" "$seconds" "${execs:-?}" "${rate:-?}" \
                "${cov:-?}" "$result"
        if [ "$result" != ok ]; then
                grep -E 'ERROR|SUMMARY|invariant failed|==[0-9]+==|#[0-9]+ 0x' "$work/log" | head -30 |
                        sed 's/^/    /'
                for a in "$work/artifacts/"*; do
                        [ -e "$a" ] && echo "    input: $a"
                done
                echo "    full log: $work/log"
        fi
done
echo "fuzz: $ran targets, ${seconds}s each, $([ $failed -eq 0 ] && echo 'no crashes' || echo FAILED)"
if [ $failed -eq 0 ]; then
        rm -rf "$scratch"
else
        echo "fuzz: scratch kept in $scratch"
fi
exit $failed
