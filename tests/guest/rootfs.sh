#!/usr/bin/env bash
# Usage: rootfs.sh [--cache DIR] [--print-key]
# The guest's Debian 12 root filesystem: mmdebstrap from this machine's apt sources
# (/etc/apt/sources.list and sources.list.d, Debian's entries only), with systemd as PID 1,
# Debian's linux-image-amd64 and its initramfs, and the run-time dependencies of the attestd
# packages, so that installing the .debs inside needs no network. Cached in
# $ATTEST_CACHE/guest/<key>/rootfs.tar (default /var/cache/attestd), <key> the sha256 of every
# input (this script, the package list, the apt sources); prints the tarball's path.
set -euo pipefail
cache=${ATTEST_CACHE:-/var/cache/attestd}
print_key=0
while [ $# -gt 0 ]; do
        case $1 in
        --cache) cache=${2:?}; shift 2 ;;
        --print-key) print_key=1; shift ;;
        *) grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2 ;;
        esac
done

packages=(
        systemd systemd-sysv udev dbus linux-image-amd64 initramfs-tools e2fsprogs
        tpm-udev libtss2-esys-3.0.2-0 libtss2-mu0 libtss2-tctildr0 libtss2-rc0 libtss2-tcti-device0
        libjansson4 libmicrohttpd12 libsqlite3-0 libcurl4 libssl3 libsystemd0 libgnutls30 zlib1g
        libjwt0 libpq5 libpcre2-8-0
        ca-certificates curl openssl jq procps sqlite3 tpm2-tools
        python3
)
# Debian's own entries of this machine's apt sources (deb822 and one-line), nothing else
sources() {
        local f
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
                [ -f "$f" ] || continue
                case $f in
                *.sources) awk -v RS= '/deb\.debian\.org|security\.debian\.org/' "$f" |
                        grep -E '^(URIs|Suites|Components):' |
                        awk '/^URIs/ {u=$2} /^Suites/ {s=""; for (i=2;i<=NF;i++) s=s" "$i}
                             /^Components/ {c=""; for (i=2;i<=NF;i++) c=c" "$i;
                                            n=split(s,ss," "); for (j=1;j<=n;j++) print "deb " u " " ss[j] c}' ;;
                *) grep -E '^deb .*(deb\.debian\.org|security\.debian\.org)' "$f" || true ;;
                esac
        done | sort -u
}
src=$(sources)
[ -n "$src" ] || { echo "rootfs.sh: no Debian apt sources on this machine" >&2; exit 1; }
key=$( {
        printf 'attestd-guest-rootfs 1\n'
        sha256sum <"$0"
        printf '%s\n' "${packages[@]}"
        printf '%s\n' "$src"
} | sha256sum | cut -c1-64)
if [ $print_key -eq 1 ]; then
        printf '%s\n' "${packages[@]}" "$src" "key $key"
        exit 0
fi
out=$cache/guest/$key
if [ -f "$out/rootfs.tar" ]; then
        echo "rootfs.sh: cached: $out/rootfs.tar" >&2
        echo "$out/rootfs.tar"
        exit 0
fi
command -v mmdebstrap >/dev/null || { echo "rootfs.sh: mmdebstrap is not installed" >&2; exit 1; }
mkdir -p "$cache/guest"
exec {lockfd}>"$cache/guest/.lock"
flock "$lockfd"
if [ -f "$out/rootfs.tar" ]; then echo "$out/rootfs.tar"; exit 0; fi
stage=$cache/guest/.stage-$key.$$
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
printf '%s\n' "$src" >"$stage/sources.list"
t0=$(date +%s)
# root password locked, serial getty off (the test unit owns ttyS0's output), quiet fstab
mmdebstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
        --customize-hook='echo attest-guest >"$1/etc/hostname"' \
        --customize-hook='printf "/dev/vda / ext4 rw,relatime 0 1\n" >"$1/etc/fstab"' \
        --customize-hook='chroot "$1" systemctl mask serial-getty@ttyS0.service getty@tty1.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer' \
        bookworm "$stage/rootfs.tar" "$stage/sources.list" >"$stage/mmdebstrap.log" 2>&1 ||
        { tail -30 "$stage/mmdebstrap.log" >&2; exit 1; }
mkdir -p "$out"
mv "$stage/rootfs.tar" "$stage/mmdebstrap.log" "$stage/sources.list" "$out/"
echo "rootfs.sh: built in $(($(date +%s) - t0)) s: $out/rootfs.tar" >&2
echo "$out/rootfs.tar"
