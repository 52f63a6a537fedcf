#!/usr/bin/env bash
# attestctl against a hostile attestd (hostile round three, items 3 and 4): the real attestctl
# over real TLS on loopback to tests/lib/hostile-attestd.py.
#  1. terminal escapes: every string the server sends (ids, host names, states, policies,
#     labels, claim names and values, reasons, times, error codes and details, jansson's error
#     text about a body that is not JSON, the health answer) holds OSC titles, clear-screen, CR,
#     LF, TAB, BEL, OSC 8 links, C1 CSI (U+009B) and bidi overrides. agents show / results /
#     list, policies list, status and the error paths print only printable ASCII and newlines,
#     with the escaped forms (docs/attestctl.1, TERMINAL SAFETY) where the bytes were; table
#     columns stay aligned; on a terminal the only escape sequences are attestctl's own colours;
#     --json still carries the exact values.
#  2. agents list --all against a server whose cursors go c1, c2, c3, c1 (a cursor seen before,
#     not the one just followed), with pages of about 8 MiB: exit 6 naming the repeated cursor
#     after 4 pages, peak RSS under the ceiling below (table and --json).
#  3. --all --json over 6 fresh 8 MiB pages: every agent printed, valid JSON, and the pages are
#     streamed (peak RSS under the ceiling; holding all six took far more).
#  4. --all (table) against endless fresh 8 MiB pages: exit 2 at the table's cap, RSS bounded.
# Memory ceiling (peak VmHWM, tests/lib/rss-cap.py, which kills attestctl above it): 100 MiB for
# a release build, 200 MiB under AddressSanitizer (redzones, shadow; quarantine cut to 4 MiB).
# attestctl before the fix (dd940f4) grew without bound in 2 (killed at the ceiling) and 4.
# Usage: test-attestctl-hostile.sh ATTESTCTL TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
if [ $# -ne 2 ]; then
        grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2
        exit 2
fi
ATTESTCTL=$(realpath "$1") TOP=$(realpath "$2")
export TOP
need python3 script
test_begin attestctl-hostile
cd "$work"
token READER reader
(umask 077 && printf '%s' "$READER" >reader.token)
export ATTESTD_CA=$CA ATTESTD_TOKEN_FILE=$work/reader.token NO_COLOR=
srv_pid=""
kill_at_exit srv_pid

asan=0
case "$(ldd "$ATTESTCTL" 2>/dev/null || true)" in *libasan*) asan=1 ;; esac
ceiling=$((100 * 1024))
[ $asan = 0 ] || ceiling=$((200 * 1024))
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=4" MALLOC_PERTURB_=0

# serve MODE [ARGS...]: the hostile server (a new one) in MODE; ATTESTD_URL names it
serve() {
        if [ -n "$srv_pid" ]; then
                kill "$srv_pid" 2>/dev/null || true
                wait "$srv_pid" 2>/dev/null || true
        fi
        rm -rf srv && mkdir srv
        python3 "$TOP/tests/lib/hostile-attestd.py" --cert certs/server.pem \
                --key certs/server.key --dir srv --mode "$@" 2>srv.log &
        srv_pid=$!
        for _ in $(seq 400); do [ -f srv/port ] && break; nap 0.05; done
        [ -f srv/port ] || fail "the hostile server did not start: $(cat srv.log)"
        touch srv/requests
        export ATTESTD_URL=https://127.0.0.1:$(cat srv/port)
}

# ctl ARGS...: attestctl; stdout in out.txt, stderr in err.txt, status in rc
ctl() {
        rc=0
        "$ATTESTCTL" "$@" >out.txt 2>err.txt || rc=$?
}
want_rc() { # N WHAT
        [ "$rc" = "$1" ] || fail "$2: exit $rc, want $1; stdout: $(head -5 out.txt | cat -v); stderr: $(cat -v err.txt)"
}

