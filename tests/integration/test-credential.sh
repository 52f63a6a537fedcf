#!/usr/bin/env bash
# MakeCredential (evidence/credential.c) against a real TPM: a credential we wrap for swtpm's EK and
# the AK's Name is recovered by TPM2_ActivateCredential (tpm2-tools) — RSA and ECC EKs; wrapped for
# another AK or another TPM's EK, activation fails.
# Usage: test-credential.sh MKCRED SWTPM_RUN
set -euo pipefail
mkcred=$1 swtpm_run=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
bad() { echo "FAIL - $*"; fail=$((fail + 1)); }

activate() { # DIR CRED OUT: ActivateCredential with the EK policy session
        local d=$1
        tpm2_flushcontext -t >/dev/null 2>&1 || true
        tpm2_startauthsession --policy-session -S "$d/s.ctx" >/dev/null &&
                tpm2_policysecret -S "$d/s.ctx" -c e >/dev/null &&
                tpm2_activatecredential -c "$d/ak.ctx" -C "$d/ek.ctx" -i "$2" -o "$3" \
                        -P "session:$d/s.ctx" >/dev/null 2>&1
        local rc=$?
        tpm2_flushcontext "$d/s.ctx" >/dev/null 2>&1 || true
        return $rc
}

make_keys() { # DIR ALG
        local d=$1 alg=$2
        mkdir -p "$d"
        tpm2_flushcontext -t >/dev/null 2>&1 || true
        tpm2_createek -c "$d/ek.ctx" -G "$alg" -u "$d/ek.pub" >/dev/null
        tpm2_createak -C "$d/ek.ctx" -c "$d/ak.ctx" -G "$alg" -u "$d/ak.pub" -n "$d/ak.name" \
                >/dev/null
        tpm2_flushcontext -t >/dev/null 2>&1 || true
}

export -f activate make_keys
for alg in rsa ecc; do
        d=$work/$alg
        mkdir -p "$d"
        head -c 32 /dev/urandom >"$d/secret"
        SWTPM_WORK=$d ALG=$alg MKCRED=$mkcred "$swtpm_run" -- bash -c '
                set -e
                make_keys "$SWTPM_WORK/a" "$ALG"
                make_keys "$SWTPM_WORK/b" "$ALG"     # a second AK in the same TPM
                "$MKCRED" "$SWTPM_WORK/a/ek.pub" "$SWTPM_WORK/a/ak.name" "$SWTPM_WORK/secret" "$SWTPM_WORK/cred"
                if activate "$SWTPM_WORK/a" "$SWTPM_WORK/cred" "$SWTPM_WORK/got"; then echo activated >"$SWTPM_WORK/r1"; fi
                # wrapped for AK b, activated with AK a: the TPM must refuse
                "$MKCRED" "$SWTPM_WORK/a/ek.pub" "$SWTPM_WORK/b/ak.name" "$SWTPM_WORK/secret" "$SWTPM_WORK/cred-b"
                if activate "$SWTPM_WORK/a" "$SWTPM_WORK/cred-b" "$SWTPM_WORK/got-b"; then echo activated >"$SWTPM_WORK/r2"; fi
                cp "$SWTPM_WORK/a/ak.name" "$SWTPM_WORK/ak.name"
        '
        if [ -f "$d/r1" ] && cmp -s "$d/secret" "$d/got"; then ok "$alg: ActivateCredential recovers our secret"; else bad "$alg: activation of our credential"; fi
        if [ ! -f "$d/r2" ]; then ok "$alg: credential for another AK is refused"; else bad "$alg: credential for another AK activated"; fi
        # another TPM: its own EK and AK; our credential for TPM 1 must not activate there
        SWTPM_WORK=$d ALG=$alg "$swtpm_run" -- bash -c '
                set -e
                make_keys "$SWTPM_WORK/c" "$ALG"
                if activate "$SWTPM_WORK/c" "$SWTPM_WORK/cred" "$SWTPM_WORK/got-c"; then echo activated >"$SWTPM_WORK/r3"; fi
        '
        if [ ! -f "$d/r3" ]; then ok "$alg: credential for another TPM is refused"; else bad "$alg: another TPM activated it"; fi
done
# malformed inputs are rejected with a reason, not a crash
head -c 100 /dev/urandom >"$work/junk"
if "$mkcred" "$work/junk" "$work/rsa/ak.name" "$work/rsa/secret" "$work/x" 2>"$work/err"; then
        bad "junk EK accepted"
else
        grep -q cred_bad_ek "$work/err" && ok "junk EK rejected: $(cat "$work/err")" || bad "junk EK: $(cat "$work/err")"
fi
echo "credential: $pass passed, $fail failed"
[ $fail -eq 0 ]
