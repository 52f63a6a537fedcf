#!/usr/bin/env bash
# Run a command with QUOTE_FIXTURES pointing at a fresh set of quote fixtures made by real swtpms
# (make-quote-fixtures.sh), removed afterwards. Usage: with-quote-fixtures.sh COMMAND [ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/quote-fixtures.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$here/make-quote-fixtures.sh" "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; rm -f "$dir.log"; exit 1; }
rm -f "$dir.log"
export QUOTE_FIXTURES=$dir
set +e
"$@"
rc=$?
set -e
exit $rc
