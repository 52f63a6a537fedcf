#!/usr/bin/env bash
# attestctl policy import-keylime, from-host --runtime and runtime-check on the real logs of
# tests/data: Keylime-format policies of ours (tests/data/keylime: sha1/sha256/sha384/sha512
# digests, excludes, keyrings, ima-buf, verification keys) import and pass their logs, and each
# defence is shown by the input that needs it (a changed digest, Python's prefix-match excludes,
# violations, ima-buf events, every refusal with its JSON path, the caps at cap-1/cap/cap+1);
# policies generated from a log pass it and fail exactly the path taken out; --rootfs hashes a
# directory without following links. Under tests/lib/swtpm-run with MKEVIDENCE, the same through
# verified evidence and attestctl policy check (the ima.runtime claim of the verdict).
# Usage: test-keylime-import.sh ATTESTCTL TOP [MKEVIDENCE]
set -euo pipefail
ctl=$(realpath "$1") top=$(realpath "$2") mkev=${3:+$(realpath "$3")}
data=$top/tests/data
tmp=$(mktemp -d /tmp/test-keylime-import.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
command -v jq >/dev/null || { echo "not ok: jq is not installed" >&2; exit 1; }
fail() { echo "FAIL: $*" >&2; exit 1; }
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }

# run EXPECTED-STATUS CMD...: the command's exit status must be EXPECTED-STATUS
run() {
        local want=$1 rc=0
        shift
        "$@" >out.txt 2>err.txt || rc=$?
        [ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want: $(head -c 600 err.txt)"
}

# ---- our Keylime-format policies import and pass their logs ----
for pair in tcb-sha256:qemu61-tcb ima-sha1:ima-sha1 custom-sha384:custom-fmt \
        sig-sha512:ima-sig-sha512; do
        pol=${pair%%:*} log=${pair#*:}
        run 0 "$ctl" policy import-keylime "$data/keylime/$pol.json" --name "$pol" -o "$pol.json"
        grep -q "boot_aggregate: 1 digests not carried" err.txt ||
                fail "$pol: boot_aggregate not named: $(cat err.txt)"
        run 0 "$ctl" policy validate "$pol.json"
        for f in ascii binary; do
                run 0 "$ctl" policy runtime-check "$pol.json" "$data/$log/${f}_runtime_measurements"
                grep -q " failed 0 " out.txt || fail "$pol on $log ($f): $(cat out.txt)"
        done
        ok "$pol imports, validates and passes $log (ascii and binary)"
done
# what the import wrote
jq -e '.name == "tcb-sha256" and .ima.require_boot_aggregate == true' tcb-sha256.json >/dev/null ||
        fail "tcb: name or require_boot_aggregate"
jq -e '.ima.runtime.digests["/init"] == ["98f6adebfc68a54aae35cc86f794ab8f9105d5cd2e2e767f320ffae2839b26ed"]
        and (.ima.runtime.digests | has("boot_aggregate") | not)
        and .ima.runtime.excludes == ["(?:/data/.*\\.txt$)[\\s\\S]*", "(?:/var/log/)[\\s\\S]*"]
        and .ima.runtime.keyrings == {".ima": ["'"$(printf 'a%.0s' {1..64})"'"]}
        and .ima.runtime.ignored_keyrings == [".builtin_trusted_keys"]
        and .ima.runtime.violations == {"allow": 1000000}
        and (.ima.runtime.ima_buf.kernel_version | length) == 1' tcb-sha256.json >/dev/null ||
        fail "tcb: runtime section: $(jq -c .ima.runtime tcb-sha256.json)"
jq -e '(.ima.runtime.digests["/init"][0] | length) == 40' ima-sha1.json >/dev/null || fail "sha1"
jq -e '(.ima.runtime.digests["/init"][0] | length) == 96' custom-sha384.json >/dev/null ||
        fail "sha384"
jq -e '(.ima.runtime.digests["/init"][0] | length) == 128 and (.ima.runtime.keys | length) == 2
        and (.ima.runtime.keys | all(startswith("-----BEGIN PUBLIC KEY-----")))' \
        sig-sha512.json >/dev/null || fail "sha512 / keys: $(jq -c .ima.runtime.keys sig-sha512.json)"
# the PEM keys are the DER keys of the Keylime keyring
jq -r '."verification-keys" | fromjson | .pubkeys[0]' "$data/keylime/sig-sha512.json" |
        base64 -d >k0.der
jq -r '.ima.runtime.keys[0]' sig-sha512.json | openssl pkey -pubin -outform DER -out k0b.der
cmp -s k0.der k0b.der || fail "the RSA key changed on the way"
ok "the written section: digests of each length, excludes, keyrings, ima_buf, keys, violations"

# keylime EDIT OUT: our tcb policy with a jq edit, imported to OUT (exit status checked by caller)
k=$data/keylime/tcb-sha256.json
edit() { jq "$1" "$k" >edited.json; }

# ---- each defence, by the input that needs it ----
# a digest Keylime does not list fails that entry, and only it
edit '.digests["/bin/hello.sh"] = ["'"$(printf '0%.0s' {1..63})1"'"]'
run 0 "$ctl" policy import-keylime edited.json -o p.json
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements" --entries
[ "$(grep -c . out.txt)" -eq 2 ] && grep -qx '15 digest_mismatch /bin/hello.sh' out.txt ||
        fail "changed digest: $(cat out.txt)"
ok "a changed digest fails exactly its entry (15 /bin/hello.sh)"

# Keylime matches excludes with re.match (from the start, any rest): "/data/" excludes /data/x
edit '.excludes = ["/data/"]'
run 0 "$ctl" policy import-keylime edited.json -o p.json
run 0 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements"
grep -q " failed 0 excluded 5 " out.txt || fail "prefix exclude: $(cat out.txt)"
edit '.excludes = []'
run 0 "$ctl" policy import-keylime edited.json -o p.json
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements" --entries
[ "$(grep -c not_allowed out.txt)" -eq 4 ] || fail "no exclude: $(cat out.txt)"
ok "excludes keep Python's prefix match ('/data/' excludes /data/sample.txt); without, 4 fail"

# Python's {,n} and \Z read the same in PCRE2 once translated; numbered groups are refused
edit '.excludes = ["/data/[a-z]{,10}\\.txt\\Z"]'
run 0 "$ctl" policy import-keylime edited.json -o p.json
jq -e '.ima.runtime.excludes == ["(?:/data/[a-z]{0,10}\\.txt\\z)[\\s\\S]*"]' p.json >/dev/null ||
        fail "translation: $(jq -c .ima.runtime.excludes p.json)"
run 0 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements"
grep -q " failed 0 " out.txt || fail "{,10} exclude: $(cat out.txt)"
ok "Python's {,n} and \\Z translated ({0,n}, \\z): the exclude still matches"

# violations: allowed as Keylime's default skips them; --violations fail fails both
run 0 "$ctl" policy import-keylime "$k" --violations fail -o p.json
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements" --entries
[ "$(grep -c ' violation ' out.txt)" -eq 2 ] || fail "violations fail: $(cat out.txt)"
run 2 "$ctl" policy import-keylime "$k" --violations 1000001 -o p.json
ok "--violations fail fails the 2 violation entries; a count above the cap is refused"

# ima-buf: an event Keylime does not list fails (its empty ima-buf fails every event too)
edit 'del(."ima-buf".kernel_version)'
run 0 "$ctl" policy import-keylime edited.json -o p.json
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements" --entries
grep -qx '1 buf_not_allowed kernel_version' out.txt || fail "ima-buf: $(cat out.txt)"
edit '."ima-buf" = {}'
run 0 "$ctl" policy import-keylime edited.json -o p.json
jq -e '.ima.runtime.ima_buf == {}' p.json >/dev/null || fail "empty ima-buf not carried"
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements"
grep -q " failed 9 " out.txt || fail "empty ima-buf: $(cat out.txt)"
ok "an unlisted ima-buf event fails; an empty ima-buf is carried and fails all 9"

# ---- refusals, each naming its JSON path (exit 1) ----
refuse() { # JQ-EDIT EXPECTED-STDERR-FRAGMENT
        edit "$1"
        run 1 "$ctl" policy import-keylime edited.json -o p.json
        grep -qF -- "$2" err.txt || fail "refusal of $1: $(cat err.txt)"
        [ ! -s p.json ] || [ "$(cat p.json)" = "" ] || true
}
rm -f p.json
refuse '.ima.dm_policy = {"rules":[]}' 'policy_bad_value: $.ima.dm_policy: device-mapper'
refuse '.digests["/init"] = ["98F6ADEBFC68A54AAE35CC86F794AB8F9105D5CD2E2E767F320FFAE2839B26ED"]' \
        'policy_bad_hex: $.digests["/init"][0]: not lowercase hex'
refuse '.digests["/init"] = ["'"$(printf 'a%.0s' {1..39})"'"]' \
        '$.digests["/init"][0]: 39 hex digits: Keylime'"'"'s schema takes 40-128'
refuse '.digests["/init"] = ["'"$(printf 'a%.0s' {1..130})"'"]' '$.digests["/init"][0]: 130 hex digits'
refuse '.digests["/init"] = ["md5:'"$(printf 'a%.0s' {1..32})"'"]' 'unknown algorithm prefix'
refuse '.digests["/init"] = []' '$.digests["/init"]: empty list'
refuse '.foo = 1' 'policy_unknown_field: $.foo'
refuse 'del(.excludes)' 'policy_missing_field: $.excludes'
refuse '.meta.version = 2' '$.meta.version: version 2'
refuse '.ima.log_hash_alg = "md5"' '$.ima.log_hash_alg'
refuse '.excludes = ["(a)\\1"]' '$.excludes[0]: a numbered back-reference'
refuse '.excludes = ["(unclosed"]' '$.excludes[0]: not a regex PCRE2 reads alike'
refuse '.excludes = [""]' '$.excludes[0]: an empty regex'
refuse '{"meta":{"version":1}, "hashes":{}}' 'a legacy Keylime allowlist'
refuse '."verification-keys" = "{\"keyids\":[1],\"pubkeys\":[\"'"$(base64 -w0 k0.der)"'\"]}"' \
        'recorded key id 0x00000001 is not the key'
refuse '."verification-keys" = "{\"keyids\":[],\"pubkeys\":[\"bm90IGEga2V5\"]}"' \
        'pubkeys[0]: not one DER SubjectPublicKeyInfo'
refuse '."verification-keys" = "not json"' '"verification-keys"]: the string is not JSON'
printf '{"meta":{"version":1,"generator":1},"meta":{}}' >edited.json
run 1 "$ctl" policy import-keylime edited.json -o p.json
grep -q 'policy_json: \$: invalid JSON.*duplicate' err.txt || fail "duplicate key: $(cat err.txt)"
ok "refused with the JSON path: dm_policy, uppercase/short/long digests, empty list, unknown and" \
        "missing fields, version 2, bad log_hash_alg, back-references, bad and empty regexes," \
        "legacy allowlists, a foreign key id, a non-key, non-JSON keys, duplicate keys"

# ---- what Keylime accepts and how it matches (its runtime-policy schema and _validate_ima_ng) ----
# a digest of 62 hex digits (Keylime's policy-unknown): its schema takes 40-128 digits, and such a
# digest matches no entry there (a log's digest has its algorithm's size); imported, not carried,
# named; a path left without digests is not carried either, and its entry fails as in Keylime
d62=$(printf '0%.0s' {1..60})ff
edit '.digests["/bin/hello.sh"] = ["'"$d62"'"] | .digests["/init"] += ["'"$d62"'"]'
run 0 "$ctl" policy import-keylime edited.json -o p.json
grep -qE 'note: \$\.digests\["/(bin/hello\.sh|init)"\]\[[01]\]: 62 hex digits name no algorithm: not carried' err.txt ||
        fail "62 digits: no note naming the digest: $(cat err.txt)"
grep -qF 'note: $.digests["/bin/hello.sh"]: no digest of a known algorithm'"'"'s length left' err.txt ||
        fail "62 digits: no note naming the emptied path: $(cat err.txt)"
grep -qF 'note: 2 digests of a length no algorithm has not carried' err.txt ||
        fail "62 digits: not counted: $(cat err.txt)"
jq -e '(.ima.runtime.digests | has("/bin/hello.sh") | not)
       and .ima.runtime.digests["/init"] == ["98f6adebfc68a54aae35cc86f794ab8f9105d5cd2e2e767f320ffae2839b26ed"]' \
        p.json >/dev/null || fail "62 digits: $(jq -c .ima.runtime.digests p.json)"
run 1 "$ctl" policy runtime-check p.json "$data/qemu61-tcb/binary_runtime_measurements" --entries
[ "$(grep -c . out.txt)" -eq 2 ] && grep -qx '15 not_allowed /bin/hello.sh' out.txt ||
        fail "62 digits on qemu61-tcb: $(cat out.txt)"
ok "a 62-digit digest (Keylime's policy-unknown) imports, is named and not carried; its path's entry fails, the rest pass"

# Keylime compares digests as hex whatever the algorithm: 64 digits serve sha256 and sm3 logs
# (Keylime's policy-sm3_256); attestd judges the algorithm, so --digest-alg sm3 says which
dsm3=$(printf 'sm3 file' | openssl dgst -sm3 -r 2>/dev/null | cut -d' ' -f1) || true
[ ${#dsm3} -eq 64 ] || dsm3=$(printf 'd%.0s' {1..64})
jq -n --arg d "$dsm3" '{meta: {version: 1, generator: 3}, release: 0,
        digests: {"/rootfs_data": [$d]}, excludes: [], keyrings: {},
        ima: {ignored_keyrings: [], log_hash_alg: "sha1", dm_policy: null}, "ima-buf": {},
        "verification-keys": ""}' >sm3-policy.json
# an ascii ima-ng log of one entry hashed with sm3, its sha1 template hash as the kernel computes it
python3 - "$dsm3" /rootfs_data >sm3.log <<'PY'
import hashlib, struct, sys
d, name = bytes.fromhex(sys.argv[1]), sys.argv[2]
fields = [b"sm3:\0" + d, name.encode() + b"\0"]
data = b"".join(struct.pack("<I", len(f)) + f for f in fields)
print("10 %s ima-ng sm3:%s %s" % (hashlib.sha1(data).hexdigest(), sys.argv[1], name))
PY
run 0 "$ctl" policy import-keylime sm3-policy.json -o p.json
grep -qF 'note: 1 digests of 64 hex digits read as sha256' err.txt &&
        grep -qF -- '--digest-alg sm3' err.txt || fail "no note on 64-digit digests: $(cat err.txt)"
run 1 "$ctl" policy runtime-check p.json sm3.log --entries
grep -qx '0 digest_mismatch /rootfs_data' out.txt || fail "sm3 log, sha256 policy: $(cat out.txt)"
run 0 "$ctl" policy import-keylime sm3-policy.json --digest-alg sm3 -o p.json
jq -e --arg d "sm3:$dsm3" '.ima.runtime.digests["/rootfs_data"] == [$d]' p.json >/dev/null ||
        fail "--digest-alg sm3: $(jq -c .ima.runtime.digests p.json)"
grep -qF 'note: 1 digests of 64 hex digits carried as sm3' err.txt || fail "sm3 note: $(cat err.txt)"
run 0 "$ctl" policy runtime-check p.json sm3.log --entries
grep -q " failed 0 " out.txt || fail "sm3 log, sm3 policy: $(cat out.txt)"
run 0 "$ctl" policy import-keylime "$k" --digest-alg sha256 -o p.json
jq -e '.ima.runtime.digests["/init"] == ["98f6adebfc68a54aae35cc86f794ab8f9105d5cd2e2e767f320ffae2839b26ed"]' \
        p.json >/dev/null || fail "--digest-alg sha256 changed the digests"
run 2 "$ctl" policy import-keylime sm3-policy.json --digest-alg sha1 -o p.json
grep -q 'digest-alg sha1: sha256 or sm3' err.txt || fail "--digest-alg sha1: $(cat err.txt)"
ok "64-digit digests: read as sha256 with a note (an sm3 log fails), --digest-alg sm3 writes sm3:HEX (it passes)"

# a flat allowlist (sha256sum's "HEX  PATH" lines) gets the conversion hint, as the JSON legacy
# form does; other text stays "invalid JSON"
printf '%s  /usr/bin/bash\n%s  /init\n' "$dsm3" "$dsm3" >flat.txt
run 1 "$ctl" policy import-keylime flat.txt -o p.json
grep -qF 'flat.txt: policy_bad_value: line 1 is "HEX PATH" (sha256sum'"'"'s format): a flat Keylime allowlist: convert it to a runtime policy with keylime_convert_runtime_policy -a FILE first' err.txt ||
        fail "flat allowlist: $(cat err.txt)"
printf '\n\n%s *data\n' "$d62" >flat2.txt
run 1 "$ctl" policy import-keylime flat2.txt -o p.json
grep -q 'a flat Keylime allowlist' err.txt || fail "flat allowlist, blank lines first: $(cat err.txt)"
printf 'hello world\n' >text.txt
run 1 "$ctl" policy import-keylime text.txt -o p.json
grep -q 'policy_json: \$: invalid JSON' err.txt || fail "plain text: $(cat err.txt)"
printf '%s\n' "$dsm3" >hexonly.txt
run 1 "$ctl" policy import-keylime hexonly.txt -o p.json
grep -q 'policy_json: \$: invalid JSON' err.txt || fail "a hex line without a path: $(cat err.txt)"
ok "a flat allowlist is named with keylime_convert_runtime_policy -a; other text is invalid JSON"

# ---- caps at cap-1, cap, cap+1 ----
for c in 63 64 65; do
        edit '.digests["/init"] = [range('"$c"') | tostring | ("0" * (64 - length)) + .]'
        want=0
        [ "$c" -le 64 ] || want=1
        run $want "$ctl" policy import-keylime edited.json -o p.json
done
grep -q '$.digests\["/init"\]: 65 digests > 64' err.txt || fail "list cap: $(cat err.txt)"
for c in 1023 1024 1025; do
        edit '.excludes = [range('"$c"') | "/x\(.)/"]'
        want=0
        [ "$c" -le 1024 ] || want=1
        run $want "$ctl" policy import-keylime edited.json -o p.json
done
grep -q '$.excludes: 1025 regexes > 1024' err.txt || fail "exclude cap: $(cat err.txt)"
# one regex: at most 1024 bytes once translated ("(?:" + R + ")[\s\S]*" adds 11)
for c in 1012 1013 1014; do
        edit '.excludes = ["'"$(head -c "$c" /dev/zero | tr '\0' a)"'"]'
        want=0
        [ "$c" -le 1013 ] || want=1
        run $want "$ctl" policy import-keylime edited.json -o p.json
done
grep -q 'longer than 1024 bytes once translated' err.txt || fail "regex cap: $(cat err.txt)"
ok "caps at cap-1, cap, cap+1: 64 digests a path, 1024 excludes, 1024 bytes a regex"

# ---- DSSE-signed policies (Keylime's envelope), --dsse-key ----
# Keylime signs with ECDSA and SHA-256 on every curve, DER signatures, over the DSSE v1 PAE
# ("DSSEv1" SP LEN(type) SP type SP LEN(payload) SP payload); payload and sig standard base64.
ptype=application/vnd.keylime+json
for c in P-256 P-384 P-521; do
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:$c -out "$c.key" 2>/dev/null
        openssl pkey -in "$c.key" -pubout -out "$c.pub"
done
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out other.key 2>/dev/null
openssl pkey -in other.key -pubout -out other.pub
openssl req -x509 -new -key P-384.key -subj /CN=dsse-test -days 1 -out P-384.crt 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
openssl pkey -in rsa.key -pubout -out rsa.pub
# pae TYPE PAYLOAD-FILE: the PAE bytes on stdout
pae() { printf 'DSSEv1 %d %s %d ' "${#1}" "$1" "$(stat -c %s "$2")" && cat "$2"; }
# sig KEY FILE [MD]: base64 DER ECDSA signature of FILE's bytes
sig() { openssl dgst "-${3:-sha256}" -sign "$1" "$2" | base64 -w0; }
# envelope PAYLOAD-FILE SIG...: Keylime's envelope (standard base64, keyid as its ecdsa signer's)
envelope() {
        local p=$1
        shift
        jq -cn --arg p "$(base64 -w0 "$p")" --arg t "$ptype" --args \
                '{payload: $p, payloadType: $t, signatures: [$ARGS.positional[] |
                {keyid: "0123abcd", sig: .}]}' "$@"
}
# dsse_refuse STATUS FRAGMENT ARGS...: import-keylime ARGS exits STATUS, stderr has FRAGMENT
dsse_refuse() {
        local want=$1 frag=$2
        shift 2
        rm -f p.json
        run "$want" "$ctl" policy import-keylime "$@" -o p.json
        grep -qF -- "$frag" err.txt || fail "import-keylime $*: $(cat err.txt)"
        [ ! -e p.json ] || fail "import-keylime $*: wrote p.json"
}
cp "$k" pl.json
pae "$ptype" pl.json >pae.bin
# the plain import, which each verified envelope must give byte for byte
run 0 "$ctl" policy import-keylime pl.json -o plain.json
for key in P-256 P-384 P-521; do
        envelope pl.json "$(sig "$key.key" pae.bin)" >"env-$key.json"
        run 0 "$ctl" policy import-keylime "env-$key.json" --dsse-key "$key.pub" -o signed.json
        cmp -s plain.json signed.json || fail "$key: the envelope's import differs from the plain one"
        grep -q "signature 0 verifies with --dsse-key $key.pub" err.txt || fail "$key: $(cat err.txt)"
done
run 0 "$ctl" policy import-keylime env-P-384.json --dsse-key P-384.crt -o signed.json
cmp -s plain.json signed.json || fail "certificate: the import differs"
# several keys: one verifying is enough; several signatures: one verifying is enough
run 0 "$ctl" policy import-keylime env-P-256.json --dsse-key other.pub --dsse-key P-384.pub \
        --dsse-key P-256.pub -o signed.json
grep -q "verifies with --dsse-key P-256.pub" err.txt || fail "third key: $(cat err.txt)"
envelope pl.json "$(sig other.key pae.bin)" "$(sig P-521.key pae.bin)" >env-two.json
run 0 "$ctl" policy import-keylime env-two.json --dsse-key P-521.pub -o signed.json
grep -q "signature 1 verifies" err.txt || fail "second signature: $(cat err.txt)"
cmp -s plain.json signed.json || fail "two signatures: the import differs"
# Keylime also reads URL-safe base64 and hex
jq '.payload |= (gsub("\\+"; "-") | gsub("/"; "_")) | .signatures[0].sig |= (gsub("\\+"; "-")
        | gsub("/"; "_"))' env-P-256.json >env-url.json
