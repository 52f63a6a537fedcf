#!/usr/bin/env bash
# forge-line.sh EVENT BUFFER: print one ascii IMA log line for an ima-buf entry (PCR 10, sha256
# file-data digest) that the kernel never measured, with a template hash that is correct for its
# template data, so that only the replay against the quoted PCR 10 can expose it.
#   10 <sha1 of template data> ima-buf sha256:<sha256 of BUFFER> EVENT <hex of BUFFER>
# Template data (ima-buf: d-ng|n-ng|buf, each field a little-endian u32 length and the bytes):
#   d-ng "sha256:\0" + digest, n-ng EVENT + "\0", buf BUFFER.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 EVENT BUFFER" >&2; exit 2; }
event=$1 buf=$2
u32le() { printf '%08x' "$1" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/'; }
hex() { printf %s "$1" | xxd -p | tr -d '\n'; }
digest=$(printf %s "$buf" | sha256sum | cut -d' ' -f1)
data=$(u32le 40)$(hex sha256:)00$digest$(u32le $((${#event} + 1)))$(hex "$event")00
data=$data$(u32le ${#buf})$(hex "$buf")
th=$(printf %s "$data" | xxd -r -p | sha1sum | cut -d' ' -f1)
printf '10 %s ima-buf sha256:%s %s %s\n' "$th" "$digest" "$event" "$(hex "$buf")"
