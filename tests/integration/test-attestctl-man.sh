#!/usr/bin/env bash
# Every flag, command and sub-command that attestctl's --help texts offer is in attestctl(1): the
# usage of attestctl and of each command against the rendered man page (man -l, one line per
# paragraph so nothing is hyphenated).
# Usage: test-attestctl-man.sh ATTESTCTL MANPAGE
set -euo pipefail
[ $# = 2 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ctl=$1 man=$2
fail() { echo "not ok: $*" >&2; exit 1; }
command -v man >/dev/null || fail "man is not installed"
page=$(MANWIDTH=2000 man -l "$man" 2>/dev/null | col -b)
[ "$(wc -l <<<"$page")" -gt 100 ] || fail "man -l $man rendered $(wc -l <<<"$page") lines"
cmds=$("$ctl" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ "$(wc -w <<<"$cmds")" -ge 7 ] || fail "commands in attestctl --help: $cmds"
nf=0 ns=0
for c in "" $cmds; do
        # shellcheck disable=SC2086 # no command: attestctl --help itself
        help=$("$ctl" $c --help) || fail "attestctl $c --help exited $?"
        for f in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
                grep -qE -- "(^|[^a-z-])$f([^a-z0-9-]|$)" <<<"$page" ||
                        fail "attestctl ${c:+$c }--help offers $f; attestctl(1) does not document it"
                nf=$((nf + 1))
        done
        [ -n "$c" ] || continue
        # the synopsis names each sub-command of the usage: "attestctl C S" or "attestctl C A|S|B"
        for s in $(grep -oE "attestctl $c [a-z-]+" <<<"$help" | awk '{print $3}' | sort -u); do
                grep -qE "^ *attestctl $c ([a-z-]+\|)*$s(\||\b)" <<<"$page" ||
                        fail "attestctl $c $s is not in the man page's synopsis"
                ns=$((ns + 1))
        done
done
echo "ok: $nf flags and $ns sub-commands of the --help texts of attestctl and its $(wc -w <<<"$cmds") commands are in attestctl(1)"
