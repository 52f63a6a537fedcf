#!/usr/bin/env bash
# attestctl's refusals, each against a real server over TLS on loopback: a real attestd (tokens,
# roles, CA, the server gone) and a fake HTTPS server of this test (python3 ssl) for what attestd
# never sends: an answer over the cap (with and without Content-Length), garbage, a NUL byte, an
# answer cut off mid-body, a non-JSON error, and TLS 1.2 with only CBC suites.
#  1. tokens: a wrong token (401 from the server, exit 4), a reader token doing admin work (403,
#     exit 4, the role it needs named),
#     --token on the command line refused without echoing it, a token file readable by group or
#     others refused, ATTESTD_TOKEN / ATTESTD_TOKEN_FILE, a trailing newline in the file dropped
#  2. TLS: another CA (exit 7, nothing printed on stdout), http:// refused (exit 2), TLS 1.2 with
#     CBC suites only refused (exit 7) while TLS 1.2 with AES-GCM is accepted
#  3. the fake server's answers: every one refused with exit 6 and nothing on stdout
#  4. attestd gone: exit 7
# Usage: test-attestctl-neg.sh ATTESTD ATTESTCTL TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
[ $# = 3 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ATTESTD=$(realpath "$1") ATTESTCTL=$(realpath "$2") TOP=$(realpath "$3")
export ATTESTD TOP
need python3
test_begin
cd "$work"
agent_tokens
start_daemon
fake_pid=""
kill_at_exit fake_pid
(umask 077 && printf '%s\n' "$ADMIN" >admin.token && printf '%s\n' "$READER" >reader.token)
URL=https://127.0.0.1:$port

ctl() { # ARGS...: stdout out.txt, stderr err.txt, status rc
        rc=0
        "$ATTESTCTL" "$@" >out.txt 2>err.txt || rc=$?
}
want() { # RC PATTERN what: exit RC, stderr matching PATTERN, nothing on stdout
        [ "$rc" = "$1" ] || fail "$3: exit $rc, want $1: $(cat err.txt)"
        grep -qE -- "$2" err.txt || fail "$3: stderr '$(cat err.txt)' does not match '$2'"
        [ -s out.txt ] && fail "$3: printed on stdout: $(head -c 300 out.txt)"
        ok "$3: exit $1, $(head -1 err.txt | cut -c1-110)"
}

# ---- 1. tokens --------------------------------------------------------------------------------
echo "# 1. tokens"
(umask 077 && printf 'not-a-token\n' >wrong.token)
ctl agents list --url "$URL" --ca "$CA" --token-file wrong.token
want 4 "GET /v1/agents: 401 unauthorized: " "a wrong token"
printf '{}' >empty.json
ctl policies put p empty.json --url "$URL" --ca "$CA" --token-file reader.token
want 4 "PUT /v1/policies/p: 403 forbidden: PUT here needs a token of role admin; this token's role is reader" \
        "a reader token putting a policy"
ctl agents list --url "$URL" --ca "$CA" "--token=$ADMIN"
want 2 "never taken on the command line" "--token=TOKEN"
grep -qF "$ADMIN" err.txt && fail "the token was echoed: $(cat err.txt)"
ctl agents list --url "$URL" --ca "$CA" --token "$ADMIN"
want 2 "never taken on the command line" "--token TOKEN"
grep -qF "$ADMIN" err.txt && fail "the token was echoed: $(cat err.txt)"
for c in agents policies status; do
        "$ATTESTCTL" "$c" --help | grep -qE -- '--token( |=|$)' && fail "$c --help offers --token"
done
ok "no --help offers --token"
cp admin.token shared.token
chmod 640 shared.token
ctl agents list --url "$URL" --ca "$CA" --token-file shared.token
want 2 "shared.token: the token file must not be accessible by group or others" \
        "a token file of mode 0640"
chmod 604 shared.token
ctl agents list --url "$URL" --ca "$CA" --token-file shared.token
want 2 "must not be accessible by group or others" "a token file of mode 0604"
rc=0
ATTESTD_URL=$URL ATTESTD_CA=$CA ATTESTD_TOKEN_FILE=admin.token "$ATTESTCTL" agents list --json \
        >out.txt 2>err.txt || rc=$?
[ $rc = 0 ] && [ "$(jq '.agents | length' out.txt)" = 0 ] ||
        fail "ATTESTD_TOKEN_FILE (a token with a trailing newline): $rc $(cat err.txt)"
rc=0
ATTESTD_URL=$URL ATTESTD_CA=$CA ATTESTD_TOKEN=$READER "$ATTESTCTL" policies list --json \
        >out.txt 2>err.txt || rc=$?
[ $rc = 0 ] || fail "ATTESTD_TOKEN: $rc $(cat err.txt)"
ok "ATTESTD_URL, ATTESTD_CA, ATTESTD_TOKEN_FILE (trailing newline dropped) and ATTESTD_TOKEN"
ctl agents list --url "$URL" --ca "$CA"
want 2 "no token: give --token-file" "no token at all"
# the token cap (512 bytes): at 511 and 512 it is sent (attestd does not know it: 401), at 513
# it is refused before any request
for n in 511 512 513; do
        (umask 077 && head -c "$n" /dev/zero | tr '\0' a >long.token && echo >>long.token)
        ctl agents list --url "$URL" --ca "$CA" --token-file long.token
        if [ "$n" = 513 ]; then
                want 2 "long.token: the token is over 512 bytes" "a token of 513 bytes"
        else
                want 4 "401 unauthorized" "a token of $n bytes (sent)"
        fi
done

# ---- 2. TLS -----------------------------------------------------------------------------------
echo "# 2. TLS"
ctl agents list --url "$URL" --ca "$work/certs/other-ca.pem" --token-file admin.token
want 7 "GET /v1/agents: .*(certificate|SSL).*is --ca the CA" "the verifier's certificate from another CA"
ctl status --url "$URL" --ca "$work/certs/other-ca.pem"
want 7 "certificate" "status with another CA"
ctl agents list --url "http://127.0.0.1:$port" --ca "$CA" --token-file admin.token
want 2 "--url must be https://" "an http:// URL"

# ---- the fake server ---------------------------------------------------------------------------
cat >fake.py <<'PY'
# fake.py CERT KEY PORTFILE MODE: one HTTPS answer per connection, as MODE says
import json, socket, ssl, sys
cert, key, portfile, mode = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
if mode in ("cbc12", "gcm12"):
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers("ECDHE-ECDSA-AES128-SHA" if mode == "cbc12" else "ECDHE-ECDSA-AES128-GCM-SHA256")
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(8)
open(portfile + ".tmp", "w").write(str(ls.getsockname()[1]))
import os; os.rename(portfile + ".tmp", portfile)
BIG = 9 * 1024 * 1024
def answer(c):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        d = c.recv(4096)
        if not d:
            return
        head += d
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    if mode.startswith("exact-"):  # exact-cl:N, exact-close:N: valid JSON of exactly N bytes
        kind, n = mode[6:].split(":")
        n = int(n)
        body = b'{"agents":[],"pad":"' + b"x" * (n - 22) + b'"}'
        assert len(body) == n
        if kind == "cl":
            c.sendall(ok + b"Content-Length: %d\r\n\r\n" % n)
        else:
            c.sendall(ok + b"Connection: close\r\n\r\n")
        for i in range(0, n, 65536):
            c.sendall(body[i:i + 65536])
    elif mode == "big-cl" or mode == "big-close":
        body = b'{"agents":[],"pad":"' + b"x" * BIG + b'"}'
        if mode == "big-cl":
            c.sendall(ok + b"Content-Length: %d\r\n\r\n" % len(body))
        else:
            c.sendall(ok + b"Connection: close\r\n\r\n")
        for i in range(0, len(body), 65536):
            c.sendall(body[i:i + 65536])
    elif mode == "garbage":
        c.sendall(ok + b"Content-Length: 18\r\n\r\n<html>hello</html>")
    elif mode == "nul":
        c.sendall(ok + b'Content-Length: 14\r\n\r\n{"agents":[]}\0')
    elif mode == "partial":
        c.sendall(ok + b'Content-Length: 5000\r\n\r\n{"agents":[{"id":"a"')
    elif mode == "fleet":  # an attestd with host identity, filters and cursor paging
        line = head.split(b"\r\n", 1)[0].decode()
        open(portfile + ".requests", "a").write(line + "\n")
        path = line.split(" ")[1]
        if "status=bogus" in path:
            body = b'{"error":"bad_query","detail":"status: unknown state bogus"}'
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            return
        a1 = {"id": "a1", "state": "active", "stale": False, "last_status": "pass",
              "hostname": "web-01", "machine_id": "m1", "labels": {"role": "web"},
              "last_seen": "2026-12-03T10:00:00Z"}
        a2 = {"id": "a2", "state": "active", "stale": False, "last_status": "fail",
              "hostname": "db-01", "machine_id": "m2", "labels": {"role": "db"},
              "last_seen": "2026-12-03T10:00:01Z"}
        page = {"agents": [a2], "next": None} if "cursor=c1" in path else {"agents": [a1], "next": "c1"}
        body = json.dumps(page).encode()
        c.sendall(ok + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    elif mode == "old":  # an attestd before host identity: no query parameters at all
        line = head.split(b"\r\n", 1)[0].decode()
        open(portfile + ".requests", "a").write(line + "\n")
        if "?" in line.split(" ")[1]:
            body = b'{"error":"bad_query","detail":"this resource takes no query parameters"}'
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            return
        def ag(i, state, stale, last):
            return {"id": i, "state": state, "stale": stale, "last_status": last}
        page = {"agents": [ag("p1", "active", False, "pass"), ag("f1", "active", False, "fail"),
                           ag("s1", "stale", True, "fail"), ag("n1", "active", False, None),
                           ag("d1", "decommissioned", False, "pass")]}
        body = json.dumps(page).encode()
        c.sendall(ok + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    elif mode == "unready":  # an attestd whose store is not writable
        if b"GET /healthz " in head:
            body = b'{"error":"store_unavailable","detail":"database not writable: disk full"}'
            c.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
        else:
            body = (b'attestd_agents{state="active"} 3\nattestd_agents{state="failing"} 1\n'
                    b'attestd_agents{state="stale"} 0\nattestd_agents{state="never_attested"} 0\n'
                    b'attestd_attestations_total{result="pass"} 7\n')
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
    elif mode == "html500":
        c.sendall(b"HTTP/1.1 500 Oops\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<h1>oops</h1>")
    else:  # cbc12, gcm12: a good answer
        c.sendall(ok + b'Content-Length: 13\r\n\r\n{"agents":[]}')
while True:
    s, _ = ls.accept()
    try:
        c = ctx.wrap_socket(s, server_side=True)
        answer(c)
        c.close()
    except (ssl.SSLError, OSError):
        s.close()
PY
fake() { # MODE: the fake server in MODE on a free port, its URL in $FURL
        if [ -n "$fake_pid" ]; then kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fi
        rm -f fake.port
        python3 fake.py "$work/certs/server.pem" "$work/certs/server.key" fake.port "$1" \
                2>>fake.log &
        fake_pid=$!
        for _ in $(seq 100); do [ -s fake.port ] && break; nap 0.05; done
        [ -s fake.port ] || fail "the fake server did not start: $(cat fake.log)"
        FURL=https://127.0.0.1:$(cat fake.port)
}
fctl() { ctl agents list --url "$FURL" --ca "$CA" --token-file admin.token "$@"; }

fake gcm12
fctl --json
[ $rc = 0 ] || fail "TLS 1.2 with ECDHE-ECDSA-AES128-GCM: exit $rc: $(cat err.txt)"
ok "TLS 1.2 with an AEAD suite (AES-GCM) accepted"
fake cbc12
fctl
want 7 "GET /v1/agents: .*(SSL|TLS|handshake|alert|cipher)" "TLS 1.2 with only a CBC suite"

# ---- 3. what attestd never answers ----------------------------------------------------------
echo "# 3. answers refused"
fake big-cl
fctl
want 6 "the answer is over 8388608 bytes: refused" "9 MiB of JSON with a Content-Length"
fake big-close
fctl
want 6 "the answer is over 8388608 bytes: refused" "9 MiB of JSON without a Content-Length"
cap=8388608
for kind in cl close; do
        for n in $((cap - 1)) $cap; do
                fake "exact-$kind:$n"
                fctl --json
                [ $rc = 0 ] && [ "$(jq -r '.agents | length' out.txt)" = 0 ] ||
                        fail "an answer of $n bytes ($kind): exit $rc $(cat err.txt)"
        done
        fake "exact-$kind:$((cap + 1))"
        fctl
        want 6 "the answer is over $cap bytes: refused" "an answer of cap+1 bytes ($kind)"
done
ok "answers of cap-1 and cap bytes taken, cap+1 refused, with and without Content-Length"
fake garbage
fctl
want 6 "GET /v1/agents: the answer is not a JSON object" "HTML with status 200"
fake nul
fctl
want 6 "GET /v1/agents: the answer holds a NUL byte: refused" "a NUL byte in the answer"
fake partial
fctl
want 6 "GET /v1/agents: .*(transfer closed|Connection died|end of file|partial|outstanding)" \
        "the server gone in the middle of its answer"
fake html500
fctl
want 6 "GET /v1/agents: HTTP 500 without a JSON error body" "a 500 with an HTML body"

# ---- an attestd with host identity, filters and paging (what helper fleet adds) ----------------
echo "# filters, cursors and host names of an attestd that has them"
fake fleet
fctl --status failing --label role=web --hostname web-01 --limit 1
[ $rc = 0 ] || fail "list on a paging attestd: $rc $(cat err.txt)"
grep -qx "GET /v1/agents?status=failing&hostname=web-01&label=role%3Dweb&limit=1 HTTP/1.1" fake.port.requests ||
        fail "filters not passed through: $(cat fake.port.requests)"
grep -qE '^web-01 +a1 +active +pass ' out.txt && grep -qx '(more: --cursor c1, or --all)' out.txt ||
        fail "one page: $(cat out.txt)"
ok "--status, --label, --hostname, --limit passed to attestd; HOST column; the next cursor shown"
fctl --all
[ $rc = 0 ] || fail "--all: $rc $(cat err.txt)"
grep -q "^GET /v1/agents?cursor=c1 HTTP/1.1$" fake.port.requests || fail "next not followed: $(cat fake.port.requests)"
[ "$(sed -n '2,3p' out.txt | awk '{print $1 "/" $4}' | paste -sd' ')" = "db-01/fail web-01/pass" ] ||
        fail "--all: both pages, failing first: $(cat out.txt)"
fctl --all --json
[ "$(jq -r '[.agents[].hostname, (.next | tostring)] | join(" ")' out.txt)" = "web-01 db-01 null" ] ||
        fail "--all --json: $(cat out.txt)"
fctl --cursor c1 --json
[ "$(jq -r '.agents[0].id' out.txt)" = a2 ] || fail "--cursor: $(cat out.txt)"
ok "--all follows next to the last page (failing host first), --cursor asks for one page"
fctl --status bogus
want 2 "GET /v1/agents\?status=bogus: 400 bad_query: status: unknown state bogus" \
        "a filter value a paging attestd refuses (not taken for an attestd without filters)"
# an attestd without filters: attestctl asks for everything and filters with attestd's meanings
fake old
for f in "failing:f1 s1" "fail:f1" "pass:p1" "stale:s1" "never:n1" "decommissioned:d1"; do
        fctl --status "${f%%:*}" --json
        [ $rc = 0 ] && [ "$(jq -r '[.agents[].id] | join(" ")' out.txt)" = "${f#*:}" ] ||
                fail "--status ${f%%:*} on an attestd without filters: $rc $(cat out.txt err.txt)"
done
fctl --status failing --limit 1 --json
[ "$(jq -r '[.agents[].id] | join(" ")' out.txt)" = f1 ] || fail "--limit 1 filtered here: $(cat out.txt)"
grep -qx "GET /v1/agents?status=failing&limit=1 HTTP/1.1" fake.port.requests &&
        grep -qx "GET /v1/agents HTTP/1.1" fake.port.requests || fail "requests: $(cat fake.port.requests)"
fctl --cursor c1
want 2 "--cursor: this attestd does not page its agent list" "--cursor on an attestd without paging"
ok "an attestd without filters: --status failing/fail/pass/stale/never/decommissioned and --limit applied by attestctl"
fake unready
rc=0
"$ATTESTCTL" status --url "$FURL" --ca "$CA" >out.txt 2>err.txt || rc=$?
[ $rc = 1 ] || fail "status of an unready attestd: exit $rc, want 1: $(cat err.txt)"
grep -q "GET /healthz: 503 store_unavailable: database not writable: disk full" err.txt ||
        fail "status: the server's error: $(cat err.txt)"
grep -qE "NOT READY \(store_unavailable\)" out.txt && grep -qE "^agents: +3 active, 1 failing" out.txt ||
        fail "status of an unready attestd: $(cat out.txt)"
ok "status of an attestd that is not ready: exit 1, its error and the metrics summary"
kill "$fake_pid"
wait "$fake_pid" 2>/dev/null || true
fake_pid=""

# ---- 4. attestd gone --------------------------------------------------------------------------
echo "# 4. attestd gone"
stop_daemon
ctl agents list --url "$URL" --ca "$CA" --token-file admin.token
want 7 "GET /v1/agents: .*(Failed to connect|Couldn't connect|refused)" "attestd stopped"
ctl status --url "$URL" --ca "$CA"
want 7 "GET /healthz: " "status with attestd stopped"
[ $fails = 0 ]
