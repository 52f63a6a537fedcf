#!/usr/bin/env bash
# Fails when a C file is not clang-formatted or uses a banned function (unbounded or unchecked
# string and number handling: untrusted bytes go through util/rd.h, buf.h, tok.h and num.h), or
# includes a database engine's header outside the store's backends, or when any file refers to
# something outside the repository (below).
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
        echo "style: banned function used (use util/buf.h, util/tok.h, util/num.h instead)"
        rc=1
fi
# the database engines stay behind the store's backends (daemon/store/db-backend.h); tests may
# talk to a database themselves
if grep -nE '^#include <(sqlite3|libpq-fe)\.h>' "${files[@]}" |
        grep -vE '^(daemon/store/db-(sqlite|pg|wal)\.c|tests/)[^:]*:'; then
        echo "style: sqlite3.h or libpq-fe.h outside daemon/store/db-{sqlite,pg,wal}.c"
        rc=1
fi
# The repository stands alone: no user has the design file it grew from or the project's issue
# tracker, so a doc or comment cites docs/architecture.md (its numbered sections), another file in
# the tree, or states its reason inline. Every tracked or new text file is looked at, this one
# aside.
refs='shared/DESIGN|shared/STYLE|DESIGN(\.md)? ?§|\bDESIGN\b|STYLE\.md|[Ii]ssues? [0-9]'
refs+='|/work/shared|\.\./shared'
mapfile -t all < <(git ls-files -co --exclude-standard |
        grep -vxE 'tests/check-style\.sh' |
        while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
if printf '%s\0' "${all[@]}" | xargs -0 grep -nIE -- "$refs"; then
        echo "style: a reference outside the repository (DESIGN §N, an issue number, ../shared):" \
                "cite docs/architecture.md §N or another file in the tree, or say why inline"
        rc=1
fi
# ... and a citation "architecture.md §N" or "§N.M" names a section docs/architecture.md has
mapfile -t sections < <(sed -nE 's/^#{2,3} ([0-9]+(\.[0-9]+)?)\.? .*/\1/p' docs/architecture.md)
while IFS= read -r hit; do
        sec=${hit##*§}
        if ! printf '%s\n' "${sections[@]}" | grep -qxF -- "$sec"; then
                echo "style: ${hit%%:*}: cites docs/architecture.md §$sec, which has no such section"
                rc=1
        fi
done < <(printf '%s\0' "${all[@]}" | xargs -0 grep -HoIE -- 'architecture(\.md)? §[0-9]+(\.[0-9]+)?')
[ $rc -eq 0 ] && echo "style: ${#files[@]} files formatted, no banned functions, ${#all[@]} files" \
        "without references outside the repository"
exit $rc
