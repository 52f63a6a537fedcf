#!/usr/bin/env bash
# ima.runtime signatures with real keys: files signed by evmctl ima_sign (RSA with a certificate,
# EC with a bare public key, an untrusted key), a file changed after signing, a v3 signature made
# with openssl over the digest of struct ima_file_id, and .ima key measurements; every outcome per
# entry, and the signature verdicts cross-checked with evmctl ima_measurement --key on the same log.
# Usage: test-runtime-sig.sh RUNTIME_TOOL TOP
set -euo pipefail
TOOL=$(realpath "$1")
TOP=$(realpath "$2")
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
need evmctl openssl jq xxd sha256sum
test_begin
cd "$work"

sha() { sha256sum "$1" | cut -c1-64; }
# keys: a trusted RSA key with a certificate (evmctl's key id is the SKID's last 4 bytes), a
# trusted EC key given as a bare public key, an untrusted RSA key
openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -subj /CN=ima-trusted -days 2 \
        -addext subjectKeyIdentifier=hash 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out ek.pem
openssl ec -in ek.pem -pubout -out ek.pub 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout u.pem -out u.crt -subj /CN=ima-other -days 2 \
        2>/dev/null
openssl req -x509 -new -key ek.pem -out ec.crt -subj /CN=ima-ec -days 2 \
        -addext subjectKeyIdentifier=hash 2>/dev/null
openssl x509 -in c.pem -outform DER -out c.der
openssl x509 -in ec.crt -outform DER -out ec.der
openssl x509 -in u.crt -outform DER -out u.der

for f in a e u m w n v3; do echo "content of $f" >"$f.txt"; done
evmctl ima_sign --key k.pem -a sha256 --sigfile a.txt >/dev/null 2>&1
evmctl ima_sign --key ek.pem -a sha256 --sigfile e.txt >/dev/null 2>&1
evmctl ima_sign --key u.pem -a sha256 --sigfile u.txt >/dev/null 2>&1
evmctl ima_sign --key k.pem -a sha256 --sigfile m.txt >/dev/null 2>&1
echo "changed after signing" >>m.txt
evmctl ima_sign --key u.pem -a sha256 --sigfile w.txt >/dev/null 2>&1
# v3: the signature covers sha256(u8 type 3 | u8 hash_algo 4 | digest), header as v2 with version 3
keyid=$(xxd -p -s 3 -l 4 a.txt.sig)
{ printf '\x03\x04'; xxd -r -p <<<"$(sha v3.txt)"; } >v3.fid
openssl dgst -sha256 -binary v3.fid >v3.tbs
openssl pkeyutl -sign -inkey k.pem -pkeyopt digest:sha256 -in v3.tbs -out v3.raw
len=$(stat -c %s v3.raw)
{ printf '\x03\x03\x04'; xxd -r -p <<<"$keyid"; printf "\\x$(printf %02x $((len >> 8)))\\x$(printf %02x $((len & 255)))"; cat v3.raw; } >v3.txt.sig

"$TOOL" gen log.bin "sig:/a.txt:$(sha a.txt):a.txt.sig" "sig:/e.txt:$(sha e.txt):e.txt.sig" \
        "sig:/u.txt:$(sha u.txt):u.txt.sig" "sig:/m.txt:$(sha m.txt):m.txt.sig" \
        "sig:/w.txt:$(sha w.txt):w.txt.sig" "ng:/n.txt:$(sha n.txt)" \
        "sig:/v3.txt:$(sha v3.txt):v3.txt.sig" buf:.ima:c.der buf:.ima:u.der buf:.evm:u.der
jq -n --rawfile c c.pem --rawfile e ek.pub --arg w "$(sha w.txt)" --arg k "$(sha c.der)" \
        '{ima: {runtime: {keys: [$c, $e], digests: {"/w.txt": ["sha256:" + $w]},
                          keyrings: {".ima": [$k]}, ignored_keyrings: [".evm"]}}}' >policy.json
"$TOOL" eval policy.json log.bin >out.txt
cat >want.txt <<'EOF'
0 signed - /a.txt
1 signed - /e.txt
2 fail unknown_key /u.txt
3 fail bad_signature /m.txt
4 pass - /w.txt
5 fail not_allowed /n.txt
6 signed - /v3.txt
7 pass - .ima
8 fail keyring_not_allowed .ima
9 excluded - .evm
summary passed=5 failed=4 excluded=1 signed=3 violations=0
EOF
diff -u want.txt out.txt || fail "per-entry outcomes differ"
ok "10 entries: signed (RSA cert, EC key, v3), unknown_key, bad_signature, allowlist fallback, not_allowed, keyrings"