jq --arg p "$(od -An -v -tx1 pl.json | tr -d ' \n')" --arg s "$(sig P-256.key pae.bin |
        base64 -d | od -An -v -tx1 | tr -d ' \n')" '.payload = $p | .signatures[0].sig = $s' \
        env-P-256.json >env-hex.json
for e in url hex; do
        run 0 "$ctl" policy import-keylime "env-$e.json" --dsse-key P-256.pub -o signed.json
        cmp -s plain.json signed.json || fail "$e: the import differs"
done
# envelopes whose PAE Python built (tests/fuzz/corpus/dsse, checked by Keylime's own dsse.Verify
# when they were made): the PAE here is not just this test's printf agreeing with attestctl
seeds=$top/tests/fuzz/corpus/dsse
for e in p256-signed urlsafe hex second-sig-verifies; do
        run 0 "$ctl" policy import-keylime "$seeds/$e.json" --dsse-key "$seeds/key.pem" -o signed.json
        cmp -s plain.json signed.json || fail "seed $e: the import differs"
done
for e in tampered payload-only-sig; do
        dsse_refuse 1 "policy_bad_signature" "$seeds/$e.json" --dsse-key "$seeds/key.pem"
done
ok "DSSE envelopes signed with P-256, P-384 (key and certificate), P-521, several keys or" \
        "signatures, URL-safe and hex text: each imports exactly as the plain policy"

