#!/usr/bin/env bash
# Cross-check `attestctl quote check` against tpm2_checkquote (and openssl for RSAPSS) on real swtpm
# quotes and tampered copies of them. Usage (under with-quote-fixtures.sh): test-quote-tools.sh
# ATTESTCTL. Each case names the failure code we must report and how tpm2_checkquote must answer:
#   agree     tpm2_checkquote gives the same verdict
#   stricter  tpm2_checkquote accepts what we reject on purpose (unrestricted AK, bytes after the
#             signature): we assert our rejection and print what it said
#   openssl   RSAPSS: tpm2_checkquote 5.4 verifies only PKCS#1 v1.5 (tpm2-tools issue #3283,
#             fixed in 5.6 by PR #3285), so the signature is cross-checked with `openssl dgst`
set -euo pipefail
attestctl=$1
F=${QUOTE_FIXTURES:?run through with-quote-fixtures.sh}
N=$(cat "$F/nonce.hex")
SEL=$(cat "$F/sel")
W=$(mktemp -d /tmp/quote-tools.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0 count=0

# flip IN OFFSET OUT: copy IN to OUT with bit 0 of byte OFFSET inverted
flip() {
        local b
        cp "$1" "$3"
        b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
        printf "\\$(printf '%03o' $((b ^ 1)))" | dd of="$3" bs=1 seek="$2" conv=notrunc status=none
}

# case NAME WANT(OK|code) MODE AK NONCE ATTEST SIG PCRS_YAML PCRS_BIN [PEM]
case_() {
        local name=$1 want=$2 mode=$3 ak=$4 nonce=$5 attest=$6 sig=$7 yaml=$8 bin=$9 pem=${10:-}
        local out rc got tools=reject
        count=$((count + 1))
        set +e
        out=$("$attestctl" quote check --ak "$ak" --nonce "$nonce" --attest "$attest" --sig "$sig" \
                --pcrs "$yaml" --sel "$SEL" 2>&1)
        rc=$?
        set -e
        if [ $rc -eq 0 ]; then got=OK; else got=$(echo "$out" | sed -n 2p | cut -d: -f1); fi
        if [ "$got" != "$want" ] || { [ "$want" = OK ] && [ $rc -ne 0 ]; } ||
                { [ "$want" != OK ] && [ $rc -ne 1 ]; }; then
                echo "FAIL $name: attestctl said '$got' (rc $rc), want '$want'"
                echo "$out" | sed 's/^/    /'
                fail=1
                return
        fi
        case $mode in
        agree | stricter)
                if tpm2_checkquote -u "$ak" -q "$nonce" -m "$attest" -s "$sig" -f "$bin" -g sha256 \
                        >"$W/tools.out" 2>&1; then tools=accept; fi
                if [ "$mode" = agree ]; then
                        if { [ "$want" = OK ] && [ $tools != accept ]; } ||
                                { [ "$want" != OK ] && [ $tools != reject ]; }; then
                                echo "FAIL $name: tpm2_checkquote would $tools, we say $got"
                                sed 's/^/    /' "$W/tools.out"
                                fail=1
                                return
                        fi
                else
                        echo "note $name: we reject ($got), tpm2_checkquote would $tools"
                fi
                ;;
        openssl)
                tail -c +7 "$sig" >"$W/raw.sig" # TPMT_SIGNATURE: sigAlg, hash, u16 size, bytes
                if openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:auto \
                        -verify "$pem" -signature "$W/raw.sig" "$attest" >/dev/null 2>&1; then
                        tools=accept
                fi
                if { [ "$want" = OK ] && [ $tools != accept ]; } ||
                        { [ "$want" = quote_signature ] && [ $tools != reject ]; }; then
                        echo "FAIL $name: openssl would $tools the signature, we say $got"
                        fail=1
                        return
                fi
                ;;
        esac
        echo "ok   $name: $got (${mode}: $tools)"
}

for k in rsa ecc rsapss; do
        d=$F/$k
        mode=agree
        [ $k = rsapss ] && mode=openssl
        case_ "$k valid" OK $mode "$d/ak.pub" "$N" "$d/quote.attest" "$d/quote.sig" \
                "$d/pcrs.yaml" "$d/quote.pcrs" "$d/ak.pem"
        flip "$d/quote.sig" $(($(stat -c %s "$d/quote.sig") - 1)) "$W/$k.sig"
        case_ "$k flipped signature byte" quote_signature $mode "$d/ak.pub" "$N" \
                "$d/quote.attest" "$W/$k.sig" "$d/pcrs.yaml" "$d/quote.pcrs" "$d/ak.pem"
        # magic 4, type 2, qualifiedSigner 2+34, extraData 2+32, clockInfo.clock (u64): its low byte
        flip "$d/quote.attest" 83 "$W/$k.attest"
        case_ "$k flipped attest byte (clock)" quote_signature $mode "$d/ak.pub" "$N" \
                "$W/$k.attest" "$d/quote.sig" "$d/pcrs.yaml" "$d/quote.pcrs" "$d/ak.pem"
done

