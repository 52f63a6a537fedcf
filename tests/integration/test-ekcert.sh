#!/usr/bin/env bash
# EK certificate checks (evidence/ekcert.c) on swtpm provisioned with swtpm_setup's local CA:
# the real EK certificates (RSA 2048, ECC P-384 at 0x01c00016) chain to that CA and match the EK the standard template
# creates; another TPM's CA, the other key type and a corrupted certificate are each rejected.
# Usage: test-ekcert.sh EKCHECK SWTPM_RUN
set -euo pipefail
ekcheck=$1 swtpm_run=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # WANT DESC ARGS...: WANT is "ok" or an error code
        local want=$1 desc=$2 got
        shift 2
        got=$("$ekcheck" "$@" | cut -d: -f1) || true
        if [ "$got" = "$want" ]; then echo "ok   - $desc ($got)"; else echo "FAIL - $desc: want $want, got $got"; fail=1; fi
}
for t in a b; do
        WORK=$work/$t "$swtpm_run" --ek-cert --state "$work/$t/state" -- bash -c '
                set -e
                mkdir -p "$WORK"
                tpm2_nvread 0x01c00002 -o "$WORK/rsa.der" 2>/dev/null
                tpm2_nvread 0x01c00016 -o "$WORK/ecc.der" 2>/dev/null  # swtpm: P-384 EK, TCG high range
                tpm2_createek -c "$WORK/ek-rsa.ctx" -G rsa -u "$WORK/ek-rsa.pub" >/dev/null
                tpm2_flushcontext -t >/dev/null
                tpm2_createek -c "$WORK/ek-ecc.ctx" -G ecc384 -u "$WORK/ek-ecc.pub" >/dev/null
                tpm2_flushcontext -t >/dev/null'
done
a=$work/a
expect ok "RSA EK certificate chains and matches" "$a/rsa.der" "$a/state/ca" "$a/ek-rsa.pub"
expect ok "ECC EK certificate chains and matches" "$a/ecc.der" "$a/state/ca" "$a/ek-ecc.pub"
expect ek_cert_untrusted "certificate of TPM a against TPM b's CA" "$a/rsa.der" "$work/b/state/ca" "$a/ek-rsa.pub"
expect ek_cert_mismatch "RSA certificate with the ECC EK" "$a/rsa.der" "$a/state/ca" "$a/ek-ecc.pub"
expect ek_cert_mismatch "TPM a's certificate with TPM b's EK" "$a/rsa.der" "$a/state/ca" "$work/b/ek-rsa.pub"
cp "$a/rsa.der" "$work/bad.der"
n=$(stat -c %s "$work/bad.der")
# flip every bit of one signature byte (swtpm signs anew each run: a fixed byte written over it
# would leave the certificate genuine in 1 run of 256)
b=$(od -An -tu1 -j $((n - 20)) -N1 "$work/bad.der" | tr -d ' ')
printf "\\$(printf '%03o' $((b ^ 0xff)))" | dd of="$work/bad.der" bs=1 seek=$((n - 20)) conv=notrunc status=none
expect ek_cert_untrusted "certificate with a corrupted signature" "$work/bad.der" "$a/state/ca" "$a/ek-rsa.pub"
head -c 300 /dev/urandom >"$work/junk.der"
expect ek_cert_malformed "random bytes as a certificate" "$work/junk.der" "$a/state/ca" "$a/ek-rsa.pub"
# a TPM2B_PUBLIC whose size field says one byte less than it holds
cp "$a/ek-rsa.pub" "$work/badsize.pub"
lo=$(od -An -tu1 -j1 -N1 "$work/badsize.pub" | tr -d ' ')
printf "\\$(printf '%03o' $((lo - 1)))" | dd of="$work/badsize.pub" bs=1 seek=1 conv=notrunc status=none
expect key_malformed "EK public area with a wrong size field" "$a/rsa.der" "$a/state/ca" "$work/badsize.pub"
expect ek_ca_unreadable "no CA bundle" "$a/rsa.der" "$work/nothing" "$a/ek-rsa.pub"
exit $fail
