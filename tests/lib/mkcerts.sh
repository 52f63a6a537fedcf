#!/usr/bin/env bash
# mkcerts.sh DIR: a test CA and a server certificate for 127.0.0.1/localhost/::1 signed by it
# (DIR/ca.pem, DIR/server.pem, DIR/server.key), plus a second, unrelated CA (DIR/other-ca.pem)
# for wrong-CA tests and a client certificate (DIR/client.pem, DIR/client.key). P-256 keys.
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
[ -f server.pem ] && exit 0
gen() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
gen ca.key
openssl req -x509 -new -key ca.key -subj "/CN=attestd test CA" -days 30 -out ca.pem \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
gen other-ca.key
openssl req -x509 -new -key other-ca.key -subj "/CN=unrelated CA" -days 30 -out other-ca.pem \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
issue() { # NAME CN EXT
        gen "$1.key"
        openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr" 2>/dev/null
        printf '%s\n' "$3" >"$1.ext"
        openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
                -extfile "$1.ext" -out "$1.pem" 2>/dev/null
        rm -f "$1.csr" "$1.ext"
}
issue server 127.0.0.1 "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
extendedKeyUsage=serverAuth"
issue client attest-agent "extendedKeyUsage=clientAuth"
chmod 600 ./*.key
