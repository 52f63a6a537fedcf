#!/usr/bin/env bash
# Hostile network, the in-flight body budget ("hostile round three", item 2): a real attestd over
# TLS on loopback, a real attest-agent with swtpm from 127.0.0.1, attackers from 127.0.0.2-5.
#  1. attack 2: 17 TLS connections from 127.0.0.2, each POST /v1/agents/<its own id>/evidence
#     with Content-Length 16777216 and a body byte every DRIP seconds (default 10), reconnecting
#     when closed, for ATTACK seconds, all with attestd's defaults (256 MiB budget, 60 s body
#     timeout): meanwhile the real agent runs rounds back to back, every one must pass with
#     p99 < 1 s (count, p50, p99 and max printed), and the attackers' bodies are cut by the
#     minimum body rate (slow_body closes), however often they reconnect
#  2. the minimum body rate (--min-body-rate 1000 --body-rate-grace 2): a body at half the rate
#     and a silent one are closed past the grace; one at the rate is read and answered
#  3. shares at cap-1/cap/cap+1: with 131072 bytes held by one address for one agent, a second
#     body from that address fits up to --max-inflight-body-per-ip and is refused (503) one byte
#     over it; the same for --max-inflight-body-per-agent from another address; a third address
#     to another agent gets the byte over either share
# Usage: test-http-budget.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
# SECTIONS="1": only those (and the set-up); with ATTESTD_EXTRA and an older attestd, section 1
# alone passes no flag the older one lacks (how "fails before the fix" was shown).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
HOSTILE=$TOP/tests/hostile/hostile-http.py
agent_test_begin python3 jq
attacker="" holder=""
kill_at_exit attacker holder
boot_host
want() { [ -z "${SECTIONS:-}" ] || [[ " $SECTIONS " == *" $1 "* ]]; }
DRIP=${DRIP:-10} ATTACK=${ATTACK:-30}

