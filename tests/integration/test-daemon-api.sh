#!/usr/bin/env bash
# API contract of attestd (docs/api.md) over real HTTPS on loopback: every endpoint's success and
# each documented error (400 bad JSON / unknown field with its path / bad id, 401, 403, 404, 405,
# 409, 413, 415), with AKs made by a real swtpm. Run under tests/lib/swtpm-run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
test_begin

cd "$work"
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak1.ctx -G rsa -g sha256 -s rsassa -u ak1.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak2.ctx -G ecc -g sha256 -s ecdsa -u ak2.pub >/dev/null
flush
tpm2_createprimary -C o -G rsa -c prim.ctx >/dev/null
flush
tpm2_create -C prim.ctx -G rsa -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign' \
        -u weak.pub -r weak.priv >/dev/null
flush

token ADMIN admin
token READER reader
token ENROLL enroll
start_daemon

# --- health and metrics, no token
api GET /healthz
expect 200 "" -- GET /healthz
[ "$(jq -r .status <<<"$body")" = ok ] || fail "healthz body: $body"
api GET /metrics
expect 200 "" -- GET /metrics
grep -q '^attestd_attestations_total{result="pass"} 0$' "$work/resp" || fail "metrics text"
grep -q '^# TYPE attestd_verification_seconds histogram$' "$work/resp" || fail "histogram"

# --- routing
api GET /nope
expect 404 not_found -- unknown path
api GET /v1/agents/
expect 404 not_found -- empty id segment
api POST /healthz '{}'
expect 405 method_not_allowed -- POST /healthz
allow=$(curl -s --cacert "$CA" -X PATCH -D - -o /dev/null "https://127.0.0.1:$port/v1/policies/x" |
        tr -d '\r' | awk -F': ' 'tolower($1) == "allow" { print $2 }')
[ "$allow" = "GET, PUT, DELETE" ] || fail "405 Allow header: '$allow'"
ok "405 carries Allow: $allow"

# --- auth
api GET /v1/agents
expect 401 unauthorized -- no token
www=$(curl -s --cacert "$CA" -D - -o /dev/null "https://127.0.0.1:$port/v1/agents" | tr -d '\r' |
        awk -F': ' 'tolower($1) == "www-authenticate" { print $2 }')
[[ "$www" == Bearer* ]] || fail "401 without WWW-Authenticate: '$www'"
api GET /v1/agents "" "not-a-token"
expect 401 unauthorized -- unknown token
api GET /v1/agents "" "$ENROLL"
expect 403 forbidden -- enroll token reading agents
api POST /v1/agents '{}' "$READER"
expect 403 forbidden -- reader token enrolling
api PUT /v1/policies/p '{}' "$READER"
expect 403 forbidden -- reader token writing a policy
api GET /v1/agents "" "$READER"
expect 200 "" -- reader lists agents
api GET /v1/agents "" "$ADMIN"
expect 200 "" -- admin may read too

# --- enrolment
ak1=$(base64 -w0 ak1.pub)
ak2=$(base64 -w0 ak2.pub)
weak=$(base64 -w0 weak.pub)
api POST /v1/agents "{\"ak_public\":\"$ak1\"}" "$ENROLL" text/plain
expect 415 unsupported_media_type -- enrol with text/plain
api POST /v1/agents '{"ak_public":' "$ENROLL"
expect 400 bad_json -- truncated JSON
api POST /v1/agents '[1]' "$ENROLL"
expect 400 bad_json -- JSON array body
api POST /v1/agents "{\"ak_public\":\"$ak1\",\"colour\":1}" "$ENROLL"
expect 400 unknown_field -- unknown field
[[ "$(jq -r .detail <<<"$body")" == '$.colour'* ]] || fail "unknown field path: $body"
api POST /v1/agents '{}' "$ENROLL"
expect 400 missing_field -- no ak_public
api POST /v1/agents '{"ak_public":"***"}' "$ENROLL"
expect 400 bad_field -- ak_public not base64
api POST /v1/agents "{\"ak_public\":\"$weak\"}" "$ENROLL"
expect 400 quote_ak_attributes -- unrestricted signing key refused as AK
api POST /v1/agents "{\"ak_public\":\"$ak1\",\"ek_cert\":\"AAAA\"}" "$ENROLL"
expect 400 bad_field -- ek_cert not a certificate
api POST /v1/agents "{\"ak_public\":\"$ak1\"}" "$ENROLL"
expect 201 "" -- enrol RSA AK
id1=$(jq -r .id <<<"$body")
[ "$(jq -r .state <<<"$body")" = active ] || fail "new agent not active: $body"
api POST /v1/agents "{\"ak_public\":\"$ak1\"}" "$ENROLL"
expect 409 agent_exists -- same AK again
api POST /v1/agents "{\"ak_public\":\"$ak2\"}" "$ADMIN"
expect 201 "" -- enrol ECC AK with the admin token
id2=$(jq -r .id <<<"$body")

