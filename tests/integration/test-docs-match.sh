#!/usr/bin/env bash
# shellcheck disable=SC2016 # backquotes of Markdown in single-quoted patterns
# Docs that match the program (issue 11), for attestd and attest-agent (attestctl's man page and
# help are tested by attestctl's own tests, not here):
#  - every flag `--help` prints is documented in the man page's OPTIONS, and every flag OPTIONS
#    documents is in `--help` (attestd(8), attest-agent(8));
#  - `--version` of both prints "NAME VERSION" (the meson project version) and exits 0;
#  - sd-daemon "<N>" prefixes on a pipe and under the journal (JOURNAL_STREAM), none on a terminal
#    (a pty made by script(1)), for both programs;
#  - a missing database directory is named, with what to do;
#  - docs/api.md: the token-hash command it gives makes a token attestd accepts (and the hash of
#    the token with its newline is refused), /healthz answers what api.md shows.
# Usage: test-docs-match.sh ATTESTD AGENT VERSION
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
ATTESTD=$(realpath "$1") AGENT=$(realpath "$2") VERSION=$3
need script sha256sum
test_begin
cd "$work"

# ---- --version --------------------------------------------------------------------------------
for pair in "attestd:$ATTESTD" "attest-agent:$AGENT"; do
        IFS=: read -r name bin <<<"$pair"
        out=$("$bin" --version) || fail "$name --version exited $?"
        [ "$out" = "$name $VERSION" ] || fail "$name --version: '$out', want '$name $VERSION'"
done
ok "attestd --version and attest-agent --version: 'NAME $VERSION', exit 0"
