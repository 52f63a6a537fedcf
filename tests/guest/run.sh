#!/usr/bin/env bash
# Usage: run.sh [DEBS]
# The fleet host for real: a Debian 12 guest (tests/guest/rootfs.sh, cached) with the freshly
# built packages installed by apt inside it (chroot, before the boot: maintainer scripts create
# the users with systemd-sysusers and enable the units the Debian way), booted in QEMU (TCG) on
# Debian's own linux-image-amd64 with IMA on (ima_policy=critical_data) and swtpm as its TPM
# (tpm-tis). systemd is PID 1 and starts the units; attest-guest-test.service runs
# guest-test.sh, which writes its results to the second serial port (a file here). The only
# network is QEMU's user mode with restrict=on and one forward from this host's loopback to the
# guest's attestd (a /healthz from here). Prints the boot and test times.
#   DEBS  a folder with attestd_*.deb, attest-agent_*.deb, attestctl_*.deb (default: built now
#         with build-debs.sh from `meson dist`)
# Environment: GUEST_TIMEOUT (QEMU limit, default 1500 s), ATTEST_CACHE (rootfs cache), KEEP=1.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/guest
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$top/tests/lib/common.sh"
need qemu-system-x86_64 swtpm swtpm_setup mke2fs openssl curl jq
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1500}
t_all=$(date +%s)
elapsed() { echo $(($(date +%s) - $1)); }
test_begin attestd-guest
# shellcheck disable=SC2034 # killed at exit by kill_at_exit
qemu_pid="" swtpm_pid=""
kill_at_exit qemu_pid swtpm_pid

# --- the packages
if [ -n "${1:-}" ]; then
        debs=$(realpath "$1")
else
        debs=$work/debs
        t=$(date +%s)
        "$here/build-debs.sh" "$debs" || fail "building the packages"
        echo "# packages: $(elapsed "$t") s"
fi
for p in attestd attest-agent attestctl; do
        ls "$debs/${p}_"*.deb >/dev/null 2>&1 || fail "no ${p}_*.deb in $debs"
done

