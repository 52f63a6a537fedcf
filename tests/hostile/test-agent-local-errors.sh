#!/usr/bin/env bash
# A local error is never taken for an answer of the verifier. With its IMA log
# file gone (ENOENT on this host) the real attest-agent, enrolled and attesting against a real
# attestd over TLS, logs the local error, backs off and retries, keeps its agent id and does not
# enrol again (before the fix it deleted its id, enrolled again, got 409 agent_exists and exited,
# to loop under systemd for good). When the file comes back it carries on with the same id and
# passes. Then a plain DELETE (forget): 404 agent_not_found on the next round, and the agent
# enrols again as before.
# Usage: test-agent-local-errors.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin
host_verifier

# ---- an enrolment token group or others can read is refused before any request ----
chmod 0644 enroll.token
rc=0
agent_exec="timeout 30" agent_cmd --state-dir st0 --timeout 5 >token.log 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the agent ran with a 0644 token file: $(tail -3 token.log)"
grep -q 'enroll.token: readable by group or others' token.log ||
        fail "no precise error for a 0644 token: $(tail -3 token.log)"
[ "$(count daemon.log 'enrolled \(AK')" = 0 ] || fail "the daemon saw an enrolment"
chmod 0600 enroll.token
ok "a 0644 enrolment token is refused (exit $rc), naming the file and the mode"

start_notify
NOTIFY_SOCKET=$PWD/notify.sock start_agent agent.log --state-dir st --timeout 10
wait_lines agent.log '^<5>verdict: pass' 1 30
id=$(cat st/agent-id)
ok "agent $id enrolled and passed"

# ---- the IMA log file disappears ----
mv ima.bin ima.bin.away
v=$(count agent.log '^<[56]>verdict: ')
wait_lines agent.log '^<3>IMA log: .*(No such file|ENOENT|not found)' 3 30
n_err=$(count agent.log '^<3>IMA log: ')
n_retry=$(count agent.log 'local error: retrying in')
[ "$n_retry" -ge "$n_err" ] || fail "$n_err local errors but $n_retry back-offs: $(tail agent.log)"
[ "$(count agent.log 'enrolling again|enrolled as')" = 1 ] ||
        fail "the agent enrolled again on a local error: $(grep -E 'enrol' agent.log)"
[ "$(cat st/agent-id 2>/dev/null)" = "$id" ] || fail "agent-id changed or deleted"
[ "$(count daemon.log 'enrolled \(AK')" = 1 ] || fail "the daemon saw a second enrolment"
[ "$(count agent.log 'HTTP 409')" = 0 ] || fail "the agent met 409 agent_exists"
grep -q '^STATUS=local error, retrying in' notify.txt ||
        fail "no STATUS=local error: $(tail -3 notify.txt)"
ok "log file missing: $n_err local errors logged, each followed by a back-off; id kept, no enrolment"
# back-off, not a busy loop: the gaps grow (1 s base, doubling, jittered to [d/2, d))
[ "$n_err" -le 6 ] || fail "$n_err attempts: no back-off"

# ---- the file comes back ----
mv ima.bin.away ima.bin
wait_lines agent.log '^<[56]>verdict: ' $((v + 1)) 60
tail -n +1 agent.log | grep -E '^<[56]>verdict: ' | tail -1 | grep -q 'verdict: pass' ||
        fail "the round after the file came back did not pass: $(tail -5 agent.log)"
[ "$(cat st/agent-id)" = "$id" ] || fail "agent-id changed"
api GET "/v1/agents/$id" "" "$READER"
expect 200 "" -- "GET /v1/agents/$id (same id, still known)" >/dev/null
[ "$(jq -r .last_status <<<"$body")" = pass ] || fail "last_status: $body"
ok "log file back: the agent passed again as $id"

# ---- a plain DELETE (forget): 404 on the next round, the agent enrols again ----
v=$(count agent.log '^<[56]>verdict: ')
api DELETE "/v1/agents/$id" "" "$ADMIN"
expect 204 "" -- "DELETE /v1/agents/$id" >/dev/null
wait_lines agent.log 'enrolled as agent' 2 30
wait_lines agent.log '^<[56]>verdict: ' $((v + 1)) 30
grep -q "does not know agent $id: enrolling again" agent.log || fail "no re-enrolment message"
[ "$(count daemon.log 'enrolled \(AK')" = 2 ] || fail "the daemon saw no second enrolment"
ok "after DELETE the agent enrolled again as $(cat st/agent-id) and attests"
stop_agent
stop_daemon TERM
