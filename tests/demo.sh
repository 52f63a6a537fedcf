#!/usr/bin/env bash
# The demo (README command 1): the whole system on loopback, real parts only.
#   a software TPM with an EK certificate (swtpm + its local CA), attestd over TLS with a demo
#   policy, a recorded real boot of Linux 6.1 replayed into the TPM (firmware event log into
#   PCR 0-9, IMA log into PCR 10), attest-agent enrolling by credential activation and attesting;
#   the operator's curl queries; then the host going permissive (a real selinux-state
#   measurement with enforcing=0 appended and extended), and a second host whose log was
#   tampered with. Cleans up what it started.
# Usage: tests/demo.sh BUILD_DIR
#   VALGRIND=1 runs attestd and every attest-agent under valgrind's memcheck and fails on any
#   error or definite leak (the suite's leak check of the integration path).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SWTPM_TCTI:-}" ]; then
        # host A's TPM lives for the whole demo
        exec "$top/tests/lib/swtpm-run" --ek-cert -- "$0" "$build"
fi
ctl=$build/attestctl/attestctl
vg=()
if [ "${VALGRIND:-0}" = 1 ]; then
        vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99)
fi
export VG="${vg[*]}"
ATTESTD=$build/daemon/attestd
agent=$build/agent/attest-agent
boot=$top/tests/data/qemu61-good
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$top/tests/lib/common.sh"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. certificates, tokens, attestd (TLS) with the EK CA of the TPM vendor (swtpm's local CA)"
test_begin attestd-demo
w=$work
# the EK CA bundle: a directory of vendor CA certificates (here swtpm's local CA, root + issuer)
mkdir -p "$w/ek-ca"
cp "$SWTPM_STATE/ca/swtpm-localca-rootca-cert.pem" "$w/ek-ca/hostA-root.pem"
cp "$SWTPM_STATE/ca/issuercert.pem" "$w/ek-ca/hostA-issuer.pem"
agent_tokens
# attestd under valgrind takes longer to answer /healthz
SPAWN_WAIT=30 start_attestd -w "$VG" --ek-ca "$w/ek-ca" --pcr-selection sha256:0-10
url=https://127.0.0.1:$port
run curl -s --cacert "$CA" "$url/healthz"
echo
q() { curl -s --cacert "$CA" -H "Authorization: Bearer $READER" "$url$1"; echo; }

say "2. the expected state: policy 'default' (SELinux enforcing, never permissive, policy hash, kernel 6.1.*, boot_aggregate)"
cat "$top/tests/demo/policy.json"
curl -s --cacert "$CA" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -X PUT \
        --data-binary @"$top/tests/demo/policy.json" "$url/v1/policies/default"
echo

say "3. host A boots: the recorded Linux 6.1 boot replayed into its TPM"
"$top/tests/lib/replay-boot" "$boot" "$ctl"
tpm2_pcrread sha256:0,7,10
cp "$boot/binary_runtime_measurements" "$w/hostA.log"

say "4. attest-agent on host A: enrol (EK certificate, MakeCredential / ActivateCredential), attest once"
agent_a=("${vg[@]}" "$agent" --verifier "$url" --ca "$w/certs/ca.pem" --token-file "$w/enroll.token"
        --tcti "$SWTPM_TCTI" --state-dir "$w/hostA" --ima-log "$w/hostA.log" --once)
# host_a LOG VERDICT WANT WHAT: host A's agent once, its log shown; it must exit WANT
host_a() {
        local rc
        set +e
        "${agent_a[@]}" 2>"$w/$1" | tee "$w/$2"
        rc=${PIPESTATUS[0]}
        set -e
        sed 's/^/  agent: /' "$w/$1"
        [ "$rc" -eq "$3" ] || { echo "demo: host A should $4 (exit $rc)" >&2; exit 1; }
}
host_a agentA.log verdict1.json 0 pass
id=$(cat "$w/hostA/agent-id")
echo "=> verdict for host A: PASS"

say "5. what an operator asks (reader token)"
run q /v1/agents
run q "/v1/agents/$id"
run q "/v1/agents/$id/results?limit=5"
curl -s --cacert "$CA" -H "Authorization: Bearer $ADMIN" "$url/v1/policies/default"
echo

say "6. host A goes permissive: the kernel measures selinux-state enforcing=0 (appended and extended)"
# entry 2 of the recorded boot is such a measurement: copy its bytes, extend PCR 10 with them
off=0 len=0
for _ in 0 1 2; do # entries 0 and 1 skipped, entry 2's length
        off=$((off + len))
        nlen=$(od -An -tu4 -j $((off + 24)) -N4 "$boot/binary_runtime_measurements" | tr -d ' ')
        dlen=$(od -An -tu4 -j $((off + 28 + nlen)) -N4 "$boot/binary_runtime_measurements" | tr -d ' ')
        len=$((32 + nlen + dlen))
done
dd if="$boot/binary_runtime_measurements" of="$w/permissive.entry" bs=1 skip="$off" \
        count="$len" status=none
"$ctl" ima show "$w/permissive.entry" | tail -n +2
"$ctl" ima hashes "$w/permissive.entry" | while read -r l; do tpm2_pcrextend "$l"; done
cat "$w/permissive.entry" >>"$w/hostA.log"
host_a agentA2.log verdict2.json 1 "now fail"
echo "=> verdict for host A: FAIL, claims:"
grep -oE '"name": "[a-z_.]+"|"result": "[a-z]+"' "$w/verdict2.json" | paste - - | grep -v '"pass"' || true

say "7. host B: the same boot, but its IMA log was edited (selinux-state enforcing=0 -> 1)"
cp "$boot/binary_runtime_measurements" "$w/hostB.log"
boff=$(grep -abo 'enforcing=0' "$w/hostB.log" | head -1 | cut -d: -f1)
printf '1' | dd of="$w/hostB.log" bs=1 seek=$((boff + 10)) conv=notrunc status=none
set +e
W=$w URL=$url BOOT=$boot CTL=$ctl AGENT=$agent TOP=$top "$top/tests/lib/swtpm-run" --ek-cert -- bash -c '
        set -e
        # host B comes from another TPM vendor: its CA joins the verifier'\''s EK CA bundle
        cp "$SWTPM_STATE/ca/swtpm-localca-rootca-cert.pem" "$W/ek-ca/hostB-root.pem"
        cp "$SWTPM_STATE/ca/issuercert.pem" "$W/ek-ca/hostB-issuer.pem"
        "$TOP/tests/lib/replay-boot" "$BOOT" "$CTL"
        $VG "$AGENT" --verifier "$URL" --ca "$W/certs/ca.pem" --token-file "$W/enroll.token" \
                --tcti "$SWTPM_TCTI" --state-dir "$W/hostB" --ima-log "$W/hostB.log" --once \
                2>"$W/agentB.log" | tee "$W/verdict3.json"
        exit "${PIPESTATUS[0]}"'
rc=$?
set -e
sed 's/^/  agent: /' "$w/agentB.log"
[ "$rc" -eq 1 ] || { echo "demo: host B should fail (exit $rc)" >&2; exit 1; }
echo "=> verdict for host B: FAIL ($(grep -oE '"code": "[a-z0-9_]+"' "$w/verdict3.json" | head -1))"

say "8. the fleet as the verifier sees it"
run q /v1/agents
echo
stop_daemon TERM
echo "demo: done (attestd stopped cleanly on SIGTERM; all processes stopped)"
