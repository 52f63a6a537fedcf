#!/usr/bin/env bash
# Hostile network, HTTP front (docs/SECURITY.md): a real attestd over TLS
# on loopback, a real attest-agent with swtpm, attackers from 127.0.0.2-200. Each attack checks
# its expected status and a memory and fd ceiling (VmRSS and /proc/PID/fd of attestd).
#  1. spin: silent and half-handshaken TLS connections: attestd CPU over 5 s stays near zero;
#     past --header-timeout every one is closed, none left in CLOSE-WAIT, fds back to baseline
#  2. slowloris (a request head one byte a second) is cut at --header-timeout
#  3. per-IP cap: 100 connections from one address hold at most --max-connections-per-ip fds
#  4. headline: 10,000 idle/half-handshake/slowloris connections held from 199 addresses (the
#     connection table full) while the agent completes 20 rounds with p99 < 1 s; RSS and fds
#     back to baseline after the attackers leave
#  5. bodies: 40 x 16 MiB to an unknown agent without token (404 before the body, RSS ceiling);
#     40 x 16 MiB to a real agent's evidence route (in-flight budget: 503, RSS ceiling)
#  6. framing: duplicate Content-Length, Content-Length with Transfer-Encoding, %00 in the path:
#     400 JSON; what libmicrohttpd 0.9.75 answers itself (malformed Content-Length) is recorded
#  7. TLS 1.2 offers AEAD suites only: a CBC-only client fails, a GCM client succeeds
#  8. mTLS (--tls-client-ca): the agent with a client certificate attests; no certificate: 403;
#     a certificate from another CA: refused
#  9. the connection table full (--max-connections): attackers holding every slot are evicted,
#     oldest waiting first, one per newcomer, so attestd keeps accepting and the agent gets in
# 10. the table full of requests in progress: nothing to evict, a newcomer is closed at once
# Usage: test-http.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
HOSTILE=$TOP/tests/hostile/hostile-http.py
ulimit -n "$(ulimit -Hn)"
# memory ceilings: figures from the release build; under AddressSanitizer (redzones, a 256 MiB
# quarantine of freed blocks) every block costs more and freed memory comes back late
mem_slack=0
case "$(ldd "$ATTESTD" 2>/dev/null || true)" in *libasan*) mem_slack=1 ;; esac
# and ASan hands freed memory back to the system only when told to (the RSS-after check)
asan_opts="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}allocator_release_to_os_interval_ms=200:quarantine_size_mb=16"
# meson test sets MALLOC_PERTURB_, which makes glibc write every byte it hands out, so each
# connection's whole memory pool becomes resident (477 MB for 10,000 instead of ~240 MB): attestd
# runs as deployed, without it
mem() { # KB_RELEASE KB_ASAN: the ceiling that applies
        if [ $mem_slack -eq 1 ]; then echo "$2"; else echo "$1"; fi
}
agent_test_begin python3 ss gnutls-cli
attacker=""
kill_at_exit attacker
boot_host

