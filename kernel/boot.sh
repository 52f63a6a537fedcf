#!/usr/bin/env bash
# Boot the attestd test kernel in QEMU with swtpm as a TPM 2.0 and collect the guest's IMA logs.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/boot.sh --scenario FILE --out DIR [options]

Boot one scenario and decode what the guest printed:
  1. kernel/build.sh (cached) unless --kernel is given, kernel/initramfs.sh for the scenario;
  2. a fresh swtpm TPM 2.0 with the sha1, sha256, sha384 and sha512 PCR banks, on a unix socket;
  3. QEMU (q35, no network unless --net, serial console to DIR/console.log) under a timeout; the
     guest's /init runs the scenario steps, prints the logs and PCRs, and powers off;
  4. kernel/decode-console.sh turns DIR/console.log into the files in DIR.
The kernel command line is
  console=ttyS0 security=selinux selinux=1 enforcing=0 panic=-1 <scenario cmdline> attest_scenario=<name>
(with tpm_tis.force=1 after panic=-1 when the config beside the bzImage has no CONFIG_ACPI=y)
DIR also gets swtpm.log, qemu.log, initramfs.cpio.gz and times.txt (stage seconds).

options:
  --scenario FILE  scenario (kernel/scenarios/*.scn, see kernel/initramfs.sh --help)
  --out DIR        output folder (created; must be empty or absent)
  --kernel FILE    bzImage (default: kernel/build.sh's cached build, with the arguments of the
                   scenario's 'kernel ARGS...' line if any; its mdp is used too)
  --accel A        tcg (default) or kvm. On the project's machines /dev/kvm exists but does not
                   work (the guest makes no progress until the timeout; -cpu host aborts on
                   MSR 0x10a), and TCG boots a scenario in 4-12 s, so tcg is the default.
  --smp N          virtual CPUs (default 1)
  --mem MB         guest memory (default 512)
  --timeout SEC    limit for the QEMU run (default 180); the whole run fails past it
  --firmware FW    seabios (default, or the scenario's 'firmware FW' line: QEMU's BIOS; the
                   kernel is not measured), ovmf (UEFI,
                   Secure Boot off: OVMF_CODE_4M.fd + OVMF_VARS_4M.fd) or ovmf-sb (UEFI with
                   Secure Boot on and SMM: OVMF_CODE_4M.secboot.fd + OVMF_VARS_4M.snakeoil.fd,
                   whose PK, KEK and db hold Debian's snakeoil certificate; the kernel is signed
                   with the snakeoil key by sbsign into DIR/bzImage.signed first). With OVMF the
                   kernel goes in by fw_cfg (-kernel/-initrd/-append) and OVMF starts it with
                   LoadImage, which measures it into PCR 4 as EV_EFI_BOOT_SERVICES_APPLICATION and
                   checks it against db; the kernel needs the EFI stub (kernel/build.sh --efi).
                   The variable store is copied to DIR/ovmf-vars.fd.

live attestation (kernel/README.md, "Live attestation"):
  --agent FILE     put attest-agent and its libraries in the initramfs (kernel/initramfs.sh)
  --add SRC:DST    copy a host file into the initramfs (repeatable; kernel/initramfs.sh)
  --ek-ca DIR      provision the TPM with EK certificates (RSA and ECC) and a platform certificate
                   signed by swtpm's local CA, which keeps its key and certificate in DIR (created;
                   reused when it exists): a verifier started with --ek-ca DIR trusts this TPM
  --net PORT       one NIC (--nic) on QEMU's user-mode network with restrict=on (the guest reaches
                   neither the host nor anything beyond) and one forward: guest connections to
                   10.0.2.100:8443 go to 127.0.0.1:PORT on the host (socat, one per connection)
  --nic MODEL      QEMU NIC model for --net (default virtio-net-pci; the kernel needs its driver)
  --control        a second serial line (the guest's /dev/ttyS1) fed from the FIFO DIR/ctl.in:
                   the guest's 'wait-host TAG' step waits for the line 'go TAG' written there
  -h, --help       this text

needs: qemu-system-x86 swtpm swtpm-tools, socat for --net (and what kernel/build.sh and
       kernel/initramfs.sh need)
EOF
}

scenario=
out=
kernel=
accel=tcg
smp=1
mem=512
tmo=180
firmware=
agent=
adds=()
ekca=
netport=
nic=virtio-net-pci
control=0

while [ $# -gt 0 ]; do
        case $1 in
        --scenario) scenario=${2:?}; shift ;;
        --out) out=${2:?}; shift ;;
        --kernel) kernel=${2:?}; shift ;;
        --accel) accel=${2:?}; shift ;;
        --smp) smp=${2:?}; shift ;;
        --mem) mem=${2:?}; shift ;;
        --timeout) tmo=${2:?}; shift ;;
        --firmware) firmware=${2:?}; shift ;;
        --agent) agent=${2:?}; shift ;;
        --add) adds+=(--add "${2:?}"); shift ;;
        --ek-ca) ekca=${2:?}; shift ;;
        --net) netport=${2:?}; shift ;;
        --nic) nic=${2:?}; shift ;;
        --control) control=1 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option '$1'" ;;
        esac
        shift
done

if [ -z "$scenario" ] || [ -z "$out" ]; then
        usage >&2
        die "--scenario and --out are required"
fi
[ -f "$scenario" ] || die "scenario $scenario not found"
case $accel in tcg | kvm) ;; *) die "--accel wants tcg or kvm" ;; esac
# The scenario may name its firmware ('firmware FW') and its kernel ('kernel BUILD-ARGS...', the
# arguments of kernel/build.sh); the options win.
[ -n "$firmware" ] || firmware=$(sed -n 's/^[ \t]*firmware[ \t][ \t]*\([^ \t]*\).*/\1/p' "$scenario" | tail -n1)
firmware=${firmware:-seabios}
case $firmware in seabios | ovmf | ovmf-sb) ;; *) die "--firmware wants seabios, ovmf or ovmf-sb" ;; esac
read -r -a build_args <<<"$(sed -n 's/^[ \t]*kernel[ \t][ \t]*//p' "$scenario" | tail -n1)"
for n in "$smp" "$mem" "$tmo" ${netport:+"$netport"}; do
        case $n in '' | *[!0-9]*) die "'$n' is not a number" ;; esac