bad=policy_bad_signature
dsse_refuse 1 "$bad: \$.signatures: none of the 1 signatures verifies with the 1 key given" \
        env-P-256.json --dsse-key other.pub
dsse_refuse 1 "$bad: \$.signatures: none of the 1 signatures verifies with the 2 keys given" \
        env-P-256.json --dsse-key other.pub --dsse-key P-384.crt
# a payload changed after signing (one digest), the signature kept
jq '.digests["/init"] = ["'"$(printf '0%.0s' {1..64})"'"]' pl.json >pl2.json
jq --arg p "$(base64 -w0 pl2.json)" '.payload = $p' env-P-256.json >env-tampered.json
dsse_refuse 1 "$bad" env-tampered.json --dsse-key P-256.pub
# a valid signature of another policy's PAE
pae "$ptype" pl2.json >pae2.bin
envelope pl.json "$(sig P-256.key pae2.bin)" >env-other.json
dsse_refuse 1 "$bad" env-other.json --dsse-key P-256.pub
# signed without the PAE (the payload's bytes alone), with SHA-384 (Keylime: SHA-256 always), and
# over the PAE of another payloadType
envelope pl.json "$(sig P-256.key pl.json)" >env-nopae.json
dsse_refuse 1 "$bad" env-nopae.json --dsse-key P-256.pub
envelope pl.json "$(sig P-384.key pae.bin sha384)" >env-sha384.json
dsse_refuse 1 "$bad" env-sha384.json --dsse-key P-384.pub
pae application/json pl.json >pae3.bin
envelope pl.json "$(sig P-256.key pae3.bin)" >env-type.json
dsse_refuse 1 "$bad" env-type.json --dsse-key P-256.pub
# the payloadType changed: not Keylime's
jq '.payloadType = "application/vnd.in-toto+json"' env-P-256.json >env-tt.json
dsse_refuse 1 "policy_bad_value: \$.payloadType: not $ptype" env-tt.json --dsse-key P-256.pub
# no key given; a key given for a plain policy
dsse_refuse 1 "a DSSE-signed policy (payload, payloadType, signatures): give the key that signed" \
        env-P-256.json
