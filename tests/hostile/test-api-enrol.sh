#!/usr/bin/env bash
# Hostile API, enrolment (activation flood) and decommissioning, with curl,
# tpm2-tools and a swtpm provisioned with EK certificates, against a real attestd over TLS:
#  1. a second enrolment of the same AK and EK by another enroll-token holder does not replace
#     the first one's pending credential: the first TPM proof still activates
#  2. one live identity per EK: a new AK of the same EK enrolled by another token holder leaves
#     the active agent alone until its credential is activated in the TPM; then it takes over
#     (the old agent is forgotten); without the TPM's proof it never does
#  3. up to 100 wrong activation proofs in 45 s: 5 x 403 activation_failed, then 429
#     activation_rate_limited; one warning line for that agent in the log, not 100
#  4. decommission (admin): challenges and evidence 403 agent_decommissioned, enrolment of the EK
#     (any AK) 403 ek_decommissioned, also after DELETE; readmit lifts it; DELETE alone is a
#     plain forget (the EK may enrol again)
# Usage: test-api-enrol.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin base64 tpm2_createek tpm2_createak tpm2_nvread tpm2_activatecredential \
        tpm2_startauthsession tpm2_policysecret tpm2_flushcontext python3
token ENROLL2 enroll

state_of() { # ID: its state, or the HTTP status when GET fails
        api GET "/v1/agents/$1" "" "$READER"
        if [ "$status" = 200 ]; then jq -r .state <<<"$body"; else echo "$status"; fi
}

for k in a b c d; do keys "tpm-$k"; done
cmp -s tpm-a/ek.pub tpm-b/ek.pub || fail "the EK template gives another EK"
start_attestd --ek-ca "$SWTPM_STATE/ca"

echo "# 1. a second enrolment does not replace a pending credential"
enrol_ek "$ENROLL" tpm-a
expect 201 "" -- "host enrols AK a"
id_a=$(jq -r .id <<<"$body")
credential cred-a1
enrol_ek "$ENROLL2" tpm-a
expect 201 "" -- "another token holder enrols the same AK and EK"
[ "$(jq -r .id <<<"$body")" = "$id_a" ] || fail "same AK, another id: $body"
activate tpm-a cred-a1 proof-a1 || fail "ActivateCredential: $(cat tpm-a/activate.log)"
activate_api "$id_a" proof-a1
expect 200 "" -- "the host's proof of its own credential still activates"
[ "$(state_of "$id_a")" = active ] || fail "agent a not active"

echo "# 2. one live identity per EK; re-enrolment needs the TPM's proof"
enrol_ek "$ENROLL2" tpm-b
expect 201 "" -- "another token holder enrols AK b on the same EK"
id_b=$(jq -r .id <<<"$body")
credential cred-b
[ "$(state_of "$id_a")" = active ] || fail "agent a disturbed by a pending enrolment"
api POST "/v1/agents/$id_a/challenges" '{}'
expect 201 "" -- "agent a still gets challenges"
head -c 32 /dev/urandom >proof-wrong
activate_api "$id_b" proof-wrong
expect 403 activation_failed -- "agent b without the TPM's proof"
[ "$(state_of "$id_a")" = active ] || fail "agent a disturbed by a wrong proof"
activate tpm-b cred-b proof-b || fail "ActivateCredential: $(cat tpm-b/activate.log)"
activate_api "$id_b" proof-b
expect 200 "" -- "agent b proves the same TPM"
[ "$(state_of "$id_b")" = active ] || fail "agent b not active"
[ "$(state_of "$id_a")" = 404 ] || fail "agent a still there: one EK, two live identities"
api POST "/v1/agents/$id_a/challenges" '{}'
expect 404 agent_not_found -- "agent a was taken over"
grep -q "agent $id_b took over the EK of agent $id_a" daemon.log || fail "takeover not logged"
ok "the EK's identity moved to agent b on proof, agent a is forgotten"

