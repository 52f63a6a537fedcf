#!/usr/bin/env bash
# Quote verification figures: attestctl's verifier in-process (bench-quote) vs tpm2_checkquote (one
# process per quote, as a verifier built on tpm2-tools would run it), same swtpm quotes, RSA-2048
# RSASSA-SHA256 and ECC P-256 ECDSA-SHA256. Never fails on timing.
# Usage: run-quote.sh BUILD_DIR [SECONDS_PER_FIGURE] [CHECKQUOTE_RUNS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=${2:-2} runs=${3:-50}
fx=$(mktemp -d /tmp/bench-quote.XXXXXX)
trap 'rm -rf "$fx"' EXIT
"$top/tests/integration/make-quote-fixtures.sh" "$fx" >"$fx/make.log" 2>&1 ||
        { cat "$fx/make.log" >&2; exit 1; }
nonce=$(cat "$fx/nonce.hex")
echo "quote verification, one core ($(nproc) online), $(openssl version | cut -d' ' -f1-2)," \
        "$(tpm2_checkquote --version | sed 's/.*version="\([^"]*\)".*/tpm2-tools \1/')"
for k in rsa ecc; do
        out=$("$build/tests/bench/bench-quote" "$fx" $k "$secs")
        echo "$out"
        ours=$(echo "$out" | sed -n '1s/.*: \([0-9]*\)\/s$/\1/p')
        d=$fx/$k
        # the timed runs must be verifying, not failing fast
        tpm2_checkquote -u "$d/ak.pub" -m "$d/quote.attest" -s "$d/quote.sig" -f "$d/quote.pcrs" \
                -g sha256 -q "$nonce" >/dev/null 2>&1 || { echo "tpm2_checkquote rejects $k" >&2; exit 1; }
        t0=$(date +%s%N)
        for _ in $(seq "$runs"); do
                tpm2_checkquote -u "$d/ak.pub" -m "$d/quote.attest" -s "$d/quote.sig" \
                        -f "$d/quote.pcrs" -g sha256 -q "$nonce" >/dev/null 2>&1
        done
        t1=$(date +%s%N)
        tools=$(awk -v n="$runs" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ns / 1e9) }')
        echo "$k tpm2_checkquote: $runs runs in $(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", ns / 1e9 }') s: $tools/s"
        echo "$k ratio: $(awk -v a="$ours" -v b="$tools" 'BEGIN { printf "%.0f", a / b }')x (in-process verify / tpm2_checkquote)"
done
