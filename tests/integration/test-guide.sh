#!/usr/bin/env bash
# docs/operating.md cannot rot: every ```sh block of the guide runs, in order, in one bash shell
# (set -euo pipefail), against a real attestd and a real attest-agent on swtpm over loopback.
# The guide's variables (its first block) are set here to a scratch directory, a free loopback
# port, the swtpm, the recorded qemu61 boot's IMA log (replayed into the swtpm's PCRs) and the
# swtpm's local CA; attestd, attest-agent and attestctl are the build's, first in PATH.
# A block that starts with "# not run by the guide test: REASON" is not run and is listed here
# with its reason ("not run: ..."), never skipped silently. After the guide: what it did is
# checked from outside (the agent decommissioned, the rotated-out admin token refused, the new
# one accepted, the agent's exit status 3 when decommissioned).
# Usage: test-guide.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread jq
guide=$TOP/docs/operating.md
[ -f "$guide" ] || fail "no $guide"

# the host: the recorded boot in the swtpm, its IMA log as ima.bin
boot_host
mkdir -p bin shell
ln -s "$ATTESTD" bin/attestd
ln -s "$AGENT" bin/attest-agent
ln -s "$ATTESTCTL" bin/attestctl
# the guide's python3 is Debian's (python3-jwt, python3-cryptography), not a pyenv one first in PATH
ln -s /usr/bin/python3 bin/python3

