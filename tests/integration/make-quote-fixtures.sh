#!/usr/bin/env bash
# Make TPM 2.0 quote fixtures with real software TPMs (swtpm) and tpm2-tools, for the quote tests
# and benchmarks. Usage: make-quote-fixtures.sh DIR
#
# DIR/nonce.hex          32 random bytes, hex (the qualifyingData of every quote)
# DIR/sel                selection quoted, attestctl syntax (sha256:0-10+sha1:10)
# DIR/KIND/ak.pub        TPM2B_PUBLIC of the signing key (tpm2_createak -u / tpm2_create -u)
# DIR/KIND/quote.attest  TPMS_ATTEST (tpm2_quote -m); quote.sig TPMT_SIGNATURE (tpm2_quote -s)
# DIR/KIND/quote.pcrs    tpm2_quote -o (the tpm2-tools binary form tpm2_checkquote -f takes)
# DIR/KIND/pcrs.yaml     tpm2_pcrread of the same selection right after the quote
# DIR/KIND/ak.pem        the same key as PEM (tpm2_readpublic -f pem), for openssl cross-checks
# DIR/pcrs-after.yaml    the same PCRs read after PCR 10 was extended once more
# KIND: rsa (RSA-2048 RSASSA-SHA256 AK), ecc (P-256 ECDSA-SHA256 AK), rsapss (RSA-2048
# RSAPSS-SHA256 AK), norestrict (RSA signing key without `restricted`, tpm2_create), other (an
# RSA AK of a second swtpm, same nonce and selection).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
swtpm_run=$here/../lib/swtpm-run
SEL_TOOLS="sha256:0,1,2,3,4,5,6,7,8,9,10+sha1:10"
SEL="sha256:0-10+sha1:10"

flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }

# quote KIND AKCTX SIGARGS...: quote, then read the PCRs
quote() {
        local d=$1 ctx=$2
        shift 2
        tpm2_quote -c "$ctx" -l "$SEL_TOOLS" -q "$(cat nonce.hex)" -m "$d/quote.attest" \
                -s "$d/quote.sig" -o "$d/quote.pcrs" "$@" >"$d/quote.yaml"
        tpm2_pcrread "$SEL_TOOLS" >"$d/pcrs.yaml"
        tpm2_readpublic -c "$ctx" -f pem -o "$d/ak.pem" >/dev/null
        flush
}

inner_main() {
        tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
        flush
        # some non-zero PCRs: 0, 7, 10 in both banks
        for i in 0 7 10; do
                tpm2_pcrextend "$i:sha256=$(openssl rand -hex 32),sha1=$(openssl rand -hex 20)"
        done
        mkdir -p rsa ecc rsapss norestrict
        tpm2_createak -C ek.ctx -c rsa/ak.ctx -G rsa -g sha256 -s rsassa -u rsa/ak.pub \
                -n rsa/ak.name >/dev/null
        flush
        tpm2_createak -C ek.ctx -c ecc/ak.ctx -G ecc -g sha256 -s ecdsa -u ecc/ak.pub \
                -n ecc/ak.name >/dev/null
        flush
        tpm2_createak -C ek.ctx -c rsapss/ak.ctx -G rsa -g sha256 -s rsapss -u rsapss/ak.pub \
                -n rsapss/ak.name >/dev/null
        flush
        tpm2_createprimary -C o -G rsa -c prim.ctx >/dev/null
        flush
        tpm2_create -C prim.ctx -G rsa -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign' \
                -u norestrict/ak.pub -r norestrict/ak.priv >/dev/null
        flush
        tpm2_load -C prim.ctx -u norestrict/ak.pub -r norestrict/ak.priv -c norestrict/ak.ctx \
                >/dev/null
        flush
        quote rsa rsa/ak.ctx -g sha256
        quote ecc ecc/ak.ctx -g sha256
        quote rsapss rsapss/ak.ctx -g sha256 --scheme rsapss
        quote norestrict norestrict/ak.ctx -g sha256
        tpm2_pcrextend "10:sha256=$(openssl rand -hex 32),sha1=$(openssl rand -hex 20)"
        tpm2_pcrread "$SEL_TOOLS" >pcrs-after.yaml
}

inner_other() {
        mkdir -p other
        tpm2_createek -c other/ek.ctx -G rsa -u other/ek.pub >/dev/null
        flush
        tpm2_createak -C other/ek.ctx -c other/ak.ctx -G rsa -g sha256 -s rsassa \
                -u other/ak.pub >/dev/null
        flush
        quote other other/ak.ctx -g sha256
}

if [ "${1:-}" = "--inner" ]; then
        cd "$3"
        "inner_$2"
        rm -f ./*.ctx ./*/*.ctx ./*/*.priv
        exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
openssl rand -hex 32 >"$dir/nonce.hex"
echo "$SEL" >"$dir/sel"
"$swtpm_run" -- "$0" --inner main "$dir"
"$swtpm_run" -- "$0" --inner other "$dir"