echo "# 3. a flood of wrong activation proofs"
enrol_ek "$ENROLL" tpm-c
expect 201 "" -- "enrol AK c"
id_c=$(jq -r .id <<<"$body")
credential cred-c
declare -A seen=()
# the limit is 5 failures in a window of 60 s from the first: every proof is sent within 45 s of
# the first, and the Retry-After probe after them (a loaded machine sends fewer than 100: 14 at
# load average 19; 10 at least)
# 100 random wrong proofs (32 bytes each, base64) drawn at once, and $EPOCHSECONDS for the
# clock: a try is then the request (curl) and the reading of its answer (jq), not six processes
mapfile -t proofs < <(python3 -c 'import base64, os
for _ in range(100): print(base64.b64encode(os.urandom(32)).decode())')
[ ${#proofs[@]} -eq 100 ] || fail "100 wrong proofs: got ${#proofs[@]}"
t_first=$EPOCHSECONDS
tries=0
for i in $(seq 100); do
        [ $((EPOCHSECONDS - t_first)) -lt 45 ] || break
        tries=$i
        # the body activate_api sends ({"proof": base64}, as jq -c writes it)
        api POST "/v1/agents/$id_c/activate" "{\"proof\":\"${proofs[i - 1]}\"}"
        code=$(jq -r .error <<<"$body")
        seen["$status $code"]=$((${seen["$status $code"]:-0} + 1))
        if [ "$i" -le 5 ]; then
                [ "$status $code" = "403 activation_failed" ] || fail "proof $i: $status $body"
        else
                [ "$status $code" = "429 activation_rate_limited" ] || fail "proof $i: $status $body"
        fi
done
for k in "${!seen[@]}"; do echo "# $k: ${seen[$k]}"; done
[ "$tries" -ge 10 ] || fail "only $tries wrong proofs sent within 45 s"
[[ "$(jq -r .detail <<<"$body")" == *"retry in "* ]] || fail "no retry time: $body"
head -c 32 /dev/urandom >proof-wrong
ra=$(curl -s --cacert "$CA" -o /dev/null -D - -H "Content-Type: application/json" \
        --data-binary "$(jq -nc --arg p "$(b64 proof-wrong)" '{proof: $p}')" \
        "https://127.0.0.1:$port/v1/agents/$id_c/activate" | tr -d '\r' |
        sed -n 's/^[Rr]etry-[Aa]fter: //p')
[[ "$ra" =~ ^[1-9][0-9]*$ ]] && [ "$ra" -le 60 ] || fail "429 without a Retry-After header: '$ra'"
ok "the 429 carries Retry-After: $ra"
lines=$(grep -c "agent $id_c: wrong activation proof" daemon.log || true)
[ "$lines" -le 1 ] || fail "$lines log lines for one agent's failed proofs in one minute"
ok "$tries wrong proofs within the window: 5 x 403, $((tries - 5)) x 429, $lines log line"
[ "$(state_of "$id_b")" = active ] || fail "agent b disturbed by agent c's flood"

echo "# 4. decommission and readmit"
api POST "/v1/agents/$id_b/decommission" "" "$READER"
expect 403 forbidden -- "decommission with a reader token"
api POST "/v1/agents/$id_b/decommission" "" "$ADMIN"
expect 200 "" -- "decommission agent b"
api POST "/v1/agents/$id_b/challenges" '{}'
expect 403 agent_decommissioned -- "challenge of a decommissioned agent"
api POST "/v1/agents/$id_b/evidence" '{}'
expect 403 agent_decommissioned -- "evidence of a decommissioned agent"
# decided from the head alone: a 16 MiB body announced but never sent is answered at once
printf 'POST /v1/agents/%s/evidence HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16777216\r\n\r\n' \
        "$id_b" >decom.req
t0=$(date +%s)
resp=$(python3 "$TOP/tests/hostile/hostile-http.py" raw "$port" "$CA" "@decom.req" | tr -d '\r')
[ $(($(date +%s) - t0)) -lt 8 ] || fail "decommissioned agent's evidence head not answered at once"
[[ "$resp" == "HTTP/1.1 403"* && "$resp" == *'"agent_decommissioned"'* ]] ||
        fail "decommissioned agent's evidence head: ${resp:0:200}"
ok "evidence head of a decommissioned agent: 403 before any body byte"
enrol_ek "$ENROLL" tpm-b
expect 403 ek_decommissioned -- "re-enrolment of the decommissioned AK"
enrol_ek "$ENROLL" tpm-d
expect 403 ek_decommissioned -- "enrolment of another AK of the decommissioned EK"
api DELETE "/v1/agents/$id_b" "" "$ADMIN"
expect 204 "" -- "DELETE the decommissioned agent"
enrol_ek "$ENROLL" tpm-d
expect 403 ek_decommissioned -- "the EK stays refused after DELETE"
api POST "/v1/agents/$id_b/readmit" "" "$ADMIN"
expect 200 "" -- "readmit (agent forgotten, EK refused)"
enrol_ek "$ENROLL" tpm-d
expect 201 "" -- "the EK enrols again after readmit"
id_d=$(jq -r .id <<<"$body")
credential cred-d
activate tpm-d cred-d proof-d || fail "ActivateCredential: $(cat tpm-d/activate.log)"
activate_api "$id_d" proof-d
expect 200 "" -- "and activates"
api POST "/v1/agents/$id_d/decommission" "" "$ADMIN"
expect 200 "" -- "decommission agent d"
[ "$(state_of "$id_d")" = decommissioned ] || fail "agent d state"
api POST "/v1/agents/$id_d/readmit" "" "$ADMIN"
expect 200 "" -- "readmit agent d"
[ "$(jq -r .state <<<"$body")" = active ] || fail "readmitted state: $body"
api POST "/v1/agents/$id_d/readmit" "" "$ADMIN"
expect 409 agent_not_decommissioned -- "readmit twice"
api POST "/v1/agents/$id_d/challenges" '{}'
expect 201 "" -- "challenge after readmit"
api DELETE "/v1/agents/$id_d" "" "$ADMIN"
expect 204 "" -- "plain DELETE"
enrol_ek "$ENROLL" tpm-d
expect 201 "" -- "after a plain DELETE the agent may enrol again"
stop_daemon TERM
echo "# all enrolment and decommission checks passed"