# --- body caps: 64 KiB on ordinary routes, refused before the body is read. The client asks
# for "100 Continue" (curl does by itself past 1 MiB): it sends the body only if attestd wants it,
# so the answer it gets is the refusal
big=$(head -c 70000 /dev/zero | tr '\0' a)
printf '{"ak_public":"%s"}' "$big" >big.json
status=$(curl -s --cacert "$CA" -X POST -o "$work/resp" -w '%{http_code}' -H 'Expect: 100-continue' \
        -H "Authorization: Bearer $ENROLL" -H 'Content-Type: application/json' \
        --data-binary @big.json "https://127.0.0.1:$port/v1/agents") || status=000
body=$(cat "$work/resp" 2>/dev/null || true)
expect 413 body_too_large -- 70 kB enrolment
# A client that sends the body at once (no Expect) is still sending when the refusal comes and
# attestd's side closes: without the lingering close the unread body made that close a reset,
# and curl stopped at the failed send (exit 55) instead of reading the answer (6-59 of 100 in
# one curl; docs/design-notes.md, "Framing"). Refused in the head (413 on the declared length,
# 404 in the pre-flight): every answer must arrive, each close lingered.
lingered() {
        curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" |
                awk '$1 ~ /^attestd_http_lingering_closes_total/ { n += $2 }
                     $1 == "attestd_http_lingering_closes_total{end=\"full\"}" { f = $2 }
                     END { print n + 0, f }'
}
read -r linger0 _ < <(lingered)
refusals() { # N PATH: N POSTs of big.json, 8 at a time, in one curl; "COUNT STATUS EXIT"...
        local a=() i
        for i in $(seq "$1"); do a+=(-o /dev/null "https://127.0.0.1:$port$2"); done
        curl -s -Z --parallel-max 8 --cacert "$CA" -H 'Expect:' -H "Authorization: Bearer $ENROLL" \
                -H 'Content-Type: application/json' --data-binary @big.json \
                -w '%{http_code} %{exitcode}\n' "${a[@]}" | sort | uniq -c | xargs || true
}
got=$(refusals 100 /v1/agents)
[ "$got" = "100 413 0" ] || fail "70 kB enrolments sent at once: $got (want 100 x 413, exit 0)"
got=$(refusals 50 /v1/agents/0123456789abcdef0123456789abcdef/evidence)
[ "$got" = "50 404 0" ] || fail "70 kB evidence for no agent: $got (want 50 x 404, exit 0)"
for _ in $(seq 30); do # counted as each ends: the last clients' ends may be a poll away
        read -r linger full < <(lingered)
        [ $((linger - linger0)) -lt 150 ] || break
        nap 0.1
done
[ $((linger - linger0)) -ge 150 ] && [ "$full" = 0 ] ||
        fail "lingering closes: $((linger - linger0)) of 150 (full: ${full:-none})"
ok "bodies sent at once and refused in the head: 150 answers (413, 404), no reset, each close lingered"
head -c 17000000 /dev/zero >big.bin
api POST "/v1/agents/$id1/evidence" @big.bin "" application/json
expect 413 body_too_large -- 17 MB evidence over the 16 MiB cap
# chunked upload without Content-Length: cut off while reading
st=$(head -c 200000 /dev/zero | curl -s --cacert "$CA" -o resp -w '%{http_code}' \
        -H 'Transfer-Encoding: chunked' -H 'Content-Type: application/json' \
        -H "Authorization: Bearer $ENROLL" --data-binary @- "https://127.0.0.1:$port/v1/agents") || true
[ "$st" = 413 ] || fail "chunked 200 kB: $st $(cat resp)"
ok "chunked body over the cap (413)"