# --- the root filesystem: cached base, this run's packages installed with apt inside it
t=$(date +%s)
base=$("$here/rootfs.sh") || fail "rootfs.sh"
echo "# rootfs: $base ($(elapsed "$t") s)"
t=$(date +%s)
root=$work/root
mkdir -p "$root"
tar -xpf "$base" -C "$root"
mkdir -p "$root/tmp/debs"
cp "$debs"/attestd_*.deb "$debs"/attest-agent_*.deb "$debs"/attestctl_*.deb "$root/tmp/debs/"
# no network and no service starts in the chroot: apt resolves from the packages the base holds
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
chroot "$root" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q /tmp/debs/*.deb' \
        >"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log" >&2; fail "apt-get install of the packages in the guest"; }
rm -f "$root/usr/sbin/policy-rc.d"
rm -rf "$root/tmp/debs"
grep -E '^(Setting up|Unpacking) attest' "$work/apt.log" | sed 's/^/# apt: /'
chroot "$root" getent passwd attestd attest-agent >/dev/null || fail "the packages did not create the users"

# --- swtpm with EK certificates (its local CA is the verifier's EK CA)
tpm=$work/tpm
"$TOP/tests/lib/swtpm-run" --state "$tpm" --ek-cert --keep -- true || fail "swtpm_setup"
mkdir -p "$root/etc/attestd/ekca"
cp "$tpm"/ca/*cert*.pem "$root/etc/attestd/ekca/"

# --- the verifier's and the agent's configuration, owned as the packages' users need
crt=$work/certs
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$crt/guest.key" 2>/dev/null
openssl req -new -key "$crt/guest.key" -subj /CN=127.0.0.1 -out "$crt/guest.csr" 2>/dev/null
printf '%s\n' "subjectAltName=IP:127.0.0.1" "extendedKeyUsage=serverAuth" >"$crt/guest.ext"
openssl x509 -req -in "$crt/guest.csr" -CA "$crt/ca.pem" -CAkey "$crt/ca.key" -CAcreateserial \
        -days 30 -extfile "$crt/guest.ext" -out "$crt/guest.pem" 2>/dev/null
agent_tokens
token READER2 reader
tail -1 "$work/tokens" >"$work/reader2.hash"
sed -i '$d' "$work/tokens" # reader2 is added inside the guest, then `systemctl reload`
install -m 0644 "$crt/guest.pem" "$root/etc/attestd/server.pem"
install -m 0600 "$crt/guest.key" "$root/etc/attestd/server.key"
install -m 0600 "$work/tokens" "$root/etc/attestd/tokens"
openssl rand -hex 32 >"$work/webhook.secret"
install -m 0600 "$work/webhook.secret" "$root/etc/attestd/webhook.secret"
chroot "$root" chown attestd:attestd /etc/attestd/server.key /etc/attestd/tokens \
        /etc/attestd/webhook.secret
cat >"$root/etc/attestd/attestd.conf" <<CONF
tls-cert = /etc/attestd/server.pem
tls-key = /etc/attestd/server.key
tokens = /etc/attestd/tokens
ek-ca = /etc/attestd/ekca
interval = 20
grace = 60
threads = 2
webhook = https://127.0.0.1:9443/hook
webhook-ca = /etc/attestd/webhook-ca.pem
webhook-secret-file = /etc/attestd/webhook.secret
webhook-backoff-max = 5
CONF
install -m 0644 "$crt/ca.pem" "$root/etc/attestd/webhook-ca.pem"
install -m 0644 "$crt/ca.pem" "$root/etc/attest-agent/ca.pem"
install -m 0600 "$work/enroll.token" "$root/etc/attest-agent/enroll.token"
chroot "$root" chown attest-agent:attest-agent /etc/attest-agent/enroll.token
mkdir -p "$root/root/test"
printf %s "$ADMIN" >"$root/root/test/admin.token"
printf %s "$READER" >"$root/root/test/reader.token"
printf %s "$READER2" >"$root/root/test/reader2.token"
cp "$work/reader2.hash" "$crt/ca.pem" "$root/root/test/"
# a webhook receiver in the guest (the suite's own: it checks each HMAC, dedups by event id), on
# the verifier's certificate (127.0.0.1), started by systemd beside attestd
install -m 0755 "$TOP/tests/lib/webhook-receiver.py" "$root/root/test/webhook-receiver.py"
install -m 0600 "$crt/guest.pem" "$crt/guest.key" "$work/webhook.secret" "$root/root/test/"
cat >"$root/etc/systemd/system/attest-webhook-receiver.service" <<'UNIT'
[Unit]
Description=webhook receiver of the guest test
[Service]
ExecStartPre=/bin/mkdir -p /root/test/rx
ExecStart=/usr/bin/python3 /root/test/webhook-receiver.py --cert /root/test/guest.pem --key /root/test/guest.key --secret /root/test/webhook.secret --dir /root/test/rx --port 9443
[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable -q attest-webhook-receiver.service
install -m 0755 "$here/guest-test.sh" "$root/usr/local/sbin/attest-guest-test"
cat >"$root/etc/systemd/system/attest-guest-test.service" <<'UNIT'
[Unit]
Description=attestd guest test (results on ttyS1)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/attest-guest-test
[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable -q attest-guest-test.service
# the guest's one NIC: a static address on QEMU's user network (its DHCP is not needed), no
# waiting for "online"
cat >"$root/etc/systemd/network/10-qemu.network" <<'NET'
[Match]
Name=en* eth*
[Network]
Address=10.0.2.15/24
NET
chroot "$root" systemctl enable -q systemd-networkd.service
chroot "$root" systemctl mask -q systemd-networkd-wait-online.service
# the kernel and initramfs from the image, for qemu -kernel/-initrd
kernel=$(find "$root/boot" -name "vmlinuz-*" | head -1)
initrd=$(find "$root/boot" -name "initrd.img-*" | head -1)
cp "$kernel" "$work/vmlinuz"
cp "$initrd" "$work/initrd"
mke2fs -q -t ext4 -L root -d "$root" "$work/root.img" 3G || fail "mke2fs"
rm -rf "$root"
echo "# image: $(elapsed "$t") s ($(basename "$kernel"))"

# --- boot: swtpm on a unix socket (QEMU's emulator backend), QEMU TCG, results on ttyS1
swtpm socket --tpm2 --tpmstate dir="$tpm" --ctrl type=unixio,path="$tpm/sock" \
        --log file="$work/swtpm.log",level=1 --terminate &
# shellcheck disable=SC2034 # killed at exit (kill_at_exit)
swtpm_pid=$!
for _ in $(seq 100); do [ -S "$tpm/sock" ] && break; sleep 0.1; done
[ -S "$tpm/sock" ] || fail "swtpm did not create its socket"
hostport=$((30000 + RANDOM % 20000))
t=$(date +%s)
timeout "$GUEST_TIMEOUT" qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp 2 -m 1536 \
        -nographic -vga none -no-reboot -monitor none \
        -kernel "$work/vmlinuz" -initrd "$work/initrd" \
        -append "root=/dev/vda rw console=ttyS0 ima_policy=critical_data panic=-1 systemd.show_status=0" \
        -drive file="$work/root.img",if=virtio,format=raw \
        -chardev socket,id=chrtpm,path="$tpm/sock" -tpmdev emulator,id=tpm0,chardev=chrtpm \
        -device tpm-tis,tpmdev=tpm0 \
        -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$hostport-:8443" \
        -device virtio-net-pci,netdev=n0 \
        -serial file:"$work/console.log" -serial file:"$work/results.log" \
        >"$work/qemu.log" 2>&1 &
qemu_pid=$!
# from this host, through the one forward: attestd answers once the guest's test activated it
seen_fwd=0
while kill -0 "$qemu_pid" 2>/dev/null; do
        if [ $seen_fwd -eq 0 ] && grep -q '^ok: first request' "$work/results.log" 2>/dev/null &&
                curl -s -o /dev/null --max-time 20 --cacert "$CA" "https://127.0.0.1:$hostport/healthz"; then
                seen_fwd=1
                ok "host -> guest attestd through the loopback forward (hostfwd 127.0.0.1:$hostport)"
        fi
        sleep 2
done
set +e
wait "$qemu_pid"
rc=$?
set -e
qemu_pid=""
total=$(elapsed "$t")
boot=$(grep -m1 '^# boot: ' "$work/results.log" || true)
echo "# guest: QEMU ran $total s (rc $rc); ${boot#\# }"
tr -d '\r' <"$work/results.log"
[ $rc -ne 124 ] || fail "QEMU killed after $GUEST_TIMEOUT s (console: $(tail -5 "$work/console.log" | tr -d '\r'))"
grep -q '^@@GUEST-DONE 0@@' "$work/results.log" ||
        { tail -40 "$work/console.log" | tr -d '\r' | sed 's/^/# console: /'; fail "the guest test did not pass"; }
[ $seen_fwd -eq 1 ] || fail "no answer through the loopback forward"
echo "# guest stage: $(elapsed "$t_all") s, PASSED"
