#!/usr/bin/env bash
# The demo (README command 1): the whole system on loopback, real parts only.
#   a software TPM with an EK certificate (swtpm + its local CA), attestd over TLS with a demo
#   policy that demands the project's four claims (SELinux enforcing and never permissive since
#   boot, the SELinux policy's hash, trusted keys backed by the TPM, kCFI enforcing), the last two
#   anchored on the kernel's own measurements; host A: a recorded real boot of the patched clang-16
#   kCFI Linux 6.1 (tests/data/clang-kcfi) replayed into the TPM (firmware event log into PCR 0-9,
#   IMA log into PCR 10), attest-agent enrolling by credential activation and attesting: every
#   claim passes, anchored on its log entry; the operator's curl queries; then host A going
#   permissive (a real selinux-state measurement with enforcing=0 appended and extended); host B,
#   a recorded boot of Linux 6.1 without the patch series (tests/data/qemu61-good): nothing
#   measures its trusted keys or CFI, so the anchored claims fail, saying why; host C, host A's
#   boot with its IMA log edited: the replay fails. Cleans up what it started.
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
boot=$top/tests/data/clang-kcfi       # host A, host C: the patched clang-16 kCFI kernel
unpatched=$top/tests/data/qemu61-good # host B: Linux 6.1 without the patch series
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

say "2. the expected state: policy 'default' (SELinux enforcing, never permissive, policy hash; trusted keys from the TPM and kCFI enforcing, both anchored; kernel 6.1.*, boot_aggregate)"
cat "$top/tests/demo/policy.json"
echo "(two policy hashes: the same SELinux policy as two kernel builds re-serialise it)"
curl -s --cacert "$CA" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -X PUT \
        --data-binary @"$top/tests/demo/policy.json" "$url/v1/policies/default"
echo

say "3. host A boots: a recorded boot of the patched clang-16 kCFI Linux 6.1, replayed into its TPM"
"$top/tests/lib/replay-boot" "$boot" "$ctl"
tpm2_pcrread sha256:0,7,10
cp "$boot/binary_runtime_measurements" "$w/hostA.log"
echo "the kernel's own records in its IMA log (attestctl ima show):"
"$ctl" ima show "$boot/binary_runtime_measurements" | grep -E 'cfi-state|trusted-keys-source' || true

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
        # the agent's claim lines are the table below
        grep -v '<6>claim ' "$w/$1" | sed 's/^/  agent: /'
        [ "$rc" -eq "$3" ] || { echo "demo: host A should $4 (exit $rc)" >&2; exit 1; }
}
host_a agentA.log verdict1.json 0 pass
id=$(cat "$w/hostA/agent-id")
# claims VERDICT: one line per claim: result, name, anchored on which log entry, what was seen
claims() {
        jq -r '.claims[] | [.result, .name, (if .anchored and .entry >= 0 then "anchored, entry \(.entry)"
                elif .anchored then "anchored" else "not anchored" end),
                (.observed | if . == null then "-" elif type == "array" then join(",") else tostring end),
                (.reason // "")] | @tsv' "$1" |
                awk -F'\t' '{ printf "  %-7s %-26s %-18s %.40s%s\n", $1, $2, $3, $4, ($5 == "" ? "" : "\n          " $5) }'
}
echo "=> verdict for host A: PASS, every claim anchored on the kernel's own measurement:"
claims "$w/verdict1.json"
entry() { jq -r --arg n "$1" '.claims[] | select(.name == $n) | .entry' "$w/verdict1.json"; }
echo "=> the four claims this project exists for, each anchored on the kernel's own log entry under"
echo "   the TPM quote: SELinux enforcing and never permissive since boot (entry $(entry selinux.never_permissive)),"
echo "   its policy's hash (entry $(entry selinux.policy_sha256)), trusted keys backed by the TPM (entry $(entry trusted_keys.source),"
echo "   trusted-keys-source), kCFI enforcing (entry $(entry cfi.enabled), cfi-state)"
# the mission: these pass, anchored, on host A
for n in selinux.enforcing selinux.never_permissive selinux.policy_sha256 trusted_keys.anchored \
        trusted_keys.source trusted_keys.rng cfi.anchored cfi.enabled cfi.mode cfi.permissive; do
        jq -e --arg n "$n" '.claims[] | select(.name == $n and .result == "pass" and .anchored)' \
                "$w/verdict1.json" >/dev/null || { echo "demo: host A's $n did not pass anchored" >&2; exit 1; }
done

say "5. what an operator asks (reader token)"
run q /v1/agents
run q "/v1/agents/$id"
run q "/v1/agents/$id/results?limit=5"
curl -s --cacert "$CA" -H "Authorization: Bearer $ADMIN" "$url/v1/policies/default"
echo