# --- agents
api GET /v1/agents "" "$READER"
expect 200 "" -- list agents
[ "$(jq '.agents | length' <<<"$body")" = 2 ] || fail "two agents: $body"
[ "$(jq -r '.agents[0].stale' <<<"$body")" = false ] || fail "fresh agent stale: $body"
api GET "/v1/agents/$id1" "" "$READER"
expect 200 "" -- get agent
[ "$(jq -r .id <<<"$body")" = "$id1" ] || fail "agent id: $body"
[ "$(jq -r .last_verdict <<<"$body")" = null ] || fail "no verdict yet: $body"
api GET /v1/agents/no-such-agent "" "$READER"
expect 404 agent_not_found -- unknown agent
api GET '/v1/agents/bad$id' "" "$READER"
expect 400 bad_id -- id with a bad character
api GET "/v1/agents/$(head -c 65 /dev/zero | tr '\0' a)" "" "$READER"
expect 400 bad_id -- 65-character id
# the router's path cap (API_PATH_MAX 4096): at the cap the path is routed (a bad id), past it
# no route matches
pad() { head -c "$1" /dev/zero | tr '\0' "$2"; }
api GET "/v1/agents/$(pad $((4096 - 11)) a)" "" "$READER"
expect 400 bad_id -- "path of 4096 bytes (cap)"
api GET "/v1/agents/$(pad $((4095 - 11)) a)" "" "$READER"
expect 400 bad_id -- "path of 4095 bytes (cap - 1)"
api GET "/v1/agents/$(pad $((4097 - 11)) a)" "" "$READER"
expect 404 not_found -- "path of 4097 bytes (cap + 1)"
# the Authorization value cap (API_HEADER_MAX 8192): blanks between scheme and token count
auth_at() { # LENGTH: GET /v1/agents with "Bearer<blanks>$READER" of exactly LENGTH bytes
        local v
        v="Bearer$(pad $(($1 - 6 - ${#READER})) ' ')$READER"
        status=$(curl -s --cacert "$CA" -o "$work/resp" -w '%{http_code}' -H "Authorization: $v" \
                "https://127.0.0.1:$port/v1/agents") || status=000
        body=$(cat "$work/resp")
}
auth_at 8191
expect 200 "" -- "Authorization of 8191 bytes (cap - 1)"
auth_at 8192
expect 200 "" -- "Authorization of 8192 bytes (cap)"
auth_at 8193
expect 401 unauthorized -- "Authorization of 8193 bytes (cap + 1)"
status=$(curl -s --cacert "$CA" -o "$work/resp" -w '%{http_code}' -H "Authorization: bearer $READER" \
        "https://127.0.0.1:$port/v1/agents") || status=000
body=$(cat "$work/resp")
expect 200 "" -- "scheme name case-insensitive (RFC 9110 11.1)"
api GET "/v1/agents/$id1/results" "" "$READER"
expect 200 "" -- empty history
[ "$(jq '.results | length' <<<"$body")" = 0 ] || fail "empty history: $body"
api GET "/v1/agents/$id1/results?limit=0" "" "$READER"
expect 400 bad_query -- limit 0
api GET "/v1/agents/$id1/results?limit=abc" "" "$READER"
expect 400 bad_query -- limit not a number
api GET "/v1/agents/$id1/results?limit=007" "" "$READER"
expect 400 bad_query -- limit with leading zeros
api GET "/v1/agents/$id1/results?limit=18446744073709551616" "" "$READER"
expect 400 bad_query -- "limit past 2^64 (no wrap)"
api GET "/v1/agents/$id1/results?limit=1000" "" "$READER"
expect 200 "" -- "limit at its maximum"
api GET "/v1/agents/$id1/results?limit=1001" "" "$READER"
expect 400 bad_query -- "limit past its maximum"
api GET "/v1/agents/$id1/results?colour=1" "" "$READER"
expect 400 bad_query -- unknown query parameter
api GET "/v1/agents/nobody/results" "" "$READER"
expect 404 agent_not_found -- history of an unknown agent
api GET "/v1/agents?x=1" "" "$READER"
expect 400 bad_query -- query on the agent list

# --- challenges
api POST "/v1/agents/$id1/challenges"
expect 201 "" -- challenge with an empty body
[ "$(jq -r '.nonce | length' <<<"$body")" = 64 ] || fail "nonce is 32 bytes hex: $body"
[ "$(jq -r .ima_offset <<<"$body")" = 0 ] || fail "ima_offset: $body"
[ "$(jq -r .pcr_selection <<<"$body")" = "sha256:0-10" ] || fail "pcr_selection: $body"
[ -n "$(jq -r .expires <<<"$body")" ] || fail "expires: $body"
n1=$(jq -r .nonce <<<"$body")
api POST "/v1/agents/$id1/challenges" '{}'
expect 201 "" -- challenge with {}
[ "$(jq -r .nonce <<<"$body")" != "$n1" ] || fail "nonce repeated"
api POST "/v1/agents/$id1/challenges" '{"x":1}'
expect 400 unknown_field -- challenge with a field
api POST "/v1/agents/nobody/challenges"
expect 404 agent_not_found -- challenge for an unknown agent
api GET "/v1/agents/$id1/challenges"
expect 405 method_not_allowed -- GET challenges

