#!/usr/bin/env bash
# Decommissioning, the agent's side: a decommissioned agent stops for good. The real
# attest-agent against a real attestd over TLS with a real swtpm:
#  1. the admin decommissions the attesting agent: the next round gets 403 agent_decommissioned;
#     the agent logs an error, says so in STATUS=, and exits 3 (AGENT_EXIT_DECOMMISSIONED, the
#     unit's RestartPreventExitStatus=) at once: no re-enrolment, no retry loop, id kept
#  2. started again (as systemd would without RestartPreventExitStatus=): exit 3 again, at once
#  3. the decommissioned agent DELETEd: 404 on the next round, so the agent enrols again, and the
#     EK is refused (403 ek_decommissioned): exit 3, no loop; --once alike
#  4. readmitted: the agent enrols and passes
# An attestd without POST /v1/agents/{id}/decommission fails the test (never a skip).
# Usage: test-agent-decommission.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin
host_verifier

api POST "/v1/agents/0123456789abcdef0123456789abcdef/decommission" "" "$ADMIN"
if [ "$status" != 404 ] || [ "$(jq -r .error <<<"$body")" != agent_not_found ]; then
        echo "not ok: this attestd has no decommission (POST .../decommission: $status $body)" >&2
        exit 1
fi

# wait_exit SECONDS: the background agent exits within SECONDS; sets rc
wait_exit() {
        for _ in $(seq $(($1 * 20))); do kill -0 "$agent_pid" 2>/dev/null || break; nap 0.05; done
        kill -0 "$agent_pid" 2>/dev/null && fail "agent still running $1 s later: $(tail -5 "$log")"
        rc=0
        wait "$agent_pid" || rc=$?
        agent_pid=""
}
run_agent() { # LOG: the agent in the background, telling notify.sock
        log=$1
        NOTIFY_SOCKET=$PWD/notify.sock start_agent "$log" --state-dir st --timeout 10
}
enrolments() { count daemon.log 'enrolled \(AK'; }

start_notify

echo "# 1. decommissioned while attesting"
run_agent a1.log
wait_lines a1.log '^<5>verdict: pass' 1 30
id=$(cat st/agent-id)
ok "agent $id enrolled and passed"
api POST "/v1/agents/$id/decommission" "" "$ADMIN"
expect 200 "" -- "decommission $id" >/dev/null
wait_exit 10
[ $rc = 3 ] || fail "decommissioned agent exited $rc, want 3: $(tail -5 a1.log)"
grep -q '^<3>the verifier decommissioned this agent (HTTP 403 agent_decommissioned)' a1.log ||
        fail "no error line: $(tail -5 a1.log)"
grep -q '^STATUS=decommissioned by the verifier (agent_decommissioned), not retrying' notify.txt ||
        fail "no STATUS=decommissioned: $(tail -3 notify.txt)"
[ "$(count a1.log '^<4>.*HTTP 403')" = 1 ] || fail "more than one 403: $(grep 'HTTP 403' a1.log)"
[ "$(count a1.log 'retrying in|enrolling again')" = 0 ] || fail "retried: $(tail -5 a1.log)"
[ "$(cat st/agent-id)" = "$id" ] || fail "agent-id not kept"
[ "$(enrolments)" = 1 ] || fail "the daemon saw another enrolment"
ok "decommissioned: one 403, error logged, STATUS= set, exit 3, id kept, no re-enrolment"

echo "# 2. started again while decommissioned"
run_agent a2.log
wait_exit 10
[ $rc = 3 ] || fail "restarted decommissioned agent exited $rc, want 3: $(tail -5 a2.log)"
[ "$(count a2.log '^<4>.*HTTP 403')" = 1 ] || fail "$(count a2.log '^<4>.*HTTP 403') answers of 403"
[ "$(enrolments)" = 1 ] || fail "the daemon saw another enrolment"
ok "restarted: exit 3 after one 403, no enrolment"

echo "# 3. decommissioned and DELETEd: the EK stays refused"
api DELETE "/v1/agents/$id" "" "$ADMIN"
expect 204 "" -- "DELETE $id" >/dev/null
run_agent a3.log
wait_exit 15
[ $rc = 3 ] || fail "agent of a decommissioned EK exited $rc, want 3: $(tail -5 a3.log)"
grep -q "does not know agent $id: enrolling again" a3.log || fail "no re-enrolment after 404"
grep -q '^<3>the verifier decommissioned this TPM (EK) (HTTP 403 ek_decommissioned)' a3.log ||
        fail "no ek_decommissioned error: $(tail -5 a3.log)"
[ "$(count a3.log 'POST /v1/agents[^/]|enrolment: HTTP')" -le 1 ] || fail "enrolment retried"
rc=0
agent_cmd --state-dir st --once >a3once.log 2>&1 || rc=$?
[ $rc = 3 ] || fail "--once with a decommissioned EK exited $rc, want 3: $(tail -5 a3once.log)"
ok "after DELETE: 404, one enrolment attempt, 403 ek_decommissioned, exit 3 (--once too)"

echo "# 4. readmitted"
api POST "/v1/agents/$id/readmit" "" "$ADMIN"
expect 200 "" -- "readmit $id" >/dev/null
run_agent a4.log
wait_lines a4.log '^<5>verdict: pass' 1 30
kill -TERM "$agent_pid"
wait_exit 10
[ $rc = 0 ] || fail "agent exited $rc after SIGTERM"
ok "readmitted: the agent enrolled as $(cat st/agent-id) and passed"
stop_daemon TERM
