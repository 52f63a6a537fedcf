#!/usr/bin/env bash
# Enrolment by credential activation (POST /v1/agents, /v1/agents/{id}/activate) with curl and
# tpm2-tools against a real attestd and two swtpms provisioned with EK certificates:
#  - happy path: enrol -> pending (no challenge) -> ActivateCredential in the TPM -> active
#  - a replayed proof, a wrong proof and an expired credential are refused
#  - a credential for another TPM's EK, or for another AK of this TPM: the TPM refuses it, so no
#    proof exists and the agent stays pending
#  - EK certificate checks: another CA, a certificate of another EK, none, no --ek-ca on the
#    verifier; --insecure-trust-ak enrols at once and says so in the log
#  - refusals are logged (the reason and the EK certificate's issuer, escaped, at most one line a
#    minute per reason and issuer), the detail names the issuer to add to --ek-ca, and so does a
#    real attest-agent refused for it; a bad enrolment token is logged too; the agent reports a
#    state directory with a wrong mode as such, not as a TPM error
# Usage: test-enroll.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
# (runs itself under SWTPM_RUN --ek-cert: that swtpm is TPM 1; TPM 2 is provisioned aside)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin base64 tpm2_createek tpm2_createak tpm2_nvread tpm2_activatecredential \
        tpm2_startauthsession tpm2_policysecret tpm2_flushcontext

# refusal DIR REGEX: the last activation failed in the TPM's ActivateCredential (the session and
# the keys were fine), with an error matching REGEX
refusal() {
        grep -qE "$2" "$1/activate.log" || fail "ActivateCredential failed otherwise: $(cat "$1/activate.log")"
}

# verifier NAME ARGS...: a fresh attestd (own database) on a free port
verifier() {
        local name=$1
        shift
        stop_daemon TERM
        start_attestd -n "$name" -d "$work/$name.db" "$@"
}

agent_state() { # ID: its state as GET /v1/agents/{id} says
        api GET "/v1/agents/$1" "" "$READER"
        expect 200 "" -- "GET /v1/agents/$1" >/dev/null
        jq -r .state <<<"$body"
}

# TPM 1 (this swtpm): AKs a, b, c, d; TPM 2: its EK and certificate, its CA
for k in a b c d; do keys "tpm1-$k"; done
cmp -s tpm1-a/ek.pub tpm1-b/ek.pub || fail "the EK template gives another EK"
"$SWTPM_RUN" --ek-cert --state "$work/tpm2-state" -- bash -c "$(declare -f keys); keys tpm2"
mkdir -p both-ca
cp "$SWTPM_STATE/ca/issuercert.pem" both-ca/tpm1-issuer.pem
cp "$SWTPM_STATE/ca/swtpm-localca-rootca-cert.pem" both-ca/tpm1-root.pem
cp tpm2-state/ca/issuercert.pem both-ca/tpm2-issuer.pem
cp tpm2-state/ca/swtpm-localca-rootca-cert.pem both-ca/tpm2-root.pem
cmp -s tpm1-a/ek.der tpm2/ek.der && fail "both swtpms have the same EK certificate"

echo "# happy path, replayed and wrong proofs (verifier trusts TPM 1's CA)"
verifier one --ek-ca "$SWTPM_STATE/ca"
enrol_ek "$ENROLL" tpm1-a tpm1-a
expect 201 "" -- "enrol AK a with TPM 1's EK certificate"
[ "$(jq -r .state <<<"$body")" = pending ] || fail "state after enrolment: $body"
id_a=$(jq -r .id <<<"$body")
credential cred-a
api POST "/v1/agents/$id_a/challenges" '{}'
expect 403 agent_not_active -- "challenge of a pending agent"
# the credential is bound to AK a: AK b of the same TPM cannot open it
activate tpm1-b cred-a proof-ab && fail "TPM activated the credential of AK a with AK b"
refusal tpm1-b 'Esys_ActivateCredential\(0x1DF\).*integrity check failed'
ok "ActivateCredential with another AK of the same TPM: $(grep -o 'tpm:.*' tpm1-b/activate.log)"
activate tpm1-a cred-a proof-a || fail "ActivateCredential: $(cat tpm1-a/activate.log)"
ok "ActivateCredential with AK a and the EK of TPM 1 ($(stat -c %s proof-a) bytes)"
activate_api "$id_a" proof-a
expect 200 "" -- "activate with the TPM's proof"
[ "$(jq -r .state <<<"$body")" = active ] || fail "state after activation: $body"
[ "$(agent_state "$id_a")" = active ] || fail "GET /v1/agents/$id_a: not active"
api POST "/v1/agents/$id_a/challenges" '{}'
expect 201 "" -- "challenge once active"
activate_api "$id_a" proof-a
expect 409 agent_not_pending -- "the proof replayed"

