#!/usr/bin/env bash
# Fails when a C file is not clang-formatted or uses a banned function (STYLE.md "Untrusted bytes"),
# or includes a database engine's header outside the store's backends.
# Run by `meson test` (suite style) and by tests/run-all.sh --quick. Exits 77 (meson: skipped, never
# a pass) where it cannot look: no clang-format, or not a git checkout (a release tarball).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "style: clang-format not installed" >&2; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "style: not a git checkout" >&2; exit 77; }
rc=0
# (tracked files deleted in the work tree are not looked at)
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^kernel/' |
        while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
# clang-format on every core, 16 files a call; its "error: code should be clang-formatted" lines
# name the files; a failure with no such line (clang-format itself failed) is reported whole
xrc=0
out=$(printf '%s\0' "${files[@]}" |
        xargs -0 -P "$(nproc)" -n 16 clang-format --dry-run --Werror 2>&1 >/dev/null) || xrc=$?
mapfile -t bad < <(printf '%s\n' "$out" |
        sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
for f in ${bad[@]+"${bad[@]}"}; do
        echo "style: $f is not clang-formatted (clang-format -i $f)"
        rc=1
done
if [ $xrc -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
        printf '%s\n' "$out" | head -20
        echo "style: clang-format failed (exit $xrc)"
        rc=1
fi
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|strtok)\s*\(' "${files[@]}" |
        grep -v 'banned:'; then
        echo "style: banned function used (see STYLE.md)"
        rc=1
fi
# the database engines stay behind the store's backends (daemon/store/db-backend.h); tests may
# talk to a database themselves
if grep -nE '^#include <(sqlite3|libpq-fe)\.h>' "${files[@]}" |
        grep -vE '^(daemon/store/db-(sqlite|pg|wal)\.c|tests/)[^:]*:'; then
        echo "style: sqlite3.h or libpq-fe.h outside daemon/store/db-{sqlite,pg,wal}.c"
        rc=1
fi
[ $rc -eq 0 ] && echo "style: ${#files[@]} files formatted, no banned functions"
exit $rc
