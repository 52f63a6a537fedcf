#!/usr/bin/env bash
# All benchmarks: every tests/bench/run-*.sh against BUILD_DIR (a release build). Figures only: a
# benchmark that cannot run fails, a slow one never does. Usage: run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rc=0
for b in "$here"/run-*.sh; do
        echo "== ${b##*/}"
        "$b" "$1" || rc=1
done
exit $rc