done
need qemu-system-x86_64 swtpm swtpm_setup timeout
[ -z "$netport" ] || need socat
[ -z "$ekca" ] || need swtpm_localca
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
        die "$out is not empty"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

t_all=$(now)
times=()
mark() {
        times+=("$1 $2")
        log "stage $1: $2 s"
}

t=$(now)
mdp_opt=()
if [ -z "$kernel" ]; then
        kernel=$("$KERNEL_DIR/build.sh" ${build_args[@]+"${build_args[@]}"}) || die "kernel/build.sh failed"
        mdp_opt=(--mdp "$(dirname "$kernel")/mdp")
elif [ -x "$(dirname "$kernel")/mdp" ]; then
        mdp_opt=(--mdp "$(dirname "$kernel")/mdp")
fi
mark kernel "$(elapsed "$t")"

t=$(now)
agent_opt=()
[ -z "$agent" ] || agent_opt=(--agent "$agent")
"$KERNEL_DIR/initramfs.sh" --scenario "$scenario" --out "$out/initramfs.cpio.gz" \
        ${mdp_opt[@]+"${mdp_opt[@]}"} ${agent_opt[@]+"${agent_opt[@]}"} ${adds[@]+"${adds[@]}"}
mark initramfs "$(elapsed "$t")"

name=$(basename "$scenario" .scn)
extra=$(sed -n 's/^[ \t]*cmdline[ \t][ \t]*//p' "$scenario" | tr '\n' ' ')
# A kernel built without ACPI (attest.config: only kernel/build.sh --efi turns it on) has no ACPI
# entry to find the TPM by: tpm_tis then takes the TIS registers at their fixed address, where
# QEMU's tpm-tis puts them. The kernel's configuration is the 'config' file kernel/build.sh keeps
# beside the bzImage; a kernel without one is booted as it is.
kconfig=$(dirname "$kernel")/config
tis=
if [ -f "$kconfig" ] && ! grep -qx 'CONFIG_ACPI=y' "$kconfig"; then
        tis="tpm_tis.force=1 "
fi
cmdline="console=ttyS0 security=selinux selinux=1 enforcing=0 panic=-1 ${tis}${extra}attest_scenario=$name"

# swtpm: fresh state, all four banks, control channel on a unix socket as QEMU's emulator wants.
tpmdir=$(mktemp -d)
swtpm_pid=
cleanup() {
        if [ -n "$swtpm_pid" ] && kill -0 "$swtpm_pid" 2>/dev/null; then
                kill "$swtpm_pid" 2>/dev/null || true
                wait "$swtpm_pid" 2>/dev/null || true
        fi
        rm -rf "$tpmdir"
}
trap cleanup EXIT

t=$(now)
setup_opt=()
if [ -n "$ekca" ]; then
        # swtpm_localca creates its CA key and certificate in $ekca on first use.
        mkdir -p "$ekca"
        ekca=$(cd "$ekca" && pwd)
        cat >"$tpmdir/swtpm-localca.conf" <<CONF
