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
#     - evmctl ima_measurement --key ima-cert.der replays the IMA log to the guest's PCR 10
#       (sha1 and sha256 banks) with the test key loaded;
#     - openssl verifies each v2 signature in the log over the logged digest: the two files
#       signed by the test key verify, the one signed by another key does not, and the tampered
#       one carries a good signature of its original text, not of what was measured.
# Usage: check-boot-data.sh [DIR...]   (default: the three folders above in tests/data)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*"; fails=$((fails + 1)); }
for t in tpm2_eventlog evmctl awk openssl xxd sha256sum; do
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
        k=$(find "$d" -maxdepth 1 -name 'pcrs-*.txt' | wc -l)
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
        local d=$1 name b f line dg sig
        name=${d##*/}
        for b in sha1 sha256; do
                awk '{ printf "PCR-%02d: %s\n", $1, $2 }' "$d/pcrs-$b.txt" >"$tmp/$name.$b"
                evmctl -v ima_measurement --key "$d/ima-cert.der" --pcrs "$b,$tmp/$name.$b" \
                        "$d/binary_runtime_measurements" >"$tmp/$name.$b.out" 2>&1 || true
                if grep -q '^Matched per TPM bank' "$tmp/$name.$b.out" &&
                        grep -q "^key 1: .* $d/ima-cert.der" "$tmp/$name.$b.out"; then
                        ok "$name: evmctl ima_measurement --key ima-cert.der --pcrs $b: matched"
                else
                        bad "$name: evmctl ($b): $(tr '\n' ' ' <"$tmp/$name.$b.out" | cut -c1-400)"
                fi
        done
        # evmctl 1.4 verifies an entry's signature only against the file on this machine ("Failed
        # to stat" here), so each signature v2 (03 02 <hash algo> <keyid:4> <size:2 BE> <sig>) is
        # checked with openssl against the digest the log holds and the certificate's key
        openssl x509 -in "$d/ima-cert.pem" -pubkey -noout >"$tmp/$name.pub"
        for f in /data/signed/good.txt /data/signed/hello.sh /data/signed/other.txt /data/signed/tampered.txt; do
                line=$(awk -v f="$f" '$3 == "ima-sig" && $5 == f' "$d/ascii_runtime_measurements")
                [ -n "$line" ] || { bad "$name: $f not in the log"; continue; }
                dg=$(awk '{ sub("^sha256:", "", $4); print $4 }' <<<"$line")
                sig=$(awk '{ print $6 }' <<<"$line")
                [ "${sig:0:6}" = 030204 ] || { bad "$name: $f: not a sha256 signature v2: ${sig:0:18}"; continue; }
                xxd -r -p <<<"${sig:18}" >"$tmp/sig"
                xxd -r -p <<<"$dg" >"$tmp/dg"
                if openssl pkeyutl -verify -pubin -inkey "$tmp/$name.pub" -sigfile "$tmp/sig" \
                        -in "$tmp/dg" -pkeyopt digest:sha256 >/dev/null 2>&1; then
                        r=good
                else
                        r=bad
                fi
                case $f:$r in
                */good.txt:good | */hello.sh:good | */other.txt:bad | */tampered.txt:bad)
                        ok "$name: $f: signature (keyid ${sig:6:8}) $r over the logged digest" ;;
                *) bad "$name: $f: signature $r" ;;
                esac
        done
        # tampered.txt: signed, then changed: its signature is good for the digest it was made for,
        # not for the one the kernel measured (that is why appraisal refused it)
        printf 'attestd signed file /data/signed/tampered.txt\n' | sha256sum | cut -d' ' -f1 |
                xxd -r -p >"$tmp/dg0"
        line=$(awk '$5 == "/data/signed/tampered.txt"' "$d/ascii_runtime_measurements")
        xxd -r -p <<<"$(awk '{ print substr($6, 19) }' <<<"$line")" >"$tmp/sig"
        if openssl pkeyutl -verify -pubin -inkey "$tmp/$name.pub" -sigfile "$tmp/sig" -in "$tmp/dg0" \
                -pkeyopt digest:sha256 >/dev/null 2>&1 &&
                [ "$(awk '{ sub("^sha256:", "", $4); print $4 }' <<<"$line")" != "$(xxd -p -c 64 "$tmp/dg0")" ]; then
                ok "$name: /data/signed/tampered.txt: signed for the original text, measured after the change"
        else
                bad "$name: /data/signed/tampered.txt: not the signed original changed afterwards"
        fi
}

for d in "${dirs[@]}"; do
        [ -d "$d" ] || { bad "${d##*/}: no such folder"; continue; }
        [ -f "$d/binary_bios_measurements" ] && [ "${d##*/}" != ima-sig-qemu ] && check_firmware "$d"
        [ -f "$d/ima-cert.pem" ] && check_imasig "$d"
done
[ "$fails" = 0 ] || { echo "check-boot-data: $fails failed"; exit 1; }
echo "check-boot-data: all passed"
