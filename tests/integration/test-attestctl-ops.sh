#!/usr/bin/env bash
# attestctl and the admin API as an operator meets them (docs/attestctl.1, docs/api.md): a real
# attestd over HTTPS, a real attest-agent on swtpm making the verdicts, SQLite.
#  1. exit codes: 0, 1 (a pass no policy judged: EAR none, "not judged"), 2 usage and 400,
#     3 not found, 4 not authorised (401 and 403, the 403 naming the role), 5 conflict, 7 not
#     reached (connection refused, another CA)
#  2. ids by a unique prefix in every command that takes one; an ambiguous prefix lists the
#     candidates (exit 2), a short one is refused, an unknown one gets attestd's 404 (exit 3),
#     hostile ids never reach the server; ?prefix= bounded by the API
#  3. policy_in_use names the agents (8, and how many more); agents list --policy; options
#     before the command
#  4. the claims table fitted to $COLUMNS and to a terminal, digests shortened; --full whole
#  5. results --since: every result, oldest first, JSON lines, through pages of --limit (the
#     route's request count shows the pages); the API's page cap and its refusals
#  6. decommission + delete: agents refused lists the EK's agent, the agent's 403 names the id,
#     readmit (by prefix, from the refused EKs) says what it did, the agent enrols again
# Twin agents that share a prefix with the real one are rows written with sqlite3: ids are
# SHA-256 of the AK, and a shared 6-digit prefix takes ~2^24 enrolments.
# Usage: test-attestctl-ops.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread sqlite3 jq curl script
host_verifier
(umask 077 && printf '%s\n' "$ADMIN" >admin.token && printf '%s' "$READER" >reader.token)
export ATTESTD_URL=https://127.0.0.1:$port ATTESTD_CA=$CA
unset COLUMNS

