#!/usr/bin/env bash
# Policy cost bounds (hostile round three, item 6), against a real attestd over TLS with real
# quotes from swtpm and a real SQLite store:
#  1. a submission whose paths make an exclude backtrack exponentially ("/opt/(\d+)+$" passes the
#     PUT probe, which builds its paths from the pattern's own characters, and blows up on
#     "/opt/1111...1!"): the stored verdict fails every such entry with exclude_match_limit or
#     exclude_budget_spent (none excluded, none passed), the log names the pattern, the allowed
#     and the excluded entries beside them are judged as before; attestd's CPU time for the
#     submission is printed (utime+stime from /proc, before and after)
#  2. PUT of a policy with a catastrophic exclude ((a+)+$, (a|aa)+b): 400 policy_bad_value naming
#     $.ima.runtime.excludes[i]; a polynomial one (.* twice): 201 with "warnings" naming it
#  3. the parsed-policy cache's bytes in /metrics (attestd_policy_cache_bytes) with
#     --policy-cache-bytes at its minimum: a second large policy evicts the first
# Run under tests/lib/swtpm-run with ATTESTD, TOP, EVGEN and ATTESTCTL in the environment.
# COST_ENTRIES (default 4000) sets the entries of step 1; COST_DAEMON_ARGS (default
# "--policy-cache-bytes 1048576") replaces attestd's extra flags (empty: to run step 1 against a
# daemon from before the fix, which prints its CPU time and then fails on the reason).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${EVGEN:?}" "${ATTESTCTL:?}"
: "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
test_begin
cd "$work"
N=${COST_ENTRIES:-4000}
if [ "$N" -lt 200 ] || [ "$N" -gt 100000 ]; then fail "COST_ENTRIES $N: want 200-100000"; fi
persist_ak 0x81010021

token ADMIN admin
token READER reader
read -ra daemon_args <<<"${COST_DAEMON_ARGS---policy-cache-bytes 1048576}"
start_daemon ${daemon_args[@]+"${daemon_args[@]}"}
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol the agent
id=$(jq -r .id <<<"$body")

# cpu: attestd's user+system CPU seconds so far
cpu() {
        awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$daemon_pid/stat"
}

echo "# 1. a submission that makes an exclude blow up"
# an ima-ng log (binary): /usr/bin/ok, /tmp/x, then N paths "/opt/" + 30 digits + "!"
python3 - "$N" <<'PY'
import hashlib, struct, sys
n = int(sys.argv[1])
def field(b):
    return struct.pack("<I", len(b)) + b
def entry(path, digest):
    data = field(b"sha256:\0" + digest) + field(path.encode() + b"\0")
    return (struct.pack("<I", 10) + hashlib.sha1(data).digest() + field(b"ima-ng") +
            field(data))
ok = bytes(range(32))
with open("log.bin", "wb") as f:
    f.write(entry("/usr/bin/ok", ok))
    f.write(entry("/tmp/x", bytes(32)))
    for i in range(n):
        f.write(entry("/opt/%030d!" % (int("1" * 30) - i), bytes([i & 0xff]) * 32))
PY
[ "$("$EVGEN" count log.bin)" = $((N + 2)) ] || fail "log.bin: $("$EVGEN" count log.bin) entries"
"$ATTESTCTL" ima hashes log.bin | xargs -r -n 40 tpm2_pcrextend >/dev/null
ok_hex=$(python3 -c 'print(bytes(range(32)).hex())')
# the exclude passes the probe: its own characters are "/opt" and "a", never a digit
api PUT /v1/policies/default "$(jq -nc --arg h "sha256:$ok_hex" '{ima: {runtime: {
        digests: {"/usr/bin/ok": [$h]}, excludes: ["/tmp/.*", "/opt/(\\d+)+$"],
        failures_max: 8}}}')" "$ADMIN"
expect 201 "" -- PUT a policy whose exclude passes the probe
[ "$(jq -r '.warnings // [] | length' <<<"$body")" = 0 ] || fail "warned: $body"

challenge
quote "$nonce"
"$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs log.bin 0 $((N + 2)) >ev.json
echo "# evidence: $(stat -c %s ev.json) bytes, $((N + 2)) entries"
before=$(cpu)
submit
after=$(cpu)
echo "# attestd CPU for the submission of $N blowing-up entries: $before -> $after s" \
        "($(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.2f", a - b }') s)"
