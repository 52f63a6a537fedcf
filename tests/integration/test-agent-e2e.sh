#!/usr/bin/env bash
# attest-agent end to end: the real agent against a real attestd (TLS on loopback, SQLite) and a
# real swtpm with EK certificates, enrolment by credential activation included.
#  1. enrolment + rounds in loop mode while the IMA log grows: every round passes and replays only
#     the new entries (results, /metrics); SIGTERM stops the agent at once with status 0
#  2. verifier down at start: bounded back-off (no busy loop), enrols once it is up; verifier
#     restarted on the same port and database: the agent carries on without enrolling again
#  3. a TLS listener that never answers: --timeout bounds each request, the agent backs off
#  4. a verifier certificate from another CA: the agent refuses to talk (exit 2, no enrolment)
#  5. nonce expired while the quote was stalled (swtpm SIGSTOPped): one fresh challenge, then pass
#  6. a verifier answering 503: bounded back-off, then it recovers and the agent enrols and passes
#  7. rounds on new connections (the server's idle timeout shorter than the interval): the agent
#     resumes its TLS session (attestd_tls_sessions_total{resumed="yes"})
# Usage: test-agent-e2e.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
# (re-runs itself under SWTPM_RUN --ek-cert when no swtpm is given in SWTPM_TCTI)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
EVGEN=$(realpath "$6")
agent_test_begin tpm2_pcrread
sserver="" sleeper=""
kill_at_exit sserver sleeper
at_exit kill -CONT "$SWTPM_PID" 2>/dev/null

# the recorded boot in the TPM; ima.bin is the agent's IMA log, always matching PCR 10
boot_host
extra_n=0

# grow N: append N synthetic ima-ng entries to ima.bin and extend exactly those into PCR 10
grow() {
        local before after
        before=$(stat -c %s extra.bin 2>/dev/null || echo 0)
        "$EVGEN" gen extra.bin "files:$1"
        after=$(stat -c %s extra.bin)
        tail -c $((after - before)) extra.bin >inc.bin
        [ "$( ("$ATTESTCTL" ima hashes inc.bin || echo x) | wc -l)" = "$1" ] || fail "grow $1: inc.bin"
        # as the kernel does: the entries join the log, then PCR 10 is extended (a round in
        # between sees the log ahead of the quote, which replays to the quoted prefix)
        cat inc.bin >>ima.bin
        "$ATTESTCTL" ima hashes inc.bin | xargs -r -n 40 tpm2_pcrextend >/dev/null
        extra_n=$((extra_n + $1))
}

