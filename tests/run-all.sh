#!/usr/bin/env bash
# The whole test suite, stage by stage with times: style checks, ASan+UBSan build and `meson test`
# (unit + integration), fuzzers (clang, time-boxed), benchmarks (figures only, never fail on timing),
# the kernel stage; a table of every stage and its seconds at the end.
# Usage: tests/run-all.sh [--quick]
#   --quick  the edit-compile-test loop: the ASan+UBSan build, the style check and the unit suites
#            only (meson test --suite style, --suite unit); README.md, "Development"
# Environment: FUZZ_SECONDS (per target, default 30), FUZZ_JOBS (targets at once, default 2),
# STAGE_TABLE (a file: append the stage rows to it and print no table; setup.sh prints one table
# with its own stages), ATTEST_CACHE (default /var/cache/attestd: ccache's folder for the builds).
set -euo pipefail
# shellcheck disable=SC2317 # the build functions are called through stage
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
quick=0
case ${1:-} in
--quick) quick=1 ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
failed=0
t0=$(date +%s)
table=${STAGE_TABLE:-}
own_table=0
if [ -z "$table" ]; then
        table=$(mktemp /tmp/attestd-stages.XXXXXX)
        own_table=1
        trap 'rm -f "$table"' EXIT
fi

# meson uses ccache when it is installed (setup.sh installs it, for the kernel builds): its folder
# lives in the attestd cache, beside the kernels, so that removing the cache empties it too; a
# fresh clone on a machine with a warm cache compiles from it. Meson passes source and include
# paths relative to the build folder, but ccache hashes the working directory of every compile
# with -g (the ASan and libFuzzer builds) unless told not to: without CCACHE_NOHASHDIR a clone in
# another folder missed every object (a fresh clone's --quick build, warm cache: 54 s, as cold).
# The price: a cached object's debug information names the build folder it was first compiled
# in (DW_AT_comp_dir); file names and lines in sanitizer reports are the same.
cache=${ATTEST_CACHE:-/var/cache/attestd}
if [ -z "${CCACHE_DIR:-}" ] && { mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; }; then
        export CCACHE_DIR=$cache/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G} CCACHE_NOHASHDIR=1
fi

stage() {
        local name=$1 s e rc
        shift
        printf '\n==> %s\n' "$name"
        s=$(date +%s)
        set +e
        "$@"
        rc=$?
        set -e
        e=$(date +%s)
        printf '==> %s: %s (%ss)\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED rc=$rc")" \
                "$((e - s))"
        printf '%s\t%s\t%s\n' "$((e - s))" "$([ $rc -eq 0 ] && echo ok || echo FAILED)" "$name" >>"$table"
        [ $rc -eq 0 ] || failed=1
}

asan_build() {
        [ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
        ninja -C build-asan
}
# only what the fuzz stage runs: the fuzz-* libFuzzer binaries and mkseeds (the replay tests of
# the same targets run in the ASan build's meson test)
fuzz_build() {
        local targets
        [ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_lundef=false >/dev/null
        mapfile -t targets < <(ninja -C build-fuzz -t targets all |
                sed -n 's|^\(tests/fuzz/fuzz-[a-z0-9-]*\): .*|\1|p; s|^\(tests/mkseeds\): .*|\1|p')
        [ ${#targets[@]} -gt 1 ] || { echo "no fuzz targets in build-fuzz" >&2; return 1; }
        ninja -C build-fuzz "${targets[@]}"
}
# CK_TIMEOUT_MULTIPLIER: Check's own per-case timeouts (4 s unless a test sets one) scale as meson's do
# (--timeout-multiplier 3 below); under load an exhaustive case took over 4 s (tests/unit/test-buf.c)
asan_env=(env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
        CK_TIMEOUT_MULTIPLIER=3)

# Check's own summary of every suite (from meson's log of the run above)
check_summary() {
        echo "Check suites:"
        grep -hE '^(Running suite|[0-9]+%: Checks)' build-asan/meson-logs/testlog.txt | paste - - |
                sed 's/^Running suite(s): /  /' || true
}

# the ten slowest tests of the ASan meson test (meson's testlog.json), for the stage's budget
slowest() {
        [ -f build-asan/meson-logs/testlog.json ] || return 0
        echo "Slowest tests (s):"
        jq -r '"\(.duration) \(.name)"' build-asan/meson-logs/testlog.json 2>/dev/null |
                sort -rn | head -10 | awk '{ d = $1; sub(/^[^ ]+ /, ""); printf "  %7.1f  %s\n", d, $0 }' || true
}

# (the style check is a meson test, suite style: first, alone, so that it fails in seconds)
stage "build (ASan+UBSan)" asan_build
stage "meson test --suite style: clang-format and banned functions" \
        meson test -C build-asan --suite style --print-errorlogs
if [ $quick = 1 ]; then
        stage "meson test --suite unit (ASan+UBSan)" "${asan_env[@]}" \
                meson test -C build-asan --suite unit --print-errorlogs --num-processes 2 \
                --timeout-multiplier 3
        check_summary
else
        stage "meson test (ASan+UBSan)" "${asan_env[@]}" \
                meson test -C build-asan --no-suite style --print-errorlogs --num-processes 2 \
                --timeout-multiplier 3
        check_summary
        slowest
        stage "build (clang, libFuzzer targets)" fuzz_build
        stage "fuzz (${FUZZ_SECONDS}s per target, ${FUZZ_JOBS:-2} at once)" \
                tests/fuzz/run.sh build-fuzz "$FUZZ_SECONDS"
        stage "build (release, for benchmarks)" sh -c '[ -d build-rel ] || meson setup build-rel -Dbuildtype=release >/dev/null; ninja -C build-rel'
        # the memory ceilings of the hostile HTTP test and the latency bound of the body-budget
        # attack hold their release-build figures only here (under ASan, redzones and the
        # quarantine make RSS meaningless, and the CPU cost makes round times several times longer)
        stage "hostile HTTP on the release build (RSS and fd ceilings, p99 under the body attack)" \
                sh -c 'meson test -C build-rel hostile-http hostile-http-budget --print-errorlogs --timeout-multiplier 3; rc=$?
                       grep -hE "^(ok|not ok|# )" build-rel/meson-logs/testlog.txt; exit $rc'
        stage "integration path under valgrind (the demo: attestd + agents, memcheck)" \
                env VALGRIND=1 tests/demo.sh build-rel
        stage "benchmarks (figures only)" tests/bench/run.sh build-rel
        stage "kernel: builds and live boots" tests/kernel/run.sh build-rel
fi

total=$(($(date +%s) - t0))
printf '%s\t%s\t%s\n' "$total" "$([ $failed -eq 0 ] && echo PASSED || echo FAILED)" \
        "whole suite (tests/run-all.sh${1:+ $1})" >>"$table"
printf '\n==> whole suite: %ss, %s\n' "$total" "$([ $failed -eq 0 ] && echo PASSED || echo FAILED)"
if [ $own_table = 1 ]; then
        "$top/tests/stage-table.sh" "$table"
fi
exit $failed