d=$F/rsa
case_ "other swtpm's quote with its own AK" OK agree "$F/other/ak.pub" "$N" \
        "$F/other/quote.attest" "$F/other/quote.sig" "$F/other/pcrs.yaml" "$F/other/quote.pcrs"
case_ "other swtpm's quote with our AK" quote_signature agree "$d/ak.pub" "$N" \
        "$F/other/quote.attest" "$F/other/quote.sig" "$F/other/pcrs.yaml" "$F/other/quote.pcrs"
wrong=${N%?}$(printf '%x' $(((16#${N: -1} + 1) % 16)))
case_ "wrong nonce" quote_nonce agree "$d/ak.pub" "$wrong" "$d/quote.attest" "$d/quote.sig" \
        "$d/pcrs.yaml" "$d/quote.pcrs"

# PCR 10 (sha256) changed after the quote: the same byte flipped in both PCR file forms
v=$(grep -oE '10: 0x[0-9A-F]{64}' "$d/pcrs.yaml" | cut -c7-)
hex=$(xxd -p "$d/quote.pcrs" | tr -d '\n')
pre=${hex%%"${v,,}"*}
[ ${#pre} -lt ${#hex} ] && [ $((${#pre} % 2)) -eq 0 ] || { echo "FAIL: PCR 10 not in quote.pcrs"; exit 1; }
flip "$d/quote.pcrs" $((${#pre} / 2)) "$W/changed.pcrs"
v2=$(printf '%02X' $((16#${v:0:2} ^ 1)))${v:2}
sed "s/$v/$v2/" "$d/pcrs.yaml" >"$W/changed.yaml"
case_ "PCR value changed after the quote" quote_pcr_digest agree "$d/ak.pub" "$N" \
        "$d/quote.attest" "$d/quote.sig" "$W/changed.yaml" "$W/changed.pcrs"
case_ "PCR 10 extended after the quote (pcrread)" quote_pcr_digest none "$d/ak.pub" "$N" \
        "$d/quote.attest" "$d/quote.sig" "$F/pcrs-after.yaml" "$d/quote.pcrs"

head -c 100 "$d/quote.attest" >"$W/short.attest"
case_ "truncated attest" quote_attest_malformed agree "$d/ak.pub" "$N" "$W/short.attest" \
        "$d/quote.sig" "$d/pcrs.yaml" "$d/quote.pcrs"
head -c 100 "$d/quote.sig" >"$W/short.sig"
case_ "truncated signature" quote_sig_malformed agree "$d/ak.pub" "$N" "$d/quote.attest" \
        "$W/short.sig" "$d/pcrs.yaml" "$d/quote.pcrs"
{ cat "$d/quote.attest"; printf 'x'; } >"$W/long.attest"
case_ "trailing byte after attest" quote_attest_trailing agree "$d/ak.pub" "$N" "$W/long.attest" \
        "$d/quote.sig" "$d/pcrs.yaml" "$d/quote.pcrs"
{ cat "$d/quote.sig"; printf 'x'; } >"$W/long.sig"
case_ "trailing byte after signature" quote_sig_trailing stricter "$d/ak.pub" "$N" \
        "$d/quote.attest" "$W/long.sig" "$d/pcrs.yaml" "$d/quote.pcrs"
d=$F/norestrict
case_ "quote by a key without restricted" quote_ak_attributes stricter "$d/ak.pub" "$N" \
        "$d/quote.attest" "$d/quote.sig" "$d/pcrs.yaml" "$d/quote.pcrs"

# the agent's own quote (attestctl tpm quote, ESAPI) through the same check, on a fresh swtpm
count=$((count + 1))
if "$(dirname "$0")/../lib/swtpm-run" -- bash -c '
        set -e
        "$1" tpm quote --tcti "$SWTPM_TCTI" --nonce "$2" --sel "$3" --out "$4/agent" >/dev/null
        "$1" quote check --ak "$4/agent/ak.pub" --nonce "$2" --attest "$4/agent/attest" \
                --sig "$4/agent/sig" --pcrs "$4/agent/pcrs" --sel "$3" >"$4/agent.out"
        ! "$1" quote check --ak "$4/agent/ak.pub" --nonce "$2" --attest "$4/agent/attest" \
                --sig "$4/agent/sig" --pcrs "$4/agent/pcrs" --sel sha256:0-10 >/dev/null
' _ "$attestctl" "$N" "$SEL" "$W"; then
        echo "ok   attestctl tpm quote -> attestctl quote check: OK, other --sel rejected"
else
        echo "FAIL attestctl tpm quote -> attestctl quote check"
        cat "$W/agent.out" 2>/dev/null | sed 's/^/    /'
        fail=1
fi

# usage errors are exit 2, not a verdict
set +e
"$attestctl" quote check --ak "$F/rsa/ak.pub" >/dev/null 2>&1
rc=$?
"$attestctl" quote --help | grep -q -- '--pcrs'
rc2=$?
set -e
[ $rc -eq 2 ] && [ $rc2 -eq 0 ] || { echo "FAIL: usage exit $rc / help $rc2"; fail=1; }

echo "$count cases, $([ $fail -eq 0 ] && echo all passed || echo FAILURES)"
exit $fail