dsse_refuse 1 "not a DSSE envelope" pl.json --dsse-key P-256.pub
# the payload verifies but is not a valid policy: the same strict checks as a plain file
jq '.digests["/init"] |= map(ascii_upcase)' pl.json >pl3.json
pae "$ptype" pl3.json >pae4.bin
envelope pl3.json "$(sig P-256.key pae4.bin)" >env-upper.json
dsse_refuse 1 'the verified payload: policy_bad_hex: $.digests["/init"][0]: not lowercase hex' \
        env-upper.json --dsse-key P-256.pub
ok "refused: a wrong key, a tampered payload, another payload's signature, no PAE, SHA-384," \
        "another payloadType (signed or edited), no --dsse-key, --dsse-key for a plain policy," \
        "a verified payload that is not a valid policy"

# malformed envelopes: each error names its JSON path
menv() { jq "$1" env-P-256.json >env-m.json; }
mrefuse() { # JQ-EDIT FRAGMENT
        menv "$1"
        dsse_refuse 1 "$2" env-m.json --dsse-key P-256.pub
}
mrefuse '.payload = "e30"' 'policy_bad_value: $.payload: not base64'
mrefuse '.payload = "e30=!"' 'policy_bad_value: $.payload: not base64'
mrefuse '.signatures[0].sig |= "!" + .[1:]' 'policy_bad_value: $.signatures[0].sig: not base64'
mrefuse '.signatures[0].sig |= .[:-1]' '$.signatures[0].sig: not base64'
mrefuse '.signatures[0].sig = ""' 'policy_bad_value: $.signatures[0].sig: empty'
mrefuse '.signatures = []' 'policy_bad_value: $.signatures: no signatures'
mrefuse '.signatures = {}' 'policy_type: $.signatures: not an array'
mrefuse '.signatures = [1]' 'policy_type: $.signatures[0]: not an object'
mrefuse 'del(.signatures[0].sig)' 'policy_missing_field: $.signatures[0].sig: missing'
mrefuse '.signatures[0].sig = 5' 'policy_type: $.signatures[0].sig: not a string'
mrefuse '.signatures[0].keyid = null' 'policy_type: $.signatures[0].keyid: not a string'
mrefuse '.signatures[0].cert = "x"' 'policy_unknown_field: $.signatures[0].cert: unknown field'
mrefuse '.extra = 1' 'policy_unknown_field: $.extra: unknown field'
mrefuse 'del(.payload)' 'policy_missing_field: $.payload: missing'
mrefuse 'del(.payloadType)' 'policy_missing_field: $.payloadType: missing'
mrefuse '.payload = 1' 'policy_type: $.payload: not a string'
# a duplicate field (the second payload would win in Python's json)
sed 's/^{"payload":/{"payload":"e30=","payload":/' env-P-256.json >env-m.json
dsse_refuse 1 'policy_json: $: invalid JSON' env-m.json --dsse-key P-256.pub
grep -q duplicate err.txt || fail "duplicate payload: $(cat err.txt)"
# a signed envelope inside an envelope
envelope env-P-256.json "$(pae "$ptype" env-P-256.json >pae5.bin && sig P-256.key pae5.bin)" \
        >env-nested.json
