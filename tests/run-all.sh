#!/usr/bin/env bash
# The whole test suite, stage by stage with times: style checks, ASan+UBSan build and `meson test`
# (unit + integration), fuzzers (clang, time-boxed), benchmarks (figures only, never fail on timing).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
failed=0
t0=$(date +%s)

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
        [ $rc -eq 0 ] || failed=1
}

stage "style: clang-format and banned functions" tests/check-style.sh
stage "build (ASan+UBSan)" sh -c '[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null; ninja -C build-asan'
stage "meson test (ASan+UBSan)" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3
# Check's own summary of every unit and integration suite (from meson's log of the run above)
echo "Check suites:"
grep -hE '^(Running suite|[0-9]+%: Checks)' build-asan/meson-logs/testlog.txt | paste - - |
        sed 's/^Running suite(s): /  /' || true
stage "build (clang, libFuzzer)" sh -c '[ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_lundef=false >/dev/null; ninja -C build-fuzz'
stage "fuzz (${FUZZ_SECONDS}s per target)" tests/fuzz/run.sh build-fuzz "$FUZZ_SECONDS"
stage "build (release, for benchmarks)" sh -c '[ -d build-rel ] || meson setup build-rel -Dbuildtype=release >/dev/null; ninja -C build-rel'
# the memory ceilings of the hostile HTTP test hold their release-build figures only here (under
# ASan, redzones and the quarantine make RSS meaningless)
stage "hostile HTTP on the release build (RSS and fd ceilings)" \
        sh -c 'meson test -C build-rel hostile-http --print-errorlogs --timeout-multiplier 3; rc=$?
               grep -hE "^(ok|not ok|# )" build-rel/meson-logs/testlog.txt; exit $rc'
stage "integration path under valgrind (the demo: attestd + agents, memcheck)" \
        env VALGRIND=1 tests/demo.sh build-rel
stage "benchmarks (figures only)" tests/bench/run.sh build-rel
stage "kernel: builds and live boots" tests/kernel/run.sh build-rel

printf '\n==> whole suite: %ss, %s\n' "$(($(date +%s) - t0))" "$([ $failed -eq 0 ] && echo PASSED || echo FAILED)"
exit $failed
