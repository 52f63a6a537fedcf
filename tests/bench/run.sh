#!/usr/bin/env bash
# Benchmarks, figures only: never fails on timing, only when a bench cannot run or gets a wrong
# answer. Runs bench-ima pinned to one core (taskset -c 0), then every other tests/bench/run-*.sh
# with the same BUILD_DIR. Build BUILD_DIR with -Dbuildtype=release for meaningful figures.
# Usage: tests/bench/run.sh BUILD_DIR
set -euo pipefail
if [ $# -ne 1 ]; then
        echo "Usage: $0 BUILD_DIR" >&2
        exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
failed=0

pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
        pin=(taskset -c 0)
else
        echo "bench: taskset unavailable, running unpinned"
fi
grep -q '"name": "buildtype", "value": "release"' "$build/meson-info/intro-buildoptions.json" \
        2>/dev/null || echo "bench: $build is not a release build; figures will be low"

echo "bench: ${pin[*]:-unpinned} $build/tests/bench/bench-ima --attestctl $build/attestctl/attestctl"
if ! "${pin[@]}" "$build/tests/bench/bench-ima" --attestctl "$build/attestctl/attestctl"; then
        echo "bench: bench-ima failed"
        failed=1
fi

for s in "$here"/run-*.sh; do
        [ -e "$s" ] || continue
        echo
        echo "bench: $s"
        if ! "$s" "$build"; then
                echo "bench: ${s##*/} failed"
                failed=1
        fi
done
exit $failed