dsse_refuse 1 'the verified payload: policy_bad_value: $.payload: a DSSE envelope' \
        env-nested.json --dsse-key P-256.pub
ok "malformed envelopes refused with their JSON path: base64, empty/missing/typed fields," \
        "unknown fields, a duplicate payload, a nested envelope"

# keys: EC public keys or certificates only (Keylime signs with ECDSA alone), at most 8
dsse_refuse 2 '--dsse-key rsa.pub: not an EC key' env-P-256.json --dsse-key rsa.pub
dsse_refuse 2 '--dsse-key P-256.key: neither a PEM public key' env-P-256.json --dsse-key P-256.key
dsse_refuse 2 '--dsse-key pl.json: neither a PEM public key' env-P-256.json --dsse-key pl.json
dsse_refuse 2 'missing.pub' env-P-256.json --dsse-key missing.pub
eight=()
for i in 1 2 3 4 5 6 7; do eight+=(--dsse-key other.pub); done
run 0 "$ctl" policy import-keylime env-P-256.json "${eight[@]}" --dsse-key P-256.pub -o signed.json
grep -q "verifies with --dsse-key P-256.pub" err.txt || fail "eighth key: $(cat err.txt)"
dsse_refuse 2 '--dsse-key: at most 8 keys' env-P-256.json "${eight[@]}" --dsse-key P-256.pub \
        --dsse-key P-256.pub
