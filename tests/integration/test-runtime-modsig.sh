#!/usr/bin/env bash
# ima.runtime and ima-modsig: files signed by the kernel's own scripts/sign-file (built here from
# the linux-source-6.1 tarball) with RSA and EC keys, by issuerAndSerialNumber and by
# subjectKeyIdentifier (-k), sha256 and sha512; a signature with signed attributes made by
# openssl cms; content changed after signing, a corrupted signature byte, an untrusted signer, a
# messageDigest that is not the content's. Each signed file is split into content and appended
# PKCS#7 here (python3 reads the struct module_signature trailer), an ima-modsig log is written by
# the test tool (binary and ascii), and every entry's verdict is cross-checked with
# `openssl cms -verify` on the same content and signature with the same trusted signers.
# Usage: test-runtime-modsig.sh RUNTIME_TOOL TOP
set -euo pipefail
TOOL=$(realpath "$1")
TOP=$(realpath "$2")
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
need openssl jq python3 cc tar sha256sum sha512sum
test_begin
cd "$work"

src=/usr/src/linux-source-6.1.tar.xz
[ -r "$src" ] || fail "$src is missing (Debian package linux-source-6.1)"
tar xJf "$src" --strip-components=2 linux-source-6.1/scripts/sign-file.c \
        linux-source-6.1/scripts/ssl-common.h
cc -w -o sign-file sign-file.c -lcrypto || fail "cannot build the kernel's sign-file"

# keys: a trusted RSA key with a certificate; an EC key trusted as a bare public key (ec.crt signs,
# ecx.crt is another certificate of the same key: same SKID, other issuer and serial: what
# openssl needs to mirror "a bare key matches by key identifier only"); an untrusted RSA key
openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -subj /CN=mod-trusted -days 2 \
        -addext subjectKeyIdentifier=hash 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out ek.pem
openssl ec -in ek.pem -pubout -out ek.pub 2>/dev/null
openssl req -x509 -new -key ek.pem -out ec.crt -subj /CN=mod-ec -days 2 \
        -addext subjectKeyIdentifier=hash 2>/dev/null
openssl req -x509 -new -key ek.pem -out ecx.crt -subj /CN=mod-ec-other -days 2 -set_serial 7 \
        -addext subjectKeyIdentifier=hash 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout u.pem -out u.crt -subj /CN=mod-other -days 2 \
        -addext subjectKeyIdentifier=hash 2>/dev/null

mk() { head -c "$2" /dev/urandom >"$1.ko"; printf 'module %s\n' "$1" >>"$1.ko"; }
for m in a k e e2 s5 u t c w; do mk "$m" $((3000 + RANDOM % 2000)); done
./sign-file sha256 k.pem c.pem a.ko        # issuerAndSerialNumber
./sign-file -k sha256 k.pem c.pem k.ko     # subjectKeyIdentifier
./sign-file -k sha256 ek.pem ec.crt e.ko   # EC, by SKID: the bare key matches
./sign-file sha256 ek.pem ec.crt e2.ko     # EC, by issuer+serial: a bare key cannot match
./sign-file sha512 k.pem c.pem s5.ko
./sign-file sha256 u.pem u.crt u.ko        # untrusted
./sign-file sha256 u.pem u.crt w.ko        # untrusted, but its digest is allowlisted
./sign-file sha256 k.pem c.pem t.ko        # content changed after signing (below)
./sign-file sha256 k.pem c.pem c.ko        # a signature byte flipped (below)

# split: content | PKCS#7 | struct module_signature (12 bytes, sig_len big-endian) | magic
cat >split.py <<'EOF'
import struct, sys
magic = b"~Module signature appended~\n"
for name in sys.argv[1:]:
    b = open(name + ".ko", "rb").read()
    assert b.endswith(magic), name
    algo, hsh, idt, sl, kl, _, n = struct.unpack(">BBBBB3sI", b[-40:-28])
    assert idt == 2 and n > 0 and n <= len(b) - 40, name  # PKEY_ID_PKCS7
    open(name + ".content", "wb").write(b[:-40 - n])
    open(name + ".p7", "wb").write(b[-40 - n:-40])
EOF
# append: content + PKCS#7 + trailer, as sign-file writes them
cat >append.py <<'EOF'
import struct, sys
c, p, out = (open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3])
open(out, "wb").write(c + p + struct.pack(">BBBBB3sI", 0, 0, 2, 0, 0, b"\0" * 3, len(p)) +
                      b"~Module signature appended~\n")
EOF
# signed attributes (sign-file cannot: it always writes CMS_NOATTR): openssl cms, detached
mk sa 2500
mk sb 2500
openssl cms -sign -binary -nocerts -outform DER -md sha256 -signer c.pem -inkey k.pem -in sa.ko \
        -out sa.attr.p7
python3 append.py sa.ko sa.attr.p7 sa.signed && mv sa.signed sa.ko
# sb: the signed attributes name another content's digest (messageDigest is not d-modsig)
head -c 100 /dev/urandom >other.bin
openssl cms -sign -binary -nocerts -outform DER -md sha256 -signer c.pem -inkey k.pem \
        -in other.bin -out sb.attr.p7
