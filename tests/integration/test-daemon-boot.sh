#!/usr/bin/env bash
# Measured boot end to end through attestd with a real TPM: a recorded SeaBIOS boot
# (tests/data/qemu61-good) replayed into a fresh swtpm (tests/lib/replay-boot: its firmware event
# log's digests into PCR 0-9 by tpm2_eventlog's decoding, the IMA log into PCR 10), a real quote
# of sha256:0-10, the real binary firmware log sent as boot_log. The boot policy written by
# `attestctl policy from-host --boot` passes with every boot.* claim anchored; the second round
# sends no new bytes from the challenge's boot_offset and passes on the stored replay; a log with
# one digest changed fails with boot_replay_mismatch naming PCR and bank and leaves the state
# as it was; a wrong offset is refused (409). Run under tests/lib/swtpm-run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${ATTESTCTL:?}" "${MKEVIDENCE:?}" "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
test_begin
cd "$work"
boot=$TOP/tests/data/qemu61-good
cp "$boot/binary_bios_measurements" fw.bin
cp "$boot/binary_runtime_measurements" ima.bin
fwlen=$(stat -c %s fw.bin)
nima=$("$ATTESTCTL" ima hashes ima.bin | wc -l)

persist_ak 0x81010031
"$TOP/tests/lib/replay-boot" "$boot" "$ATTESTCTL"
token ADMIN admin
start_daemon

# evidence NONCE IMA_OFFSET BOOT_OFFSET BOOT_FILE >ev.json: the real quote, IMA log entries from
# IMA_OFFSET (all or none: this log does not grow), the firmware log bytes of BOOT_FILE
evidence() {
        "$MKEVIDENCE" json "$1" q.attest q.sig q.pcrs ima.bin >ev0.json
        base64 -w0 "$4" >fw.b64
        if [ "$2" = 0 ]; then ent='.ima.entries'; else ent='""'; fi
        jq -c --argjson io "$2" --argjson bo "$3" --rawfile fw fw.b64 \
                ".ima.offset = \$io | .ima.entries = $ent | .boot_log = {offset: \$bo, data: \$fw}" \
                ev0.json >ev.json
}
boot_offset() { jq -r .boot_offset <<<"$body"; }

api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol
id=$(jq -r .id <<<"$body")

# --- the policy, from the known-good host's own evidence (offline, verified with its AK)
challenge
quote "$nonce"
evidence "$nonce" 0 0 fw.bin
"$ATTESTCTL" policy from-host ev.json --ak ak.pub --name boot --boot >pol.json
jq -e '.boot.pcrs_replay == true and .boot.separators == true and .boot.startup_locality == [0]' \
        pol.json >/dev/null || fail "from-host --boot: $(jq -c .boot pol.json)"
ok "attestctl policy from-host --boot: pcrs_replay, separators, startup_locality [0]"
api PUT /v1/policies/boot "$(jq -c . pol.json)" "$ADMIN"
expect 201 "" -- store the boot policy
api PUT "/v1/agents/$id/policy" '{"policy":"boot"}' "$ADMIN"
expect 200 "" -- bind it

# --- round 1: the whole firmware log from byte 0
[ "$offset" = 0 ] || fail "first challenge ima_offset $offset"
submit
expect 200 "" -- round 1
[ "$(jq -r .status <<<"$body")" = pass ] || fail "round 1: $body"
for c in boot.pcrs_replay boot.separators boot.startup_locality; do
        [ "$(jq -r --arg c "$c" '.claims[] | select(.name == $c) | "\(.result) \(.anchored)"' \
                <<<"$body")" = "pass true" ] || fail "round 1 $c: $body"
done
ok "round 1 passes: boot.pcrs_replay, boot.separators, boot.startup_locality anchored"

# --- round 2: the challenge asks from the end of the log; nothing new is sent
challenge
[ "$(boot_offset)" = "$fwlen" ] || fail "challenge boot_offset $(boot_offset), want $fwlen: $body"
[ "$offset" = "$nima" ] || fail "challenge ima_offset $offset, want $nima"
ok "challenge 2 asks for the firmware log from byte $fwlen, IMA from entry $nima"
quote "$nonce"
: >empty.bin
evidence "$nonce" "$nima" "$fwlen" empty.bin
submit
expect 200 "" -- round 2 with no new firmware log bytes
[ "$(jq -r .status <<<"$body")" = pass ] || fail "round 2: $body"
[ "$(jq -r '.claims[] | select(.name == "boot.pcrs_replay") | .anchored' <<<"$body")" = true ] ||
        fail "round 2 not anchored: $body"
ok "round 2 passes on the stored replay of PCR 0-7"

# --- a wrong offset: refused, not judged
challenge
quote "$nonce"
evidence "$nonce" "$nima" 100 empty.bin
submit
expect 409 boot_offset_mismatch -- firmware log from a byte the verifier does not hold

# --- a tampered log, sent from byte 0 (replayed from scratch): one digest of the PCR 4 event
# (entry 5, "Calling INT 19h", at byte 942: header 12, sha1 2 + 20, then sha256) changed
cp fw.bin bad.bin
at=$((942 + 12 + 22 + 2))
printf '\x00' | dd of=bad.bin bs=1 seek=$at conv=notrunc status=none
"$ATTESTCTL" tcglog bad.bin >/dev/null || fail "the tampered log still parses"
challenge
quote "$nonce"
evidence "$nonce" "$nima" 0 bad.bin
submit
expect 200 "" -- round with a tampered firmware log
[ "$(jq -r .status <<<"$body")" = fail ] || fail "tampered log passed: $body"
[ "$(jq -r .reason.code <<<"$body")" = boot_replay_mismatch ] || fail "reason: $body"
jq -r .reason.detail <<<"$body" | grep -q '^PCR 4 sha256: ' || fail "detail: $body"
ok "tampered firmware log: fail, boot_replay_mismatch, $(jq -r .reason.detail <<<"$body" | cut -c1-40)..."

# --- the state was not advanced: the next round from the stored offset still passes
challenge
[ "$(boot_offset)" = "$fwlen" ] || fail "boot_offset after the failure: $(boot_offset)"
quote "$nonce"
evidence "$nonce" "$nima" "$fwlen" empty.bin
submit
expect 200 "" -- round after the failure
[ "$(jq -r .status <<<"$body")" = pass ] || fail "after the failure: $body"
ok "the failed round left the boot replay state as it was"
stop_daemon TERM
echo "# all measured-boot checks passed"