say "6. host A goes permissive: the kernel measures selinux-state enforcing=0 (appended and extended)"
# the recorded boot's first selinux-state is such a measurement (the policy was loaded with
# enforcing=0): copy its bytes, extend PCR 10 with them
first=$(awk '$5 == "selinux-state" { print NR - 1; exit }' "$boot/ascii_runtime_measurements")
off=0 len=0
for _ in $(seq 0 "$first"); do # the entries before it skipped, its length
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
echo "=> verdict for host A: FAIL, claims not passing:"
jq '.claims |= map(select(.result != "pass"))' "$w/verdict2.json" >"$w/verdict2.fail.json"
claims "$w/verdict2.fail.json"

# other_host NAME BOOT LOG VERDICT: another host with its own TPM (another vendor: its CA joins
# the verifier's EK CA bundle), BOOT replayed into it, its agent attesting once with LOG; the
# agent's exit status
other_host() {
        local rc
        set +e
        # shellcheck disable=SC2016 # expanded by the inner bash
        N=$1 W=$w URL=$url BOOT=$2 LOG=$3 OUT=$4 CTL=$ctl AGENT=$agent TOP=$top \
                "$top/tests/lib/swtpm-run" --ek-cert -- bash -c '
                set -e
                cp "$SWTPM_STATE/ca/swtpm-localca-rootca-cert.pem" "$W/ek-ca/$N-root.pem"
                cp "$SWTPM_STATE/ca/issuercert.pem" "$W/ek-ca/$N-issuer.pem"
                "$TOP/tests/lib/replay-boot" "$BOOT" "$CTL"
                $VG "$AGENT" --verifier "$URL" --ca "$W/certs/ca.pem" --token-file "$W/enroll.token" \
                        --tcti "$SWTPM_TCTI" --state-dir "$W/$N" --ima-log "$LOG" --once \
                        2>"$W/agent-$N.log" | tee "$W/$OUT"
                exit "${PIPESTATUS[0]}"' >/dev/null
        rc=$?
        set -e
        grep -v '<6>claim ' "$w/agent-$1.log" | sed 's/^/  agent: /'
        return $rc
}

say "7. host B: Linux 6.1 without the kernel patch series (a recorded real boot)"
echo "its log has no cfi-state or trusted-keys-source entry: nothing the TPM quote covers says"
echo "how its trusted keys are backed or whether CFI is on; the agent's own report is not evidence"
cp "$unpatched/binary_runtime_measurements" "$w/hostB.log"
rc=0
other_host hostB "$unpatched" "$w/hostB.log" verdict3.json || rc=$?
[ "$rc" -eq 1 ] || { echo "demo: host B should fail (exit $rc)" >&2; exit 1; }
echo "=> verdict for host B: FAIL, claims not passing:"
jq '.claims |= map(select(.result != "pass"))' "$w/verdict3.json" >"$w/verdict3.fail.json"
claims "$w/verdict3.fail.json"
for n in trusted_keys.anchored cfi.anchored; do
        jq -e --arg n "$n" '.claims[] | select(.name == $n and .result != "pass")' \
                "$w/verdict3.json" >/dev/null || { echo "demo: host B's $n did not fail" >&2; exit 1; }
done
# SELinux is measured by mainline kernels too: those claims pass on host B
jq -e '[.claims[] | select((.name | startswith("selinux.")) and .result != "pass")] | length == 0' \
        "$w/verdict3.json" >/dev/null || { echo "demo: host B's SELinux claims should pass" >&2; exit 1; }

say "8. host C: host A's boot, but its IMA log was edited (selinux-state enforcing=0 -> 1)"
cp "$boot/binary_runtime_measurements" "$w/hostC.log"
boff=$(grep -abo 'enforcing=0' "$w/hostC.log" | head -1 | cut -d: -f1)
printf '1' | dd of="$w/hostC.log" bs=1 seek=$((boff + 10)) conv=notrunc status=none
rc=0
other_host hostC "$boot" "$w/hostC.log" verdict4.json || rc=$?
[ "$rc" -eq 1 ] || { echo "demo: host C should fail (exit $rc)" >&2; exit 1; }
echo "=> verdict for host C: FAIL ($(jq -r '.reason.code // empty' "$w/verdict4.json"): $(jq -r '.reason.detail // empty' "$w/verdict4.json"))"

say "9. the fleet as the verifier sees it"
run q /v1/agents
echo
stop_daemon TERM
echo "demo: done (attestd stopped cleanly on SIGTERM; all processes stopped)"
