#!/usr/bin/env bash
# Boot scenarios and store their logs as test data (tests/data/<scenario>/).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/capture.sh [options] SCENARIO...

For each SCENARIO (a name from kernel/scenarios/, without .scn), run kernel/boot.sh into
RUNS/<scenario>-<UTC time>/, check the result with kernel/check-log.sh, and copy
the files the tests read into DEST/<scenario>/ (replacing what was there):
  ascii_runtime_measurements binary_runtime_measurements binary_bios_measurements cmdline.txt
  pcrs-sha1.txt pcrs-sha256.txt pcrs-sha384.txt pcrs-sha512.txt
and, when the log has a selinux-policy-hash entry, selinux_policy (/sys/fs/selinux/policy as read
after the snapshot: the policy as the kernel re-serialises it, which selinux-policy-hash hashes).
The run folder keeps the rest (console.log, dmesg.txt, facts.txt, times.txt, the initramfs).
A log over --max-size bytes is refused.

options:
  --dest DIR      where the data folders go (default: tests/data of this checkout)
  --runs DIR      where the run folders go (RUNS; default \$ATTEST_CACHE/runs), e.g. when the
                  kernel cache is shared and must not be written
  --accel A       tcg (default) or kvm, passed to kernel/boot.sh
  --timeout SEC   per boot (default 180)
  --max-size N    largest binary_runtime_measurements accepted (default 65536)
  -h, --help      this text
EOF
}

dest=$KERNEL_DIR/../tests/data
runs=$ATTEST_CACHE/runs
accel=tcg
tmo=180
max=65536
while [ $# -gt 0 ]; do
        case $1 in
        --dest) dest=${2:?}; shift ;;
        --runs) runs=${2:?}; shift ;;
        --accel) accel=${2:?}; shift ;;
        --timeout) tmo=${2:?}; shift ;;
        --max-size) max=${2:?}; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; die "unknown option '$1'" ;;
        *) break ;;
        esac
        shift
done
[ $# -gt 0 ] || { usage >&2; exit 2; }

files=(ascii_runtime_measurements binary_runtime_measurements binary_bios_measurements cmdline.txt
        pcrs-sha1.txt pcrs-sha256.txt pcrs-sha384.txt pcrs-sha512.txt)

for name in "$@"; do
        scn=$KERNEL_DIR/scenarios/$name.scn
        [ -f "$scn" ] || die "no scenario $scn"
        run=$runs/$name-$(date -u +%Y%m%dT%H%M%SZ)
        "$KERNEL_DIR/boot.sh" --scenario "$scn" --out "$run" --accel "$accel" --timeout "$tmo"
        for f in "${files[@]}"; do
                [ -f "$run/$f" ] || die "$name: the guest did not produce $f"
        done
        sz=$(wc -c <"$run/binary_runtime_measurements")
        [ "$sz" -le "$max" ] || die "$name: binary log is $sz bytes, over $max"
        "$KERNEL_DIR/check-log.sh" "$run" || die "$name: checks failed, nothing copied (run: $run)"
        # a hand-written README.md (how the data was made) stays
        [ -f "$dest/$name/README.md" ] && cp "$dest/$name/README.md" "$run/README.keep"
        rm -rf "${dest:?}/$name"
        mkdir -p "$dest/$name"
        [ -f "$run/README.keep" ] && mv "$run/README.keep" "$dest/$name/README.md"
        for f in "${files[@]}"; do
                cp "$run/$f" "$dest/$name/$f"
        done
        if [ -f "$run/selinux_policy" ] && grep -q ' selinux-policy-hash ' "$run/ascii_runtime_measurements"; then
                cp "$run/selinux_policy" "$dest/$name/selinux_policy"
        fi
        # signed files: the certificate of the test key that signed them
        for f in ima-cert.pem ima-cert.der; do
                [ -f "$run/$f" ] && cp "$run/$f" "$dest/$name/$f"
        done
        # UEFI boots: what the firmware log must show (tests/kernel/check-boot-data.sh), from the
        # very images booted: Secure Boot, and the Authenticode digests of systemd-boot and the
        # kernel (kernel/pe-hash.py)
        if [ -f "$run/esp.img" ]; then
                k=$run/bzImage.signed l=$run/systemd-bootx64.efi.signed sb=1
                [ -f "$k" ] || sb=0
                [ -f "$l" ] || l=$run/systemd-bootx64.efi
                read -r -a bargs <<<"$(sed -n 's/^[ \t]*kernel[ \t][ \t]*//p' "$scn" | tail -n1)"
                [ -f "$k" ] || k=$("$KERNEL_DIR/build.sh" ${bargs[@]+"${bargs[@]}"})
                {
                        echo "secureboot $sb"
                        echo "bootloader_authenticode_sha256 $("$KERNEL_DIR/pe-hash.py" "$l" | cut -d' ' -f1)"
                        echo "kernel_authenticode_sha256 $("$KERNEL_DIR/pe-hash.py" "$k" | cut -d' ' -f1)"
                } >"$dest/$name/expect.txt"
        fi
        log "$name: $(wc -l <"$run/ascii_runtime_measurements") entries, $sz bytes -> $dest/$name (run $run)"
done
