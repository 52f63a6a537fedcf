#!/usr/bin/env bash
# Issue 9, defect 9 (the agent's side): a decommissioned agent stops for good. The real
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
[ $# -eq 5 ] || { echo "usage: $0 ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP" >&2; exit 2; }
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$4" --ek-cert -- "$0" "$@"
fi
ATTESTD=$(realpath "$1") TOP=$(realpath "$5")
export ATTESTD TOP
AGENT=$(realpath "$2") ATTESTCTL=$(realpath "$3")
for t in openssl curl jq python3 tpm2_pcrextend; do
        command -v $t >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
# shellcheck source-path=SCRIPTDIR source=../integration/test-daemon-lib.sh
. "$TOP/tests/integration/test-daemon-lib.sh"

agent_pid="" notify_pid=""
cleanup_agent() {
        local rc=$? p
        for p in "$agent_pid" "$notify_pid"; do
                if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
        done
        set +e # a failing command in an EXIT trap under set -e would end it here
        (exit $rc)
        cleanup_lib
}
trap cleanup_agent EXIT

token ENROLL enroll
token READER reader
token ADMIN admin
printf %s "$ENROLL" >"$work/enroll.token"
cd "$work"
"$TOP/tests/lib/replay-boot" "$TOP/tests/data/qemu61-good" "$ATTESTCTL"
cp "$TOP/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 \
        --ek-ca "$SWTPM_STATE/ca" --interval 1

api POST "/v1/agents/0123456789abcdef0123456789abcdef/decommission" "" "$ADMIN"
if [ "$status" != 404 ] || [ "$(jq -r .error <<<"$body")" != agent_not_found ]; then
        echo "not ok: this attestd has no decommission (POST .../decommission: $status $body)" >&2
        exit 1
fi

count() { grep -cE "$2" "$1" || true; }
wait_lines() { # FILE PATTERN N SECONDS
        for _ in $(seq $(($4 * 20))); do
                [ "$(count "$1" "$2")" -ge "$3" ] && return 0
                if [ -n "$agent_pid" ] && ! kill -0 "$agent_pid" 2>/dev/null; then
                        echo "--- $1" >&2; tail -20 "$1" >&2
                        fail "agent died waiting for $3 x '$2'"
                fi
                sleep 0.05
        done
        echo "--- $1" >&2; tail -20 "$1" >&2
        fail "no $3 x '$2' in $1 within $4 s"
}
# wait_exit SECONDS: the background agent exits within SECONDS; sets rc
wait_exit() {
        for _ in $(seq $(($1 * 20))); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.05; done
        kill -0 "$agent_pid" 2>/dev/null && fail "agent still running $1 s later: $(tail -5 "$log")"
        rc=0
        wait "$agent_pid" || rc=$?
        agent_pid=""
}
start_agent() { # LOG
        log=$1
        NOTIFY_SOCKET=$PWD/notify.sock "$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" \
                --token-file enroll.token --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st \
                --timeout 10 >"$log" 2>&1 &
        agent_pid=$!
}
enrolments() { count daemon.log 'enrolled \(AK'; }

cat >notify.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
        out.flush()
PY
python3 notify.py "$PWD/notify.sock" "$PWD/notify.txt" &
notify_pid=$!
for _ in $(seq 50); do [ -S notify.sock ] && break; sleep 0.05; done

echo "# 1. decommissioned while attesting"
start_agent a1.log
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
start_agent a2.log
wait_exit 10
[ $rc = 3 ] || fail "restarted decommissioned agent exited $rc, want 3: $(tail -5 a2.log)"
[ "$(count a2.log '^<4>.*HTTP 403')" = 1 ] || fail "$(count a2.log '^<4>.*HTTP 403') answers of 403"
[ "$(enrolments)" = 1 ] || fail "the daemon saw another enrolment"
ok "restarted: exit 3 after one 403, no enrolment"

echo "# 3. decommissioned and DELETEd: the EK stays refused"
api DELETE "/v1/agents/$id" "" "$ADMIN"
expect 204 "" -- "DELETE $id" >/dev/null
start_agent a3.log
wait_exit 15
[ $rc = 3 ] || fail "agent of a decommissioned EK exited $rc, want 3: $(tail -5 a3.log)"
grep -q "does not know agent $id: enrolling again" a3.log || fail "no re-enrolment after 404"
grep -q '^<3>the verifier decommissioned this TPM (EK) (HTTP 403 ek_decommissioned)' a3.log ||
        fail "no ek_decommissioned error: $(tail -5 a3.log)"
[ "$(count a3.log 'POST /v1/agents[^/]|enrolment: HTTP')" -le 1 ] || fail "enrolment retried"
rc=0
"$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" --token-file enroll.token \
        --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st --once >a3once.log 2>&1 || rc=$?
[ $rc = 3 ] || fail "--once with a decommissioned EK exited $rc, want 3: $(tail -5 a3once.log)"
ok "after DELETE: 404, one enrolment attempt, 403 ek_decommissioned, exit 3 (--once too)"

echo "# 4. readmitted"
api POST "/v1/agents/$id/readmit" "" "$ADMIN"
expect 200 "" -- "readmit $id" >/dev/null
start_agent a4.log
wait_lines a4.log '^<5>verdict: pass' 1 30
kill -TERM "$agent_pid"
wait_exit 10
[ $rc = 0 ] || fail "agent exited $rc after SIGTERM"
ok "readmitted: the agent enrolled as $(cat st/agent-id) and passed"
stop_daemon TERM
