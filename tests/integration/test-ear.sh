#!/usr/bin/env bash
# EAR (docs/ear.md): a real attestd over HTTPS with --ear-key, the real
# agent enrolled by credential activation on a swtpm, and an independent consumer
# (tests/lib/ear-verify.py: PyJWT + cryptography from Debian) that fetches GET /v1/ear/keys,
# verifies GET /v1/agents/ID/ear and checks every claim against GET /v1/agents/ID/results.
#  1. --ear-key refused at start-up: P-384, RSA, group/other-readable; without it both
#     endpoints answer 503 ear_unconfigured
#  2. JWKS without a token; 401 without one on /ear, 404 unknown agent, 409 ear_no_verdict for an
#     enrolled agent that has no verdict yet, 400 for a malformed nonce
#  3. status mapping on real rounds: no policy (none), PCR + IMA policy (affirming), a policy
#     with an unanchored claim (warning), a wrong PCR (contraindicated), a failing runtime
#     policy (contraindicated, executables), evidence that fails verification
#     (contraindicated, 99s); eat_nonce echoed
#  3b. a database an older attestd wrote (schema 7: results without the typed appraisal): the
#     EAR of its last result is 409 ear_no_appraisal (the verdict text is never read back to make
#     one); after one more round 200 and the vector matches the new result
#  4. flipped payload / signature / header bytes and the claims signed by another key: refused
#  5. under valgrind (when ATTESTD is not built with ASan): one EAR request, no leak
# Usage: test-ear.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP BUSYHOST
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
BUSYHOST=$(realpath "$6")
agent_test_begin tpm2_pcrread openssl sqlite3
PY=/usr/bin/python3 # Debian's python, where python3-jwt lives
"$PY" -c 'import jwt, cryptography' || fail "python3-jwt / python3-cryptography not installed"
VERIFY=("$PY" "$TOP/tests/lib/ear-verify.py")
BUILD="attestd $("$ATTESTD" --version | awk '{ print $2 }')"

genkey() { # FILE OPENSSL-GENPKEY-ARGS...: a private key, mode 0600
        local f=$1
        shift
        (umask 077 && openssl genpkey "$@" -out "$f" 2>/dev/null) || fail "openssl genpkey $*"
}
genkey ear.key -algorithm EC -pkeyopt ec_paramgen_curve:P-256
genkey other.key -algorithm EC -pkeyopt ec_paramgen_curve:P-256
genkey p384.key -algorithm EC -pkeyopt ec_paramgen_curve:P-384
genkey rsa.key -algorithm RSA -pkeyopt rsa_keygen_bits:2048
cp ear.key open.key
chmod 644 open.key

# ---- 1. start-up refusals, no key ------------------------------------------------------------
echo "# 1. --ear-key refused at start-up; no key: 503"
refused_start() { # KEY WANT: attestd --ear-key KEY exits non-zero, its log says WANT
        local rc=0
        timeout 20 "$ATTESTD" --listen 127.0.0.1:1 --tls-cert "$work/certs/server.pem" \
                --tls-key "$work/certs/server.key" --db "$work/refused.db" --tokens "$work/tokens" \
                --ear-key "$1" >refused.log 2>&1 || rc=$?
        { [ $rc -ne 0 ] && [ $rc -ne 124 ]; } || fail "--ear-key $1: exit $rc: $(cat refused.log)"
        grep -q -- "$2" refused.log || fail "--ear-key $1: no '$2' in: $(cat refused.log)"
        ok "--ear-key $1 refused: $(grep -- "$2" refused.log)"
}
refused_start p384.key "secp384r1; ES256 needs P-256"
refused_start rsa.key "an RSA key; ES256 needs an EC key on P-256"
refused_start open.key "mode"
refused_start missing.key "missing.key"

start_attestd -n nokey --insecure-trust-ak
api GET /v1/ear/keys
expect 503 ear_unconfigured -- "GET /v1/ear/keys without --ear-key"
api GET /v1/agents/x/ear "" "$READER"
expect 503 ear_unconfigured -- "GET /v1/agents/x/ear without --ear-key"
stop_daemon TERM