results() { # ID: the agent's results, oldest first, as "status new_entries" in res[]
        api GET "/v1/agents/$1/results?limit=1000" "" "$READER"
        expect 200 "" -- "GET /v1/agents/$1/results" >/dev/null
        mapfile -t res < <(jq -r '.results | reverse | .[] |
                "\(.status) \(.verdict.ima.new_entries)"' <<<"$body")
}

# start_verifier [-p PORT] ARGS...: attestd on a free port (or exactly PORT, which the agent knows
# already), enrolment by EK certificate + activation
start_verifier() { start_attestd "$@" --ek-ca "$SWTPM_STATE/ca"; }

free_port() { # a loopback port nothing listens on (fixed ones must not be ephemeral)
        local p
        for _ in $(seq 20); do
                p=$((10000 + RANDOM % 10000)) # below the ephemeral range and swtpm-run's
                (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
        done
        fail "no free port"
}

# ---- 1. enrolment and growing rounds ----------------------------------------------------------
echo "# 1. enrolment + rounds with a growing IMA log"
start_verifier --interval 1
# systemd's side of Type=notify: a notify socket of our own records what the agent says
start_notify
export NOTIFY_SOCKET=$PWD/notify.sock WATCHDOG_USEC=400000
start_agent a1.log --state-dir st1
unset NOTIFY_SOCKET WATCHDOG_USEC
wait_lines a1.log '^<5>verdict: pass' 1 30
grep -q 'enrolled as agent .* (credential activated)' a1.log || fail "no credential activation"
id1=$(cat st1/agent-id)
ok "agent enrolled by credential activation as $id1 and passed"
replayed0=$(metric attestd_ima_entries_replayed_total)
appended=()
for n in 5 7 3; do
        # right after a verdict the agent sleeps until next_due (~1 s): grow the log meanwhile,
        # with the agent held (SIGSTOP), so that no round sees half a grow (a loaded machine
        # took longer than the sleep); a round held after its quote reads the grown log after
        # SIGCONT, ahead of its quote, which replays to the quoted prefix
        v=$(verdicts a1.log)
        wait_lines a1.log '^<[56]>verdict: ' $((v + 1)) 10
        kill -STOP "$agent_pid"
        grow "$n"
        kill -CONT "$agent_pid"
        appended+=("$n")
        v=$(verdicts a1.log)
        wait_lines a1.log '^<[56]>verdict: ' $((v + 2)) 10
done
stop_agent
results "$id1"
[ "${#res[@]}" -ge 4 ] || fail "only ${#res[@]} results: ${res[*]}"
bad=$(printf '%s\n' "${res[@]}" | grep -vc '^pass ' || true)
[ "$bad" = 0 ] || fail "$bad results did not pass: ${res[*]}"
[ "${res[0]}" = "pass 6" ] || fail "first round: ${res[0]}, want the 6 boot entries"
grown=$(printf '%s\n' "${res[@]:1}" | awk '$2 != 0 { print $2 }' | paste -sd' ')
[ "$grown" = "${appended[*]}" ] ||
        fail "new_entries of the rounds after the first: '$grown', want '${appended[*]}'"
ok "${#res[@]} passing results; new_entries 6 then $grown (only what was appended)"
replayed1=$(metric attestd_ima_entries_replayed_total)
[ $((replayed1 - replayed0)) = $extra_n ] ||
        fail "replay counter grew by $((replayed1 - replayed0)), want $extra_n"
ok "attestd_ima_entries_replayed_total grew by exactly $extra_n"
[ "$(grep -c 'enrolled as' a1.log)" = 1 ] || fail "agent enrolled more than once"
kill "$notify_pid" 2>/dev/null || true
grep -q '^READY=1|STATUS=enrolled' notify.txt || fail "no READY=1 after enrolment: $(head -3 notify.txt)"
grep -q '^STATUS=last verdict: pass$' notify.txt || fail "no STATUS with the verdict"
[ "$(grep -c '^WATCHDOG=1$' notify.txt)" -ge 2 ] || fail "watchdog not pinged while waiting"
[ "$(tail -1 notify.txt)" = "STOPPING=1" ] || fail "last notification: $(tail -1 notify.txt)"
ok "sd_notify: READY=1 after enrolment, STATUS with the verdict, WATCHDOG=1 pings, STOPPING=1"
stop_daemon TERM

# ---- 2. verifier down at start, then restarted ------------------------------------------------
echo "# 2. verifier down at start, restarted later"
p=$(free_port)
port=$p
start_agent a2.log --state-dir st2 --timeout 5
sleep 4
tries=$(grep -c 'POST /v1/agents: ' a2.log || true)
retries=$(grep -c 'retrying in' a2.log || true)
{ [ "$tries" -ge 2 ] && [ "$tries" -le 6 ]; } ||
        fail "$tries enrolment attempts in 4 s with the verifier down (want 2-6): $(head -5 a2.log)"
[ "$retries" -ge 1 ] || fail "no 'retrying in' line: $(head -5 a2.log)"
ok "verifier down: $tries attempts in 4 s with back-off ($retries 'retrying in' lines)"
start_verifier -p "$p" --interval 1
wait_lines a2.log '^<5>verdict: pass' 1 30
id2=$(cat st2/agent-id)
ok "agent enrolled once the verifier was up ($id2) and passed"
stop_daemon TERM
sleep 2
before=$(verdicts a2.log)
retries=$(grep -c 'retrying in' a2.log || true)
wait_lines a2.log 'retrying in' $((retries + 1)) 10
start_verifier -p "$p" --interval 1
wait_lines a2.log '^<[56]>verdict: ' $((before + 2)) 30
stop_agent
[ "$(grep -c 'enrolled as' a2.log)" = 1 ] || fail "agent enrolled again after the restart"
[ "$(grep -c 'agent .* enrolled' daemon.log)" = 2 ] || fail "daemon saw a new enrolment"
results "$id2"
bad=$(printf '%s\n' "${res[@]}" | grep -vc '^pass ' || true)
[ "$bad" = 0 ] || fail "results after the restart: ${res[*]}"
[ "${#res[@]}" -ge $((before + 2)) ] || fail "${#res[@]} results, want $before + 2 or more"
ok "after the verifier restart: ${#res[@]} passing results in all, no re-enrolment"
stop_daemon TERM

# ---- 3. a verifier that accepts and never answers ---------------------------------------------
echo "# 3. slow verifier"
p=$(free_port)
port=$p
mkfifo s_server.in
sleep 60 >s_server.in &
sleeper=$!
openssl s_server -accept "127.0.0.1:$p" -cert certs/server.pem -key certs/server.key -quiet \
        <s_server.in >s_server.log 2>&1 &
sserver=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; nap 0.05; done
t0=$(date +%s)
rc=0
agent_cmd --state-dir st3 --timeout 2 --once >a3once.log 2>&1 || rc=$?
dt=$(($(date +%s) - t0))
[ $rc = 2 ] || fail "--once against a silent verifier exited $rc, want 2"
[ $dt -le 6 ] || fail "--once --timeout 2 took $dt s"
ok "--once --timeout 2 against a silent verifier: exit 2 after $dt s"
start_agent a3.log --state-dir st3 --timeout 2
sleep 7
tries=$(grep -c 'POST /v1/agents: ' a3.log || true)
{ [ "$tries" -ge 2 ] && [ "$tries" -le 4 ]; } || fail "$tries timed-out attempts in 7 s (want 2-4)"
timeouts=$(grep -cE 'POST /v1/agents: .*timed out after 2[0-9]{3} milliseconds' a3.log || true)
[ "$timeouts" = "$tries" ] || fail "$tries attempts but $timeouts timed out after ~2 s: $(cat a3.log)"
stop_agent
kill "$sserver" "$sleeper" 2>/dev/null || true
wait "$sserver" "$sleeper" 2>/dev/null || true
sserver="" sleeper=""
ok "silent verifier: $tries attempts in 7 s, each timed out after 2 s, then back-off"

# ---- 4. the verifier's certificate from another CA --------------------------------------------
echo "# 4. wrong verifier CA"
start_verifier --interval 1
n0=$(grep -c 'enrolled' daemon.log || true)
rc=0
"$AGENT" --verifier "https://127.0.0.1:$port" --ca certs/other-ca.pem --token-file enroll.token \
        --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st4 --once --timeout 5 \
        >a4.log 2>&1 || rc=$?
[ $rc = 2 ] || fail "agent with the wrong CA exited $rc, want 2"
grep -qi 'certificate' a4.log || fail "agent log names no certificate problem: $(cat a4.log)"
[ "$(grep -c 'enrolled' daemon.log || true)" = "$n0" ] || fail "the daemon enrolled an agent"
[ ! -e st4/agent-id ] || fail "agent-id written"
ok "wrong verifier CA: exit 2, no enrolment ($(grep -i certificate a4.log | head -1))"
stop_daemon TERM

# ---- 5. nonce expired while the agent was stalled ---------------------------------------------
echo "# 5. expired nonce"
# a TTL of 3 s: an unstalled round (challenge to evidence, ~0.3 s under ASan) stays well inside
# it on a loaded machine (with 1 s, rounds at load ~3 expired too: 3 rejections, not 1); the
# stall is 8 s
start_verifier --interval 1 --nonce-ttl 3
start_agent a5.log --state-dir st5
wait_lines a5.log '^<5>verdict: pass' 1 30
expired0=$(metric 'attestd_rejected_requests_total{code="nonce_expired"}')
v=$(verdicts a5.log)
wait_lines a5.log '^<[56]>verdict: ' $((v + 1)) 10
# the agent now sleeps ~1 s, then takes a challenge and blocks in the quote until SIGCONT
kill -STOP "$SWTPM_PID"
sleep 8
kill -CONT "$SWTPM_PID"
wait_lines a5.log '^<[56]>verdict: ' $((v + 2)) 30
stop_agent
expired1=$(metric 'attestd_rejected_requests_total{code="nonce_expired"}')
[ $((${expired1:-0} - ${expired0:-0})) = 1 ] ||
        fail "nonce_expired rejections: ${expired0:-0} -> ${expired1:-0}, want one more"
# between the verdict before the stall and the next one: two collections (stalled + fresh)
round=$(awk -v n=$((v + 1)) '/^<[56]>verdict: / { k++; if (k == n + 1) { print; exit } next }
        k == n' a5.log)
[ "$(grep -c '^<7>IMA log: ' <<<"$round")" = 2 ] ||
        fail "want 2 challenges (stalled, fresh) in the stalled round: $round"
grep -q 'HTTP 410 nonce_expired' <<<"$round" || fail "no nonce_expired in the agent log: $round"
grep -q 'retrying in' <<<"$round" && fail "agent backed off instead of a fresh challenge: $round"
awk -v n=$((v + 2)) '/^<[56]>verdict: / && ++k == n' a5.log | grep -q 'verdict: pass' ||
        fail "the round after the stall did not pass"
ok "stalled quote: one nonce_expired, one fresh challenge, then pass"
stop_daemon TERM
# ---- 6. a verifier answering 5xx, then recovering ---------------------------------------------
echo "# 6. verifier returning 503"
p=$(free_port)
port=$p
# one TLS connection at a time, each answered 503 whatever it asks (openssl s_server sends its
# stdin); the loop counts the connections the agent made
rm -f s503.count
(
        while [ ! -e s503.stop ]; do
                printf 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 45\r\nConnection: close\r\n\r\n{"error":"overloaded","detail":"try later"}\n\n' |
                        timeout 10 openssl s_server -accept "127.0.0.1:$p" -cert "$work/certs/server.pem" \
                                -key "$work/certs/server.key" -naccept 1 -quiet >/dev/null 2>&1 &&
                        echo >>s503.count
        done
) &
s503_pid=$!
sleep 0.5
start_agent a6.log --state-dir st6 --timeout 5
sleep 6
touch s503.stop
n503=$(grep -c 'HTTP 503' a6.log || true)
retries=$(grep -c 'retrying in' a6.log || true)
{ [ "$n503" -ge 2 ] && [ "$n503" -le 6 ]; } ||
        fail "$n503 answers of 503 in 6 s (want 2-6: back-off, no busy loop): $(head -5 a6.log)"
[ "$retries" -ge "$n503" ] || fail "a 503 without a back-off: $(head -8 a6.log)"
ok "verifier answering 503: $n503 attempts in 6 s, each followed by a back-off"
# the real verifier takes the port over: the agent enrols and passes
for _ in $(seq 40); do kill -0 "$s503_pid" 2>/dev/null || break; nap 0.25; done
pkill -f "s_server -accept 127.0.0.1:$p" 2>/dev/null || true
wait "$s503_pid" 2>/dev/null || true
start_verifier -p "$p" --interval 1
wait_lines a6.log '^<5>verdict: pass' 1 60
stop_agent
ok "after the 503s the agent enrolled and passed"
stop_daemon TERM

# ---- 7. each round on a new connection: the agent resumes its TLS session -----------------------
echo "# 7. rounds 2 s apart, connections closed after 1 s idle: sessions resumed from tickets"
start_verifier --interval 2 --idle-timeout 1
y0=$(metric 'attestd_tls_sessions_total{resumed="yes"}')
start_agent a7.log --state-dir st6
wait_lines a7.log '^<[56]>verdict: pass' 3 60
stop_agent
y1=$(metric 'attestd_tls_sessions_total{resumed="yes"}')
[ $((y1 - y0)) -ge 2 ] ||
        fail "the agent's later rounds resumed $((y1 - y0)) TLS sessions, want at least 2"
ok "the agent resumed its TLS session on $((y1 - y0)) new connections (3 rounds)"
stop_daemon TERM
echo "# all agent end-to-end checks passed"