# a free loopback port for attestd (below the ephemeral range and swtpm-run's)
for _ in $(seq 20); do
        p=$((10000 + RANDOM % 10000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || break
done

# the guide's blocks as one script: its variables first, each block announced by its line
awk -v vars="$work/vars.sh" '
        BEGIN {
                print "set -euo pipefail"; print ". \"" vars "\""
                # what the guide started is stopped by the test, also when a block fails
                print "trap '\''printf \"ID=%q\\nATTESTD_PID=%q\\nRECEIVER_PID=%q\\n\" \"${ID:-}\" \"${ATTESTD_PID:-}\" \"${RECEIVER_PID:-}\" >\"$GUIDE_OUT\"'\'' EXIT"
        }
        /^```sh$/ { inb = 1; start = NR; first = 1; skip = 0; n++; next }
        inb && /^```$/ { inb = 0; next }
        inb && first {
                first = 0
                if ($0 ~ /^# not run by the guide test:/) {
                        skip = 1
                        sub(/^# not run by the guide test: */, "")
                        print "echo \"not run: guide block " n " (line " start "): " $0 "\""
                        next
                }
                print "echo \"# guide block " n " (line " start ")\""
                print "echo \"# guide block " n " (line " start ")\" >&2"
        }
        inb && !skip { print }
        END { if (inb) { print "echo unterminated block; exit 1" } }
' "$guide" >guide.sh
blocks=$(grep -c '^```sh$' "$guide")
skipped=$(grep -c '^echo "not run: ' guide.sh || true)
[ "$blocks" -ge 15 ] || fail "only $blocks sh blocks in the guide"

cat >vars.sh <<EOF
ETC=$work/etc
STATE=$work/state
VERIFIER=localhost
LISTEN=127.0.0.1:$p
PORT=$p
OPS=$work/ops
SWTPM_LOCALCA=$SWTPM_STATE/ca
AGENT_ETC=$work/agent-etc
AGENT_STATE=$work/agent-state
TCTI=$SWTPM_TCTI
IMA_LOG=$work/ima.bin
SRC=$TOP
PATH=$work/bin:\$PATH
EOF
export GUIDE_OUT=$work/guide.out
# attestd started by the guide: stopped at exit by its pid (the guide reports it at its end)
at_exit 'if [ -s guide.out ]; then . ./guide.out; kill $ATTESTD_PID $RECEIVER_PID 2>/dev/null; fi'
rc=0
(cd shell && exec bash ../guide.sh) >guide.log 2>guide.err || rc=$?
if [ $rc != 0 ]; then
        echo "--- the guide's output (tail)" >&2
        tail -15 guide.log >&2
        tail -25 guide.err >&2
        tail -10 state/attestd.log >&2 2>/dev/null || true
        fail "the guide failed (exit $rc) in $(grep '^# guide block' guide.err | tail -1)"
fi
ran=$(grep -c '^# guide block' guide.log)
grep '^not run: ' guide.log || true
[ "$ran" = $((blocks - skipped)) ] || fail "$ran blocks ran, want $((blocks - skipped))"
ok "the guide: $ran sh blocks ran in order, $skipped not run (listed above)"

# ---- what the guide did, seen from outside -----------------------------------------------------
# shellcheck disable=SC1091
. ./guide.out
# get PATH TOKEN-FILE: attestd (as the guide made it: its CA, the name localhost) answers $status
get() {
        status=$(curl -s --cacert etc/ca.pem -o resp.json -w '%{http_code}' \
                -H "Authorization: Bearer $(tr -d '\n' <"$2")" "https://localhost:$p$1") || status=000
        body=$(cat resp.json 2>/dev/null || true)
}
grep -q "^attest-agent exited 3$" guide.log || fail "the decommissioned agent did not exit 3"
get "/v1/agents/$ID" ops/reader.token
[ "$status" = 200 ] && [ "$(jq -r .state <<<"$body")" = decommissioned ] ||
        fail "agent $ID after the guide: $status $body"
ok "the guide's host is decommissioned and its agent exited 3"
# the admin token the guide rotated out has left the tokens file; the rotated-in one works
[ "$(grep -c '^admin ' etc/tokens)" = 1 ] || fail "$(grep -c '^admin ' etc/tokens) admin tokens after the rotation"
grep -q 'ops team, rotated$' etc/tokens || fail "the rotated token is not in the tokens file"
get /v1/policies ops/admin.token
[ "$status" = 200 ] && [ "$(jq -r '.policies[0].name' <<<"$body")" = prod ] ||
        fail "the rotated-in admin token: $status $body"
grep -q "^prod.json: valid policy 'prod'$" guide.log || fail "policy validate: $(grep -i valid guide.log)"
ok "the tokens file holds only the rotated admin token, and it works; policy prod is stored"

# section 5: the receiver got each change once, signed, in order; sections 7 and 8 added the
# re-enrolment (enrolled, then its first verdict) and the decommission
for _ in $(seq 100); do # delivery is asynchronous: up to 10 s for the last event
        grep -q '"agent.decommissioned"' state/hooks/events.jsonl && break
        sleep 0.1
done
types=$(jq -r .type state/hooks/events.jsonl | tr '\n' ' ')
[ "$types" = "agent.fail agent.pass agent.enrolled agent.pass agent.decommissioned " ] ||
        fail "webhook events: $types"
ids=$(jq -r .id state/hooks/events.jsonl | tr '\n' ' ')
[ "$(jq -r .id state/hooks/events.jsonl | sort -n | tr '\n' ' ')" = "$ids" ] || fail "event ids out of order: $ids"
jq -se 'map(select(.type == "agent.fail")) | any(.[].failing_claims[]; . == "kernel.version")' \
        state/hooks/events.jsonl >/dev/null || fail "agent.fail does not name kernel.version"
! grep -v ' ok ' state/hooks/requests || fail "a request whose signature did not verify"
ok "webhooks: $types(ids $ids), every signature verified by the receiver"
# section 6: PyJWT verified the EAR against the JWKS, with the relying party's nonce
grep -Eq '^EAR (affirming|warning) prod@[0-9]+ ' guide.log || fail "EAR: $(grep '^EAR' guide.log)"
ok "EAR verified by PyJWT: $(grep '^EAR' guide.log | cut -d' ' -f2-3)"
[ $fails = 0 ]