# ctl ARGS...: attestctl with the admin token; stdout in out.txt, stderr in err.txt, status in rc
ctl() {
        rc=0
        ATTESTD_TOKEN_FILE=admin.token "$ATTESTCTL" "$@" >out.txt 2>err.txt || rc=$?
}
ctl_reader() {
        rc=0
        ATTESTD_TOKEN_FILE=reader.token "$ATTESTCTL" "$@" >out.txt 2>err.txt || rc=$?
}
want_rc() { # N what
        [ "$rc" = "$1" ] || fail "$2: exit $rc, want $1; stdout: $(head -5 out.txt); stderr: $(cat err.txt)"
}
round() { # [RC]: one agent round (enrols the first time), exiting RC (default 0; 1 a failed verdict)
        local r=0
        agent_cmd --once --state-dir st >>agent.log 2>&1 || r=$?
        [ $r = "${1:-0}" ] || fail "agent round exited $r: $(grep -v '^ ' agent.log | tail -5)"
}
# api TOKEN PATH: curl GET of attestd's API; the body in api.json, the status in $code
api() {
        code=$(curl -s -o api.json -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer $1" \
                "https://127.0.0.1:$port$2")
}
# route_count PATTERN METHOD: requests of that route so far (attestd's metrics)
route_count() {
        curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" |
                awk -v r="route=\"$1\",method=\"$2\"" 'index($0, "attestd_http_request_duration_seconds_count{" r "}") == 1 { print $2 }'
}

# ---- 1. exit codes ----------------------------------------------------------------------------
echo "# 1. exit codes"
round
id=$(cat st/agent-id)
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "agent id $id"
ctl_reader agents show "$id"
want_rc 1 "show of a pass that no policy judged"
grep -q '^verdict: *pass (not judged: no policy checked it)$' out.txt || fail "unjudged show: $(cat out.txt)"
grep -q '^ear: *none$' out.txt || fail "no EAR status: $(cat out.txt)"
grep -q '^note: *no policy bound and no policy named default' out.txt || fail "no note: $(cat out.txt)"
ctl_reader agents show "$id" --json
want_rc 1 "show --json of an unjudged pass"
[ "$(jq -r '.last_status, .ear_status' out.txt | paste -sd' ')" = "pass none" ] ||
        fail "show --json: $(head -c 400 out.txt)"
ok "a pass no policy judged: show says so (EAR none, the server's note) and exits 1"
printf '{"selinux":{"initialized":true}}\n' >default.json
ctl policies put default default.json
want_rc 0 "policies put default"
round
ctl_reader agents show "$id"
want_rc 0 "show of a judged pass"
grep -qE '^verdict: *pass by policy default@1$' out.txt || fail "judged show: $(cat out.txt)"
grep -qE '^ear: *(affirming|warning)$' out.txt || fail "judged EAR: $(cat out.txt)"
ok "a pass judged by the default policy: exit 0, EAR $(awk '/^ear:/ {print $2}' out.txt)"

ctl_reader agents show 0123456789abcdef0123456789abcdef
want_rc 3 "show of an unknown id"
grep -q '404 agent_not_found: no agent 0123456789abcdef0123456789abcdef' err.txt || fail "404: $(cat err.txt)"
ctl_reader policies get nosuch
want_rc 3 "policies get of an unknown policy"
rc=0
ATTESTD_TOKEN=not-a-token "$ATTESTCTL" agents list >out.txt 2>err.txt || rc=$?
want_rc 4 "an unknown token"
grep -q ': 401 unauthorized: unknown bearer token' err.txt || fail "401: $(cat err.txt)"
ctl_reader policies put default default.json
want_rc 4 "a reader token doing admin work"
grep -q "403 forbidden: PUT here needs a token of role admin; this token's role is reader" err.txt ||
        fail "403 without the role: $(cat err.txt)"
ctl_reader agents list --status bogus
want_rc 2 "a query attestd refuses (400)"
ctl_reader agents show
want_rc 2 "show without an id"
ctl_reader agents show "$id" --url https://127.0.0.1:1
want_rc 7 "connection refused"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other.key \
        -out other-ca.pem -subj /CN=other-ca -days 1 2>/dev/null
ctl_reader agents show "$id" --ca other-ca.pem
want_rc 7 "another CA"
[ -s out.txt ] && fail "stdout on a TLS error: $(cat out.txt)"
ok "exit codes: 3 not found (agent, policy), 4 (401; 403 naming the role), 2 (400, usage), 7 (refused, TLS)"

# ---- 2. ids by a unique prefix ----------------------------------------------------------------
echo "# 2. ids by a unique prefix"
p=${id:0:6}
d=$([ "${id:6:1}" = 0 ] && echo 1 || echo 0)
twins=()
sql="BEGIN;"
for i in $(seq 10 20); do
        t=$p$d$(printf '%025d' "$i")
        twins+=("$t")
        sql+="INSERT INTO agents (id, ak_public, ak_name, state, created) VALUES ('$t', X'00', X'$(printf '%04x' "$i")', 'pending', 1);"
done
sqlite3 -cmd '.timeout 10000' attestd.db "${sql}COMMIT;"
ctl_reader agents show "${id:0:7}"
want_rc 0 "show by a unique prefix"
grep -q "^agent: *$id\$" out.txt || fail "prefix show: $(cat out.txt)"
ctl_reader agents results "${id:0:8}" --json
want_rc 0 "results by a prefix"
[ "$(jq -r .id out.txt)" = "$id" ] || fail "results by prefix: $(head -c 300 out.txt)"
ok "agents show / results ${id:0:7}: the one agent the prefix starts"
ctl_reader agents show "$p"
want_rc 2 "an ambiguous prefix"
grep -q "the id prefix '$p' is ambiguous" err.txt || fail "ambiguous: $(cat err.txt)"
# the first 10 in id order of the 12 the prefix starts
for t in $(printf '%s\n' "$id" "${twins[@]}" | sort | head -10); do
        grep -q "^  $t " err.txt || fail "candidate $t not listed: $(cat err.txt)"
done
grep -q '^  \.\.\. and more$' err.txt || fail "no 'and more': $(cat err.txt)"
[ "$(grep -c '^  [0-9a-f]\{32\} ' err.txt)" = 10 ] || fail "not 10 candidates: $(cat err.txt)"
[ -s out.txt ] && fail "stdout on an ambiguous prefix: $(cat out.txt)"
ctl agents delete "$p"
want_rc 2 "delete by an ambiguous prefix"
[ "$(sqlite3 attestd.db "SELECT count(*) FROM agents WHERE id LIKE '$p%'")" = 12 ] ||
        fail "an ambiguous delete deleted"
ok "an ambiguous prefix: 10 candidates and '... and more', exit 2, nothing changed"
ctl_reader agents show "${id:0:3}"
want_rc 2 "a prefix of 3"
grep -q "'${id:0:3}' is too short for an id prefix: give at least 4 characters" err.txt ||
        fail "short prefix: $(cat err.txt)"
u=$([ "${id:0:1}" = f ] && echo eeee || echo ffff)
ctl_reader agents show "$u"
want_rc 3 "an unknown prefix"
grep -q "404 agent_not_found: no agent $u" err.txt || fail "unknown prefix: $(cat err.txt)"
for bad in ../healthz 'a b' "$(printf 'ab\033[2Jcd')" .hidden -rf%2e "$(printf 'x%.0s' {1..65})"; do
        ctl_reader agents show -- "$bad"
        want_rc 2 "hostile id '$bad'"
        LC_ALL=C grep -qP '[^\x20-\x7e\n]' err.txt && fail "raw bytes of '$bad' on stderr: $(cat -v err.txt)"
done
ok "ids checked before anything is sent (path, space, escape, leading dot/dash, 65 chars): exit 2"
for q in "prefix=abc" "prefix=..%2fx" "prefix=$p&prefix=$p" "prefix=$(printf 'a%.0s' {1..65})"; do
        api "$READER" "/v1/agents?$q"
        [ "$code" = 400 ] && [ "$(jq -r .error api.json)" = bad_query ] || fail "?$q: $code $(cat api.json)"
done
api "$READER" "/v1/agents?prefix=$p&limit=2"
[ "$code" = 200 ] && [ "$(jq '.agents | length' api.json)" = 2 ] && [ "$(jq -r '.next | type' api.json)" = string ] ||
        fail "prefix page: $code $(cat api.json)"
ok "?prefix= refused under 4 characters, not an id or twice (400); paged like the list"

# ---- 3. policies in use, --policy, options first ---------------------------------------------
echo "# 3. policy_in_use, agents list --policy, options before the command"
z=0000000000000000000000000000000000000000000000000000000000000000
printf '{"selinux":{"initialized":true},"kernel":{"versions":["5.*"]},"tpm":{"pcrs":{"sha256":{"0":"%s"}}}}\n' "$z" >strict.json
ctl policies put strict strict.json
want_rc 0 "policies put strict"
ctl agents bind-policy "${id:0:9}" strict
want_rc 0 "bind-policy by a prefix"
grep -qx "agent $id: policy strict" out.txt || fail "bind: $(cat out.txt)"
ctl policies delete strict
want_rc 5 "delete of a policy in use"
grep -q "409 policy_in_use: policy strict is bound to 1 agent: $id; bind it to another policy first" err.txt ||
        fail "in use (one): $(cat err.txt)"
sqlite3 -cmd '.timeout 10000' attestd.db "UPDATE agents SET policy = 'strict' WHERE id LIKE '$p$d%'"
ctl policies delete strict
want_rc 5 "delete of a policy in use by 12"
grep -qE "policy strict is bound to 12 agents: ([0-9a-f]{32}, ){7}[0-9a-f]{32} and 4 more" err.txt ||
        fail "in use (12): $(cat err.txt)"
ok "409 policy_in_use names the agents (1; 8 of 12 and '4 more'), exit 5"
ctl_reader agents list --policy strict --json
want_rc 0 "list --policy"
[ "$(jq '.agents | length' out.txt)" = 12 ] && [ "$(jq '[.agents[] | select(.policy != "strict")] | length' out.txt)" = 0 ] ||
        fail "--policy strict: $(jq -c '[.agents[] | [.id, .policy]]' out.txt)"
ctl_reader agents list --policy default --json
[ "$(jq '.agents | length' out.txt)" = 0 ] || fail "--policy default: $(cat out.txt)"
ctl_reader agents list --policy 'a b'
want_rc 2 "--policy with a bad name"
ok "agents list --policy: the 12 bound to strict, none bound to default by name"
sqlite3 -cmd '.timeout 10000' attestd.db "UPDATE agents SET policy = NULL WHERE id LIKE '$p$d%'"
rc=0
"$ATTESTCTL" --token-file reader.token --json agents list --policy strict >out.txt 2>err.txt || rc=$?
want_rc 0 "options before the command"
[ "$(jq -r '.agents[].id' out.txt)" = "$id" ] || fail "options first: $(cat out.txt)"
rc=0
"$ATTESTCTL" --url="$ATTESTD_URL" --token-file reader.token status >out.txt 2>err.txt || rc=$?
want_rc 0 "--url= before status"
rc=0
"$ATTESTCTL" --bogus agents list >out.txt 2>err.txt || rc=$?
want_rc 2 "an unknown option before the command"
rc=0
"$ATTESTCTL" --json ima >out.txt 2>err.txt || rc=$?
want_rc 2 "a connection option before an offline command"
ok "options before the command (--token-file X --json agents list; --url=U status); unknown ones refused"

# ---- 4. the claims table fits the terminal ----------------------------------------------------
echo "# 4. the claims table"
round 1
COLUMNS=80 ctl_reader agents show "$id"
want_rc 1 "show of a failing agent"
awk 'length($0) > 80 { bad = 1; print NR ": " length($0) ": " $0 } END { exit bad }' out.txt >wide.txt ||
        fail "lines over 80 columns: $(cat wide.txt)"
grep -q "$z" out.txt && fail "a whole digest in the fitted table: $(cat out.txt)"
grep -qE '^fail +tpm\.pcrs.* 0{7,12}\.\.\. ' out.txt || fail "tpm claim: $(cat out.txt)"
grep -qE '^pass +selinux\.in' out.txt || fail "no passing claim: $(cat out.txt)"
ok "COLUMNS=80: every line fits, the digest shortened"
ctl_reader agents show "$id"
want_rc 1 "show of a failing agent, no width"
grep -qE "^fail +tpm\.pcrs\.sha256\.0 +0{12}\.\.\. +[0-9a-f]{12}\.\.\. " out.txt ||
        fail "tpm claim without a width: $(cat out.txt)"
ok "off a terminal: columns whole up to 72, digests shortened to 12 digits"
ctl_reader agents show "$id" --full
grep -q "$z" out.txt || fail "--full: no whole digest: $(cat out.txt)"
grep -q '\.\.\.' out.txt && fail "--full: a cut cell: $(cat out.txt)"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' out.txt)
[ "$w" -gt 100 ] || fail "--full: widest line $w columns"
ctl_reader agents show "$id" --json
[ "$(jq -r '.last_verdict.claims[] | select(.name == "tpm.pcrs.sha256.0") | .expected' out.txt)" = "$z" ] ||
        fail "--json: $(head -c 500 out.txt)"
ok "--full: whole digests, no cut cells ($w columns); --json unchanged"
TERM=xterm ATTESTD_TOKEN_FILE=reader.token script -qec "stty cols 70 rows 50; $ATTESTCTL agents show $id" /dev/null >tty.txt || true
sed -E 's/\x1b\[[0-9;]*m//g; s/\r$//' tty.txt >tty-plain.txt
grep -q '^RESULT' tty-plain.txt || fail "terminal: no claims table: $(cat -v tty.txt)"
awk 'length($0) > 70 { bad = 1; print NR ": " length($0) ": " $0 } END { exit bad }' tty-plain.txt >wide.txt ||
        fail "terminal of 70 columns: $(cat wide.txt)"
ok "on a terminal of 70 columns: every line fits"

# ---- 5. results --since ------------------------------------------------------------------------
echo "# 5. results --since: the export"
round 1
round 1
ATTESTD_TOKEN_FILE=reader.token "$ATTESTCTL" agents results "$id" --limit 1000 --json >all.json
n=$(jq '.results | length' all.json)
[ "$n" -ge 5 ] || fail "only $n results"
before=$(route_count '/v1/agents/*/results' GET)
ctl_reader agents results "${id:0:10}" --since 2000-01-01 --limit 2 --json
want_rc 0 "results --since --json"
after=$(route_count '/v1/agents/*/results' GET)
[ "$(wc -l <out.txt)" = "$n" ] || fail "--since: $(wc -l <out.txt) lines, want $n"
jq -e --arg id "$id" 'select(.agent != $id or (.verdict | type) != "object")' out.txt >/dev/null &&
        fail "a line without the agent or its verdict: $(head -2 out.txt)"
[ "$(jq -r .id out.txt | paste -sd' ')" = "$(jq -r '.results[].id' all.json | sort -n | paste -sd' ')" ] ||
        fail "not every result oldest first: $(jq -r .id out.txt | paste -sd' ')"
[ "$((after - before))" = "$((n / 2 + 1))" ] ||
        fail "$((after - before)) requests for $n results in pages of 2, want $((n / 2 + 1))"
ok "results --since --limit 2 --json: all $n results as JSON lines, oldest first, in $((after - before)) pages"
t3=$(jq -r '.results | sort_by(.id) | .[2].time' all.json)
want=$(jq --arg t "$t3" '[.results[] | select(.time >= $t)] | length' all.json)
ctl_reader agents results "$id" --since "$t3" --json
[ "$(wc -l <out.txt)" = "$want" ] || fail "--since $t3: $(wc -l <out.txt) lines, want $want"
ctl_reader agents results "$id" --since 2999-01-01 --json
want_rc 0 "--since in the future"
[ ! -s out.txt ] || fail "--since 2999: $(cat out.txt)"
ctl_reader agents results "$id" --since 2000-01-01
want_rc 0 "results --since (table)"
[ "$(grep -cE '^[0-9]+ +[0-9T:-]+Z +(pass|fail) ' out.txt)" = "$n" ] || fail "--since table: $(cat out.txt)"
ok "--since TIME: the results from TIME ($want), none from 2999, a table without --json"
for q in "limit=1001" "since=2026-02-30T00:00:00Z" "since=2026-01-01" "since=x" "after=0" \
        "before=5&since=2000-01-01T00:00:00Z" "since=2000-01-01T00:00:00Z&since=2000-01-01T00:00:00Z"; do
        api "$READER" "/v1/agents/$id/results?$q"
        [ "$code" = 400 ] && [ "$(jq -r .error api.json)" = bad_query ] || fail "results?$q: $code $(cat api.json)"
done
api "$READER" "/v1/agents/$id/results?since=2000-01-01T00:00:00Z&limit=1000"
[ "$code" = 200 ] && [ "$(jq '.results | length' api.json)" = "$n" ] && [ "$(jq .next_after api.json)" = null ] ||
        fail "export page: $code $(head -c 300 api.json)"
ctl_reader agents results "$id" --since 2000-01-01 --limit 1001
want_rc 2 "--limit over the cap"
ctl_reader agents results "$id" --since yesterday
want_rc 2 "--since of another form"
ctl_reader agents results "$id" --since 2000-01-01 --before 3
want_rc 2 "--since with --before"
ok "the page cap (limit 1001), bad times (Feb 30, no time, words), after=0, before with since: 400"

# ---- 6. decommission, delete, refused EKs, readmit ----------------------------------------------
echo "# 6. a refused EK after delete"
ctl agents bind-policy "$id" --default
ctl agents decommission "${id:0:11}"
want_rc 0 "decommission by a prefix"
ctl agents delete "$id"
want_rc 0 "delete"
ctl_reader agents list --json
jq -e --arg id "$id" '.agents[] | select(.id == $id)' out.txt >/dev/null && fail "deleted agent listed"
ctl_reader agents refused
want_rc 0 "agents refused"
grep -qE "^$id +[0-9a-f]{12}\.\.\. +[0-9T:-]+Z +deleted\$" out.txt || fail "refused: $(cat out.txt)"
ctl_reader agents refused --json
[ "$(jq -r '.refused_eks[] | [.agent, (.ek_id | length), .agent_deleted] | join(" ")' out.txt)" = "$id 64 true" ] ||
        fail "refused --json: $(cat out.txt)"
ok "agents refused: the deleted agent's EK, its id to readmit"
r=0
agent_cmd --once --state-dir st >agent-refused.log 2>&1 || r=$?
[ $r != 0 ] || fail "the refused agent's round exited 0"
grep -q "ek_decommissioned.*agent $id: an admin readmits it (attestctl agents readmit $id)" agent-refused.log ||
        fail "the agent's error does not name the id: $(tail -5 agent-refused.log)"
ok "the refused agent is told the id to readmit (exit $r)"
api "$READER" "/v1/refused-eks?limit=1001"
[ "$code" = 400 ] || fail "refused-eks?limit=1001: $code"
api "$READER" "/v1/refused-eks?cursor=zz"
[ "$code" = 400 ] || fail "refused-eks?cursor=zz: $code"
api "$READER" "/v1/refused-eks?prefix=${id:0:4}"
[ "$code" = 200 ] && [ "$(jq -r '.refused_eks[0].agent' api.json)" = "$id" ] || fail "refused-eks?prefix: $code $(cat api.json)"
ctl agents readmit "${id:0:12}"
want_rc 0 "readmit by a prefix of a refused EK's agent"
grep -qx "agent $id readmitted: its EK may enrol again (the agent was deleted: it enrols anew)" out.txt ||
        fail "readmit: $(cat out.txt)"
ctl_reader agents refused --json
[ "$(jq '.refused_eks | length' out.txt)" = 0 ] || fail "after readmit: $(cat out.txt)"
round
[ "$(cat st/agent-id)" = "$id" ] || fail "enrolled again as $(cat st/agent-id)"
ctl_reader agents show "$id" --json
[ "$(jq -r .state out.txt)" = active ] || fail "after readmit: $(head -c 300 out.txt)"
ok "readmit by prefix: 'readmitted: its EK may enrol again', the list empty, the agent enrols again"
stop_daemon
[ $fails = 0 ]
