#!/usr/bin/env bash
# Fails when a C file is not clang-formatted or uses a banned function (STYLE.md "Untrusted bytes").
set -euo pipefail
cd "$(dirname "$0")/.."
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
