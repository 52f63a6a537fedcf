#!/usr/bin/env bash
# attest-agent sends the firmware event log (measured boot): a real attestd (whose challenge names a
# boot_offset), a real swtpm, the agent in --once rounds with --dump-evidence (the evidence it
# sends, byte for byte). The log is a real one (SeaBIOS under QEMU, tests/data/qemu61-good).
#  1. --boot-log FILE: "boot_log" carries the whole log from offset 0, and attestd judges the round
#  2. --boot-log none: no "boot_log" member
#  3. a FIFO in the log's place: a warning, no "boot_log", the round still goes on (no hang)
#  4. no such file (a host without a firmware log): no "boot_log", no warning
# Usage: test-agent-bootlog.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
# (re-runs itself under SWTPM_RUN --ek-cert when no swtpm is given in SWTPM_TCTI)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrextend base64 cmp
host_verifier
cp "$TOP/tests/data/qemu61-good/binary_bios_measurements" boot.bin

# round N ARGS...: one --once round (a verdict: exit 0 or 1), evidence in evN.json, log in aN.log
round() {
        local n=$1 rc=0
        shift
        timeout 120 "$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" \
                --token-file enroll.token --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st \
                --once --dump-evidence "ev$n.json" "$@" >"a$n.log" 2>&1 || rc=$?
        [ $rc -le 1 ] || { cat "a$n.log" >&2; fail "round $n: agent exit $rc"; }
        [ -s "ev$n.json" ] || fail "round $n: no evidence dumped"
}

# 1. the whole log from offset 0, and attestd took the evidence (a verdict)
round 1 --boot-log boot.bin
grep -q '^<[56]>verdict: ' a1.log || { cat a1.log >&2; fail "round 1: no verdict"; }
[ "$(jq -r '.boot_log.offset' ev1.json)" = 0 ] || fail "round 1: boot_log.offset $(jq -c .boot_log.offset ev1.json)"
jq -r '.boot_log.data' ev1.json | base64 -d >sent.bin
cmp sent.bin boot.bin || fail "round 1: the boot_log sent is not the firmware log"
ok "round 1: boot_log from offset 0, $(wc -c <sent.bin) bytes, equal to the log; verdict $(grep -o 'verdict: [a-z]*' a1.log | head -n1)"

# 2. none: not sent
round 2 --boot-log none
[ "$(jq 'has("boot_log")' ev2.json)" = false ] || fail "round 2: boot_log sent with --boot-log none"
ok "round 2: --boot-log none sends no boot_log"

# 3. a FIFO: refused before a byte is read, with a warning; the round goes on
mkfifo fifo
round 3 --boot-log fifo
[ "$(jq 'has("boot_log")' ev3.json)" = false ] || fail "round 3: boot_log sent from a FIFO"
grep -q '^<4>firmware event log: .*fifo.*not sent' a3.log || { cat a3.log >&2; fail "round 3: no warning"; }
grep -q '^<[56]>verdict: ' a3.log || fail "round 3: no verdict"
ok "round 3: $(grep -m1 'firmware event log' a3.log), and a verdict"

# 4. no such file: nothing sent, nothing to warn about
round 4 --boot-log "$work/absent"
[ "$(jq 'has("boot_log")' ev4.json)" = false ] || fail "round 4: boot_log sent without a log"
! grep -q '^<4>firmware event log' a4.log || fail "round 4: a warning for a host without a log"
ok "round 4: no firmware log, none sent, no warning"
sanitizer_check