enrol_ek "$ENROLL" tpm1-b tpm1-b
expect 201 "" -- "enrol AK b"
id_b=$(jq -r .id <<<"$body")
head -c 32 /dev/urandom >proof-wrong
activate_api "$id_b" proof-wrong
expect 403 activation_failed -- "a wrong proof"
grep -q "agent $id_b: wrong activation proof" daemon.log || fail "wrong proof not logged"
[ "$(agent_state "$id_b")" = pending ] || fail "agent b not pending after a wrong proof"
api POST "/v1/agents/$id_b/challenges" '{}'
expect 403 agent_not_active -- "challenge after a wrong proof"

echo "# EK certificate checks"
issuer2=$(openssl x509 -inform DER -in tpm2/ek.der -noout -issuer -nameopt RFC2253 | sed 's/^issuer=//')
[ -n "$issuer2" ] || fail "no issuer in TPM 2's EK certificate"
enrol_ek "$ENROLL" tpm1-c tpm2
expect 403 ek_cert_untrusted -- "EK certificate of TPM 2 (another CA)"
jq -e --arg i "$issuer2" '.detail | contains("(issuer " + $i + "): the verifier'"'"'s operator must add that CA'"'"'s certificate to --ek-ca")' \
        <<<"$body" >/dev/null || fail "the detail does not name the issuer $issuer2: $body"
grep -qF "<4>enrolment refused (ek_cert_untrusted): EK certificate issued by $issuer2: EK certificate does not chain to the EK CA" daemon.log ||
        fail "the refusal is not logged with its issuer: $(grep -i enrol daemon.log)"
for _ in 1 2 3; do enrol_ek "$ENROLL" tpm1-c tpm2; done
[ "$(count daemon.log 'enrolment refused \(ek_cert_untrusted\)')" = 1 ] ||
        fail "4 refusals in a minute: $(count daemon.log 'enrolment refused \(ek_cert_untrusted\)') lines"
api POST /v1/agents '{}' "not-a-token"
expect 401 unauthorized -- "enrolment with an unknown token"
grep -q '<4>enrolment refused (unauthorized): unknown bearer token' daemon.log ||
        fail "a bad enrolment token is not logged: $(grep -i enrol daemon.log)"
ok "ek_cert_untrusted names issuer $issuer2 (detail and log), logged once for 4 refusals; a bad token is logged"
enrol_ek "$ENROLL" tpm1-c tpm2 tpm1-a
expect 403 ek_cert_mismatch -- "EK certificate of TPM 1 with the EK public of TPM 2"
enrol_ek "$ENROLL" tpm1-c tpm1-a none
expect 403 ek_cert_required -- "no EK certificate"
api GET /v1/agents "" "$READER"
[ "$(jq '.agents | length' <<<"$body")" = 2 ] || fail "refused enrolments were stored: $body"

echo "# wrong TPM (verifier trusts both CAs)"
verifier both --ek-ca "$work/both-ca"
enrol_ek "$ENROLL" tpm1-c tpm2
expect 201 "" -- "AK of TPM 1 with EK certificate and EK public of TPM 2"
id_c=$(jq -r .id <<<"$body")
credential cred-c
activate tpm1-c cred-c proof-c && fail "TPM 1 activated a credential made for TPM 2's EK"
refusal tpm1-c 'Esys_ActivateCredential\(0x[0-9A-F]+\) - tpm:'
ok "TPM 1 cannot activate a credential for TPM 2's EK: $(grep -o 'tpm:.*' tpm1-c/activate.log)"
[ "$(agent_state "$id_c")" = pending ] || fail "agent c is not pending"
api POST "/v1/agents/$id_c/challenges" '{}'
expect 403 agent_not_active -- "the agent without a proof stays pending"

