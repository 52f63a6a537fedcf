#!/usr/bin/env bash
# Build the busybox initramfs for one QEMU test scenario.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/initramfs.sh --scenario FILE --out FILE [options]

Build a gzip'd newc initramfs for kernel/boot.sh: a static busybox, kernel/guest/init as /init,
the scenario's steps (/etc/attest/steps) and run-time IMA policy (/etc/attest/ima-policy), a few
data files for file measurements, and two small SELinux policies compiled with checkpolicy from the
output of the kernel's scripts/selinux/mdp/mdp (the way scripts/selinux/install_policy.sh does):
  /etc/selinux/policy.<v>    the mdp policy as is
  /etc/selinux/policy-b.<v>  the same plus one boolean, attest_b (default false)
where <v> is the policy version checkpolicy writes (33 on Debian 12). File modes, owners and times
are fixed, so the same inputs give the same image.

Scenario file (kernel/scenarios/*.scn), one directive a line, # comments:
  cmdline ARGS...   kernel arguments (read by kernel/boot.sh, ignored here)
  step STEP ARGS... a step for /init (see kernel/guest/init for the list)
  rule RULE...      a line of the run-time IMA policy (the 'ima-policy' step writes them)
  signed PATH KEY [tampered]
                    a file PATH (absolute, created with fixed text) signed with
                    'evmctl ima_sign --hashalgo sha256' by KEY: 'trusted' (its certificate goes
                    to /etc/attest/export/ima-cert.der and .pem, for the 'ima-keys' step and the
                    capture) or 'other' (a key nobody trusts); 'tampered': the text changes after
                    signing. The signature's hex is listed in /etc/attest/signed (PATH HEX) for
                    the 'ima-sign' step: cpio carries no xattrs, so the guest sets security.ima.
                    Both keys are made at build time (RSA-2048, test keys, never kept).
  firmware FW, kernel ARGS...
                    read by kernel/boot.sh (the firmware, kernel/build.sh's arguments), not here

For live attestation (kernel/README.md, "Live attestation") the image can also carry the agent:
  --agent FILE      attest-agent as /bin/attest-agent, with every shared library ldd lists for it
                    (at the same paths), the dynamic loader, and the tpm2-tss TCTI module for the
                    kernel's resource manager (libtss2-tcti-device.so.0, which libtss2-tctildr
                    dlopens for 'device:/dev/tpmrm0') with its own libraries
  --add SRC:DST     copy the host file SRC into the image as DST (an absolute path; repeatable):
                    the agent's config, the verifier's CA, the enrolment token, a forged log line
  --modules DIR     the kernel's modules as kernel/build.sh installs them (DIR/lib/modules/<release>)
                    into /lib/modules, for the modprobe and rmmod steps (default: the 'modules'
                    folder next to the mdp binary, when there is one)

options:
  --scenario FILE   scenario file (required)
  --out FILE        initramfs to write (required)
  --mdp FILE        mdp binary (default: the one cached by kernel/build.sh for the current inputs)
  --busybox FILE    static busybox (default /bin/busybox)
  -h, --help        this text

needs: busybox-static checkpolicy cpio gzip (and, with --agent, ldd from libc-bin)
EOF
}

scenario=
out=
mdp=
busybox=/bin/busybox
agent=
adds=()
modules=

while [ $# -gt 0 ]; do
        case $1 in
        --scenario) scenario=${2:?}; shift ;;
        --out) out=${2:?}; shift ;;
        --mdp) mdp=${2:?}; shift ;;
        --busybox) busybox=${2:?}; shift ;;
        --agent) agent=${2:?}; shift ;;
        --add) adds+=("${2:?}"); shift ;;
        --modules) modules=${2:?}; shift ;;
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
need checkpolicy cpio gzip
[ -x "$busybox" ] || die "busybox $busybox not found (apt-get install busybox-static)"
# A dynamic busybox would find no libc in the guest.
need readelf
if readelf -l "$busybox" | grep -q 'program interpreter'; then
        die "$busybox is dynamically linked (apt-get install busybox-static)"
fi
if [ -z "$mdp" ]; then
        kimg=$("$KERNEL_DIR/build.sh") || die "kernel/build.sh failed"
        mdp=$(dirname "$kimg")/mdp
fi
[ -x "$mdp" ] || die "mdp $mdp not found"
[ -n "$modules" ] || [ ! -d "$(dirname "$mdp")/modules" ] || modules=$(dirname "$mdp")/modules
[ -z "$modules" ] || [ -d "$modules/lib/modules" ] || die "--modules: no $modules/lib/modules"
if [ -n "$agent" ]; then
        [ -x "$agent" ] || die "agent $agent not found"
        need ldd
fi
for a in ${adds[@]+"${adds[@]}"}; do
        case $a in
        *:/*) [ -f "${a%%:*}" ] || die "--add: ${a%%:*} not found" ;;
        *) die "--add wants SRC:/ABSOLUTE/DST, not '$a'" ;;
        esac
done

# Validate the scenario before building anything.
awk '
        /^[ \t]*(#|$)/ { next }
        $1 == "cmdline" || $1 == "step" || $1 == "rule" || $1 == "firmware" || $1 == "kernel" { next }
        $1 == "signed" && NF >= 3 && $2 ~ /^\/[A-Za-z0-9._\/-]+$/ && ($3 == "trusted" || $3 == "other") &&
                (NF == 3 || (NF == 4 && $4 == "tampered")) { next }
        { printf "%s:%d: unknown directive \"%s\"\n", FILENAME, FNR, $1; bad = 1 }
        END { exit bad }' "$scenario" >&2 || die "bad scenario $scenario"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,run,data,etc/selinux,etc/attest}

cp "$busybox" "$root/bin/busybox"
for a in sh cat dd echo tr cut wc sha256sum base64 mount poweroff sleep dmesg uname ip stty cp \
        mkdir nc awk chown; do
        ln -s busybox "$root/bin/$a"
done
if [ -n "$modules" ]; then
        cp -r "$modules/lib" "$root/lib"
        for a in depmod modprobe rmmod; do ln -s busybox "$root/bin/$a"; done
fi
install -m 0755 "$KERNEL_DIR/guest/init" "$root/init"

# The agent and the libraries it loads: ldd's closure (absolute paths, kept as they are, so the
# loader finds them in its default directories), the loader itself, and the TCTI module that
# libtss2-tctildr dlopens by soname for 'device:' (ldd cannot see it).
# copy_lib PATH: copy PATH into the image at the same path, symlinks resolved
copy_lib() {
        mkdir -p "$root$(dirname "$1")"
        cp -L "$1" "$root$1"
}
if [ -n "$agent" ]; then
        cp -L "$agent" "$root/bin/attest-agent"
        chmod 0755 "$root/bin/attest-agent"
        tcti=
        for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
                if [ -e "$d/libtss2-tcti-device.so.0" ]; then
                        tcti=$d/libtss2-tcti-device.so.0
                        break
                fi
        done
        [ -n "$tcti" ] || die "libtss2-tcti-device.so.0 not found (apt-get install libtss2-tcti-device0)"
        libs=$( { ldd "$agent"; ldd "$tcti"; } | awk '
                $2 == "=>" && $3 ~ /^\// { print $3 }
                $1 ~ /^\// { print $1 }' | LC_ALL=C sort -u) || die "ldd $agent failed"
        [ -n "$libs" ] || die "ldd found no libraries for $agent (static?)"
        for l in $libs "$tcti"; do
                copy_lib "$l"
        done
        grep -q '^/lib64/ld-linux-x86-64.so.2$' <<<"$libs" ||
                die "ldd names no /lib64/ld-linux-x86-64.so.2 loader for $agent"
fi
for a in ${adds[@]+"${adds[@]}"}; do
        mkdir -p "$root$(dirname "${a#*:}")"
        cp -L "${a%%:*}" "$root${a#*:}"
done

# Signed files: keys made now (test keys, gone with $work), signatures by evmctl, applied in the
# guest by the 'ima-sign' step with setfattr (attr), the certificate loaded by 'ima-keys' with
# keyctl (keyutils): both copied with their libraries.
if grep -q '^[ \t]*signed[ \t]' "$scenario"; then
        need evmctl openssl setfattr keyctl ldd xxd
        keys=$work/keys
        mkdir -p "$keys" "$root/etc/attest/export"
        for k in trusted other; do
                openssl req -x509 -newkey rsa:2048 -nodes -keyout "$keys/$k.key" -days 3650 \
                        -subj "/CN=attestd IMA test key ($k)/O=attestd tests" \
                        -addext basicConstraints=critical,CA:FALSE \
                        -addext keyUsage=critical,digitalSignature \
                        -addext subjectKeyIdentifier=hash -out "$keys/$k.pem" 2>/dev/null ||
                        die "openssl: test key $k"
        done
        cp "$keys/trusted.pem" "$root/etc/attest/export/ima-cert.pem"
        openssl x509 -in "$keys/trusted.pem" -outform DER -out "$root/etc/attest/export/ima-cert.der"
        : >"$root/etc/attest/signed"
        while read -r _ path key tamper; do
                mkdir -p "$root$(dirname "$path")"
                printf 'attestd signed file %s\n' "$path" >"$root$path"
                # shellcheck disable=SC2016 # $0 is for the guest's shell
                case $path in */bin/* | *.sh) printf '#!/bin/sh\necho "signed: $0"\n' >"$root$path"
                                             chmod 0755 "$root$path" ;; esac
                evmctl ima_sign --hashalgo sha256 --key "$keys/$key.key" --sigfile "$root$path" \
                        >/dev/null 2>&1 || die "evmctl ima_sign $path"
                [ -s "$root$path.sig" ] || die "evmctl wrote no $path.sig"
                printf '%s %s\n' "$path" "$(xxd -p "$root$path.sig" | tr -d '\n')" >>"$root/etc/attest/signed"
                rm -f "$root$path.sig"
                [ "$tamper" != tampered ] || printf 'changed after signing\n' >>"$root$path"
        done < <(sed -n 's/^[ \t]*\(signed[ \t].*\)/\1/p' "$scenario")
        for t in "$(command -v setfattr)" "$(command -v keyctl)"; do
                cp -L "$t" "$root/bin/${t##*/}"
                for l in $(ldd "$t" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
                        copy_lib "$l"
                done
        done
fi

# Steps and run-time IMA policy, straight from the scenario.
sed -n 's/^[ \t]*step[ \t][ \t]*//p' "$scenario" >"$root/etc/attest/steps"
sed -n 's/^[ \t]*rule[ \t][ \t]*//p' "$scenario" >"$root/etc/attest/ima-policy"

# Files for the tcb rules: data read by root, a script to execute, two files for violations.
printf 'attestd sample data\n' >"$root/data/sample.txt"
printf 'open-writers violation target\n' >"$root/data/viol.txt"
printf 'ToMToU violation target\n' >"$root/data/tomtou.txt"
cat >"$root/bin/hello.sh" <<'EOF'
#!/bin/sh
echo "hello from $0"
EOF
chmod 0755 "$root/bin/hello.sh"

# SELinux policies. mdp writes a policy with one user, role and type that allows everything, for
# exactly the classes and permissions this kernel knows.
pol=$work/policy
mkdir -p "$pol"
vers=$(checkpolicy -V | awk '{ print $1 }')
(cd "$pol" && "$mdp" -m policy.conf file_contexts) || die "mdp failed"
# A newer kernel's mdp may name policy capabilities this checkpolicy does not know yet (6.12:
# userspace_initial_context, ioctl_skip_cloexec, with Debian 12's checkpolicy 3.4): drop exactly
# those lines, one per failed attempt, and say so. The kernel treats a capability the policy
# does not set as off.
for _ in $(seq "$(grep -c '^policycap ' "$pol/policy.conf" || true)" -1 0); do
        if checkpolicy -U allow -M -o "$root/etc/selinux/policy.$vers" "$pol/policy.conf" \
                >"$pol/checkpolicy.log" 2>&1; then
                break
        fi
        cap=$(sed -n "s/.*invalid policy capability name \([a-z0-9_]*\).*/\1/p" \
                "$pol/checkpolicy.log" | head -n1)
        if [ -z "$cap" ] || ! grep -q "^policycap $cap;\$" "$pol/policy.conf"; then
                cat "$pol/checkpolicy.log" >&2
                die "checkpolicy failed on the mdp policy"
        fi
        log "checkpolicy $(checkpolicy -V | awk '{ print $1 }') does not know policycap $cap: left out"
        sed -i "/^policycap $cap;\$/d" "$pol/policy.conf"
done
[ -f "$root/etc/selinux/policy.$vers" ] || die "checkpolicy failed on the mdp policy"
grep -q '^role base_r types { base_t };$' "$pol/policy.conf" || die "mdp output changed: no base_r line"
sed 's/^role base_r types { base_t };$/&\nbool attest_b false;/' "$pol/policy.conf" >"$pol/policy-b.conf"
checkpolicy -U allow -M -o "$root/etc/selinux/policy-b.$vers" "$pol/policy-b.conf" >/dev/null ||
        die "checkpolicy failed on policy B"
while read -r step file _; do
        [ "$step" = selinux-load ] || continue
        [ -f "$root/etc/selinux/$file" ] ||
                die "scenario loads /etc/selinux/$file, but this checkpolicy writes version $vers"
done <"$root/etc/attest/steps"

# gzip -9 for the small images; -1 for the ~25 MB ones with the agent (8 s less, 8 % larger)
level=-9
[ -z "$agent" ] || level=-1
find "$root" -exec touch -h -d @0 {} +
mkdir -p "$(dirname "$out")"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc --owner=0:0 --reproducible) | gzip "$level" -n >"$out.tmp"
mv "$out.tmp" "$out"
log "wrote $out ($(wc -c <"$out") bytes, policy version $vers)"