# the same without the trusted keys: signatures cannot pass, the allowlist decides
jq '.ima.runtime |= del(.keys)' policy.json >nokeys.json
"$TOOL" eval nokeys.json log.bin >out2.txt
[ "$(grep -c ' fail not_allowed ' out2.txt)" = 6 ] || fail "without keys: $(cat out2.txt)"
grep -q '^4 pass - /w.txt$' out2.txt || fail "without keys, the allowlisted file: $(cat out2.txt)"
ok "without keys the signed files fail not_allowed; the allowlisted one passes"

# cross-check with evmctl: it verifies the v2 ima-sig entries of the same binary log with the
# same trusted keys (DER certificates: what evmctl 1.4 reads); its failures must be ours (the v3
# entry is not a format evmctl 1.4 reads)
evmctl -v ima_measurement --ignore-violations --verify-sig --key c.der,ec.der log.bin \
        >evm.txt 2>&1 || true
jq '.ima.runtime |= {keys}' policy.json >keysonly.json
"$TOOL" eval keysonly.json log.bin >out3.txt
pick() { awk "$1" out3.txt | grep -v v3 | sort | paste -sd' '; }
ours_ok=$(pick '$2 == "signed" { print $4 }')
ours_bad=$(pick '$2 == "fail" && ($3 == "unknown_key" || $3 == "bad_signature") { print $4 }')
evm_ok=$(grep -E '^/[a-z0-9]+\.txt: verification is OK' evm.txt | cut -d: -f1 | sort | paste -sd' ')
evm_bad=$(grep -E '^/[a-z0-9]+\.txt: verification failed' evm.txt | cut -d: -f1 | sort | paste -sd' ')
[ "$ours_ok" = "/a.txt /e.txt" ] && [ "$ours_bad" = "/m.txt /u.txt /w.txt" ] ||
        fail "our signature verdicts: ok '$ours_ok', failed '$ours_bad'"
[ "$evm_ok" = "$ours_ok" ] && [ "$evm_bad" = "$ours_bad" ] ||
        fail "evmctl: ok '$evm_ok' failed '$evm_bad'; ours: ok '$ours_ok' failed '$ours_bad'"
ok "evmctl ima_measurement --key agrees: verified $evm_ok, failed $evm_bad"
# the real signed-file boot (tests/data/ima-sig-qemu: evmctl ima_sign v2 signatures, appraised by
# the kernel): a policy of the boot's trusted certificate and its _ima key measurement only (no
# digests); the signed files pass as signed, the other key's file unknown_key, the file changed
# after signing bad_signature, unsigned files not_allowed, entry 0 left to require_boot_aggregate.
# The signature verdicts are cross-checked with openssl over each logged digest.
d=$TOP/tests/data/ima-sig-qemu
jq -n --rawfile c "$d/ima-cert.pem" --arg k "$(sha "$d/ima-cert.der")" \
        '{ima: {runtime: {keys: [$c], keyrings: {"_ima": [$k]}}}}' >qemu.json
"$TOOL" eval qemu.json "$d/binary_runtime_measurements" >qemu.txt
for want in "excluded - boot_aggregate" "fail not_allowed /bin/keyctl" "pass - _ima" \
        "signed - /data/signed/good.txt" "signed - /data/signed/hello.sh" \
        "fail unknown_key /data/signed/other.txt" "fail bad_signature /data/signed/tampered.txt"; do
        grep -q "^[0-9]* $want\$" qemu.txt || fail "ima-sig-qemu: no '$want': $(cat qemu.txt)"
done
grep -q '^0 excluded - boot_aggregate$' qemu.txt || fail "ima-sig-qemu: entry 0: $(head -1 qemu.txt)"
openssl x509 -in "$d/ima-cert.pem" -pubkey -noout >qemu.pub
ssl_ok=""
while read -r _ _ tmpl dg path sig; do
        [ "$tmpl" = ima-sig ] && [ -n "${sig:-}" ] || continue
        xxd -r -p <<<"${sig:18}" >q.sig
        xxd -r -p <<<"${dg#sha256:}" >q.dg
        openssl pkeyutl -verify -pubin -inkey qemu.pub -sigfile q.sig -in q.dg \
                -pkeyopt digest:sha256 >/dev/null 2>&1 && ssl_ok="$ssl_ok $path"
done <"$d/ascii_runtime_measurements"
ours_ok=$(awk '$2 == "signed" { printf " %s", $4 }' qemu.txt)
[ "$ssl_ok" = "$ours_ok" ] || fail "ima-sig-qemu: openssl verifies '$ssl_ok', we passed as signed '$ours_ok'"
ok "the real signed-file boot judged: signed$ours_ok (openssl agrees), other key unknown_key, changed file bad_signature, a policy without digests"
echo "all runtime signature checks passed"
