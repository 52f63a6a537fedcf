#!/usr/bin/env bash
# Write fuzz-quote seeds from a quote fixture directory (tests/integration/make-quote-fixtures.sh):
# u16be ak_len | ak | u16be attest_len | attest | u8 nonce_len | nonce | signature.
# Usage: make-quote-corpus.sh FIXTURE_DIR OUT_DIR
set -euo pipefail
fx=$1 out=$2
mkdir -p "$out"
u16() { printf "\\$(printf '%03o' $(($1 >> 8)))\\$(printf '%03o' $(($1 & 255)))"; }
for k in rsa ecc rsapss norestrict; do
        d=$fx/$k
        {
                u16 "$(stat -c %s "$d/ak.pub")"
                cat "$d/ak.pub"
                u16 "$(stat -c %s "$d/quote.attest")"
                cat "$d/quote.attest"
                printf '\040'
                xxd -r -p "$fx/nonce.hex"
                cat "$d/quote.sig"
        } >"$out/swtpm-$k"
done
printf 'sha256:0-10+sha1:10' >"$out/sel-text"