ok "--dsse-key: RSA, a private key, not a key, a missing file refused (exit 2); 8 keys, not 9"

# caps at the cap and one past it: 16 signatures, a 512-byte signature (1024 hex digits), a
# keyid of 8192 bytes, the envelope of KEYLIME_JSON_MAX (256 MiB)
good=$(sig P-256.key pae.bin)
for c in 16 17; do
        sigs=()
        for ((i = 1; i < c; i++)); do sigs+=("$(sig other.key pae.bin)"); done
        envelope pl.json "${sigs[@]}" "$good" >env-c.json
        want=0
        [ "$c" -le 16 ] || want=1
        run $want "$ctl" policy import-keylime env-c.json --dsse-key P-256.pub -o signed.json
done
grep -qF 'policy_too_big: $.signatures: 17 signatures > 16' err.txt || fail "sigs: $(cat err.txt)"
for c in 512 513; do
        menv ".signatures[0].sig = \"$(head -c "$c" /dev/zero | tr '\0' '\377' | base64 -w0)\""
        want=$bad
        [ "$c" -le 512 ] || want='policy_too_big: $.signatures[0].sig: more than 512 bytes'
        dsse_refuse 1 "$want" env-m.json --dsse-key P-256.pub
done
for c in 1024 1026; do
        menv ".signatures[0].sig = \"$(head -c "$c" /dev/zero | tr '\0' a)\""
        want=$bad
        [ "$c" -le 1024 ] || want='policy_too_big: $.signatures[0].sig: 1026 characters'
        dsse_refuse 1 "$want" env-m.json --dsse-key P-256.pub
