#!/usr/bin/env bash
# Every flag, command and sub-command that attestctl's --help texts offer is in attestctl(1): the
# usage of attestctl and of each command against the man page's text (its roff source with the
# font macros and escapes taken out by a few lines of python3, so no man/groff is needed).
# Usage: test-attestctl-man.sh ATTESTCTL MANPAGE
set -euo pipefail
[ $# = 2 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ctl=$1 man=$2
fail() { echo "not ok: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 is not installed"
# .B/.I words as they are; .BR/.RB/.BI/.IB/.IR/.RI arguments joined without blanks (as roff sets
# them); \- \(aq \(dq \fB... escapes as the characters; other requests dropped
page=$(python3 - "$man" <<'PY'
import re, shlex, sys
esc = [(r"\-", "-"), (r"\(aq", "'"), (r"\(dq", '"'), (r"\(lq", '"'), (r"\(rq", '"'),
       (r"\(em", "-"), (r"\(->", "->"), (r"\e", "\\"), (r"\&", "")]
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    for a, b in esc:
        line = line.replace(a, b)
    line = re.sub(r"\\f[BIRP]", "", line)
    m = re.match(r"^\.(B|I|BR|RB|BI|IB|IR|RI|SS|SH|TP|PP|RS|RE|nf|fi|br|TH)\b ?(.*)$", line)
    if m:
        try:
            args = shlex.split(m.group(2), posix=True)
        except ValueError:
            args = m.group(2).split()
        line = " ".join(args) if m.group(1) in ("B", "I", "SS", "SH") else "".join(args)
    elif line.startswith("."):
        continue
    print(line)
PY
)
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