# once LOG ARGS...: one agent round (--once) of the agent in state dir st; its wall time in ms
# and exit status appended to rounds.txt
once() {
        local log=$1 t0 rc=0
        shift
        t0=$(date +%s%N)
        agent_cmd --state-dir st --once --timeout 20 "$@" >>"$log" 2>&1 || rc=$?
        echo "$(( ($(date +%s%N) - t0) / 1000000 )) $rc" >>rounds.txt
        return $rc
}
# pct P: the P-th percentile (nearest rank) of the round times in rounds.txt
pct() { awk '{ print $1 }' rounds.txt | sort -n | awk -v p="$1" '{ a[NR] = $1 }
        END { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print a[i] }'; }

# the attacking host has a TPM of its own (an agent on the same EK would take the real one's
# place): a second swtpm, provisioned now; attestd trusts both EK CAs
"$SWTPM_RUN" --state "$work/tpm-atk" --ek-cert -- true
mkdir ek-ca
for f in issuercert swtpm-localca-rootca-cert; do
        cp "$SWTPM_STATE/ca/$f.pem" "ek-ca/host-$f.pem"
        cp "$work/tpm-atk/ca/$f.pem" "ek-ca/attacker-$f.pem"
done
verifier() { start_attestd --ek-ca "$work/ek-ca" --interval 1 "$@"; }
verifier
: >rounds.txt
once agent.log || fail "the agent did not enrol and pass: $(tail -3 agent.log)"
AGENT_ID=$(cat st/agent-id)
echo 0123456789abcdef0123456789abcdef >mid-atk
# shellcheck disable=SC2016 # expanded by the inner shell, under the second swtpm
"$SWTPM_RUN" --state "$work/tpm-atk" -- bash -c '"$0" --verifier "https://127.0.0.1:$1" --ca "$2" \
        --token-file enroll.token --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st-atk \
        --machine-id-file mid-atk --once --timeout 20' "$AGENT" "$port" "$CA" >>atk.log 2>&1 || true
[ -s st-atk/agent-id ] || fail "the attacker's agent did not enrol: $(tail -3 atk.log)"
ATK_ID=$(cat st-atk/agent-id)
api GET "/v1/agents/$ATK_ID" "" "$READER"
expect 200 "" -- "the attacker's agent"
api GET "/v1/agents/$AGENT_ID" "" "$READER"
expect 200 "" -- "the real agent, after the attacker's enrolled"
[ "$ATK_ID" != "$AGENT_ID" ] || fail "the attacker's agent has the real agent's id"
ok "agents enrolled: $AGENT_ID (real, from 127.0.0.1) and $ATK_ID (the attacker's)"

# ---- 1. attack 2 ------------------------------------------------------------------------------
if want 1; then
        # the same rounds with nobody attacking, for comparison (printed, not judged)
        : >rounds.txt
        for _ in $(seq 10); do once agent.log || true; done
        echo "# real agent, no attack: $(wc -l <rounds.txt) rounds, $(awk '$2 != 0' rounds.txt | wc -l) failed; round ms: p50 $(pct 50), p99 $(pct 99), max $(pct 100)"
        # how many rounds the attack's time would hold at this machine's own no-attack pace: under
        # attack the agent must get at least half of them (at most 100, at least 5), a ratio in the
        # same run rather than a count that a loaded machine cannot reach even unattacked
        base_ms=$(awk '{ s += $1; n++ } END { printf "%d", n ? s / n : 1000 }' rounds.txt)
        want_n=$(( (ATTACK - 8) * 1000 / (base_ms > 0 ? base_ms : 1) / 2 ))
        [ "$want_n" -le 100 ] || want_n=100
        [ "$want_n" -ge 5 ] || want_n=5
        echo "# 1. 17 x POST .../$ATK_ID/evidence, Content-Length 16777216, a byte every $DRIP s, from 127.0.0.2, $ATTACK s"
        python3 "$HOSTILE" hold "$port" 17 2 2 "drip:$DRIP:16777216:/v1/agents/$ATK_ID/evidence" \
                "$ATTACK" hold1.txt &
        attacker=$!
        for _ in $(seq 100); do
                grep -qs '^open=17 ' hold1.txt && break
                nap 0.1
        done
        grep -qs '^open=17 ' hold1.txt || fail "the 17 attackers did not connect: $(cat hold1.txt 2>/dev/null)"
        sleep 1 # every head read (before the fix: 256 MiB reserved on their declarations)
        : >rounds.txt
        end=$(( $(date +%s) + ATTACK - 8 ))
        for _ in $(seq 200); do
                [ "$(date +%s)" -lt "$end" ] || break
                once agent.log || true
        done
        st1=$(cat hold1.txt)
        kill "$attacker" 2>/dev/null || true
        wait "$attacker" 2>/dev/null || true
        attacker=""
        n=$(wc -l <rounds.txt) bad=$(awk '$2 != 0' rounds.txt | wc -l)
        p50=$(pct 50) p99=$(pct 99) max=$(pct 100)
        slow=$(metric 'attestd_http_connections_closed_total{reason="slow_body"}')
        echo "# attackers: $st1; closed for a slow body: ${slow:-none}"
        echo "# real agent under attack: $n rounds, $bad failed; round ms: p50 $p50, p99 $p99, max $max"
        [ "$n" -ge "$want_n" ] ||
                fail "only $n rounds in $((ATTACK - 8)) s (want $want_n: half the no-attack pace, $base_ms ms a round)"
        [ "$bad" -eq 0 ] || fail "$bad of $n rounds failed under attack 2: $(grep -m3 -iE 'server_busy|503|error' agent.log)"
        # the latency bound holds its release-build figure: under AddressSanitizer the same rounds
        # cost several times the CPU (a p99 of 2.4 s with no attack at all on a loaded 2-core
        # machine), so there it is printed, and the release stage of tests/run-all.sh asserts it
        case "$(ldd "$ATTESTD" 2>/dev/null || true)" in
        *libasan*) echo "# p99 $p99 ms: the < 1000 ms bound is asserted on the release build" ;;
        *) [ "$p99" -lt 1000 ] || fail "round p99 $p99 ms under attack 2 (want < 1000)" ;;
        esac
        # the attackers were cut by the rate and came back: the bodies cannot be held
        [ "${slow:-0}" -ge 17 ] || fail "slow bodies closed: ${slow:-none}, want >= 17"
        connects=$(sed -n 's/.*connects=\([0-9]*\).*/\1/p' <<<"$st1")
        [ "${connects:-0}" -gt 17 ] || fail "the attackers did not reconnect: $st1"
        ok "attack 2: $n agent rounds passed, p99 $p99 ms; $slow slow bodies cut, attackers reconnected ($st1)"
fi