statedir = $ekca
signingkey = $ekca/signkey.pem
issuercert = $ekca/issuercert.pem
certserial = $ekca/certserial
CONF
        cat >"$tpmdir/swtpm-localca.options" <<CONF
--platform-manufacturer attestd-tests
--platform-version 2.1
--platform-model QEMU
CONF
        cat >"$tpmdir/swtpm_setup.conf" <<CONF
create_certs_tool = /usr/bin/swtpm_localca
create_certs_tool_config = $tpmdir/swtpm-localca.conf
create_certs_tool_options = $tpmdir/swtpm-localca.options
CONF
        setup_opt=(--create-ek-cert --create-platform-cert --ecc --config "$tpmdir/swtpm_setup.conf")
fi
swtpm_setup --tpm2 --tpmstate "$tpmdir" --pcr-banks sha1,sha256,sha384,sha512 --overwrite \
        ${setup_opt[@]+"${setup_opt[@]}"} >"$out/swtpm-setup.log" 2>&1 ||
        die "swtpm_setup failed (see $out/swtpm-setup.log)"
swtpm socket --tpm2 --tpmstate dir="$tpmdir" --ctrl type=unixio,path="$tpmdir/swtpm-sock" \
        --log file="$out/swtpm.log",level=1 --terminate &
swtpm_pid=$!
for _ in $(seq 100); do
        [ -S "$tpmdir/swtpm-sock" ] && break
        kill -0 "$swtpm_pid" 2>/dev/null || die "swtpm exited (see $out/swtpm.log)"
        sleep 0.1
done
[ -S "$tpmdir/swtpm-sock" ] || die "swtpm did not create its socket"
mark swtpm "$(elapsed "$t")"

# Network: none, or user mode restricted to the one forward to the verifier. The guestfwd target is
# a command (socat) because a chardev target is a single stream opened once at start, shared by
# every guest connection; cmd: spawns one socat per connection.
net_opt=(-nic none)
if [ -n "$netport" ]; then
        # shellcheck disable=SC2054 # QEMU's option syntax
        net_opt=(-netdev "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:8443-cmd:socat - TCP:127.0.0.1:$netport"
                -device "$nic,netdev=n0")
fi
# Control line: QEMU's pipe chardev reads DIR/ctl.in (the guest's ttyS1 input) and writes
# DIR/ctl.out; it opens both read-write, so neither open waits for the other side.
ctl_opt=()
if [ "$control" = 1 ]; then
        mkfifo "$out/ctl.in" "$out/ctl.out"
        # shellcheck disable=SC2054
        ctl_opt=(-chardev pipe,id=ctl,path="$out/ctl" -serial chardev:ctl)
fi

