#!/usr/bin/env bash
# attestctl against a real attestd over HTTPS (real certificates, tokens, SQLite) with a real
# attest-agent on swtpm making the verdicts: every remote command, human and --json forms, exit
# codes, the list filters (applied by attestctl while attestd does not know them) and paging.
#  1. an enrolled, passing agent: agents list / show / results, status
#  2. policies put / list / get, agents bind-policy to a failing policy: show exits 1, failing
#     claims first; results shows the failed claim; list --status failing
#  3. policies delete refused while bound (the server's error, exit 5), bind-policy --default
#  4. decommission / readmit / delete
# Usage: test-attestctl-api.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread
host_verifier
(umask 077 && printf '%s\n' "$ADMIN" >admin.token && printf '%s' "$READER" >reader.token)
export ATTESTD_URL=https://127.0.0.1:$port ATTESTD_CA=$CA

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

# ---- 1. a passing agent ----------------------------------------------------------------------
echo "# 1. list, show, results, status of a passing agent"
round
id=$(cat st/agent-id)
ctl_reader agents list
want_rc 0 "agents list"
head -1 out.txt | grep -qE '^HOST +ID +STATE +VERDICT +POLICY +LAST SEEN$' || fail "list header: $(head -1 out.txt)"
grep -qE "^[^ ]+ +$id +active +pass " out.txt || fail "list row: $(cat out.txt)"
grep -q $'\033' out.txt && fail "colour written to a file"
ok "agents list: aligned table with the agent (active, pass), no colour off a terminal"
# on a terminal (script(1) gives it one): colour, unless NO_COLOR is set
tty_list() { TERM=xterm ATTESTD_TOKEN_FILE=reader.token script -qec "$ATTESTCTL agents list" /dev/null; }
tty_list | grep -q $'\033\\[32mpass\033\\[0m' || fail "no green pass on a terminal: $(tty_list | cat -v)"
NO_COLOR=1 tty_list | grep -q $'\033' && fail "colour with NO_COLOR set: $(NO_COLOR=1 tty_list | cat -v)"
ok "colour on a terminal (pass in green), none with NO_COLOR"
ctl_reader agents list --json
want_rc 0 "agents list --json"
[ "$(jq -r '.agents[0].id, .agents[0].last_status' out.txt | paste -sd' ')" = "$id pass" ] ||
        fail "list --json: $(cat out.txt)"
ok "agents list --json: the server's agent objects"
# no policy judged it (none bound, none named default): a pass in name only, EAR none, exit 1
ctl_reader agents show "$id"
want_rc 1 "agents show (passing, no policy)"
grep -q "^verdict: *pass (not judged: no policy checked it)" out.txt || fail "show: $(cat out.txt)"
ok "agents show of an agent no policy judged: exit 1"
ctl_reader agents show "$id" --json
want_rc 1 "agents show --json"
[ "$(jq -r .last_verdict.status out.txt)" = pass ] || fail "show --json: $(head -c 300 out.txt)"
ctl_reader agents results "$id"
want_rc 0 "agents results"
[ "$(grep -cE '^[0-9]+ +[0-9T:-]+Z +pass ' out.txt)" = 1 ] || fail "results: $(cat out.txt)"
ok "agents results: one passing result"
ctl status
want_rc 0 "status"
grep -qE "^attestd: +https://127.0.0.1:$port +ready \(schema [0-9]+, store writable\)" out.txt ||
        fail "status: $(cat out.txt)"
grep -qE '^agents: +1 active, 0 failing' out.txt || fail "status agents: $(cat out.txt)"
grep -qE '^verdicts: +1 pass, 0 fail' out.txt || fail "status verdicts: $(cat out.txt)"
ctl status --json
[ "$(jq -r '[.ready, .health.status, .metrics.agents.active, .metrics.attestations.pass] | join(" ")' out.txt)" = "true ok 1 1" ] ||
        fail "status --json: $(cat out.txt)"
ok "status: ready, 1 active agent, 1 pass (human and --json)"

# ---- 2. a failing policy ---------------------------------------------------------------------
echo "# 2. policies put/list/get, bind-policy, a failing verdict"
# passes selinux.initialized on this boot, fails kernel.version (6.1 is not 5.*)
printf '{"selinux":{"initialized":true},"kernel":{"versions":["5.*"]}}\n' >strict.json
ctl policies put strict strict.json
want_rc 0 "policies put"
grep -qx "policy strict version 1 stored" out.txt || fail "put: $(cat out.txt)"
ctl policies put strict strict.json --json
[ "$(jq -r .version out.txt)" = 2 ] || fail "put --json: $(cat out.txt)"
ctl_reader policies list
want_rc 0 "policies list"
grep -qE '^strict +2 +[0-9T:-]+Z$' out.txt || fail "policies list: $(cat out.txt)"
ctl_reader policies get strict
[ "$(jq -r '.kernel.versions[0]' out.txt)" = "5.*" ] || fail "policies get: $(cat out.txt)"
ctl_reader policies get strict --version 1 --json
[ "$(jq -r '.version, .name' out.txt | paste -sd' ')" = "1 strict" ] || fail "get --version: $(cat out.txt)"
ok "policies put (twice: versions 1, 2), list, get, get --version 1 --json"
printf '{"kernel":{"versions":"5.*"}}' >bad.json
ctl policies put bad bad.json
want_rc 2 "policies put of an invalid policy"
grep -q 'PUT /v1/policies/bad: 400 policy_[a-z_]*: .*\$\.kernel\.versions' err.txt ||
        fail "invalid policy: $(cat err.txt)"