# SECTIONS="1 5": only those (and the set-up), e.g. to check that one test fails without its fix
want() { [ -z "${SECTIONS:-}" ] || [[ " $SECTIONS " == *" $1 "* ]]; }
HEADER_TIMEOUT=4
start_verifier() { # with $HEADER_TIMEOUT
        start_attestd -e "ASAN_OPTIONS=$asan_opts" -e MALLOC_PERTURB_=0 \
                --ek-ca "$SWTPM_STATE/ca" --interval 1 --header-timeout "$HEADER_TIMEOUT" \
                --max-connections-per-ip 51 --max-connections 10000 \
                --max-inflight-body 67108864 "$@"
}
ticks() { awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status"; }
# peak RSS since hwm_reset (VmHWM; "5" to clear_refs resets it, Linux >= 4.0)
hwm_reset() { echo 5 >"/proc/$daemon_pid/clear_refs"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status"; }
nfds() { find "/proc/$daemon_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
closewait() { ss -Htan state close-wait "( sport = :$port )" | wc -l; }
# settle MAX SECONDS: until attestd holds at most MAX fds (bounded), then echo the count
settle() {
        local n
        for _ in $(seq $(($2 * 10))); do
                n=$(nfds)
                [ "$n" -le "$1" ] && break
                nap 0.1
        done
        nfds
}
# held MIN SECONDS: until attestd holds at least MIN fds (the attackers' connections are in; bounded
# by the clock, not a guess at how long they take on a loaded machine)
held() {
        local end=$((SECONDS + $2))
        while [ "$(nfds)" -lt "$1" ] && [ $SECONDS -lt "$end" ]; do
                nap 0.1
        done
}
# attack ARGS...: hostile-http.py holding connections to attestd (hold PORT ARGS) in the
# background, its pid in $attacker; retreat: the attacker stopped (it must still be running)
attack() {
        python3 "$HOSTILE" hold "$port" "$@" &
        attacker=$!
}
retreat() {
        kill "$attacker"
        wait "$attacker" 2>/dev/null || true
        attacker=""
}
# once LOG ARGS...: one agent round (--once); its wall time in ms is appended to rounds.txt
once() {
        local log=$1 t0 rc=0
        shift
        t0=$(date +%s%N)
        agent_cmd --state-dir st --once --timeout 20 "$@" >>"$log" 2>&1 || rc=$?
        echo $(( ($(date +%s%N) - t0) / 1000000 )) >>rounds.txt
        return $rc
}

start_verifier
once agent.log || fail "agent did not enrol and pass: $(tail -3 agent.log)"
AGENT_ID=$(cat st/agent-id)
ok "agent enrolled as $AGENT_ID and passed"
sleep 0.5
base_fds=$(nfds) base_rss=$(rss_kb)
echo "# baseline: $base_fds fds, RSS $base_rss kB$([ $mem_slack -eq 0 ] || echo ", AddressSanitizer build: ASan memory ceilings")"

# ---- 1. spin and CLOSE-WAIT ------------------------------------------------------------------
if want 1; then
        echo "# 1. silent and half-handshaken TLS connections"
        attack 40 2 3 idle 30 hold1.txt
        python3 "$HOSTILE" hold "$port" 40 4 5 partial 30 hold1b.txt &
        a2=$!
        held $((base_fds + 40)) 30
        t0=$(ticks)
        sleep 5
        spin=$(( $(ticks) - t0 ))
        during=$(nfds)
        kill "$attacker" "$a2"; wait "$attacker" "$a2" 2>/dev/null || true
        attacker=""
        echo "# 80 silent/partial connections: attestd used $spin ticks of CPU in 5 s, $during fds"
        [ "$spin" -le 50 ] || fail "attestd spins with silent TLS connections: $spin ticks in 5 s"
        [ "$during" -ge $((base_fds + 40)) ] || fail "the connections were not held ($during fds)"
        after=$(settle $((base_fds + 2)) $((HEADER_TIMEOUT + 5)))
        cw=$(closewait)
        [ "$cw" -eq 0 ] || fail "$cw connections left in CLOSE-WAIT"
        [ "$after" -le $((base_fds + 2)) ] || fail "fds not released: $after, baseline $base_fds"
        ok "no spin ($spin ticks / 5 s), closed by the server, 0 CLOSE-WAIT, fds $during -> $after"
fi

# ---- 2. slowloris ------------------------------------------------------------------------------
if want 2; then
        echo "# 2. slowloris: a request head one byte a second"
        attack 30 6 6 slow $((HEADER_TIMEOUT + 6)) hold2.txt
        sleep $((HEADER_TIMEOUT + 5))
        api GET /healthz
        expect 200 "" -- "healthz during slowloris"
        st2=$(cat hold2.txt)
        kill "$attacker" 2>/dev/null || true
        wait "$attacker" 2>/dev/null || true
        attacker=""
        closed=$(sed -n 's/.*closed=\([0-9]*\).*/\1/p' <<<"$st2")
        [ "${closed:-0}" -ge 30 ] || fail "slowloris connections not cut at the head deadline: $st2"
        ok "slowloris cut at --header-timeout $HEADER_TIMEOUT s ($st2)"
fi

# ---- 3. per-IP cap -----------------------------------------------------------------------------
if want 3; then
        echo "# 3. per-IP connection cap"
        attack 100 7 7 idle 20 hold3.txt
        # the attacker's python may take seconds to start on a loaded machine: its first
        # report (after its 100 connects), bounded, then the 2 s for attestd to take them
        for _ in $(seq 100); do
                [ -s hold3.txt ] && break
                nap 0.1
        done
        sleep 2
        held=$(nfds)
        api GET /healthz
        expect 200 "" -- "healthz with one address at its cap"
        retreat
        [ "$held" -le $((base_fds + 51 + 2)) ] || fail "one address holds $((held - base_fds)) fds (cap 51)"
        [ "$held" -ge $((base_fds + 45)) ] || fail "the cap test did not connect ($held fds)"
        ok "100 connections from one address: attestd holds $((held - base_fds)) (cap 51)"
        settle $((base_fds + 2)) $((HEADER_TIMEOUT + 5)) >/dev/null
fi

# ---- 4. headline: 10,000 connections while the agent attests ---------------------------------
if want 4; then
        echo "# 4. 10,000 idle/half-handshake/slowloris connections from 199 addresses + the agent"
        # --header-timeout and --idle-timeout 90 s so the attackers' connections are held for the whole test (1 and 2 check
        # the cut), and a connection cap above 10,000 / 90 % (the table-full eviction stays out of it)
        stop_daemon
        HEADER_TIMEOUT=90 start_verifier --max-connections 12000 --idle-timeout 90
        sleep 0.5
        base_fds=$(nfds) base_rss=$(rss_kb)
        : >rounds.txt
        attack 10000 2 200 mix "$(mem 150 300)" hold4.txt
        # opening them: up to 40 s (release), 120 s under ASan (each TLS accept several times
        # slower; 7,999 in 40 s on a loaded machine)
        for _ in $(seq "$(mem 200 600)"); do
                [ -f hold4.txt ] && [ "$(sed -n 's/open=\([0-9]*\).*/\1/p' hold4.txt)" -ge 9950 ] && break
                nap 0.2
        done
        held=$(sed -n 's/open=\([0-9]*\).*/\1/p' hold4.txt)
        [ "$held" -ge 9950 ] || fail "the attackers could not open 10,000 connections: $(cat hold4.txt)"
        sleep 2
        # attestd's CPU holding them, nobody else talking (ticks are 1/100 s)
        c0=$(ticks)
        sleep 5
        hold_ticks=$(( $(ticks) - c0 ))
        echo "# attestd holding 10,000 connections: $hold_ticks ticks of CPU in 5 s"
        max_fds=0 max_rss=0 c0=$(ticks) w0=$(date +%s%N)
        for i in $(seq 20); do
                once agent.log || fail "round $i under attack did not pass: $(tail -3 agent.log)"
                f=$(nfds) r=$(rss_kb)
                [ "$f" -gt "$max_fds" ] && max_fds=$f
                [ "$r" -gt "$max_rss" ] && max_rss=$r
        done
        st4=$(cat hold4.txt)
        # attestd's CPU while holding the connections, in % of one core (ticks are 1/100 s)
        cpu=$(( ($(ticks) - c0) * 100 * 10000000 / ($(date +%s%N) - w0) ))
        retreat
        p99=$(sort -n rounds.txt | tail -1) p50=$(sort -n rounds.txt | sed -n 10p)
        echo "# attackers: $st4; attestd during: up to $max_fds fds, RSS up to $max_rss kB"
        echo "# agent rounds under attack: p50 $p50 ms, p99 (max of 20) $p99 ms"
        echo "# attestd CPU during the rounds: $cpu % of one core"
        # release build: measured 36 with poll, 945 with epoll+turbo (2 cores): 150 is the line,
        # asserted by the release stage of tests/run-all.sh. Under ASan every poll() over the
        # 10,000 fds costs several times more: dd940f4's own ASan attestd used 215 ticks on this
        # round's quiet machine (this round's 183-311), so its line is 600, still far below a spin
        # (which under ASan costs more than the release build's 945)
        [ "$hold_ticks" -le "$(mem 150 600)" ] ||
                fail "attestd used $hold_ticks ticks in 5 s holding idle connections (line $(mem 150 600))"
        [ "$p99" -lt 1000 ] || fail "agent round p99 $p99 ms under attack (want < 1000)"
        [ "$max_fds" -le $((10149 + 300)) ] || fail "attestd held $max_fds fds (199 x 51)"
        [ "$max_fds" -ge 9000 ] || fail "the attack did not reach attestd ($max_fds fds)"
        [ "$max_rss" -le $((base_rss + $(mem 400000 1200000))) ] || fail "RSS $max_rss kB under attack"
        after=$(settle $((base_fds + 2)) $((HEADER_TIMEOUT + 8)))
        sleep 1 # the reaper trims the heap within 200 ms of the connections going
        rss_after=$(rss_kb)
        echo "# after the attack: $after fds (baseline $base_fds), RSS $rss_after kB (baseline $base_rss)"
        [ "$after" -le $((base_fds + 2)) ] || fail "fds not back to baseline: $after"
        [ "$(closewait)" -eq 0 ] || fail "CLOSE-WAIT left after the attack"
        [ "$rss_after" -le $((base_rss + $(mem 30000 400000))) ] || fail "RSS not back near baseline: $rss_after kB"
        ok "20 rounds under 10,000 connections, p99 $p99 ms; fds and RSS back to baseline"
fi

# ---- 5. bodies ---------------------------------------------------------------------------------
if want 5; then
        echo "# 5. 40 concurrent 16 MiB bodies"
        rss0=$(rss_kb)
        hwm_reset
        codes=$(python3 "$HOSTILE" bodies "$port" "$CA" 40 16777216 /v1/agents/nonexistent/evidence)
        rss1=$(hwm_kb)
        echo "# unknown agent, no token: statuses: $(tr ' ' '\n' <<<"$codes" | sort | uniq -c | xargs); peak RSS $rss0 -> $rss1 kB"
        [ "$rss1" -le $((rss0 + $(mem 40000 80000))) ] || fail "peak RSS $rss0 -> $rss1 kB for refused bodies"
        [ "$(tr ' ' '\n' <<<"$codes" | grep -cx 404)" -eq 40 ] || fail "not 40 x 404: $codes"
        ok "40 x 16 MiB to an unknown agent: 404 before the body, peak RSS $rss0 -> $rss1 kB"
        rss0=$(rss_kb)
        hwm_reset
        codes=$(python3 "$HOSTILE" bodies "$port" "$CA" 40 16777216 "/v1/agents/$AGENT_ID/evidence")
        rss2=$(hwm_kb)
        echo "# real agent: statuses: $(tr ' ' '\n' <<<"$codes" | sort | uniq -c | xargs); peak RSS $rss0 -> $rss2 kB"
        # 64 MiB budget + libmicrohttpd and TLS buffers; without the budget 40 x 16 MiB = 640 MiB
        [ "$rss2" -le $((rss0 + 64 * 1024 + $(mem 40000 300000))) ] || fail "peak RSS $rss0 -> $rss2 kB: budget not kept"
        [ "$(tr ' ' '\n' <<<"$codes" | grep -cx 503)" -ge 30 ] || fail "budget: too few 503: $codes"
        ok "40 x 16 MiB to a real agent: in-flight budget held (503 + Retry-After), peak RSS $rss0 -> $rss2 kB"
fi

# ---- 6. framing --------------------------------------------------------------------------------
if want 6; then
        echo "# 6. request framing and the URL"
        # raw NAME REQUEST(printf format): the response to these bytes in $resp, its status in $status
        raw() {
                printf "$2" >"$1.req"
                resp=$(python3 "$HOSTILE" raw "$port" "$CA" "@$1.req" | tr -d '\r')
                status=$(head -1 <<<"$resp" | cut -d' ' -f2)
                body=$(sed '1,/^$/d' <<<"$resp")
        }
        raw_json() { # NAME STATUS REQUEST: STATUS with a JSON {"error","detail"} body
                raw "$1" "$3"
                [ "$status" = "$2" ] || fail "$1: status $status, want $2: $resp"
                jq -e '.error and .detail' <<<"$body" >/dev/null || fail "$1: not the JSON error: $body"
                ok "$1: $status $(jq -c . <<<"$body")"
        }
        raw_json dup-content-length 400 "POST /v1/agents/$AGENT_ID/evidence HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 99999999\r\n\r\n{}"
        raw_json cl-with-te 400 "POST /v1/agents/$AGENT_ID/evidence HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        raw_json te-not-chunked 400 "POST /v1/agents/$AGENT_ID/evidence HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        raw_json nul-in-path 400 "GET /v1/agents/a%%00b HTTP/1.1\r\nHost: a\r\n\r\n"
        raw_json nul-in-query 400 "GET /v1/agents/$AGENT_ID/results?limit=1%%00 HTTP/1.1\r\nHost: a\r\n\r\n"
        api GET "/v1/agents/$AGENT_ID" "" "$READER"
        expect 200 "" -- "the agent itself still answers"
        # libmicrohttpd 0.9.75 answers these before attestd sees the request, with its own HTML bodies
        # (no hook in that version): the status is checked, the body recorded (docs/api.md)
        for cl in abc -1 1x; do
                raw "cl-$cl" "POST /v1/agents/$AGENT_ID/evidence HTTP/1.1\r\nHost: a\r\nContent-Length: $cl\r\n\r\n{}"
                [ "$status" = 400 ] || fail "Content-Length $cl: status $status"
                echo "# Content-Length '$cl': $status, libmicrohttpd's own body: $(grep -o '<title>[^<]*' <<<"$resp" | head -1)"
        done
        raw cl-overflow "POST /v1/agents/$AGENT_ID/evidence HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n{}"
        [ "$status" = 400 ] || [ "$status" = 413 ] || fail "Content-Length overflow: status $status"
        echo "# Content-Length 2^76: $status, libmicrohttpd's own body: $(grep -o '<title>[^<]*' <<<"$resp" | head -1)"
        # raw_big NAME WANT PYTHON-EXPR: a head too big for the connection's memory
        raw_big() {
                python3 -c "import sys; sys.stdout.write($3)" >"$1.req"
                resp=$(python3 "$HOSTILE" raw "$port" "$CA" "@$1.req" | tr -d '\r')
                status=$(head -1 <<<"$resp" | cut -d' ' -f2)
                [ "$status" = "$2" ] || fail "$1: status $status, want $2"
                echo "# $1: $status, libmicrohttpd's own body: $(grep -o '<title>[^<]*' <<<"$resp" | head -1)"
        }
        raw_big url-100k 414 "'GET /' + 'a' * 100000 + ' HTTP/1.1\r\nHost: a\r\n\r\n'"
        raw_big header-60k 431 "'GET /healthz HTTP/1.1\r\nHost: a\r\nX: ' + 'a' * 60000 + '\r\n\r\n'"
        raw_big headers-2000 431 "'GET /healthz HTTP/1.1\r\nHost: a\r\n' + ''.join('X%d: a\r\n' % i for i in range(2000)) + '\r\n'"
        # the same heads from curl, which stops at a failed write: the library answers in the
        # middle of the head and closes, and without a lingering close the rest of the head
        # arriving at a closed socket reset the answer away (curl exit 55 for 3-16 of these 20
        # URLs in three runs). 20 of each, 4 at a time, in one curl: every answer must arrive.
        big_heads() { # WANT URL [CURL-ARGS...]: 20 x URL
                local want=$1 url=$2 a=() i
                shift 2
                for i in $(seq 20); do a+=(-o /dev/null "$url"); done
                got=$(curl -s -Z --parallel-max 4 --cacert "$CA" -w '%{http_code} %{exitcode}\n' \
                        "$@" "${a[@]}" | sort | uniq -c | xargs || true)
                [ "$got" = "20 $want 0" ] || fail "curl, head too big: $got (want 20 x $want, exit 0)"
        }
        big_heads 414 "https://127.0.0.1:$port/$(head -c 100000 /dev/zero | tr '\0' a)"
        big_heads 431 "https://127.0.0.1:$port/healthz" -H "X: $(head -c 60000 /dev/zero | tr '\0' a)"
        ok "heads too big, from curl: 20 x 414 and 20 x 431 answered, none reset"
        api GET /healthz
        expect 200 "" -- "healthz after the oversized heads"
fi

# ---- 7. TLS suites -----------------------------------------------------------------------------
if want 7; then
        echo "# 7. TLS 1.2: AEAD only"
        if echo | timeout 10 gnutls-cli --x509cafile "$CA" -p "$port" 127.0.0.1 \
                --priority "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:+AES-256-CBC:-MAC-ALL:+SHA1:+SHA256:+SHA384" \
                >tls-cbc.log 2>&1; then
                fail "a CBC-only TLS 1.2 client completed a handshake: $(grep Description tls-cbc.log)"
        fi
        grep -q "Handshake was completed" tls-cbc.log && fail "CBC handshake completed"
        echo | timeout 10 gnutls-cli --x509cafile "$CA" -p "$port" 127.0.0.1 \
                --priority "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM" >tls-gcm.log 2>&1 || true
        grep -q "Handshake was completed" tls-gcm.log || fail "a GCM TLS 1.2 client failed: $(tail -3 tls-gcm.log)"
        echo | timeout 10 gnutls-cli --x509cafile "$CA" -p "$port" 127.0.0.1 \
                --priority "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+CHACHA20-POLY1305" >tls-cc.log 2>&1 || true
        grep -q "Handshake was completed" tls-cc.log || fail "a ChaCha20 TLS 1.2 client failed"
        ok "TLS 1.2: CBC-only client refused, AES-GCM and ChaCha20-Poly1305 clients served"

fi

# ---- 8. mTLS -----------------------------------------------------------------------------------
if want 8; then
        stop_daemon
        echo "# 8. --tls-client-ca"
        ( cd certs
          openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out rogue.key 2>/dev/null
          openssl req -new -key rogue.key -subj "/CN=rogue" -out rogue.csr 2>/dev/null
          printf 'extendedKeyUsage=clientAuth\n' >rogue.ext
          openssl x509 -req -in rogue.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -days 30 \
                  -extfile rogue.ext -out rogue.pem 2>/dev/null )
        start_attestd --ek-ca "$SWTPM_STATE/ca" --interval 1 --tls-client-ca "$CA"
        c=$(curl -s --cacert "$CA" -o nocert.json -w '%{http_code}' "https://127.0.0.1:$port/healthz" || true)
        [ "$c" = 403 ] || [ "$c" = 000 ] || fail "no client certificate: $c"
        [ "$c" = 000 ] || jq -e '.error == "client_certificate_required"' nocert.json >/dev/null ||
                fail "no client certificate: $(cat nocert.json)"
        c=$(curl -s --cacert "$CA" --cert certs/rogue.pem --key certs/rogue.key -o rogue.json \
                -w '%{http_code}' "https://127.0.0.1:$port/healthz" || true)
        [ "$c" = 403 ] || [ "$c" = 000 ] || fail "a certificate from another CA: $c"
        c=$(curl -s --cacert "$CA" --cert certs/client.pem --key certs/client.key -o good.json \
                -w '%{http_code}' "https://127.0.0.1:$port/healthz" || true)
        [ "$c" = 200 ] || fail "the CA's client certificate: $c $(cat good.json)"
        once agent.log && fail "the agent without a client certificate passed"
        once agent.log --cert certs/client.pem --key certs/client.key ||
                fail "the agent with a client certificate did not pass: $(tail -3 agent.log)"
        ok "mTLS: no certificate and another CA's refused (403), the agent with the CA's certificate passes"
        # a resumed session (TLS session tickets) keeps what its first handshake proved: the CA's
        # client certificate, or no certificate at all; resuming adds none
        tget() { # OUT [s_client options]: GET /healthz over one TLS 1.3 connection
                local out=$1
                shift
                printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' |
                        timeout 20 openssl s_client -connect "127.0.0.1:$port" -CAfile "$CA" \
                                -tls1_3 -ign_eof "$@" >"$out" 2>&1 || true
        }
        tget m-first -cert certs/client.pem -key certs/client.key -sess_out m-sess.pem
        grep -q 'HTTP/1.1 200 ' m-first || fail "mTLS over s_client: $(tail -3 m-first)"
        tget m-again -sess_in m-sess.pem
        grep -q '^Reused, ' m-again || fail "mTLS: the session was not resumed"
        grep -q 'HTTP/1.1 200 ' m-again || fail "mTLS: the resumed session lost its certificate"
        tget m-nocert -sess_out m-nocert.pem
        grep -q 'HTTP/1.1 403 ' m-nocert || fail "mTLS without a certificate: $(tail -3 m-nocert)"
        tget m-nocert-again -sess_in m-nocert.pem -cert certs/client.pem -key certs/client.key
        grep -q '^Reused, ' m-nocert-again || fail "mTLS: the session without a certificate was not resumed"
        grep -q 'HTTP/1.1 403 ' m-nocert-again ||
                fail "mTLS: a resumed session without a certificate was let in"
        ok "mTLS: a resumed session keeps its client certificate (200), one made without stays refused"
        stop_daemon
fi

# ---- 9. the connection table full ------------------------------------------------------------
if want 9; then
        echo "# 9. --max-connections 1000 held full by 3,000 idle connections from 99 addresses"
        stop_daemon
        HEADER_TIMEOUT=60 start_verifier --max-connections 1000 --idle-timeout 60
        : >rounds.txt
        attack 3000 2 100 idle 120 hold9.txt
        # filling waits up to 20 s (release) or 60 s (ASan: its TLS accepts are several times
        # slower; dd940f4's ASan attestd reached 788 of 1,000 in 20 s on this round's machine).
        # Past 90 % the reaper closes the connections idle longest down to 60 % every 50 ms, so
        # on a busy machine the table swings between the two: sampled every 5 ms (one sample
        # every 0.2 s missed every top in CI, under load, with attestd doing its job)
        for _ in $(seq 100); do [ -f hold9.txt ] && break; nap 0.1; done
        full=$(python3 "$HOSTILE" fds "$daemon_pid" 900 "$(mem 20 60)")
        [ "$full" -ge 900 ] ||
                fail "the table did not fill: at most $full fds (attackers: $(cat hold9.txt 2>/dev/null))"
        # the listen queue (ss: Recv-Q of the listening socket, Send-Q its limit), sampled while
        # the agent runs: at the cap attestd keeps accepting (a newcomer evicts), the 2,000
        # attackers past the cap fit the queue (4096), so it never fills and drops a SYN
        ( while :; do ss -Hltn "( sport = :$port )" | awk '{ print $2, $3 }'; nap 0.05; done \
                >lq9.txt ) &
        sampler=$!
        for i in $(seq 10); do
                once agent.log || fail "round $i with the table full did not pass: $(tail -3 agent.log)"
        done
        kill "$sampler"
        wait "$sampler" 2>/dev/null || true
        lq=$(sort -n lq9.txt | tail -1)
        echo "# listen queue: longest ${lq% *} of ${lq#* } in $(wc -l <lq9.txt) samples"
        st9=$(cat hold9.txt)
        retreat
        p99=$(sort -n rounds.txt | tail -1)
        evicted=$(metric 'attestd_http_connections_closed_total{reason="evicted"}')
        pressure=$(metric 'attestd_http_connections_closed_total{reason="pressure"}')
        echo "# attackers: $st9; attestd held $full fds, evicted ${evicted:-none} for newcomers and ${pressure:-none} under pressure; 10 agent rounds (ms): $(sort -n rounds.txt | xargs)"
        # the library's own cap is --max-connections + 1000/8 + 16 (room for those evicted and
        # not yet closed)
        [ "$full" -le $((base_fds + 1000 + 1000 / 8 + 16)) ] || fail "$full fds held, cap 1000"
        [ -n "$lq" ] && [ "${lq% *}" -lt "${lq#* }" ] ||
                fail "the listen queue filled (${lq:-no samples}): SYNs dropped"
        [ "${evicted:-0}" -gt 0 ] || fail "no connection evicted for a newcomer: ${evicted:-none}"
        [ "$p99" -lt 5000 ] || fail "agent round $p99 ms with the table full"
        ok "table full: connections waiting longest for a head evicted, the agent passes 10 rounds"
fi

# ---- 10. the table full of requests in progress ----------------------------------------------
if want 10; then
        echo "# 10. --max-connections 16 held by 16 requests in progress (POST heads, bodies withheld)"
        stop_daemon
        # --min-body-rate would close a withheld body --body-rate-grace (5 s) after its head and
        # free its slot for 0.2 s until the attacker reconnects, and a newcomer in that gap would
        # be served. That rule has its own test (hostile-http-budget); here the grace outlasts the
        # section, so only the table's rule is at work
        start_verifier --max-connections 16 --body-rate-grace 300
        attack 16 2 3 "busy:/v1/agents/$AGENT_ID/evidence" 60 hold10.txt
        for _ in $(seq 100); do
                grep -qs '^open=16 ' hold10.txt && break
                nap 0.2
        done
        grep -qs '^open=16 ' hold10.txt || fail "16 requests did not connect: $(cat hold10.txt)"
        # the attacker counts a request once its head is sent; attestd reads it a moment later
        # (1 of 6 samples 2 ms after "open=16": two heads still unread), and a connection whose
        # head is not yet read may be evicted like any other waiting for one (CI met it: the
        # newcomer was served). The premise is attestd's side: 16 connections, nothing unread,
        # twice 50 ms apart (ss, no connection of its own: a probe would be a newcomer too)
        read_all=0
        for _ in $(seq 100); do
                if ss -Htn state established "( sport = :$port )" |
                        awk '{ n++; if ($1 > 0) q++ } END { exit !(n == 16 && q == 0) }'; then
                        read_all=$((read_all + 1))
                        [ $read_all -ge 2 ] && break
                else
                        read_all=0
                fi
                nap 0.05
        done
        [ $read_all -ge 2 ] || fail "attestd did not read the 16 heads: $(ss -Htn "( sport = :$port )" | awk '{ print $2 }' | sort | uniq -c | xargs)"
        # nothing to evict (a request in progress keeps its slot until --body-timeout): the
        # newcomer itself is closed at once, not queued
        t0=$(date +%s%N)
        c=$(curl -s --cacert "$CA" -o /dev/null -w '%{http_code}' --max-time 10 \
                "https://127.0.0.1:$port/healthz" || true)
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        st10=$(cat hold10.txt)
        [ "$c" = 000 ] || fail "a newcomer with every slot in a request: $c, want it closed (attackers: $st10)"
        [ "$ms" -lt 3000 ] || fail "the newcomer was closed after $ms ms, not at once"
        retreat
        # the premise: not one of the 16 was closed while the newcomer was turned away
        [[ "$st10" == "open=16 connects=16 closed=0 "* ]] ||
                fail "the 16 requests did not keep their slots: $st10"
        refused=$(metric 'attestd_http_connections_closed_total{reason="refused"}')
        evicted=$(metric 'attestd_http_connections_closed_total{reason="evicted"}')
        [ "${refused:-0}" -ge 1 ] || fail "refused connections: ${refused:-none}, want >= 1"
        [ "${evicted:-x}" = 0 ] || fail "evicted connections: ${evicted:-none}, want 0"
        once agent.log || fail "the agent after the requests left: $(tail -3 agent.log)"
        ok "table full of requests in progress: a newcomer closed in $ms ms (refused $refused, evicted 0), the agent passes after"
fi

# ---- 11. lingering closes at their caps ------------------------------------------------------
if want 11; then
        echo "# 11. refused requests whose clients never close: lingering closes at their caps"
        stop_daemon
        start_verifier
        base11=$(nfds)
        lingered() { metric "attestd_http_lingering_closes_total{end=\"$1\"}"; }
        # one client refused in the head that keeps sending 3 MB: cut after 1 MiB dropped
        python3 - "$port" "$CA" <<'PY' || fail "the 3 MB sender did not run"
import socket, ssl, sys
c = ssl.create_default_context(cafile=sys.argv[2]); c.check_hostname = False
s = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10))
s.sendall(b"POST /v1/agents HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
          b"Content-Length: 3000000\r\n\r\n")
try:
    for _ in range(3000000 // 16384):
        s.sendall(b" " * 16384)
except OSError:
    pass
PY
        for _ in $(seq 30); do [ "$(lingered cap)" = 1 ] && break; nap 0.1; done
        [ "$(lingered cap)" = 1 ] || fail "3 MB after a refusal: lingering cut at the byte cap $(lingered cap) times, want 1"
        # 320 from 8 addresses, each refused and then silent, never closing: 256 linger (2 s
        # each), the rest are closed at once, and each reconnects as soon as it is closed
        attack 320 2 9 "refused:/v1/agents" 12 hold11.txt
        peak=$(python3 "$HOSTILE" fds "$daemon_pid" $((base11 + 320 + 256)) 5)
        once agent.log || fail "the agent with the lingering table full: $(tail -3 agent.log)"
        full=$(lingered full) timeout=$(lingered timeout)
        st11=$(cat hold11.txt)
        retreat
        after=$(settle $((base11 + 2)) 5)
        echo "# attackers: $st11; attestd: up to $peak fds (baseline $base11), lingering closes ended by timeout $timeout, not kept (full) $full; after: $after fds"
        [ "${full:-0}" -gt 0 ] || fail "the lingering table never filled (full: ${full:-none})"
        [ "${timeout:-0}" -ge 256 ] || fail "lingering closes ended by the 2 s timeout: ${timeout:-none}, want >= 256"
        # connections (320 at most) plus lingering sockets (256 at most), and the agent's
        [ "$peak" -le $((base11 + 320 + 256 + 8)) ] || fail "$peak fds held: lingering past its cap"
        [ "$after" -le $((base11 + 2)) ] || fail "fds not released after the attack: $after, baseline $base11"
        ok "lingering closes: cut at 1 MiB, at most 256 held (2 s each, the rest closed at once), the agent passes, fds back to $after"
fi

echo "# hostile http: all passed"