# Firmware: SeaBIOS (QEMU's default) with the kernel by fw_cfg, or OVMF from pflash with a private
# copy of its variables, booting an ESP disk. Not -kernel with OVMF: Debian 12's OVMF (2022.11)
# then starts the kernel through its legacy loader when LoadImage fails, which neither measures
# it nor checks its signature (an unsigned kernel boots with Secure Boot on; no
# EV_EFI_BOOT_SERVICES_APPLICATION in the log; seen here 2026-12-03). From the ESP the firmware
# starts systemd-boot (EFI/BOOT/BOOTX64.EFI) and systemd-boot the kernel, both with LoadImage:
# each measured into PCR 4 as EV_EFI_BOOT_SERVICES_APPLICATION (boot loader, then kernel) and,
# with Secure Boot, checked against db.
fw_opt=()
boot_opt=(-kernel "$kernel" -initrd "$out/initramfs.cpio.gz" -append "$cmdline")
machine=q35
if [ "$firmware" != seabios ]; then
        need mkfs.vfat mmd mcopy
        ovmf=${OVMF_DIR:-/usr/share/OVMF}
        code=$ovmf/OVMF_CODE_4M.fd vars=$ovmf/OVMF_VARS_4M.fd
        sdboot=${SDBOOT:-/usr/lib/systemd/boot/efi/systemd-bootx64.efi}
        [ -f "$sdboot" ] || die "no $sdboot (apt-get install systemd-boot-efi)"
        cp "$sdboot" "$out/systemd-bootx64.efi"
        sdboot=$out/systemd-bootx64.efi
        if [ "$firmware" = ovmf-sb ]; then
                code=$ovmf/OVMF_CODE_4M.secboot.fd vars=$ovmf/OVMF_VARS_4M.snakeoil.fd
                need sbsign openssl
                sbkey=${SNAKEOIL_DIR:-/usr/share/ovmf}/PkKek-1-snakeoil
                if [ ! -f "$sbkey.key" ] || [ ! -f "$sbkey.pem" ]; then
                        die "no $sbkey.key/.pem (apt-get install ovmf)"
                fi
                # Debian's snakeoil key is encrypted with the passphrase "snakeoil" (a public test
                # key: its whole point is that everybody has it)
                openssl pkey -in "$sbkey.key" -passin pass:snakeoil -out "$tpmdir/snakeoil.key" ||
                        die "cannot decrypt $sbkey.key"
                sbsign --key "$tpmdir/snakeoil.key" --cert "$sbkey.pem" --output "$out/bzImage.signed" \
                        "$kernel" >"$out/sbsign.log" 2>&1 || die "sbsign failed (see $out/sbsign.log)"
                kernel=$out/bzImage.signed
                sbsign --key "$tpmdir/snakeoil.key" --cert "$sbkey.pem" --output "$sdboot.signed" \
                        "$sdboot" >>"$out/sbsign.log" 2>&1 || die "sbsign failed (see $out/sbsign.log)"
                sdboot=$sdboot.signed
                # the secure-boot build keeps its variables in SMM-protected flash
                machine=q35,smm=on
                # shellcheck disable=SC2054 # QEMU's option syntax
                fw_opt=(-global driver=cfi.pflash01,property=secure,value=on)
        fi
        if [ ! -f "$code" ] || [ ! -f "$vars" ]; then
                die "no $code or $vars (apt-get install ovmf)"
        fi
        cp "$vars" "$out/ovmf-vars.fd"
        # shellcheck disable=SC2054 # QEMU's option syntax
        fw_opt+=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
                -drive "if=pflash,format=raw,unit=1,file=$out/ovmf-vars.fd")
        # the ESP: FAT, sized for the kernel and the initramfs (the agent's is ~25 MB)
        kb=$((($(stat -c %s "$kernel") + $(stat -c %s "$out/initramfs.cpio.gz") + $(stat -c %s "$sdboot")) / 1024 + 4096))
        esp=$out/esp.img
        mkfs.vfat -C -n ATTESTESP "$esp" "$kb" >/dev/null || die "mkfs.vfat failed"
        printf 'default attest.conf\ntimeout 0\neditor no\n' >"$tpmdir/loader.conf"
        printf 'title attestd test kernel\nlinux /bzImage.efi\ninitrd /initrd.img\noptions %s\n' \
                "$cmdline" >"$tpmdir/attest.conf"
        export MTOOLS_SKIP_CHECK=1
        if ! { mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries &&
                mcopy -i "$esp" "$sdboot" ::/EFI/BOOT/BOOTX64.EFI &&
                mcopy -i "$esp" "$kernel" ::/bzImage.efi &&
                mcopy -i "$esp" "$out/initramfs.cpio.gz" ::/initrd.img &&
                mcopy -i "$esp" "$tpmdir/loader.conf" ::/loader/loader.conf &&
                mcopy -i "$esp" "$tpmdir/attest.conf" ::/loader/entries/attest.conf; }; then
                die "mtools: cannot fill the ESP $esp"
        fi
        # shellcheck disable=SC2054
        boot_opt=(-drive "if=none,id=esp,format=raw,file=$esp" -device virtio-blk-pci,drive=esp)
fi

log "booting '$name' ($accel, $firmware, timeout ${tmo}s): $cmdline"
printf '%s\n' "$cmdline" >"$out/cmdline.requested"
t=$(now)
rc=0
timeout --kill-after=10 "$tmo" qemu-system-x86_64 \
        -machine "$machine" -accel "$accel" -smp "$smp" -m "$mem" ${fw_opt[@]+"${fw_opt[@]}"} \
        -nodefaults -no-user-config -display none -no-reboot "${net_opt[@]}" \
        -serial file:"$out/console.log" ${ctl_opt[@]+"${ctl_opt[@]}"} -monitor none \
        -chardev socket,id=chrtpm,path="$tpmdir/swtpm-sock" \
        -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0 \
        "${boot_opt[@]}" \
        >"$out/qemu.log" 2>&1 || rc=$?
boot_s=$(elapsed "$t")
mark boot "$boot_s"
[ "$rc" = 124 ] && die "QEMU timed out after ${tmo}s (console: $out/console.log)"
[ "$rc" = 0 ] || die "QEMU failed with $rc (see $out/qemu.log)"

t=$(now)
"$KERNEL_DIR/decode-console.sh" "$out/console.log" "$out"
mark decode "$(elapsed "$t")"

mark total "$(elapsed "$t_all")"
printf '%s\n' "${times[@]}" >"$out/times.txt"
log "done: $out (boot ${boot_s} s)"
