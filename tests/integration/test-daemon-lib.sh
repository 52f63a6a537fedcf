#!/usr/bin/env bash
# Old name of the tests' shell library, kept for scripts written against it: sources
# tests/lib/common.sh and starts the test (work directory, certificates, EXIT trap). New scripts
# source tests/lib/common.sh and call test_begin themselves.
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
test_begin