# ---- 2. keys, errors --------------------------------------------------------------------------
echo "# 2. JWKS and errors"
boot_host
start_attestd -n ear --ek-ca "$SWTPM_STATE/ca" --interval 1 --ear-key "$work/ear.key"
grep -q "EAR signing key .* loaded (kid " daemon.log || fail "no key line in the log"
if grep -q "BEGIN" daemon.log; then fail "key material in the log"; fi
api GET /v1/ear/keys
expect 200 "" -- "GET /v1/ear/keys without a token"
printf %s "$body" >jwks.json
kid=$(jq -r '.keys[0].kid' jwks.json)
grep -q "kid $kid" daemon.log || fail "the log's kid is not the JWKS kid $kid"
# the JWKS point is ear.key's public key
want_pub=$(openssl pkey -in ear.key -pubout -outform DER | tail -c 64 | xxd -p -c 64)
got_pub=$("$PY" -c 'import base64, json, sys
k = json.load(open(sys.argv[1]))["keys"][0]
d = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
print((d(k["x"]) + d(k["y"])).hex())' jwks.json)
[ "$want_pub" = "$got_pub" ] || fail "JWKS point $got_pub is not ear.key's $want_pub"
ok "JWKS holds ear.key's public point, kid $kid"

api GET /v1/agents/nosuch/ear
expect 401 unauthorized -- "EAR without a token"
api GET /v1/agents/nosuch/ear "" "$READER"
expect 404 agent_not_found -- "EAR of an unknown agent"
# an agent enrolled (credential not yet activated) has no verdict
keys k
enrol_ek "$ENROLL" k
[ "$status" = 201 ] || fail "enrolment: $status $body"
pend=$(jq -r .id <<<"$body")
api GET "/v1/agents/$pend/ear" "" "$READER"
expect 409 ear_no_verdict -- "EAR of an agent without a verdict"
api DELETE "/v1/agents/$pend" "" "$ADMIN"
[ "$status" = 200 ] || [ "$status" = 204 ] || fail "delete pending: $status $body"

# ---- 3. status mapping on real rounds ---------------------------------------------------------
echo "# 3. status mapping on the real agent's rounds"
round() { # LOG: start the agent, wait for one verdict, stop it
        start_agent "$1" --state-dir st
        wait_lines "$1" '^<[56]>verdict: ' 1 60
        stop_agent
}
# ear ID STATUS [NONCE]: fetch results and the EAR, the independent consumer checks them
ear() {
        local q=""
        [ -n "${3:-}" ] && q="?nonce=$3"
        api GET "/v1/agents/$1/results?limit=1" "" "$READER"
        [ "$status" = 200 ] || fail "results: $status $body"
        printf %s "$body" >results.json
        api GET "/v1/agents/$1/ear$q" "" "$READER"
        expect 200 "" -- "GET /v1/agents/$1/ear$q"
        printf %s "$body" >"token-$2"
        "${VERIFY[@]}" verify jwks.json "token-$2" results.json "$1" "$2" "$BUILD" ${3:+"$3"} ||
                fail "EAR of $1 does not hold ($2)"
        ok "EAR of $1: $2, every claim matches the verdict"
}
policy() { # NAME JSON: PUT the policy, bind it to $id
        api PUT "/v1/policies/$1" "$2" "$ADMIN"
        [ "$status" = 201 ] || [ "$status" = 200 ] || fail "PUT policy $1: $status $body"
        api PUT "/v1/agents/$id/policy" "{\"policy\":\"$1\"}" "$ADMIN"
        [ "$status" = 200 ] || fail "bind $1: $status $body"
}

round a0.log
id=$(cat st/agent-id)
grep -q 'enrolled as agent .* (credential activated)' a0.log || fail "no credential activation"
ear "$id" none
ct=$(curl -s --cacert "$CA" -H "Authorization: Bearer $READER" -o /dev/null \
        -w '%{content_type}' "https://127.0.0.1:$port/v1/agents/$id/ear")
[[ $ct == application/eat+jwt* ]] || fail "Content-Type $ct"

pcr0=$(tpm2_pcrread sha256:0 | awk '/0 *:/ { sub(/^0x/, "", $3); print tolower($3) }')
[ ${#pcr0} = 64 ] || fail "PCR 0: '$pcr0'"
policy anchored "{\"name\":\"anchored\",\"tpm\":{\"pcrs\":{\"sha256\":{\"0\":\"$pcr0\"}}},
        \"ima\":{\"require_boot_aggregate\":true}}"
round a1.log
nonce=$(openssl rand 32 | base64 -w0 | tr '+/' '-_' | tr -d '=')
ear "$id" affirming "$nonce"
cp token-affirming good.token

# the CFI options come from the agent's report of the kernel configuration (no cfi-state entry in
# an unpatched kernel's log): an unanchored claim
policy loose '{"name":"loose","cfi":{"enabled":false}}'
round a2.log
ear "$id" warning

zero=$(printf '0%.0s' $(seq 64))
policy wrong "{\"name\":\"wrong\",\"tpm\":{\"pcrs\":{\"sha256\":{\"0\":\"$zero\"}}}}"
round a3.log
ear "$id" contraindicated

# a runtime policy the boot's files are not in: ima.runtime fails, which AR4SI files under
# executables (the independent consumer's table, docs/ear.md); dd940f4 filed it under
# configuration and left executables at 3, "approved boot"
policy runtime "{\"name\":\"runtime\",\"ima\":{\"runtime\":{\"digests\":
        {\"/usr/bin/not-on-this-host\":[\"sha256:$zero\"]}}}}"
# the recorded boot's entries are all critical data (not judged by a runtime policy): the host
# measures three files more (appended to the agent's log and extended into PCR 10)
"$BUSYHOST" ima.bin "$SWTPM_TCTI" 3 30 1000 busy.stop >busy.out 2>busy.err ||
        fail "busyhost: $(cat busy.err)"
[ "$(cat busy.out)" = 3 ] || fail "busyhost added $(cat busy.out) entries, not 3"
round a3r.log
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
[ "$(jq -r '[.results[0].verdict.claims[] | select(.name == "ima.runtime") | .result] | first' \
        <<<"$body")" = fail ] || fail "the runtime policy did not fail ima.runtime: $body"
ear "$id" contraindicated

# ---- 3b. results an older attestd stored ------------------------------------------------------
echo "# 3b. a database of schema 7: 409 until the next round, then the new result's EAR"
stop_daemon TERM
api_last=$(sqlite3 attestd.db "SELECT max(id) FROM results WHERE agent = '$id'")
# the results table as schema 7 made it: the older attestd stored no appraisal (and schema 11's
# results count and 10's stale scan, later than 7, undone first)
sqlite3 attestd.db "ALTER TABLE agents DROP COLUMN results_kept; DROP INDEX results_by_due; ALTER TABLE results DROP COLUMN due;
        DROP TABLE stale_watch; DROP TABLE stale_cursor;
        CREATE INDEX agents_by_stale ON agents(stale_since, next_due);
        ALTER TABLE results DROP COLUMN ear_status;
        ALTER TABLE results DROP COLUMN ear_tv_instance_identity;
        ALTER TABLE results DROP COLUMN ear_tv_configuration;
        ALTER TABLE results DROP COLUMN ear_tv_executables;
        ALTER TABLE results DROP COLUMN ear_tv_hardware; PRAGMA user_version = 7;" ||
        fail "could not make the database schema 7"
start_attestd -n upgraded --ek-ca "$SWTPM_STATE/ca" --interval 1 --ear-key "$work/ear.key"
[ "$(sqlite3 attestd.db 'PRAGMA user_version')" -ge 8 ] || fail "the database was not migrated"
api GET "/v1/agents/$id/ear" "" "$READER"
expect 409 ear_no_appraisal -- "EAR of a result stored before the upgrade"
jq -e --arg r "$api_last" '.detail | contains("next attestation round") and contains("id " + $r)' \
        <<<"$body" >/dev/null || fail "the 409 does not say what to expect: $body"
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
[ "$status" = 200 ] && [ "$(jq -r '.results[0].id' <<<"$body")" = "$api_last" ] &&
        [ "$(jq -r '.results[0].verdict.status' <<<"$body")" = fail ] ||
        fail "the old result is not answered as it was stored: $status $body"
ok "the old result is still answered by /results"
round a3b.log
ear "$id" contraindicated

# PCR 10 extended behind the IMA log's back: the log no longer replays to the quote, the round
# fails verification (stored with its reason): 99 "cryptographic validation failed" everywhere
tpm2_pcrextend "10:sha256=$(openssl rand -hex 32)" >/dev/null
round a4.log
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
[ "$(jq -r '.results[0].verdict.reason.code' <<<"$body")" != null ] ||
        fail "the round did not fail verification: $body"
ear "$id" contraindicated
[ "$("$PY" -c 'import jwt, sys
c = jwt.decode(open(sys.argv[1]).read(), options={"verify_signature": False})
print(sorted(set(next(iter(c["submods"].values()))["ear.trustworthiness-vector"].values())))' \
        token-contraindicated)" = "[99]" ] || fail "failed verification: vector not all 99"
ok "a round that failed verification: contraindicated, 99 in every category"

api GET "/v1/agents/$id/ear?nonce=short" "" "$READER"
expect 400 bad_query -- "a nonce of fewer than 8 bytes"
api GET "/v1/agents/$id/ear?nonce=$(printf 'A%.0s' $(seq 87))" "" "$READER"
expect 400 bad_query -- "a nonce of more than 64 bytes"
api GET "/v1/agents/$id/ear?nonce=AAAAAAAAAAA%3D" "" "$READER"
expect 400 bad_query -- "a padded nonce"
api GET "/v1/agents/$id/ear?nonce=AAAAAAAAAAA&nonce=BBBBBBBBBBB" "" "$READER"
expect 400 bad_query -- "two nonces"
api GET "/v1/agents/$id/ear?limit=1" "" "$READER"
expect 400 bad_query -- "an unknown query parameter"

# ---- 4. tampering and a foreign key -----------------------------------------------------------
echo "# 4. tampered tokens and another key"
"${VERIFY[@]}" refuse jwks.json good.token || fail "a tampered token was not refused"
ok "flipped payload, signature and header bytes refused"
"${VERIFY[@]}" foreign jwks.json good.token other.key || fail "a foreign-key token was accepted"
ok "the same claims signed by another key refused"
stop_daemon TERM

# ---- 5. valgrind ------------------------------------------------------------------------------
# (grep without -q: it reads all of nm's output, so pipefail sees no SIGPIPE)
if nm -D "$ATTESTD" 2>/dev/null | grep __asan_init >/dev/null; then
        echo "# 5. skipped here: attestd is built with ASan (LeakSanitizer checked its exit above)"
else
        echo "# 5. one EAR request under valgrind"
        need valgrind
        SPAWN_WAIT=60 start_attestd -n vg \
                -w "valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 --log-file=$work/valgrind.txt" \
                --ek-ca "$SWTPM_STATE/ca" --ear-key "$work/ear.key"
        ear "$id" contraindicated "$nonce"
        stop_daemon TERM # valgrind's exit code 9 on a leak or an error fails here
        grep -E "definitely lost|indirectly lost|All heap blocks|ERROR SUMMARY" valgrind.txt
        grep -q "ERROR SUMMARY: 0 errors" valgrind.txt || fail "valgrind: $(tail -5 valgrind.txt)"
        ok "attestd under valgrind: an EAR request, no leak, no error"
fi
echo "# all EAR checks passed"
