#!/usr/bin/env bash
# attestctl policy validate | check | from-host end to end with real quotes: runs under
# tests/lib/swtpm-run; extends PCR 10 with the qemu61 logs, quotes with tpm2_quote and builds the
# evidence JSON with tests/lib/mkevidence. Usage: test-policy-cli.sh ATTESTCTL MKEVIDENCE
set -euo pipefail
attestctl=$(realpath "$1") mkevidence=$(realpath "$2")
top=${ATTEST_TOP:?}
[ -n "${SWTPM_CTRL_PORT:-}" ] || { echo "run under tests/lib/swtpm-run" >&2; exit 1; }
tmp=$(mktemp -d /tmp/test-policy-cli.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
SEL_TOOLS="sha256:0,1,2,3,4,5,6,7,8,9,10+sha1:10"
fail() { echo "FAIL: $*" >&2; exit 1; }

tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_flushcontext -s >/dev/null
tpm2_evictcontrol -C o -c ak.ctx 0x81010003 >/dev/null

# evidence BOOT OUT [host facts...]: a fresh boot (TPM reset), the log extended, quoted
evidence() {
        local boot=$1 out=$2 nonce
        shift 2
        tpm2_shutdown -c
        swtpm_ioctl --tcp "127.0.0.1:$SWTPM_CTRL_PORT" -i
        tpm2_startup -c
        # firmware-like values in PCR 0 and 7, so pinned PCRs mean something
        tpm2_pcrextend "0:sha256=$(printf '%064d' 1)" "7:sha256=$(printf '%064d' 7)"
        # shellcheck disable=SC2046
        tpm2_pcrextend $("$mkevidence" extends "$top/tests/data/$boot/binary_runtime_measurements")
        nonce=$(openssl rand -hex 32)
        tpm2_quote -c 0x81010003 -l "$SEL_TOOLS" -q "$nonce" -m q.attest -s q.sig -g sha256 \
                >/dev/null
        tpm2_pcrread "$SEL_TOOLS" >q.pcrs
        "$mkevidence" json "$nonce" q.attest q.sig q.pcrs \
                "$top/tests/data/$boot/binary_runtime_measurements" "$@" >"$out"
}

evidence qemu61-good good.json kernel=6.1.192 tk_source=tpm tk_origin=cmdline
evidence qemu61-tcb tcb.json kernel=6.1.192

# from-host on the good boot, then that policy passes there and fails on the tcb boot
"$attestctl" policy from-host good.json --ak ak.pub --name lab >lab.json ||
        fail "from-host exited $?"
grep -q '"name": "lab"' lab.json || fail "from-host: no name"
grep -q '"never_permissive": true' lab.json || fail "from-host: never_permissive not pinned"
"$attestctl" policy validate lab.json >/dev/null || fail "from-host policy does not validate"
"$attestctl" policy check lab.json good.json --ak ak.pub --sel sha256:0-10+sha1:10 --json >v-good.json ||
        fail "check good: exit $?"
grep -q '"status": "pass"' v-good.json || fail "check good: not pass"
grep -q '"new_entries": 6' v-good.json || fail "check good: not 6 entries replayed"
rc=0
"$attestctl" policy check lab.json tcb.json --ak ak.pub --json >v-tcb.json || rc=$?
[ $rc -eq 1 ] || fail "check tcb: exit $rc, want 1"
grep -q '"status": "fail"' v-tcb.json || fail "check tcb: not fail"
grep -q '"entry": 16' v-tcb.json || fail "check tcb: the permissive entry 16 is not named"
# the trusted-keys source was only reported: pinned as unanchored, and absent on tcb
grep -q '"anchored": false' lab.json || fail "from-host: tk not unanchored"

# a tampered evidence (another nonce in the JSON than the quote's) fails verification: exit 1
sed 's/"nonce":"\(..\)/"nonce":"00/' good.json >bad-nonce.json
if cmp -s good.json bad-nonce.json; then sed -i 's/"nonce":"00/"nonce":"11/' bad-nonce.json; fi
rc=0
"$attestctl" policy check lab.json bad-nonce.json --ak ak.pub --json >v-bad.json || rc=$?
[ $rc -eq 1 ] || fail "tampered: exit $rc, want 1"
grep -q '"error": "quote_nonce"' v-bad.json || fail "tampered: $(cat v-bad.json)"

# from-host --runtime: the log inside the evidence (read whole, with the evidence JSON) and the
# same log from --ima-log (streamed: the file, a pipe, the ascii form) give the same ima.runtime
# section and the same counts on stderr
for pair in qemu61-good:good.json qemu61-tcb:tcb.json; do
        boot=${pair%%:*} ev=${pair#*:}
        d=$top/tests/data/$boot
        "$attestctl" policy from-host "$ev" --ak ak.pub --runtime --exclude '/bin/.*' \
                >rt-ev.json 2>rt-ev.err || fail "from-host $ev --runtime: exit $?"
        "$attestctl" policy from-host --runtime --exclude '/bin/.*' \
                --ima-log "$d/binary_runtime_measurements" >rt-file.json 2>rt-file.err ||
                fail "from-host --ima-log $boot: exit $?"
        "$attestctl" policy from-host --runtime --exclude '/bin/.*' --ima-log - \
                <"$d/binary_runtime_measurements" >rt-pipe.json 2>rt-pipe.err ||
                fail "from-host --ima-log - <$boot: exit $?"
        "$attestctl" policy from-host --runtime --exclude '/bin/.*' \
                --ima-log "$d/ascii_runtime_measurements" >rt-txt.json 2>rt-txt.err ||
                fail "from-host --ima-log $boot ascii: exit $?"
        want=$(jq -c .ima.runtime rt-ev.json)
        [ -n "$want" ] && [ "$want" != null ] || fail "from-host $ev --runtime: no ima.runtime"
        for f in rt-file rt-pipe rt-txt; do
                [ "$(jq -c .ima.runtime $f.json)" = "$want" ] ||
                        fail "$boot: $f: $(jq -c .ima.runtime $f.json), the evidence's: $want"
                cmp -s rt-ev.err $f.err ||
                        fail "$boot: $f: $(cat $f.err), the evidence's: $(cat rt-ev.err)"
        done
done

# from-host refuses evidence that does not verify
rc=0
"$attestctl" policy from-host bad-nonce.json --ak ak.pub >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "from-host tampered: exit $rc, want 1"

# malformed evidence and policies are errors (2) or invalid (1), with the JSON path
echo '{"version":1}' >malformed.json
rc=0
"$attestctl" policy check lab.json malformed.json --ak ak.pub 2>err.txt >/dev/null || rc=$?
[ $rc -eq 2 ] || fail "malformed evidence: exit $rc, want 2"
grep -q 'evidence_missing_field: \$.nonce: missing' err.txt || fail "malformed: $(cat err.txt)"
echo '{"name":"x","kernel":{"versions":["6.1.[0-9]"]}}' >badpol.json
rc=0
"$attestctl" policy validate badpol.json 2>err.txt || rc=$?
[ $rc -eq 1 ] || fail "validate bad: exit $rc, want 1"
grep -q 'policy_bad_glob: \$.kernel.versions\[0\]' err.txt || fail "validate: $(cat err.txt)"
rc=0
"$attestctl" policy check lab.json good.json 2>/dev/null >/dev/null || rc=$?
[ $rc -eq 2 ] || fail "check without --ak: exit $rc, want 2"
# the recorded boot replayed into the TPM (firmware log too): boot_aggregate matches, so the
# policy written from it requires it and pins the boot's real PCRs 0-9
tpm2_shutdown -c
swtpm_ioctl --tcp "127.0.0.1:$SWTPM_CTRL_PORT" -i
tpm2_startup -c
"$top/tests/lib/replay-boot" "$top/tests/data/qemu61-good" "$attestctl" >/dev/null
nonce=$(openssl rand -hex 32)
tpm2_quote -c 0x81010003 -l "$SEL_TOOLS" -q "$nonce" -m q.attest -s q.sig -g sha256 >/dev/null
tpm2_pcrread "$SEL_TOOLS" >q.pcrs
"$mkevidence" json "$nonce" q.attest q.sig q.pcrs \
        "$top/tests/data/qemu61-good/binary_runtime_measurements" >real.json
"$attestctl" policy from-host real.json --ak ak.pub --name real >real-pol.json ||
        fail "from-host real: exit $?"
grep -q '"require_boot_aggregate": true' real-pol.json || fail "real: boot_aggregate not pinned"
want0=$(awk '$1 == 0 { print $2 }' "$top/tests/data/qemu61-good/pcrs-sha256.txt")
grep -q "\"0\": \"$want0\"" real-pol.json || fail "real: PCR 0 is not the recorded boot's"
"$attestctl" policy check real-pol.json real.json --ak ak.pub >/dev/null || fail "check real: $?"
rc=0
"$attestctl" policy check lab.json real.json --ak ak.pub --json >v-real.json || rc=$?
[ $rc -eq 1 ] || fail "lab policy on the real PCRs: exit $rc, want 1"
grep -q '"name": "tpm.pcrs.sha256.0"' v-real.json || fail "no PCR 0 claim"
echo "policy-cli: ok"
