#!/usr/bin/env bash
# Replays the generated cap seeds of one target (tests/fuzz/mkseeds.c) under the normal compiler.
# Usage: replay-caps.sh MKSEEDS REPLAY_BINARY TARGET
set -euo pipefail
mkseeds=$1 replay=$2 target=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/attestd-caps.XXXXXX")
trap 'rm -rf "$dir"' EXIT
seeds=$target
if [ "$target" = evidence ] || [ "$target" = evidence-diff ]; then
        # the differential target takes the evidence seeds
        seeds=evidence
        "$mkseeds" "$dir" ima-ascii
        "$(dirname "$0")/mkseeds-evidence.sh" "$dir" "$(dirname "$0")/corpus/evidence/qemu61-good.json"
else
        "$mkseeds" "$dir" "$target"
fi
n=$(find "$dir/$seeds" -type f | wc -l)
[ "$n" -ge 3 ] || { echo "replay-caps: only $n seeds for $target" >&2; exit 1; }
"$replay" "$dir/$seeds"
echo "replay-caps: $target: $n seeds at cap-1/cap/cap+1 replayed"
