#!/usr/bin/env bash
# attest-agent with several verifiers (agent/failover.h, attest-agent(8) FAILOVER): a real agent
# on swtpm, a real attestd over TLS on loopback (SQLite), a dead port and a busy verifier
# (tests/lib/busy-verifier.py: 503 store_busy with Retry-After to everything). The transport
# side only; two attestd sharing one PostgreSQL are test-multi-instance.sh.
#  1. --once with the first verifier dead: one switch line, enrolled and passed at the second
#  2. the first busy (503, Retry-After 1): its rounds go to the second, and after --failback the
#     agent tries the first again, once per window, one log line per switch
#  3. one busy verifier with Retry-After 4: the agent asks again no sooner than that
#  4. every verifier dead: a pass over the list, then a back-off capped at --retry-max
# Usage: test-agent-failover.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin python3
busy_pid=""
kill_at_exit busy_pid
host_verifier
live="https://127.0.0.1:$port"

free_port() { # a loopback port nothing listens on
        local p
        for _ in $(seq 20); do
                p=$((10000 + RANDOM % 10000))
                (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
        done
        fail "no free port"
}
dead="https://127.0.0.1:$(free_port)"
dead2="https://127.0.0.1:$(free_port)"

# busy RETRY_AFTER: a busy verifier in busy/ (its URL in $busy)
busy() {
        [ -z "$busy_pid" ] || { kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; }
        rm -rf busy && mkdir busy
        python3 "$TOP/tests/lib/busy-verifier.py" --cert certs/server.pem --key certs/server.key \
                --dir busy --retry-after "$1" 2>busy.log &
        busy_pid=$!
        for _ in $(seq 100); do [ -f busy/port ] && break; nap 0.05; done
        [ -f busy/port ] || fail "busy verifier did not start: $(cat busy.log)"
        busy="https://127.0.0.1:$(cat busy/port)"
        touch busy/requests
}

# run_agent LOG VERIFIER... -- ARGS: the agent with these verifiers in this order, in the
# background (agent_pid)
run_agent() {
        local log=$1 v=()
        shift
        while [ "$1" != -- ]; do v+=(--verifier "$1"); shift; done
        shift
        "$AGENT" "${v[@]}" --ca "$CA" --token-file enroll.token --tcti "$SWTPM_TCTI" \
                --ima-log ima.bin "$@" >"$log" 2>&1 &
        agent_pid=$!
}

# ---- 1. the first verifier dead, --once -------------------------------------------------------
echo "# 1. --once, the first verifier dead"
rc=0
"$AGENT" --verifier "$dead" --verifier "$live" --ca "$CA" --token-file enroll.token \
        --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st --once >a1.out 2>a1.log || rc=$?
[ $rc = 0 ] || fail "--once with the first verifier dead exited $rc: $(tail -5 a1.log)"
grep -q '^<5>verdict: pass' a1.log || fail "no pass verdict: $(tail -5 a1.log)"
n=$(count a1.log 'unavailable \(transport\): enrolment goes to verifier #2 \(https://127')
[ "$n" = 1 ] || fail "$n switch lines, want 1: $(cat a1.log)"
[ "$(count a1.log 'goes to verifier|back to verifier')" = 1 ] || fail "more switches: $(cat a1.log)"
grep -qF "$ENROLL" a1.log a1.out && fail "the enrolment token in the agent's output"
ok "first verifier dead: one switch line, enrolled and passed at the second, exit 0"

# ---- 2. the first busy: its rounds go to the second; failback once per window ----------------
echo "# 2. the first verifier busy (503 store_busy), --failback 2"
busy 1
run_agent a2.log "$busy" "$live" -- --state-dir st --failback 2
wait_lines a2.log 'back to verifier #1' 2 30
wait_lines a2.log '^<[56]>verdict: pass' 4 30
stop_agent
nback=$(count a2.log 'answered for 2 s: back to verifier #1')
nswitch=$(count a2.log 'verifier #1 \(https://127[^)]*\) unavailable \(HTTP 503[a-z_ ]*, Retry-After 1 s\): round goes to verifier #2')
nreq=$(wc -l <busy/requests)
[ "$nswitch" -ge 2 ] || fail "$nswitch switch lines after 503: $(grep -E 'verifier' a2.log)"
# every visit to the busy one is one request and one switch away: no retry storm
[ "$nreq" = "$nswitch" ] || fail "$nreq requests to the busy verifier, $nswitch switches"
{ [ "$nback" -ge "$((nswitch - 1))" ] && [ "$nback" -le "$nswitch" ]; } ||
        fail "$nback failbacks for $nswitch switches"
bad=$(count a2.log '^<[56]>verdict: (fail|error)')
[ "$bad" = 0 ] || fail "failing verdicts: $(grep verdict a2.log)"
grep -q 'enrolling again\|enrolled as' a2.log && fail "the agent enrolled again"
ok "busy first verifier: $nswitch switches to #2 (one line each), $nback failbacks, $nreq requests to it"

# ---- 3. Retry-After honoured -------------------------------------------------------------------
echo "# 3. one busy verifier, Retry-After 4"
busy 4
run_agent a3.log "$busy" -- --state-dir st
wait_lines busy/requests . 3 20
stop_agent
gaps=$(awk 'NR > 1 { printf "%.2f\n", $1 - t } { t = $1 }' busy/requests)
while read -r g; do
        awk -v g="$g" 'BEGIN { exit !(g >= 3.9) }' ||
                fail "asked again after $g s despite Retry-After 4: $(tr '\n' ' ' <<<"$gaps")"
done <<<"$gaps"
ok "Retry-After 4 honoured: gaps $(tr '\n' ' ' <<<"$gaps")s"
kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; busy_pid=""

# ---- 4. every verifier dead: one pass, then a back-off capped at --retry-max ------------------
echo "# 4. both verifiers dead, --retry-max 2"
run_agent a4.log "$dead" "$dead2" -- --state-dir st --retry-max 2 --timeout 2
wait_lines a4.log 'all 2 since the last answer' 4 30
stop_agent
attempts=$(count a4.log 'POST /v1/agents/[0-9a-f]*/challenges: ')
passes=$(count a4.log 'all 2 since the last answer')
[ "$attempts" -ge $((2 * passes)) ] && [ "$attempts" -le $((2 * passes + 2)) ] ||
        fail "$attempts attempts for $passes passes over 2 verifiers: $(cat a4.log)"
delays=$(grep -o 'retrying in [0-9]* ms' a4.log | awk '{ print $3 }' | tr '\n' ' ')
for d in $delays; do
        [ "$d" -lt 2000 ] || fail "back-off $d ms over --retry-max 2: $delays"
done
grep -E 'goes to verifier #2' a4.log >/dev/null || fail "never went to #2: $(cat a4.log)"
ok "both dead: $attempts attempts in $passes passes, back-offs ${delays}ms (capped at 2 s)"