done
for c in 8192 8193; do
        menv ".signatures[0].keyid = \"$(head -c "$c" /dev/zero | tr '\0' k)\""
        want=0
        [ "$c" -le 8192 ] || want=1
        run $want "$ctl" policy import-keylime env-m.json --dsse-key P-256.pub -o signed.json
done
grep -qF 'policy_too_big: $.signatures[0].keyid: 8193 bytes > 8192' err.txt ||
        fail "keyid: $(cat err.txt)"
# the envelope at 256 MiB: a payload of our policy and spaces (192 MiB), the envelope padded
# with blanks to exactly the cap; it imports as the plain policy. One byte more is refused.
max=$((256 * 1024 * 1024))
python3 - pl.json "$max" <<'PY'
import base64, sys
pol, cap = open(sys.argv[1], "rb").read(), int(sys.argv[2])
head, tail = b'{"payload":"', b'","payloadType":"application/vnd.keylime+json","signatures":[{"sig":"'
# payload: the policy + blanks, its base64 leaving room for the rest (a sig of <= 96 base64 chars)
room = cap - len(head) - len(tail) - 96 - 8
n = room // 4 * 3 - len(pol)
open("big.json", "wb").write(pol + b" " * n)
PY
pae "$ptype" big.json >pae-big.bin
python3 - big.json "$(sig P-256.key pae-big.bin)" "$max" <<'PY'
import base64, sys
pl, s, cap = open(sys.argv[1], "rb").read(), sys.argv[2].encode(), int(sys.argv[3])
env = (b'{"payload":"' + base64.b64encode(pl) + b'","payloadType":"application/vnd.keylime+json",'
       b'"signatures":[{"sig":"' + s + b'"}]}')
assert len(env) <= cap
with open("env-cap.json", "wb") as f:
    f.write(env + b" " * (cap - len(env)))
with open("env-cap1.json", "wb") as f:
    f.write(env + b" " * (cap + 1 - len(env)))
PY
rm -f pae-big.bin
[ "$(stat -c %s env-cap.json)" -eq "$max" ] || fail "env-cap.json is not $max bytes"
run 0 "$ctl" policy import-keylime env-cap.json --dsse-key P-256.pub -o signed.json
cmp -s plain.json signed.json || fail "the 256 MiB envelope's import differs"
dsse_refuse 2 "larger than $max bytes" env-cap1.json --dsse-key P-256.pub
rm -f big.json env-cap.json env-cap1.json
ok "DSSE caps at the cap and one past: 16/17 signatures, 512/513-byte and 1024/1026-digit" \
        "signatures, 8192/8193-byte keyids, a 256 MiB envelope imports and 256 MiB + 1 does not"

# ---- from-host --runtime: a policy from a log passes it, and fails exactly a path taken out ----
for log in qemu61-tcb custom-fmt ima-sig-sha512; do
        lf=$data/$log/binary_runtime_measurements
        run 0 "$ctl" policy from-host --runtime --ima-log "$lf" --name "gen-$log"
        cp out.txt gen.json
        run 0 "$ctl" policy validate gen.json
        run 0 "$ctl" policy runtime-check gen.json "$lf"
        grep -q " failed 0 " out.txt || fail "$log: generated policy fails its log: $(cat out.txt)"
        run 0 "$ctl" policy runtime-check gen.json "$data/$log/ascii_runtime_measurements"
        # take /bin/hello.sh out: exactly its entries fail, as not allowed
        jq 'del(.ima.runtime.digests["/bin/hello.sh"])' gen.json >cut.json
        want=$(grep -c ' /bin/hello.sh' "$data/$log/ascii_runtime_measurements")
        run 1 "$ctl" policy runtime-check cut.json "$lf" --entries
        [ "$(grep -c . out.txt)" -eq $((want + 1)) ] &&
                [ "$(grep -c ' not_allowed /bin/hello.sh$' out.txt)" -eq "$want" ] ||
                fail "$log without /bin/hello.sh: $(cat out.txt)"
        ok "from-host --runtime on $log: passes its log; without /bin/hello.sh exactly its $want" \
                "entries fail"
done
# violations are allowed as many as the log had; an exclude leaves paths out and excludes them
run 0 "$ctl" policy from-host --runtime --ima-log "$data/qemu61-tcb/binary_runtime_measurements" \
        --exclude '/data/.*'
cp out.txt gen.json
jq -e '.ima.runtime.violations == {"allow": 2} and .ima.runtime.excludes == ["/data/.*"]
        and ([.ima.runtime.digests | keys[] | select(startswith("/data/"))] | length) == 0
        and (.ima | has("require_boot_aggregate") | not)' gen.json >/dev/null ||
        fail "from-host exclude/violations: $(jq -c .ima.runtime gen.json)"
run 0 "$ctl" policy runtime-check gen.json "$data/qemu61-tcb/binary_runtime_measurements"
jq '.ima.runtime.violations = "fail"' gen.json >cut.json
run 1 "$ctl" policy runtime-check cut.json "$data/qemu61-tcb/binary_runtime_measurements"
ok "from-host --exclude leaves /data out and excludes it; the log's 2 violations allowed"