echo "# credential expiry (--credential-ttl 10)"
verifier ttl --ek-ca "$SWTPM_STATE/ca" --credential-ttl 10
enrol_ek "$ENROLL" tpm1-d tpm1-d
expect 201 "" -- "enrol AK d"
id_d=$(jq -r .id <<<"$body")
credential cred-d
activate tpm1-d cred-d proof-d || fail "ActivateCredential: $(cat tpm1-d/activate.log)"
sleep 11
activate_api "$id_d" proof-d
expect 403 credential_expired -- "the right proof 11 s after a 10 s credential"
[ "$(agent_state "$id_d")" = pending ] || fail "agent d active after an expired credential"

echo "# a real attest-agent whose TPM's EK CA the verifier does not trust"
verifier other --ek-ca "$work/tpm2-state/ca"
issuer1=$(openssl x509 -inform DER -in tpm1-a/ek.der -noout -issuer -nameopt RFC2253 | sed 's/^issuer=//')
: >ima.bin
flush # the transient objects tpm2-tools left: the agent makes its AK
rc=0
agent_cmd --state-dir "$work/st-other" --once >/dev/null 2>agent-other.log || rc=$?
[ $rc = 2 ] || fail "the refused agent exited $rc: $(cat agent-other.log)"
grep -qF "<3>the verifier does not trust this TPM's EK certificate, issued by $issuer1: its operator must add that issuer's CA certificate to attestd --ek-ca" agent-other.log ||
        fail "the agent does not name the issuer $issuer1: $(cat agent-other.log)"
ok "attest-agent refused for its EK certificate names the issuer: $issuer1 (exit 2)"
# a state directory others may read is this host's set-up, not the TPM's: its own prefix
mkdir -m 0755 "$work/st-open"
rc=0
agent_cmd --state-dir "$work/st-open" --once >/dev/null 2>agent-open.log || rc=$?
[ $rc = 2 ] || fail "a 0755 state directory: exit $rc: $(cat agent-open.log)"
grep -q "^<3>state directory (--state-dir): $work/st-open (mode 0755, uid 0) must be 0700" agent-open.log ||
        fail "the state directory's mode is not reported as such: $(cat agent-open.log)"
if grep -q '^<3>TPM' agent-open.log; then fail "reported as a TPM error: $(cat agent-open.log)"; fi
ok "a 0755 state directory: 'state directory (--state-dir): ... must be 0700', not 'TPM:'"

echo "# verifier without --ek-ca; --insecure-trust-ak"
verifier noca
enrol_ek "$ENROLL" tpm1-a tpm1-a
expect 403 ek_ca_unconfigured -- "enrolment without --ek-ca"
verifier insecure --insecure-trust-ak
enrol_ek "$ENROLL" tpm1-a tpm1-a none
expect 201 "" -- "--insecure-trust-ak: enrol without EK certificate"
[ "$(jq -r .state <<<"$body")" = active ] || fail "--insecure-trust-ak: state $body"
[ "$(jq -r 'has("credential")' <<<"$body")" = false ] || fail "--insecure-trust-ak: a credential"
id_i=$(jq -r .id <<<"$body")
grep -q "^<4>agent $id_i enrolled WITHOUT EK proof (--insecure-trust-ak)" daemon-insecure.log ||
        fail "no warning for the unproven enrolment: $(cat daemon-insecure.log)"
ok "--insecure-trust-ak: the enrolment is warned about in the log"
api POST "/v1/agents/$id_i/challenges" '{}'
expect 201 "" -- "--insecure-trust-ak: challenge at once"
stop_daemon TERM
echo "# all enrolment checks passed"
