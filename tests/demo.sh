#!/usr/bin/env bash
# The demo (README command 1). Until the daemon and agent land, it shows the evidence core on a
# real boot: a Linux 6.1 IMA log replayed to the PCR values its TPM reported, in every bank, then a
# tampered copy of the same log failing.
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
ctl="$build/attestctl/attestctl"
boot="$top/tests/data/qemu61-tcb"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat "$boot"/pcrs-sha*.txt >"$tmp/pcrs.txt"
echo "--- the log (a real boot of Linux 6.1 in QEMU with swtpm, see tests/data/README.md)"
"$ctl" ima show "$boot/binary_runtime_measurements"
echo
echo "--- replay against the TPM's PCRs, all four banks, and boot_aggregate against PCR 0-9"
"$ctl" ima replay --pcrs "$tmp/pcrs.txt" "$boot/binary_runtime_measurements"
echo "=> verdict: log authentic (exit status $?)"
echo
echo "--- the same log with one byte of entry 5 (selinux-state: enforcing=0 -> 1) changed"
cp "$boot/binary_runtime_measurements" "$tmp/tampered"
off=$(grep -abo 'enforcing=0' "$tmp/tampered" | head -1 | cut -d: -f1)
printf '1' | dd of="$tmp/tampered" bs=1 seek=$((off + 10)) conv=notrunc status=none
if "$ctl" ima replay --pcrs "$tmp/pcrs.txt" "$tmp/tampered"; then
        echo "=> the tampered log passed: this is a bug" >&2
        exit 1
fi
echo "=> verdict: tampered log rejected"