ok "an invalid policy: the server's error with the JSON path, exit 2"
ctl agents bind-policy "$id" strict
want_rc 0 "bind-policy"
grep -qx "agent $id: policy strict" out.txt || fail "bind: $(cat out.txt)"
round 1
ctl_reader agents show "$id"
want_rc 1 "agents show (failing)"
grep -q "^verdict: *fail by policy strict@2" out.txt || fail "show failing: $(cat out.txt)"
# the claims table: the failing claim first although the verdict lists selinux first
claims=$(sed -n '/^RESULT/,$p' out.txt)
[ "$(sed -n 2p <<<"$claims" | awk '{print $1, $2}')" = "fail kernel.version" ] ||
        fail "failing claim not first: $claims"
grep -qE '^pass +selinux.initialized' <<<"$claims" || fail "no passing claim: $claims"
[ "$(jq -r '.last_verdict.claims[0].name' <(ATTESTD_TOKEN_FILE=reader.token "$ATTESTCTL" agents show "$id" --json || true))" = selinux.initialized ] ||
        fail "the server's order changed: the failing-first check proves nothing"
ok "agents show of a failing agent: exit 1 (also with --json), failing claim first"
ctl_reader agents results "$id"
grep -qE '^[0-9]+ +[0-9T:-]+Z +fail +strict@2 +kernel.version$' out.txt || fail "results: $(cat out.txt)"
ctl_reader agents results "$id" --limit 1
[ "$(grep -c 'Z ' out.txt)" = 1 ] && grep -q '^(older: --before [0-9]*)$' out.txt ||
        fail "results --limit 1: $(cat out.txt)"
ok "agents results: the failed claim named; --limit 1 pages"
ctl_reader agents list --status failing
grep -qE " $id +active +fail " out.txt || fail "--status failing: $(cat out.txt)"
ctl_reader agents list --status stale --json
[ "$(jq '.agents | length' out.txt)" = 0 ] || fail "--status stale: $(cat out.txt)"
ctl_reader agents list --hostname no-such-host --json
[ "$(jq '.agents | length' out.txt)" = 0 ] || fail "--hostname: $(cat out.txt)"
ctl_reader agents list --label role=web --json
[ "$(jq '.agents | length' out.txt)" = 0 ] || fail "--label: $(cat out.txt)"
ctl_reader agents list --limit 1 --all --json
[ "$(jq -r '.agents[0].id' out.txt)" = "$id" ] || fail "--limit --all: $(cat out.txt)"
ok "agents list --status failing/stale, --hostname, --label, --limit --all"

# ---- 3. the server refuses --------------------------------------------------------------------
echo "# 3. errors of the server"
ctl policies delete strict
want_rc 5 "delete of a bound policy"
grep -q "DELETE /v1/policies/strict: 409 policy_in_use: " err.txt || fail "in use: $(cat err.txt)"
[ -s out.txt ] && fail "stdout on an error: $(cat out.txt)"
ctl agents show no-such-agent
want_rc 3 "show of an unknown agent"
grep -q "404 agent_not_found: no agent no-such-agent" err.txt || fail "404: $(cat err.txt)"
ctl agents show ../healthz
want_rc 2 "a path as an id"
ok "the server's errors printed (409 policy_in_use exit 5, 404 agent_not_found exit 3); ids checked"
ctl agents bind-policy "$id" --default
want_rc 0 "bind-policy --default"
grep -qx "agent $id: policy (default)" out.txt || fail "bind default: $(cat out.txt)"
ctl policies delete strict
want_rc 0 "policies delete"
ctl_reader policies list --json
[ "$(jq '.policies | length' out.txt)" = 0 ] || fail "after delete: $(cat out.txt)"
ok "bind-policy --default, then policies delete"

# ---- 4. decommission, readmit, delete ---------------------------------------------------------
echo "# 4. decommission, readmit, delete"
ctl agents decommission "$id"
want_rc 0 "decommission"
grep -qx "agent $id: decommissioned" out.txt || fail "decommission: $(cat out.txt)"
ctl_reader agents show "$id"
want_rc 1 "show of a decommissioned agent"
grep -q '^state: *decommissioned' out.txt || fail "decommissioned show: $(cat out.txt)"
rc=0
agent_cmd --once --state-dir st >>agent.log 2>&1 || rc=$?
[ $rc = 3 ] || fail "the decommissioned agent's round exited $rc, want 3"
ctl agents readmit "$id" --json
[ "$(jq -r .state out.txt)" = active ] || fail "readmit: $(cat out.txt)"
ctl agents delete "$id"
want_rc 0 "delete"
grep -qx "agent $id deleted" out.txt || fail "delete: $(cat out.txt)"
ctl_reader agents list --json
[ "$(jq '.agents | length' out.txt)" = 0 ] || fail "after delete: $(cat out.txt)"
ok "decommission (the agent is refused), readmit, delete"
stop_daemon
[ $fails = 0 ]
