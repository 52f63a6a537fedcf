#!/usr/bin/env bash
# Fails when a C file is not clang-formatted or uses a banned function (STYLE.md "Untrusted bytes").
# Run by `meson test` (suite style) and by tests/run-all.sh --quick. Exits 77 (meson: skipped, never
# a pass) where it cannot look: no clang-format, or not a git checkout (a release tarball).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "style: clang-format not installed" >&2; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "style: not a git checkout" >&2; exit 77; }
rc=0
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^kernel/')
for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        if ! clang-format --dry-run --Werror "$f" 2>/dev/null; then
                echo "style: $f is not clang-formatted (clang-format -i $f)"
                rc=1
        fi
done
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|strtok)\s*\(' "${files[@]}" |
        grep -v 'banned:'; then
        echo "style: banned function used (see STYLE.md)"
        rc=1
fi
[ $rc -eq 0 ] && echo "style: ${#files[@]} files formatted, no banned functions"
exit $rc
