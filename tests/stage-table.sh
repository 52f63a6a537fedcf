#!/usr/bin/env bash
# tests/stage-table.sh FILE: the stage table of a run (tests/run-all.sh, setup.sh test) from FILE's
# rows "SECONDS<TAB>RESULT<TAB>NAME", in run order, with minutes.
set -euo pipefail
printf '\n==> stage table\n'
awk -F'\t' '{ printf "  %6d s  %5.1f min  %-7s %s\n", $1, $1 / 60, $2, $3 }' "$1"