python3 append.py sb.ko sb.attr.p7 sb.signed && mv sb.signed sb.ko

mods=(a k e e2 s5 u w t c sa sb)
python3 split.py "${mods[@]}"
echo "changed after signing" >>t.content
# c: flip the last byte of the signature (the last OCTET STRING of the SignerInfo)
line=$(openssl asn1parse -inform DER -in c.p7 | grep 'prim: OCTET STRING' | tail -1)
off=$(awk -F: '{ print $1 + 0 }' <<<"$line")
hl=$(sed -E 's/.*hl= *([0-9]+).*/\1/' <<<"$line")
len=$(sed -E 's/.* l= *([0-9]+).*/\1/' <<<"$line")
[ "$len" -ge 64 ] || fail "c.p7: no signature found ($line)"
python3 -c 'import sys; p = sys.argv[1]; i = int(sys.argv[2]); b = bytearray(open(p, "rb").read())
b[i] ^= 1; open(p, "wb").write(b)' c.p7 $((off + hl + len - 1))

items=()
for m in "${mods[@]}"; do
        # d-ng: the file as measured (content, signature, trailer); d-modsig: the content alone
        whole=$m.ko
        case $m in
        t | c) # changed after signing: the file as it would be on disk now
                python3 append.py "$m.content" "$m.p7" "$m.mod"
                whole=$m.mod
                ;;
        esac
        alg=sha256
        [ "$m" = s5 ] && alg=sha512
        dng=$(sha256sum "$whole" | cut -c1-64)
        dmod=$("${alg}sum" "$m.content" | cut -d' ' -f1)
        items+=("modsig:/$m.ko:$dng:$alg:$dmod:$m.p7")
done
"$TOOL" gen log.bin "${items[@]}"
jq -n --rawfile c c.pem --rawfile e ek.pub --arg w "$(sha256sum w.ko | cut -c1-64)" \
        '{ima: {runtime: {keys: [$c, $e], digests: {"/w.ko": ["sha256:" + $w]}}}}' >policy.json
"$TOOL" eval policy.json log.bin >out.txt
cat >want.txt <<'EOF'
0 signed - /a.ko modsig=ok
1 signed - /k.ko modsig=ok
2 signed - /e.ko modsig=ok
3 fail unknown_key /e2.ko modsig=unknown_signer
4 signed - /s5.ko modsig=ok
5 fail unknown_key /u.ko modsig=unknown_signer
6 pass - /w.ko modsig=unknown_signer
7 fail bad_signature /t.ko modsig=bad_signature
8 fail bad_signature /c.ko modsig=bad_signature
9 signed - /sa.ko modsig=ok
10 fail bad_signature /sb.ko modsig=message_digest
summary passed=6 failed=5 excluded=0 signed=5 violations=0
EOF
diff -u want.txt out.txt || fail "per-entry outcomes differ"
ok "11 modsig entries (sign-file, openssl cms): RSA/EC, issuer+serial/SKID, sha256/512, attrs"
"$TOOL" eval policy.json log.bin.txt >out-ascii.txt
diff -u want.txt out-ascii.txt || fail "the ascii log judged otherwise"
ok "the ascii form of the same log gives the same outcomes"

# without keys: no signature can pass; the allowlist alone decides
jq '.ima.runtime |= del(.keys)' policy.json >nokeys.json
"$TOOL" eval nokeys.json log.bin >out2.txt
if [ "$(grep -c ' fail not_allowed ' out2.txt)" != 10 ] || ! grep -q '^6 pass - /w.ko ' out2.txt
then
        fail "without keys: $(cat out2.txt)"
fi
ok "without keys every modsig entry falls back to the allowlist (10 not_allowed, /w.ko passes)"

# cross-check with openssl cms -verify: the trusted signers as openssl sees them are c.pem (by
# issuer+serial or SKID) and, for the bare EC key, ecx.crt (same SKID, another issuer+serial)
cat c.pem ecx.crt >trust.pem
ours_ok=$(awk '$2 == "signed" { print $4 }' out.txt | sort | paste -sd' ')
ssl_ok=""
for m in "${mods[@]}"; do
        if openssl cms -verify -binary -inform DER -in "$m.p7" -content "$m.content" \
                -certfile trust.pem -CAfile trust.pem -noverify -purpose any \
                -out /dev/null 2>/dev/null; then
                ssl_ok+=" /$m.ko"
        fi
done
ssl_ok=$(tr ' ' '\n' <<<"$ssl_ok" | grep . | sort | paste -sd' ')
[ "$ours_ok" = "/a.ko /e.ko /k.ko /s5.ko /sa.ko" ] || fail "our signed entries: '$ours_ok'"
[ "$ssl_ok" = "$ours_ok" ] || fail "openssl cms -verify: ok '$ssl_ok'; ours: ok '$ours_ok'"
ok "openssl cms -verify agrees on all ${#mods[@]}: verified $ssl_ok, the others fail"
echo "all runtime modsig checks passed"