# --rootfs: every regular file below DIR as "/" + its path; links never followed
mkdir -p root/usr/bin root/etc/deep/er
printf 'one\n' >root/usr/bin/tool
printf 'two\n' >root/etc/deep/er/conf
ln -s /etc/hostname root/usr/bin/link-out
ln -s ../../etc root/usr/bin/link-dir
mkfifo root/usr/bin/fifo
run 0 "$ctl" policy from-host --runtime --ima-log "$data/qemu61-tcb/binary_runtime_measurements" \
        --rootfs root --exclude '/etc/deep/er/.*'
cp out.txt gen.json
jq -e --arg t "sha256:$(sha256sum <root/usr/bin/tool | cut -c1-64)" \
        '.ima.runtime.digests["/usr/bin/tool"] == [$t]
        and (.ima.runtime.digests | has("/usr/bin/link-out") or has("/usr/bin/link-dir/deep/er/conf")
             or has("/usr/bin/fifo") or has("/etc/deep/er/conf") | not)
        and .ima.runtime.digests["/init"] != null' gen.json >/dev/null ||
        fail "--rootfs: $(jq -c '.ima.runtime.digests | keys' gen.json)"
grep -q '1 files hashed (sha256); skipped: 2 symbolic links' err.txt || fail "$(cat err.txt)"
run 0 "$ctl" policy from-host --runtime --ima-log "$data/qemu61-tcb/binary_runtime_measurements" \
        --rootfs root --rootfs-alg sha512
jq -e --arg t "sha512:$(sha512sum <root/etc/deep/er/conf | cut -c1-128)" \
        '.ima.runtime.digests["/etc/deep/er/conf"] == [$t]' out.txt >/dev/null || fail "sha512"
run 2 "$ctl" policy from-host --runtime --ima-log "$data/qemu61-tcb/binary_runtime_measurements" \
        --rootfs root --rootfs-max 1
grep -q 'more than 1 files' err.txt || fail "--rootfs-max: $(cat err.txt)"
ok "--rootfs hashes regular files only, follows no link, honours --exclude, --rootfs-alg, --rootfs-max"

# ---- through verified evidence: from-host EVIDENCE --runtime and policy check ----
if [ -n "$mkev" ]; then
        [ -n "${SWTPM_CTRL_PORT:-}" ] || fail "MKEVIDENCE given: run under tests/lib/swtpm-run"
        sel="sha256:0,1,2,3,4,5,6,7,8,9,10+sha1:10"
        tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
        tpm2_flushcontext -t >/dev/null
        tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
        tpm2_flushcontext -t >/dev/null
        tpm2_flushcontext -s >/dev/null
        tpm2_evictcontrol -C o -c ak.ctx 0x81010003 >/dev/null
        # the qemu61-tcb log extended into PCR 10 of a fresh boot, quoted
        tpm2_shutdown -c
        swtpm_ioctl --tcp "127.0.0.1:$SWTPM_CTRL_PORT" -i
        tpm2_startup -c
        # shellcheck disable=SC2046
        tpm2_pcrextend $("$mkev" extends "$data/qemu61-tcb/binary_runtime_measurements")
        nonce=$(openssl rand -hex 32)
        tpm2_quote -c 0x81010003 -l "$sel" -q "$nonce" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$sel" >q.pcrs
        "$mkev" json "$nonce" q.attest q.sig q.pcrs \
                "$data/qemu61-tcb/binary_runtime_measurements" kernel=6.1.192 >tcb-ev.json
        run 0 "$ctl" policy from-host tcb-ev.json --ak ak.pub --runtime --name lab
        cp out.txt lab.json
        jq -e '.ima.runtime.digests["/bin/hello.sh"] != null and .ima.runtime.violations ==
                {"allow": 2} and .selinux != null' lab.json >/dev/null ||
                fail "from-host --runtime: $(head -c 400 lab.json)"
        run 0 "$ctl" policy check lab.json tcb-ev.json --ak ak.pub --json
        jq -e '.status == "pass" and ([.claims[] | select(.name == "ima.runtime")][0].result
                == "pass")' out.txt >/dev/null || fail "lab on its own evidence: $(cat out.txt)"
        jq 'del(.ima.runtime.digests["/bin/hello.sh"])' lab.json >cut.json
        run 1 "$ctl" policy check cut.json tcb-ev.json --ak ak.pub --json
        jq -e '.status == "fail" and .runtime.failed == 1 and .runtime.failures[0].entry == 15 and
                .runtime.failures[0].path == "/bin/hello.sh" and
                .runtime.failures[0].reason == "not_allowed"' out.txt >/dev/null ||
                fail "lab without /bin/hello.sh: $(cat out.txt)"
        # the imported Keylime policy judges the same evidence (its boot_aggregate requirement
        # left out: this swtpm's PCR 0-9 are not the recorded firmware's)
        jq 'del(.ima.require_boot_aggregate)' tcb-sha256.json >kl.json
        run 0 "$ctl" policy check kl.json tcb-ev.json --ak ak.pub --json
        jq -e '.status == "pass" and .runtime.passed == 13 and .runtime.excluded == 5' out.txt \
                >/dev/null || fail "imported policy on the evidence: $(cat out.txt)"
        ok "through verified evidence: from-host --runtime passes, without /bin/hello.sh fails" \
                "entry 15 only; the imported Keylime policy passes"
fi

# usage errors
run 2 "$ctl" policy from-host --ima-log "$data/qemu61-tcb/binary_runtime_measurements"
run 2 "$ctl" policy import-keylime
run 2 "$ctl" policy import-keylime "$k" --name 'bad name'
run 2 "$ctl" policy runtime-check "$data/keylime/tcb-sha256.json"
ok "usage errors exit 2"
echo "all $n passed"
