#!/usr/bin/env bash
# Cross-check the captured UEFI and signed-file boots in tests/data with independent tools, no
# boot needed (kernel/README.md, "UEFI boots" and "Signed files"):
#   ovmf-sb-on, ovmf-sb-off (and any DIR given with a binary_bios_measurements):
#     - tpm2_eventlog (tpm2-tools) parses the firmware log and its replay of PCR 0-7 equals the
#       PCR values the guest read in the same boot, in every bank the log has;
#     - the log's SecureBoot variable (EV_EFI_VARIABLE_DRIVER_CONFIG) is 1 with Secure Boot on,
#       0 with it off, as expect.txt says;
#     - the kernel's EV_EFI_BOOT_SERVICES_APPLICATION sha256 digest equals expect.txt's
#       kernel_authenticode_sha256, which kernel/pe-hash.py computed from the booted image;
#   ima-sig-qemu:
#     - evmctl ima_measurement --key ima-cert.pem replays the IMA log to the guest's PCR 10
#       (sha1 and sha256 banks) and verifies the signatures: the two files signed by the test
#       key verify, the one signed by another key and the tampered one do not.
# Usage: check-boot-data.sh [DIR...]   (default: the three folders above in tests/data)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*"; fails=$((fails + 1)); }
for t in tpm2_eventlog evmctl awk; do
        command -v "$t" >/dev/null || { echo "not ok: $t not found (setup.sh installs it)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$top/tests/data/ovmf-sb-on" "$top/tests/data/ovmf-sb-off" "$top/tests/data/ima-sig-qemu")

# eventlog_pcrs YAML: "bank pcr hex" lines from tpm2_eventlog's closing pcrs: section
eventlog_pcrs() {
        awk '/^pcrs:/ { p = 1; next }
                p && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
                p && /^    [0-9]+ +: 0x/ { v = $3; sub("^0x", "", v); print bank, $1, tolower(v) }' "$1"
}

check_firmware() {
        local d=$1 name n=0 want k
        name=${d##*/}
        if ! tpm2_eventlog "$d/binary_bios_measurements" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
                bad "$name: tpm2_eventlog failed: $(head -c 300 "$tmp/$name.err")"
                return
        fi
        while read -r bank pcr hex; do
                [ "$pcr" -le 7 ] || continue
                [ -f "$d/pcrs-$bank.txt" ] || continue
                want=$(awk -v p="$pcr" '$1 == p { print $2 }' "$d/pcrs-$bank.txt")
                if [ "$hex" = "$want" ]; then n=$((n + 1)); else bad "$name: $bank PCR $pcr: tpm2_eventlog $hex, TPM $want"; fi
        done < <(eventlog_pcrs "$tmp/$name.yaml")
        k=$(ls "$d"/pcrs-*.txt | wc -l)
        if [ "$n" = $((8 * k)) ]; then
                ok "$name: tpm2_eventlog replays PCR 0-7 of $k banks to the TPM's values ($n of $n)"
        else
                bad "$name: only $n of $((8 * k)) bank/PCR 0-7 values replayed to the TPM's"
        fi
        [ -f "$d/expect.txt" ] || return 0
        want=$(awk '$1 == "secureboot" { print $2 }' "$d/expect.txt")
        if [ -n "$want" ]; then
                got=$(awk '/EventType: EV_EFI_VARIABLE_DRIVER_CONFIG/ { v = 1 }
                        v && /UnicodeName: SecureBoot/ { s = 1 }
                        s && /VariableData:/ { gsub(/[" ]/, "", $2); print $2; exit }
                        /^- EventNum:/ { v = 0; s = 0 }' "$tmp/$name.yaml")
                if [ "$((16#${got:-ff}))" = "$want" ]; then ok "$name: SecureBoot variable $got (expected $want)"
                else bad "$name: SecureBoot variable '${got}', expected $want"; fi
        fi
        want=$(awk '$1 == "kernel_authenticode_sha256" { print $2 }' "$d/expect.txt")
        if [ -n "$want" ]; then
                got=$(awk '/EventType: EV_EFI_BOOT_SERVICES_APPLICATION/ { a = 1; next }
                        a && /AlgorithmId: sha256/ { s = 1; next }
                        a && s && /Digest:/ { gsub(/"/, "", $2); print $2; a = 0; s = 0 }
                        /^- EventNum:/ { a = 0; s = 0 }' "$tmp/$name.yaml")
                if grep -qx "$want" <<<"$got"; then ok "$name: EV_EFI_BOOT_SERVICES_APPLICATION sha256 $want = the kernel's Authenticode hash"
                else bad "$name: no EV_EFI_BOOT_SERVICES_APPLICATION with sha256 $want (log has: $(paste -sd' ' <<<"$got"))"; fi
        fi
}

check_imasig() {
        local d=$1 name b
        name=${d##*/}
        for b in sha1 sha256; do
                awk '{ printf "PCR-%02d: %s\n", $1, $2 }' "$d/pcrs-$b.txt" >"$tmp/$name.$b"
                evmctl -v ima_measurement --key "$d/ima-cert.pem" --pcrs "$b,$tmp/$name.$b" \
                        "$d/binary_runtime_measurements" >"$tmp/$name.$b.out" 2>&1 || true
                if grep -q '^Matched per TPM bank' "$tmp/$name.$b.out"; then
                        ok "$name: evmctl ima_measurement --key ima-cert.pem --pcrs $b: matched"
                else
                        bad "$name: evmctl ($b): $(tr '\n' ' ' <"$tmp/$name.$b.out" | cut -c1-400)"
                fi
        done
        # per file: evmctl -v says "<path>: verification is OK" for a good signature
        for f in /data/signed/good.txt /data/signed/hello.sh; do
                grep -q "^$f: verification is OK" "$tmp/$name.sha256.out" && ok "$name: $f: signature verified" ||
                        bad "$name: $f: no good signature ($(grep -m1 "$f" "$tmp/$name.sha256.out" || echo not in the output))"
        done
        for f in /data/signed/other.txt /data/signed/tampered.txt; do
                if grep -q "^$f: verification is OK" "$tmp/$name.sha256.out"; then bad "$name: $f verified"
                elif grep -q "$f" "$tmp/$name.sha256.out"; then ok "$name: $f: $(grep -m1 "$f" "$tmp/$name.sha256.out")"
                else bad "$name: $f not in the log"; fi
        done
}

for d in "${dirs[@]}"; do
        [ -d "$d" ] || { bad "${d##*/}: no such folder"; continue; }
        [ -f "$d/binary_bios_measurements" ] && [ "${d##*/}" != ima-sig-qemu ] && check_firmware "$d"
        [ -f "$d/ima-cert.pem" ] && check_imasig "$d"
done
[ "$fails" = 0 ] || { echo "check-boot-data: $fails failed"; exit 1; }
echo "check-boot-data: all passed"
