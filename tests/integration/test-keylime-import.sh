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
refuse '.digests["/init"] = ["'"$(printf 'a%.0s' {1..41})"'"]' '$.digests["/init"][0]: 41 hex digits'
refuse '.digests["/init"] = ["md5:'"$(printf 'a%.0s' {1..32})"'"]' 'unknown algorithm prefix'
refuse '.digests["/init"] = []' '$.digests["/init"]: empty list'
refuse '.foo = 1' 'policy_unknown_field: $.foo'
refuse 'del(.excludes)' 'policy_missing_field: $.excludes'
refuse '.meta.version = 2' '$.meta.version: version 2'
refuse '.ima.log_hash_alg = "md5"' '$.ima.log_hash_alg'
refuse '.excludes = ["(a)\\1"]' '$.excludes[0]: a numbered back-reference'
refuse '.excludes = ["(unclosed"]' '$.excludes[0]: not a regex PCRE2 reads alike'
refuse '.excludes = [""]' '$.excludes[0]: an empty regex'
refuse '{"payload":"e30=", "payloadType":"x", "signatures":[]}' '$.payload: a DSSE envelope'
refuse '{"meta":{"version":1}, "hashes":{}}' 'a legacy Keylime allowlist'
refuse '."verification-keys" = "{\"keyids\":[1],\"pubkeys\":[\"'"$(base64 -w0 k0.der)"'\"]}"' \
        'recorded key id 0x00000001 is not the key'
refuse '."verification-keys" = "{\"keyids\":[],\"pubkeys\":[\"bm90IGEga2V5\"]}"' \
        'pubkeys[0]: not one DER SubjectPublicKeyInfo'
refuse '."verification-keys" = "not json"' '"verification-keys"]: the string is not JSON'
printf '{"meta":{"version":1,"generator":1},"meta":{}}' >edited.json
run 1 "$ctl" policy import-keylime edited.json -o p.json
grep -q 'policy_json: \$: invalid JSON.*duplicate' err.txt || fail "duplicate key: $(cat err.txt)"
ok "refused with the JSON path: dm_policy, uppercase/odd/unknown digests, empty list, unknown and" \
        "missing fields, version 2, bad log_hash_alg, back-references, bad and empty regexes," \
        "DSSE, legacy allowlists, a foreign key id, a non-key, non-JSON keys, duplicate keys"

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
