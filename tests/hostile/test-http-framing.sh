#!/usr/bin/env bash
# HTTP framing (hostile round three, item 5; daemon/http/http-frame.h, docs/SECURITY.md "HTTP framing
# and proxies"): a real attestd over TLS on loopback, and a real HAProxy from Debian in front of it.
#  1. direct: every malformed head RFC 9112 rejects (whitespace in or before a field name, obs-fold,
#     Content-Length with Transfer-Encoding, a Transfer-Encoding other than "chunked", HTTP/1.1
#     without Host, control bytes in values, %2F / %5C / %00 in the path, ...) is answered 400
#     {"error":"bad_request","detail"} with Connection: close, and the request sent behind it on
#     the same connection is never answered; libmicrohttpd's own 414 for 17 KB and 100 KB URLs
#  2. through HAProxy (unprivileged, its own configuration in the work directory, reusing its
#     TLS connections to attestd): each case is refused by HAProxy or by attestd, and the request
#     sent behind it reaches attestd only when HAProxy itself forwarded and answered it (counted in
#     attestd's /metrics); a GET /healthz after each case is answered by attestd as itself
#  3. a well-formed POST with a chunked body and one with Content-Length still pass the framing
#     check (they reach the router: 404 agent_not_found), directly and through HAProxy
# Usage: test-http-framing.sh ATTESTD TOP
set -euo pipefail
[ $# -eq 2 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ATTESTD=$(realpath "$1") TOP=$(realpath "$2")
export ATTESTD TOP
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
FRAMING=$TOP/tests/hostile/http-framing.py
need python3 haproxy
test_begin http-framing
cd "$work"
token READER reader
start_daemon

# ---- 1. straight to attestd ------------------------------------------------------------------
echo "# 1. malformed request heads, straight to attestd over TLS"
python3 "$FRAMING" direct "$port" "$CA" a1 >direct.txt || rc=$?
cat direct.txt
[ "${rc:-0}" -eq 0 ] || fail "attestd accepted or misanswered a malformed head (above)"
ok "$(grep -c '^ok' direct.txt) malformed heads refused by attestd, each connection closed"

# ---- 2. through HAProxy ----------------------------------------------------------------------
echo "# 2. the same requests through HAProxy ($(haproxy -v | head -1 | cut -d' ' -f1-3))"
# haproxy.cfg for PORT: plain HTTP on loopback in front, TLS to attestd (verified) behind, the
# connections to attestd reused across clients (where a desync would poison the next request)
proxy_cfg() {
        cat <<EOF
global
        maxconn 64
        log stderr format raw local0 err
defaults
        mode http
        timeout connect 5s
        timeout client 10s
        timeout server 10s
        timeout http-request 5s
        http-reuse always
frontend fe
        bind 127.0.0.1:$1
        default_backend attestd
backend attestd
        server a 127.0.0.1:$port ssl verify required ca-file $CA verifyhost localhost sni str(localhost)
EOF
}
proxy_pid="" proxy_port=""
kill_at_exit proxy_pid
for _ in 1 2 3 4 5; do # a free port: retried on a clash
        p=$((30000 + RANDOM % 20000))
        python3 -c "import socket; socket.socket().bind(('127.0.0.1', $p))" 2>/dev/null || continue
        proxy_cfg "$p" >haproxy.cfg
        haproxy -c -f haproxy.cfg >/dev/null || fail "haproxy.cfg: $(haproxy -c -f haproxy.cfg 2>&1 | tail -2)"
        haproxy -db -f haproxy.cfg >haproxy.log 2>&1 &
        proxy_pid=$!
        for _ in $(seq 100); do
                # still running: it holds the port (haproxy exits when the bind fails)
                if curl -s -o /dev/null "http://127.0.0.1:$p/healthz" &&
                        kill -0 "$proxy_pid" 2>/dev/null; then
                        proxy_port=$p
                        break
                fi
                kill -0 "$proxy_pid" 2>/dev/null || break
                nap 0.05
        done
        [ -z "$proxy_port" ] || break
        kill "$proxy_pid" 2>/dev/null || true
        wait "$proxy_pid" 2>/dev/null || true
        proxy_pid=""
done
[ -n "$proxy_port" ] || fail "haproxy did not start: $(tail -3 haproxy.log)"
metrics_cmd=(curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics")
python3 "$FRAMING" proxy "$proxy_port" a1 "${metrics_cmd[@]}" >proxy.txt || rc2=$?
cat proxy.txt
[ "${rc2:-0}" -eq 0 ] || fail "HAProxy and attestd disagree (above)"
ok "$(grep -c '^ok' proxy.txt) requests through HAProxy: refused by one of them or normalised by HAProxy, nothing smuggled"

# ---- 3. well-formed bodies still pass --------------------------------------------------------
echo "# 3. well-formed bodies pass the framing check"
for via in direct proxy; do
        if [ $via = direct ]; then url="https://127.0.0.1:$port"; else url="http://127.0.0.1:$proxy_port"; fi
        for hdr in "Transfer-Encoding: chunked" "X-Framing: content-length"; do
                code=$(curl -s --cacert "$CA" -o resp.json -w '%{http_code}' -X POST \
                        -H "Content-Type: application/json" -H "$hdr" --data-binary '{}' \
                        "$url/v1/agents/a1/evidence")
                if [ "$code" != 404 ] || [ "$(jq -r .error resp.json)" != agent_not_found ]; then
                        fail "$via, $hdr: $code $(cat resp.json)"
                fi
        done
done
ok "chunked and Content-Length bodies reach the router, directly and through HAProxy"
kill "$proxy_pid"
wait "$proxy_pid" 2>/dev/null || true
proxy_pid=""
stop_daemon
echo "# http framing: all passed"
