#!/usr/bin/env bash
# Decode the files the test guest printed on its serial console (see kernel/guest/init).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/decode-console.sh CONSOLE_LOG OUT_DIR

Extract every block the guest's /init printed as
  @@ATTEST-BEGIN <name> <size> <sha256>@@
  <base64 lines>
  @@ATTEST-END <name>@@
into OUT_DIR/<name>, checking size and sha256 of each. Fails if the guest reported
@@ATTEST-FAIL ...@@, if @@ATTEST-DONE@@ is missing (the guest died or timed out), or if a block
is damaged (a kernel message printed into it, for instance). Carriage returns are ignored.
EOF
}

case ${1:-} in -h | --help) usage; exit 0 ;; esac
[ $# = 2 ] || { usage >&2; exit 2; }
console=$1
dir=$2
[ -f "$console" ] || die "$console not found"
mkdir -p "$dir"

if grep -a -q '@@ATTEST-FAIL' "$console"; then
        die "guest failed: $(grep -a -o '@@ATTEST-FAIL[^@]*@@' "$console" | head -n1)"
fi
grep -a -q '^@@ATTEST-DONE@@' <(tr -d '\r' <"$console") ||
        die "no @@ATTEST-DONE@@ in $console: the guest did not finish (tail: $(tail -c 300 "$console" | tr -d '\r'))"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Split the blocks into $work/<n>.b64 with a header line "<name> <size> <sha256>" in $work/index.
tr -d '\r' <"$console" | awk -v w="$work" '
        function bad(msg) { printf "decode: line %d: %s\n", NR, msg > "/dev/stderr"; err = 1; exit 1 }
        /^@@ATTEST-BEGIN / {
                if (cur != "") bad("BEGIN inside block " cur)
                line = $0
                sub(/^@@ATTEST-BEGIN /, "", line)
                if (!sub(/@@$/, "", line)) bad("malformed BEGIN")
                split(line, f, " ")
                if (f[1] !~ /^[A-Za-z0-9._-]+$/ || f[2] !~ /^[0-9]+$/ || f[3] !~ /^[0-9a-f]+$/ || length(f[3]) != 64)
                        bad("malformed BEGIN fields")
                cur = f[1]; n++
                printf "%d %s %s %s\n", n, f[1], f[2], f[3] > (w "/index")
                printf "" > (w "/" n ".b64")
                next
        }
        /^@@ATTEST-END / {
                if ($0 != "@@ATTEST-END " cur "@@") bad("END does not match block " cur)
                cur = ""
                next
        }
        cur != "" {
                if ($0 !~ /^[A-Za-z0-9+\/=]*$/) bad("non-base64 line in block " cur ": " substr($0, 1, 60))
                print > (w "/" n ".b64")
        }
        END { if (!err && cur != "") bad("block " cur " not closed") }'

[ -f "$work/index" ] || die "no blocks in $console"
while read -r n name size sum; do
        base64 -d <"$work/$n.b64" >"$work/$n.bin" || die "block $name: bad base64"
        got_size=$(wc -c <"$work/$n.bin")
        [ "$got_size" = "$size" ] || die "block $name: $got_size bytes, the guest said $size"
        [ "$(sha256_file "$work/$n.bin")" = "$sum" ] || die "block $name: sha256 mismatch"
        mv "$work/$n.bin" "$dir/$name"
        log "$name: $size bytes"
done <"$work/index"
