#!/usr/bin/env bash
# attestctl's offline commands print both forms and share one exit-status rule (0 ok, 1 a
# verdict or check failed, 2 usage or file errors): ima replay, quote check and policy check as
# tables/text and with --json, passing and failing, on the recorded qemu61 boot and real quotes of
# the swtpm this test runs under (tests/lib/swtpm-run); a missing file exits 2 in every command.
# Usage: test-attestctl-offline.sh ATTESTCTL MKEVIDENCE TOP
set -euo pipefail
[ $# = 3 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ATTESTCTL=$(realpath "$1") MKEVIDENCE=$(realpath "$2")
TOP=$(realpath "$3")
export TOP
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$TOP/tests/lib/common.sh"
[ -n "${SWTPM_TCTI:-}" ] || { echo "not ok: run under tests/lib/swtpm-run" >&2; exit 1; }
need tpm2_quote jq
test_begin
cd "$work"
D=$TOP/tests/data/qemu61-good
run() { # ARGS...: attestctl, stdout out.txt, stderr err.txt, status rc
        rc=0
        "$ATTESTCTL" "$@" >out.txt 2>err.txt || rc=$?
}
want_rc() { [ "$rc" = "$1" ] || fail "$2: exit $rc, want $1: $(cat err.txt) $(head -5 out.txt)"; }

# ---- ima replay --------------------------------------------------------------------------------
echo "# ima replay"
run ima replay --bank sha256 --pcrs "$D/pcrs-sha256.txt" "$D/binary_runtime_measurements"
want_rc 0 "ima replay"
grep -qx "boot_aggregate (entry 0): ok" out.txt && grep -qx "1 PCR values compared, 0 mismatched" out.txt ||
        fail "ima replay text: $(cat out.txt)"
run ima replay --json --bank sha256 --pcrs "$D/pcrs-sha256.txt" "$D/binary_runtime_measurements"
want_rc 0 "ima replay --json"
[ "$(jq -r '[.result, .entries, .mismatched, .boot_aggregate.ok, (.pcrs.sha256["10"] | length)] | join(" ")' out.txt)" = "pass 6 0 true 64" ] ||
        fail "ima replay --json: $(cat out.txt)"
sed 's/^\(10 \).\(.*\)$/\10\2/; s/^\(10 \)0\(.*\)$/\11\2/' "$D/pcrs-sha256.txt" >bad-pcrs.txt
cmp -s bad-pcrs.txt "$D/pcrs-sha256.txt" && fail "the PCR 10 edit changed nothing"
run ima replay --bank sha256 --pcrs bad-pcrs.txt "$D/binary_runtime_measurements"
want_rc 1 "ima replay, PCR 10 wrong"
grep -q "^sha256:10 .*MISMATCH$" out.txt || fail "no MISMATCH: $(cat out.txt)"
run ima replay --json --bank sha256 --pcrs bad-pcrs.txt "$D/binary_runtime_measurements"
want_rc 1 "ima replay --json, PCR 10 wrong"
[ "$(jq -r '[.result, .mismatches[0].bank, .mismatches[0].pcr] | join(" ")' out.txt)" = "fail sha256 10" ] ||
        fail "ima replay --json mismatch: $(cat out.txt)"
ok "ima replay: text and --json, pass (exit 0) and a PCR mismatch (exit 1)"
run ima hashes --bank sha1,sha256 "$D/binary_runtime_measurements"
want_rc 0 "ima hashes"
cp out.txt hashes.txt
run ima hashes --json --bank sha1,sha256 "$D/binary_runtime_measurements"
want_rc 0 "ima hashes --json"
[ "$(jq -r '"\(.pcr):sha1=\(.sha1),sha256=\(.sha256)"' out.txt)" = "$(cat hashes.txt)" ] ||
        fail "ima hashes --json differs from the text form: $(head -2 out.txt)"
[ "$(jq -s 'map(.index) == [range(0; length)]' out.txt)" = true ] || fail "hashes --json index"
ok "ima hashes --json: one object per entry, the same digests as the text form"

# ---- quote check -------------------------------------------------------------------------------
echo "# quote check"
nonce=$(openssl rand -hex 32)
"$ATTESTCTL" tpm quote --tcti "$SWTPM_TCTI" --nonce "$nonce" --out q >/dev/null
qargs=(--ak q/ak.pub --attest q/attest --sig q/sig --pcrs q/pcrs)
run quote check "${qargs[@]}" --nonce "$nonce"
want_rc 0 "quote check"
grep -qx "quote: OK" out.txt || fail "quote check text: $(cat out.txt)"
run quote check "${qargs[@]}" --nonce "$nonce" --json
want_rc 0 "quote check --json"
[ "$(jq -r '[.valid, .signature, .pcrs] | join(" ")' out.txt)" = "true rsassa-sha256 sha256:0-10" ] ||
        fail "quote check --json: $(cat out.txt)"
other=$(openssl rand -hex 32)
run quote check "${qargs[@]}" --nonce "$other"
want_rc 1 "quote check, another nonce"
[ "$(sed -n 2p out.txt | cut -d: -f1)" = quote_nonce ] || fail "quote check fail text: $(cat out.txt)"
run quote check "${qargs[@]}" --nonce "$other" --json
want_rc 1 "quote check --json, another nonce"
[ "$(jq -r '[.valid, .error] | join(" ")' out.txt)" = "false quote_nonce" ] ||
        fail "quote check --json fail: $(cat out.txt)"
ok "quote check: text and --json, valid (exit 0) and another nonce (exit 1)"

# ---- policy check ------------------------------------------------------------------------------
echo "# policy check"
SEL_TOOLS="sha256:0,1,2,3,4,5,6,7,8,9,10"
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_flushcontext -s >/dev/null
# shellcheck disable=SC2046
tpm2_pcrextend $("$MKEVIDENCE" extends "$D/binary_runtime_measurements")
nonce=$(openssl rand -hex 32)
tpm2_quote -c ak.ctx -l "$SEL_TOOLS" -q "$nonce" -m e.attest -s e.sig -g sha256 >/dev/null
tpm2_pcrread "$SEL_TOOLS" >e.pcrs
"$MKEVIDENCE" json "$nonce" e.attest e.sig e.pcrs "$D/binary_runtime_measurements" \
        kernel=6.1.192 >ev.json
"$ATTESTCTL" policy from-host ev.json --ak ak.pub --name lab >lab.json
run policy check lab.json ev.json --ak ak.pub
want_rc 0 "policy check"
grep -qx "verdict: PASS (policy lab)" out.txt || fail "policy check text: $(cat out.txt)"
grep -qE "^RESULT +CLAIM +EXPECTED +OBSERVED +ANCHORED +ENTRY +REASON$" out.txt ||
        fail "no claims table: $(cat out.txt)"
run policy check lab.json ev.json --ak ak.pub --json
want_rc 0 "policy check --json"
[ "$(jq -r .status out.txt)" = pass ] || fail "policy check --json: $(cat out.txt)"
jq '.kernel.versions = ["5.*"]' lab.json >old-kernel.json
run policy check old-kernel.json ev.json --ak ak.pub
want_rc 1 "policy check, failing"
grep -qx "verdict: FAIL (policy lab)" out.txt || fail "policy check fail text: $(cat out.txt)"
first=$(sed -n '/^RESULT/{n;p;q}' out.txt | awk '{print $1, $2}')
[ "$first" = "fail kernel.version" ] || fail "the failing claim is not first: $(cat out.txt)"
run policy check old-kernel.json ev.json --ak ak.pub --json
want_rc 1 "policy check --json, failing"
[ "$(jq -r '.claims[0].result' out.txt)" = pass ] ||
        fail "the verdict's first claim fails already: the failing-first check proves nothing"
[ "$(jq -r '.claims[] | select(.result == "fail") | .name' out.txt)" = kernel.version ] ||
        fail "policy check --json fail: $(cat out.txt)"
ok "policy check: text (failing claims first) and --json, pass (exit 0) and fail (exit 1)"

# ---- a missing file: exit 2 everywhere ---------------------------------------------------------
echo "# a missing file"
for cmd in "ima show" "ima replay" "ima hashes" "ima replay --json" "policy validate" \
        "policy from-host --ak ak.pub" "quote check --ak ak.pub --nonce 00 --attest q/attest --sig q/sig --pcrs"; do
        # shellcheck disable=SC2086 # the words of cmd
        run $cmd missing.file
        want_rc 2 "$cmd on a missing file"
        grep -q "missing.file: No such file or directory" err.txt || fail "$cmd: $(cat err.txt)"
done
run policy check lab.json missing.file --ak ak.pub
want_rc 2 "policy check on a missing file"
run ima replay --pcrs missing.file "$D/binary_runtime_measurements"
want_rc 2 "ima replay --pcrs of a missing file"
ok "a missing file exits 2 in ima show/replay/hashes, policy validate/check/from-host, quote check"
[ $fails = 0 ]