# --- policies
api GET /v1/policies "" "$READER"
expect 200 "" -- no policies
[ "$(jq '.policies | length' <<<"$body")" = 0 ] || fail "no policies: $body"
api PUT /v1/policies/prod '{"selinux":{"enforcing":true}}' "$ADMIN" text/plain
expect 415 unsupported_media_type -- policy as text/plain
api PUT /v1/policies/prod '{"selinux":' "$ADMIN"
expect 400 bad_json -- policy truncated
api PUT /v1/policies/prod '{"name":"other"}' "$ADMIN"
expect 400 bad_field -- name differs from the path
api PUT /v1/policies/prod '{"name":"prod","selinux":{"enforcing":true}}' "$ADMIN"
expect 201 "" -- policy version 1
[ "$(jq -r .version <<<"$body")" = 1 ] || fail "version 1: $body"
api PUT /v1/policies/prod '{"name":"prod","selinux":{"enforcing":false}}' "$ADMIN"
expect 201 "" -- policy version 2
[ "$(jq -r .version <<<"$body")" = 2 ] || fail "version 2: $body"
api GET /v1/policies/prod "" "$READER"
expect 200 "" -- latest policy
[ "$(jq -r .version <<<"$body")" = 2 ] || fail "latest is 2: $body"
[ "$(jq -r .policy.selinux.enforcing <<<"$body")" = false ] || fail "latest body: $body"
api GET "/v1/policies/prod?version=1" "" "$READER"
expect 200 "" -- policy version 1 by query
[ "$(jq -r .policy.selinux.enforcing <<<"$body")" = true ] || fail "v1 body: $body"
api GET "/v1/policies/prod?version=9" "" "$READER"
expect 404 policy_not_found -- version that does not exist
api GET /v1/policies/none "" "$READER"
expect 404 policy_not_found -- unknown policy
api GET /v1/policies "" "$READER"
expect 200 "" -- list policies
[ "$(jq -r '.policies[0].name + "@" + (.policies[0].version|tostring)' <<<"$body")" = prod@2 ] ||
        fail "policy list: $body"

# --- binding
api PUT "/v1/agents/$id1/policy" '{"policy":"none"}' "$ADMIN"
expect 404 policy_not_found -- bind an unknown policy
api PUT "/v1/agents/$id1/policy" '{"policy":"prod","x":1}' "$ADMIN"
expect 400 unknown_field -- binding with an extra field
api PUT "/v1/agents/$id1/policy" '{"policy":"prod"}' "$READER"
expect 403 forbidden -- reader binds
api PUT "/v1/agents/nobody/policy" '{"policy":"prod"}' "$ADMIN"
expect 404 agent_not_found -- bind for an unknown agent
api PUT "/v1/agents/$id1/policy" '{"policy":"prod"}' "$ADMIN"
expect 200 "" -- bind prod
api GET "/v1/agents/$id1" "" "$READER"
[ "$(jq -r .policy <<<"$body")" = prod ] || fail "binding not shown: $body"
api DELETE /v1/policies/prod "" "$ADMIN"
expect 409 policy_in_use -- delete a bound policy
api PUT "/v1/agents/$id1/policy" '{"policy":null}' "$ADMIN"
expect 200 "" -- unbind
api DELETE /v1/policies/prod "" "$READER"
expect 403 forbidden -- reader deletes a policy
api DELETE /v1/policies/prod "" "$ADMIN"
expect 204 "" -- delete policy
api GET /v1/policies/prod "" "$READER"
expect 404 policy_not_found -- deleted policy
api DELETE /v1/policies/prod "" "$ADMIN"
expect 404 policy_not_found -- delete twice
api PUT /v1/policies/prod '{"name":"prod"}' "$ADMIN"
expect 201 "" -- re-create after delete
[ "$(jq -r .version <<<"$body")" = 3 ] || fail "versions continue after delete: $body"

# --- evidence endpoint: errors that need no quote (rounds are in test-daemon-attest.sh)
api POST "/v1/agents/$id1/evidence" '{"version":1}' "" text/plain
expect 415 unsupported_media_type -- evidence as text/plain
api POST "/v1/agents/$id1/evidence" '{"version":'
expect 400 evidence_json -- evidence truncated
api POST "/v1/agents/nobody/evidence" '{"version":1}'
expect 404 agent_not_found -- evidence for an unknown agent

