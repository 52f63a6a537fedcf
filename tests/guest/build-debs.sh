#!/usr/bin/env bash
# Usage: build-debs.sh OUTDIR
# The release path: `meson dist --no-tests` makes the source tarball, the tarball is unpacked and
# built with `dpkg-buildpackage -b -us -uc` (debhelper, dh + meson), and lintian checks the
# result (--fail-on warning: an error or warning fails; info tags are printed, each overridden
# one justified in debian/*.lintian-overrides). OUTDIR gets attestd_*.deb, attest-agent_*.deb,
# attestctl_*.deb, the tarball, build.log and lintian.txt. Prints each step's time.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
for t in meson dpkg-buildpackage dh lintian; do
        command -v $t >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
work=$(mktemp -d /tmp/attestd-debs.XXXXXX)
trap 'rm -rf "$work"' EXIT
step() { printf '# %s: %s s\n' "$1" "$(($(date +%s) - $2))"; }

t=$(date +%s)
meson setup "$work/dist-build" "$top" -Dtests=false >"$work/setup.log" 2>&1 ||
        { tail -20 "$work/setup.log" >&2; exit 1; }
# --allow-dirty: a work tree with uncommitted edits still makes a tarball (of HEAD, as git has it)
meson dist -C "$work/dist-build" --no-tests --formats xztar --allow-dirty >"$work/dist.log" 2>&1 ||
        { tail -20 "$work/dist.log" >&2; exit 1; }
tarball=$(ls "$work"/dist-build/meson-dist/attestd-*.tar.xz)
cp "$tarball" "$out/"
step "meson dist ($(basename "$tarball"))" "$t"

t=$(date +%s)
mkdir -p "$work/src"
tar -xJf "$tarball" -C "$work/src"
src=$(ls -d "$work"/src/attestd-*)
(cd "$src" && dpkg-buildpackage -b -us -uc -j2) >"$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log" >&2; echo "not ok: dpkg-buildpackage failed" >&2; exit 1; }
step "dpkg-buildpackage -b from the tarball" "$t"
rm -f "$out"/*.deb
cp "$work"/src/*.deb "$work"/src/*.changes "$work"/src/*.buildinfo "$out/"
for p in attestd attest-agent attestctl; do
        ls "$out/${p}_"*_*.deb >/dev/null || { echo "not ok: no $p package" >&2; exit 1; }
done
echo "ok: packages $(cd "$out" && echo attestd_*.deb attest-agent_*.deb attestctl_*.deb)"

t=$(date +%s)
set +e
lintian --pedantic --display-info --show-overrides --fail-on error,warning "$out"/*.changes >"$out/lintian.txt" 2>&1
rc=$?
set -e
step "lintian" "$t"
sed 's/^/# lintian: /' "$out/lintian.txt"
[ $rc -eq 0 ] || { echo "not ok: lintian found errors or warnings" >&2; exit 1; }
echo "ok: lintian: no error or warning ($(grep -c '^[IP]:' "$out/lintian.txt" || true) info/pedantic tags, $(grep -c '^O:' "$out/lintian.txt" || true) overridden, each justified in debian/*.lintian-overrides)"