# ---- 2. minimum body rate ----------------------------------------------------------------------
if want 2; then
        echo "# 2. --min-body-rate 1000 --body-rate-grace 2"
        stop_daemon
        verifier --min-body-rate 1000 --body-rate-grace 2
        ev=/v1/agents/$AGENT_ID/evidence
        slow0=$(metric 'attestd_http_connections_closed_total{reason="slow_body"}')
        # half the rate: 100 bytes every 0.2 s of 6000; due at 2 s + arrived / 1000 B/s: ~4 s
        read -r s t _ < <(python3 "$HOSTILE" send "$port" "$CA" 3 "$ev" 6000 6000 100 0.2 0)
        echo "# 6000 bytes at 500 B/s: $s after $t s"
        [ "$s" = closed ] || fail "a body at half the minimum rate was answered $s"
        awk -v t="$t" 'BEGIN { exit !(t >= 3.0 && t < 6.5) }' || fail "half-rate body closed after $t s, want ~4"
        # nothing at all: closed at the grace
        read -r s t _ < <(python3 "$HOSTILE" send "$port" "$CA" 3 "$ev" 100 0 1 0 20 | grep -v held)
        echo "# 100 bytes declared, none sent: $s after $t s"
        [ "$s" = closed ] || fail "a silent body was answered $s"
        awk -v t="$t" 'BEGIN { exit !(t >= 1.5 && t < 4) }' || fail "silent body closed after $t s, want ~2"
        # at the rate: 250 bytes every 0.25 s of 6000 (~6 s): read and answered by the API
        read -r s t d < <(python3 "$HOSTILE" send "$port" "$CA" 3 "$ev" 6000 6000 250 0.25 0)
        echo "# 6000 bytes at 1000 B/s: $s after $t s ($d)"
        case $s in closed | 503 | 408) fail "a body at the minimum rate: $s" ;; esac
        awk -v t="$t" 'BEGIN { exit !(t >= 5) }' || fail "the at-rate body took $t s, want >= 5"
        slow1=$(metric 'attestd_http_connections_closed_total{reason="slow_body"}')
        [ "$((slow1 - ${slow0:-0}))" -eq 2 ] || fail "slow_body closes: ${slow0:-0} -> $slow1, want +2"
        once agent.log || fail "the agent after the slow bodies: $(tail -3 agent.log)"
        ok "minimum body rate: half-rate and silent bodies closed past the grace (slow_body +2), an at-rate body answered $s"
fi

# ---- 3. shares at cap-1/cap/cap+1 ----------------------------------------------------------------
if want 3; then
        echo "# 3. --max-inflight-body-per-ip 262144 --max-inflight-body-per-agent 262144"
        stop_daemon
        # the holder sends nothing more: idle and body timeouts past the section's length
        verifier --max-inflight-body 67108864 \
                --max-inflight-body-per-ip 262144 --max-inflight-body-per-agent 262144 \
                --min-body-rate 1000 --body-rate-grace 2 --idle-timeout 300 --body-timeout 300
        # the holder: 131071 of 131072 bytes from 127.0.0.3 to the attacker's agent; its buffer
        # doubled from 4 KiB to exactly 131072, held in both shares (due after 2 s + 131 s)
        coproc HOLD { exec python3 "$HOSTILE" send "$port" "$CA" 3 "/v1/agents/$ATK_ID/evidence" \
                131072 131071 65536 0 60; }
        holder=$HOLD_PID
        read -r -t 20 line <&"${HOLD[0]}" || true
        [ "${line:-}" = held ] || fail "the holder did not send its body: ${line:-nothing}"
        sleep 0.5
        # try SRC AGENT CL WANT(fits|503): one body of CL bytes sent in full
        try() {
                local s t d
                read -r s t d < <(python3 "$HOSTILE" send "$port" "$CA" "$1" "/v1/agents/$2/evidence" \
                        "$3" "$3" 65536 0 0)
                echo "# from 127.0.0.$1 to ${2:0:8}..: Content-Length $3: $s ($d)"
                if [ "$4" = 503 ]; then
                        [ "$s" = 503 ] || fail "CL $3 from 127.0.0.$1 to $2: $s, want 503"
                else
                        case $s in 503 | closed) fail "CL $3 from 127.0.0.$1 to $2: $s $d, want it read" ;; esac
                fi
                last_detail=$d
        }
        try 3 "$AGENT_ID" 131071 fits
        try 3 "$AGENT_ID" 131072 fits
        try 3 "$AGENT_ID" 131073 503
        grep -q "address's share" <<<"$last_detail" || fail "cap+1 per address: detail '$last_detail'"
        try 5 "$ATK_ID" 131071 fits
        try 5 "$ATK_ID" 131072 fits
        try 5 "$ATK_ID" 131073 503
        grep -q "agent's share" <<<"$last_detail" || fail "cap+1 per agent: detail '$last_detail'"
        try 4 "$AGENT_ID" 131073 fits
        kill "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true
        holder=""
        # the holder gone (once attestd has seen its connection close), its share is free again
        # (bounded by time, not tries: under load one try's TLS client takes seconds)
        t_end=$(($(date +%s) + 30))
        while :; do
                read -r s _ < <(python3 "$HOSTILE" send "$port" "$CA" 3 "/v1/agents/$ATK_ID/evidence" \
                        262144 262144 65536 0 0)
                [ "$s" = 503 ] && [ "$(date +%s)" -lt "$t_end" ] || break
                nap 0.5
        done
        case $s in 503 | closed) fail "the holder's share not freed after it left: $s" ;; esac
        echo "# the holder gone: from 127.0.0.3 to ${ATK_ID:0:8}..: Content-Length 262144 (both shares): $s"
        ok "shares: per address and per agent, cap-1 and cap read, cap+1 503; another address and agent unaffected"
fi

echo "# hostile http budget: all passed"