expect 200 "" -- the evidence
[ "$(jq -r .status <<<"$body")" = fail ] || fail "the verdict is not fail: $body"
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
expect 200 "" -- the stored result
rt=$(jq -c '.results[0].verdict.runtime' <<<"$body")
[ "$(jq -r .failed <<<"$rt")" = "$N" ] || fail "failed: want $N: $rt"
[ "$(jq -r .excluded <<<"$rt")" = 1 ] || fail "excluded: want 1 (/tmp/x): $rt"
[ "$(jq -r .passed <<<"$rt")" = 1 ] || fail "passed: want 1 (/usr/bin/ok): $rt"
[ "$(jq -r '.failures[0].reason' <<<"$rt")" = exclude_match_limit ] ||
        fail "the first failure's reason: $rt"
[ "$(jq -r '.failures[0].path' <<<"$rt")" = "/opt/111111111111111111111111111111!" ] ||
        fail "the first failure's path: $rt"
[ "$(jq -r '[.failures[].reason] - ["exclude_match_limit", "exclude_budget_spent"] | length' \
        <<<"$rt")" = 0 ] || fail "another reason: $rt"
claim=$(jq -r '.results[0].verdict.claims[] | select(.name == "ima.runtime") | .reason' <<<"$body")
[[ $claim == *"exclude_match_limit"* ]] || fail "the claim does not say why: $claim"
grep -q 'exclude pattern 1 exceeded its match budget on entry 2: /opt/1111' daemon.log ||
        fail "the log does not name the pattern"
ok "$N entries: every one failed (exclude_match_limit, then exclude_budget_spent), none" \
        "excluded by the blow-up; /tmp/x excluded, /usr/bin/ok passed; claim: $claim"

echo "# 2. the PUT probe"
put_excludes() { # NAME JSON-ARRAY
        api PUT "/v1/policies/$1" "$(jq -nc --argjson e "$2" '{ima: {runtime: {excludes: $e}}}')" \
                "$ADMIN"
}
put_excludes bad1 '["/tmp/.*", "(a+)+$"]'
expect 400 policy_bad_value -- "(a+)+$"
[[ $(jq -r .detail <<<"$body") == '$.ima.runtime.excludes[1]: exceeds the match limit'* ]] ||
        fail "(a+)+\$: the detail does not name the path: $body"
put_excludes bad2 '["/var/log/.*", "/srv/.*", "(a|aa)+b"]'
expect 400 policy_bad_value -- "(a|aa)+b"
[[ $(jq -r .detail <<<"$body") == '$.ima.runtime.excludes[2]: '* ]] ||
        fail "(a|aa)+b: the detail does not name the path: $body"
api GET /v1/policies/bad1 "" "$READER"
expect 404 "" -- a refused policy is not stored
put_excludes slow '["/tmp/.*", "/var/.*/.*\\.log"]'
expect 201 "" -- a polynomial exclude
[[ $(jq -r '.warnings[0]' <<<"$body") == '$.ima.runtime.excludes[1]: exceeds the match limit'* ]] ||
        fail "no warning naming the polynomial exclude: $body"
[ "$(jq -r '.warnings | length' <<<"$body")" = 1 ] || fail "warnings: $body"
ok "catastrophic excludes refused naming \$.ima.runtime.excludes[i]; a polynomial one warned"

echo "# 3. the cache's byte cap"
big() { # NAME: a policy of 4,000 digests (about 0.7 MiB parsed, over half the 1 MiB cap)
        python3 -c '
import json, sys
d = {"/usr/bin/f%d" % i: ["sha256:" + "%064x" % i] for i in range(4000)}
print(json.dumps({"ima": {"runtime": {"digests": d}}}))' >big.json
        api PUT "/v1/policies/$1" @big.json "$ADMIN"
        expect 201 "" -- "PUT $1"
}
big big1
b1=$(metric attestd_policy_cache_bytes)
ev1=$(metric attestd_policy_cache_evictions_total)
if [ "$b1" -le 524288 ] || [ "$b1" -gt 1048576 ]; then fail "bytes after one big1: $b1"; fi
big big2
b2=$(metric attestd_policy_cache_bytes)
[ "$b2" -le 1048576 ] || fail "bytes $b2 over the 1 MiB cap"
[ "$(metric attestd_policy_cache_evictions_total)" -gt "$ev1" ] || fail "big2 evicted nothing"
api GET /v1/policies/big1 "" "$READER"
expect 200 "" -- big1 is still stored
ok "--policy-cache-bytes 1048576: $b1 bytes with big1, $b2 with big2 (big1 evicted)"
stop_daemon