# printable FILE WHAT: FILE holds printable ASCII and newlines only (no ESC, BEL, CR, TAB, no
# C1 as a raw byte or as UTF-8, no bidi override: nothing else at all, since the server's only
# non-ASCII text is what must be escaped)
printable() {
        local bad
        bad=$(LC_ALL=C grep -nP '[^\x20-\x7e]' "$1" | head -3 | cat -v) || true
        [ -z "$bad" ] || fail "$2: raw bytes reached the terminal: $bad"
}
# has FILE WHAT STRING: FILE holds STRING (fixed)
has() {
        grep -qF -- "$3" "$1" || fail "$2: no '$3' in: $(head -c 3000 "$1")"
}
# col FILE LINE_PATTERN STRING: the byte column where STRING starts on the first line matching
col() {
        local line
        line=$(grep -m1 -F -- "$2" "$1") || { echo -1; return; }
        line=${line%%"$3"*}
        echo ${#line}
}

# the escaped form of hostile() in hostile-attestd.py
E='\x1b]0;pwned-title\x07\x1b[2J\x1b[H\x0dover\x0aline\x09TAB\x1b]8;;https://evil.example/\x1b\click-me\x1b]8;;\x1b\\xc2\x9b31m\xe2\x80\xaegpj.exe\xe2\x81\xa6\xe2\x80\x8f\xd8\x9c\xe2\x81\xa9'

# ---- 1. terminal escapes ---------------------------------------------------------------------
echo "# 1. terminal escapes in every string the server sends"
serve inject

ctl agents show host1
want_rc 1 "agents show (a failing agent)"
printable out.txt "agents show"
printable err.txt "agents show (stderr)"
has out.txt "show: id" 'agent:      host1\x1b[31m'
has out.txt "show: host" "host:       hn$E (machine id mid$E)"
has out.txt "show: labels" "labels:     role\\xe2\\x80\\xae=lv$E"
has out.txt "show: state" 'state:      active\x0d\x1b[2J\x1b[H'
has out.txt "show: verdict" "verdict:    fail\\xc2\\x9b31m by policy lp$E"
has out.txt "show: policy" "policy:     pol$E"
has out.txt "show: last seen" "last seen:  seen$E"
has out.txt "show: next due" 'next due:   soon\x1b]8;;https://evil.example/\x1b\click-me'
has out.txt "show: reason" "reason:     rc$E: rd$E"
has out.txt "show: unchecked" 'unchecked:  ["su\u001B]0;pwned-title\u0007\u001B[2J\u001B[H\rover\nline'
has out.txt "show: claim reason" 'file /tmp/\x1b]0;pwned-title\x07\x1b[2J\x1b[H is not in the policy'
# an LF inside a field starts no line of its own; a cut cell ends in "..."
grep -q '^line' out.txt && fail "show: a newline of the server's text reached the output"
has out.txt "show: cut cell" '...'
# the claims table: every row's REASON column where the header's is
h=$(col out.txt "RESULT" "REASON")
r1=$(col out.txt 'file /tmp/' 'file /tmp/')
r2=$(col out.txt 'okr\x1b]0' 'okr\x1b]0')
[ "$h" -gt 0 ] && [ "$h" = "$r1" ] && [ "$h" = "$r2" ] ||
        fail "show: claims table misaligned (REASON at $h, rows at $r1 and $r2): $(sed -n '/^RESULT/,$p' out.txt)"
ok "agents show: every server string escaped (OSC, CSI, CR, LF, TAB, OSC 8, C1, bidi), claims table aligned"

ctl agents show host1 --json
want_rc 1 "agents show --json"
python3 -c 'import json,sys; e=json.load(open("srv/expected.json"))["agent"]; o=json.load(open("out.txt")); sys.exit(o != e)' ||
        fail "show --json: not the server's exact values: $(head -c 500 out.txt | cat -v)"
ok "agents show --json: the exact values, escapes and all"

ctl agents results host1
want_rc 0 "agents results"
printable out.txt "agents results"
has out.txt "results: time" 'time\x1b]0;pwned-title\x07'
has out.txt "results: status" 'fail\x0d'
has out.txt "results: failed claims" 'rc\x1b]0;pwned-title\x07'
h=$(col out.txt "RESULT" "STATUS")
r1=$(col out.txt 'time\x1b' 'fail\x0d')
[ "$h" -gt 0 ] && [ "$h" = "$r1" ] || fail "results: misaligned (STATUS at $h, row at $r1): $(cat out.txt)"
ctl agents results host1 --json
python3 -c 'import json,sys; e=json.load(open("srv/expected.json"))["results"]; o=json.load(open("out.txt")); sys.exit(o != e)' ||
        fail "results --json: not the server's exact values"
ok "agents results: escaped and aligned; --json exact"

ctl agents list
want_rc 0 "agents list"
printable out.txt "agents list"
has out.txt "list: id" 'host1\x1b[31m'
has out.txt "list: id 2" 'agent2\xe2\x80\xae\xc2\x9b'
has out.txt "list: host" 'hn\x1b]0;pwned-title\x07'
has out.txt "list: cursor" '(more: --cursor cur\x1b]0;pwned-title\x07, or --all)'
h=$(col out.txt "HOST" "STATE")
r1=$(col out.txt 'hn\x1b]0' 'active\x0d')
r2=$(col out.txt 'plain-host' 'active\x0d')
[ "$h" -gt 0 ] && [ "$h" = "$r1" ] && [ "$h" = "$r2" ] ||
        fail "list: misaligned (STATE at $h, rows at $r1 and $r2): $(cat out.txt)"
ctl agents list --json
python3 -c 'import json,sys; e=json.load(open("srv/expected.json"))["agents"]; o=json.load(open("out.txt")); sys.exit(o != e)' ||
        fail "list --json: not the server's exact values: $(head -c 500 out.txt | cat -v)"
ok "agents list: escaped and aligned; --json exact"

# on a terminal (script(1) gives one): colour on, and attestctl's own SGR sequences are then
# the only escape sequences
TERM=xterm script -qec "$ATTESTCTL agents show host1" /dev/null >tty.txt 2>&1 || true
has tty.txt "show on a terminal" "host:       hn$E"
sed -E 's/\x1b\[(0|1|31|32|33)m//g; s/\r$//' tty.txt >tty-stripped.txt
printable tty-stripped.txt "show on a terminal (beyond attestctl's colours)"
grep -q $'\033\\[31mfail' tty.txt || fail "no colour on a terminal: $(cat -v tty.txt | head -20)"
ok "on a terminal: colour, and no escape sequence but attestctl's own"

ctl agents show nosuch
want_rc 3 "an error answer (404)"
printable err.txt "the server's error"
has err.txt "error code and detail" "attestctl: GET /v1/agents/nosuch: 404 agent_not_found\\x1b[2J\\x1b[H: det$E"
ctl agents decommission host1
want_rc 3 "an error answer to a POST (404)"
printable err.txt "the server's error to a POST"
has err.txt "POST error" "404 agent_not_found\\x1b[2J\\x1b[H: det$E"
ctl agents show badjson
want_rc 6 "a body that is not JSON"
printable err.txt "jansson's error text"
has err.txt "not JSON" "GET /v1/agents/badjson: the answer is not a JSON object: "
ok "errors quoting the server (code, detail, jansson's text about a body with raw ESC and 0x9b): escaped"

ctl policies list
want_rc 0 "policies list"
printable out.txt "policies list"
has out.txt "policies list" "pn\\x1b]0;pwned-title\\x07"
ctl status
want_rc 0 "status"
printable out.txt "status"
has out.txt "status: store" "(schema 1, store store$E)"
ok "policies list and status: escaped"

# ---- 2. a cursor seen before ------------------------------------------------------------------
# mem LIMIT_NAME ARGS...: attestctl ARGS under rss-cap.py (ceiling, 120 s); rc, peak (kB)
mem() {
        python3 "$TOP/tests/lib/rss-cap.py" "$ceiling" 120 rss.txt -- \
                "$ATTESTCTL" "$@" >out.txt 2>err.txt
        read -r peak rc verdict <rss.txt
        [ "$verdict" = ok ] || fail "agents $*: killed ($verdict) at peak RSS $peak kB (ceiling $ceiling kB); $(tail -c 300 err.txt)"
}
echo "# 2. a server that repeats an earlier cursor, 8 MiB pages"
serve loop
k=$(cat srv/page-agents)
mem agents list --all
want_rc 6 "--all with a looping cursor"
has err.txt "looping cursor" "attestctl: GET /v1/agents: page 4: the server sent the cursor c1 again"
[ ! -s out.txt ] || fail "--all with a looping cursor printed a table: $(head -3 out.txt)"
n=$(grep -c '^GET /v1/agents' srv/requests)
[ "$n" = 4 ] || fail "--all with a looping cursor: $n pages fetched, want 4"
echo "# table: 4 pages of $k agents, exit 6, peak RSS $peak kB"
peak_table=$peak
: >srv/requests
mem agents list --all --json
want_rc 6 "--all --json with a looping cursor"
has err.txt "looping cursor (json)" "the server sent the cursor c1 again"
echo "# --json: exit 6, peak RSS $peak kB"
ok "a repeated cursor (c1 after c3) stops --all after 4 pages; peak RSS $peak_table / $peak kB (ceiling $ceiling kB)"

# ---- 3. --json streams the pages ---------------------------------------------------------------
echo "# 3. --all --json over 6 fresh 8 MiB pages"
serve fresh --pages 6
k=$(cat srv/page-agents)
mem agents list --all --json
want_rc 0 "--all --json over 6 pages"
[ "$(python3 -c 'import json; d=json.load(open("out.txt")); print(len(d["agents"]), d["next"])')" = "$((6 * k)) None" ] ||
        fail "--all --json: not the $((6 * k)) agents of 6 pages: $(tail -c 300 out.txt)"
ok "--all --json: $((6 * k)) agents from 6 pages of $(stat -c %s out.txt) bytes, peak RSS $peak kB (ceiling $ceiling kB)"

# ---- 4. the table's cap ------------------------------------------------------------------------
echo "# 4. --all (table) against endless fresh 8 MiB pages"
serve fresh
mem agents list --all
want_rc 2 "--all against endless pages"
has err.txt "table cap" "attestctl: agents list: over 100000 agents or 32 MiB in the table"
[ ! -s out.txt ] || fail "--all at the cap printed a partial table"
n=$(grep -c '^GET /v1/agents' srv/requests)
ok "--all (table) against endless pages: stopped at the table's cap after $n pages, peak RSS $peak kB (ceiling $ceiling kB)"

printable err.txt "stderr"
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' ./*.txt; then
        fail "sanitizer report: $(grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' ./*.txt)"
fi
ok "attestctl against a hostile attestd"