# --- delete agent
api DELETE "/v1/agents/$id2" "" "$READER"
expect 403 forbidden -- reader deletes an agent
api DELETE "/v1/agents/$id2" "" "$ADMIN"
expect 204 "" -- delete agent
api GET "/v1/agents/$id2" "" "$READER"
expect 404 agent_not_found -- deleted agent
api DELETE "/v1/agents/$id2" "" "$ADMIN"
expect 404 agent_not_found -- delete twice

# --- every rejection is counted by code
[ "$(metric 'attestd_rejected_requests_total{code="forbidden"}')" -ge 5 ] || fail "forbidden count"
[ "$(metric 'attestd_rejected_requests_total{code="body_too_large"}')" -ge 3 ] || fail "413 count"
ok "rejections counted by code in /metrics"

# --- TLS: 1.2 and 1.3 offered, 1.1 refused, plain HTTP refused
curl -s --cacert "$CA" --tlsv1.2 --tls-max 1.2 -o /dev/null "https://127.0.0.1:$port/healthz" ||
        fail "TLS 1.2"
curl -s --cacert "$CA" --tlsv1.3 -o /dev/null "https://127.0.0.1:$port/healthz" || fail "TLS 1.3"
if openssl s_client -connect "127.0.0.1:$port" -tls1_1 </dev/null >/dev/null 2>&1; then
        fail "TLS 1.1 accepted"
fi
if curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; then fail "plain HTTP answered"; fi
ok "TLS >= 1.2 only"

# --- TLS session tickets: a later connection resumes the session of an earlier one (no
# certificate, no signature: docs/architecture.md §8), in TLS 1.3 and 1.2, and the request on it
# is answered; a ticket from an earlier attestd process (its key is made at start, in memory
# only: to it, a ticket it cannot open, as a forged one) resumes nothing, the handshake is made
# in full
tls_get() { # OUT VERSION [s_client options]: GET /healthz over one connection, the transcript
        local out=$1 v=$2
        shift 2
        printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' |
                timeout 20 openssl s_client -connect "127.0.0.1:$port" -CAfile "$CA" \
                        -verify_return_error "$v" -ign_eof "$@" >"$work/$out" 2>&1 || true
}
answered() { grep -q 'HTTP/1.1 200 ' "$work/$1" || fail "$2: no 200: $(tail -5 "$work/$1")"; }
resumed0=$(metric 'attestd_tls_sessions_total{resumed="yes"}')
for v in -tls1_3 -tls1_2; do
        tls_get first$v $v -sess_out "$work/sess$v.pem"
        grep -q '^New, ' "$work/first$v" || fail "$v: the first connection was not a new session"
        answered first$v "$v first"
        [ -s "$work/sess$v.pem" ] || fail "$v: no session kept from the first connection"
        tls_get again$v $v -sess_in "$work/sess$v.pem"
        grep -q '^Reused, ' "$work/again$v" ||
                fail "$v: the session was not resumed: $(grep -E '^(New|Reused), ' "$work/again$v")"
        answered again$v "$v resumed"
done
resumed1=$(metric 'attestd_tls_sessions_total{resumed="yes"}')
[ $((resumed1 - resumed0)) = 2 ] ||
        fail "attestd_tls_sessions_total{resumed=\"yes\"} grew by $((resumed1 - resumed0)), want 2"
ok "TLS session tickets: 1.3 and 1.2 sessions resumed, answered and counted"

stop_daemon TERM
grep -q '^<6>stopped' "$work/daemon.log" || fail "no clean stop"
if grep -E 'Bearer|'"$ADMIN"'|'"$READER" "$work/daemon.log"; then fail "a token in the log"; fi
ok "SIGTERM stops cleanly; no token in the log"

start_daemon -n restarted
tls_get after-restart -tls1_3 -sess_in "$work/sess-tls1_3.pem"
grep -q '^New, ' "$work/after-restart" ||
        fail "a ticket of the last process resumed: $(grep -E '^(New|Reused), ' "$work/after-restart")"
answered after-restart "after a restart"
[ "$(metric 'attestd_tls_sessions_total{resumed="yes"}')" = 0 ] ||
        fail "a session counted as resumed after a restart"
[ "$(metric 'attestd_tls_sessions_total{resumed="no"}')" -ge 1 ] || fail "no full handshake counted"
stop_daemon TERM
ok "a ticket from before a restart resumes nothing (a full handshake, answered)"
echo "# all API contract checks passed"
