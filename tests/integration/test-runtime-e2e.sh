#!/usr/bin/env bash
# ima.runtime end to end: the real agent against a real attestd (TLS, SQLite) on a real swtpm whose
# PCR 10 matches the agent's growing IMA log (the recorded qemu61-good boot, then ima-ng entries).
#  1. a runtime policy allowing the boot: the first round passes
#  2. two files appear, one outside the allowlist: the verdict fails naming its path, entry,
#     digest and reason, and the round judged only the 2 new entries
#  3. two allowed files later: the verdict still fails naming the same file (persisted results),
#     the counts grow by exactly the new entries
#  4. a new policy version allowing that file: the round is refused (runtime_policy_changed), the
#     replay restarts from entry 0 and the whole log passes under the new version
#  5. the same document PUT again (a new version): attest-agent --once asks a fresh challenge at
#     once and exits 0 with a pass, logs no warning or error, and attestd counts no error round
# Usage: test-runtime-e2e.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
EVGEN=$(realpath "$6")
agent_test_begin tpm2_pcrextend jq

# five files /usr/bin/tool-0..4 (same-size entries); add FROM TO appends entries [FROM, TO) to the
# agent's log and extends exactly those into PCR 10
"$EVGEN" gen files.bin files:5
esize=$(($(stat -c %s files.bin) / 5))
add() {
        dd if=files.bin of=inc.bin bs="$esize" skip="$1" count=$(($2 - $1)) status=none
        "$ATTESTCTL" ima hashes inc.bin | xargs -r -n 40 tpm2_pcrextend >/dev/null
        cat inc.bin >>ima.bin
}
digest() { "$ATTESTCTL" ima show --json files.bin | jq -r --arg p "$1" 'select(.name == $p) | .digest'; }

# policy VERSION-NOTE PATH...: "default" with ima.runtime allowing PATHs (critical data and
# boot_aggregate are judged by their own sections)
policy() {
        local d='{}' p
        for p; do d=$(jq -c --arg p "$p" --arg h "$(digest "$p")" '. + {($p): [$h]}' <<<"$d"); done
        api PUT /v1/policies/default \
                "$(jq -c '{ima: {require_boot_aggregate: true, runtime: {digests: ., violations: "fail", failures_max: 8}}}' <<<"$d")" "$ADMIN"
        [ "$status" = 200 ] || [ "$status" = 201 ] || fail "PUT the runtime policy: $status $body"
}

last_verdict() { # ID: the newest result's verdict in $v
        api GET "/v1/agents/$1/results?limit=1" "" "$READER"
        [ "$status" = 200 ] || fail "GET results: $status $body"
        v=$(jq -c '.results[0].verdict' <<<"$body")
}

host_verifier
api PUT /v1/policies/default \
        "$(jq -nc '{ima: {require_boot_aggregate: true, runtime: {digests: {"/usr/bin/tool-0": ["sha256:00"]}}}}')" "$ADMIN"
[ "$status" = 400 ] && [ "$(jq -r .error <<<"$body")" = policy_bad_hex ] ||
        fail "a malformed digest was not refused with its path: $status $body"
jq -e '.detail | contains("$.ima.runtime.digests[\"/usr/bin/tool-0\"][0]")' <<<"$body" >/dev/null ||
        fail "the error does not name the JSON path: $body"
ok "PUT refuses a malformed digest naming \$.ima.runtime.digests[\"/usr/bin/tool-0\"][0]"

# policy bodies up to POLICY_JSON_MAX (32 MiB, policy/policy.h): at the cap, one past it
cap=$((32 * 1024 * 1024))
doc='{"ima":{"runtime":{"excludes":["/tmp/.*"]}}}'
{ printf '{'; head -c $((cap - ${#doc})) /dev/zero | tr '\0' ' '; printf '%s' "${doc:1}"; } >cap.json
[ "$(stat -c %s cap.json)" = "$cap" ] || fail "cap.json is not $cap bytes"
api PUT /v1/policies/big @cap.json "$ADMIN"
expect 201 "" -- "PUT a policy body of exactly $cap bytes"
printf ' ' >>cap.json
api PUT /v1/policies/big @cap.json "$ADMIN"
expect 413 body_too_large -- "PUT a policy body of $cap + 1 bytes"
# a real-size allowlist: 100,000 paths, parsed and compiled once (the PUT), then cached
jq -nc '{ima: {runtime: {digests: ([range(100000)] | map({key: "/usr/lib/pkg-\(. / 16 | floor)/lib\(.).so.1",
        value: ["sha256:" + ("\(.)" | . + "0" * (64 - length))]}) | from_entries)}}}' >big.json
parses0=$(metric attestd_policy_parses_total)
rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$daemon_pid/status")
t0=$(date +%s%N)
api PUT /v1/policies/big @big.json "$ADMIN"
t1=$(date +%s%N)
expect 201 "" -- "PUT a 100,000-path runtime policy ($(stat -c %s big.json) bytes)"
rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$daemon_pid/status")
api GET /v1/policies/big "" "$READER"
expect 200 "" -- "GET it back" >/dev/null
[ "$(jq '.policy.ima.runtime.digests | length' <<<"$body" 2>/dev/null || jq '.ima.runtime.digests | length' <<<"$body")" = 100000 ] ||
        fail "GET /v1/policies/big does not hold the 100,000 paths"
[ $(($(metric attestd_policy_parses_total) - parses0)) = 1 ] || fail "the PUT parsed the policy more than once"
ok "100,000-path policy: PUT in $(((t1 - t0) / 1000000)) ms (parse, compile, store; this build), daemon RSS +$(((rss1 - rss0) / 1024)) MiB, parsed once"
policy /usr/bin/tool-0 /usr/bin/tool-2 /usr/bin/tool-3 /usr/bin/tool-4

# ---- 1. the boot passes ------------------------------------------------------------------------
echo "# 1. the recorded boot under a runtime policy"
start_agent a.log --state-dir st
wait_lines a.log '^<5>verdict: pass' 1 30
id=$(cat st/agent-id)
last_verdict "$id"
[ "$(jq -r '.runtime.failed' <<<"$v")" = 0 ] || fail "boot round: $v"
[ "$(jq -r '[.claims[] | select(.name == "ima.runtime")][0].result' <<<"$v")" = pass ] ||
        fail "no passing ima.runtime claim: $v"
ok "boot round passes: runtime $(jq -c '.runtime | del(.failures)' <<<"$v")"

# ---- 2. a file outside the allowlist -----------------------------------------------------------
echo "# 2. tool-0 (allowed) and tool-1 (not allowed) appear"
n=$(verdicts a.log)
wait_lines a.log '^<[56]>verdict: ' $((n + 1)) 10
add 0 2
wait_lines a.log '^<[3-6]>verdict: fail' 1 15
last_verdict "$id"
want1=$(digest /usr/bin/tool-1)
jq -e --arg d "$want1" '.status == "fail" and .ima.new_entries == 2 and .runtime.failed == 1 and
        .runtime.passed == 1 and (.runtime.failures | length) == 1 and
        .runtime.failures[0] == {entry: 7, path: "/usr/bin/tool-1", digest: $d, reason: "not_allowed"}' \
        <<<"$v" >/dev/null || fail "round with tool-1: $v"
jq -e '[.claims[] | select(.name == "ima.runtime")][0] | .result == "fail" and .entry == 7 and
        (.reason | contains("/usr/bin/tool-1"))' <<<"$v" >/dev/null ||
        fail "the ima.runtime claim does not name tool-1: $v"
grep -q 'pass -> fail (ima.runtime)' daemon.log || fail "no log line naming ima.runtime"
ok "verdict fails naming entry 7 /usr/bin/tool-1 $want1 not_allowed; 2 new entries judged"

# ---- 3. later rounds keep the failure ----------------------------------------------------------
echo "# 3. tool-2 and tool-3 (allowed) appear"
n=$(verdicts a.log)
add 2 4
wait_lines a.log '^<[56]>verdict: ' $((n + 2)) 15
last_verdict "$id"
jq -e '.status == "fail" and .runtime.failed == 1 and .runtime.passed == 3 and
        .runtime.failures[0].path == "/usr/bin/tool-1" and .ima.entries == 10' <<<"$v" >/dev/null ||
        fail "later round forgot tool-1 or miscounted: $v"
ok "later rounds still fail on /usr/bin/tool-1: runtime $(jq -c '.runtime | del(.failures)' <<<"$v")"

# ---- 4. a new policy version restarts the judgement from entry 0 --------------------------------
echo "# 4. the policy now allows tool-1"
policy /usr/bin/tool-0 /usr/bin/tool-1 /usr/bin/tool-2 /usr/bin/tool-3 /usr/bin/tool-4
wait_lines daemon.log 'runtime policy now default@2 \(was default@1\): replay restarts' 1 15
wait_lines a.log '^<5>verdict: pass' 2 20
stop_agent
last_verdict "$id"
jq -e '.status == "pass" and .policy == "default@2" and .ima.offset == 0 and .ima.entries == 10 and
        .runtime.failed == 0 and .runtime.passed == 4 and .runtime.failures == []' <<<"$v" >/dev/null ||
        fail "after the policy change: $v"
grep -q 'runtime_policy_changed' a.log || fail "the agent did not see runtime_policy_changed"
ok "policy default@2: refused once (runtime_policy_changed), then all 10 entries judged again and pass"

# ---- 5. an identical document is a new version too: not an error ------------------------------
echo "# 5. the same policy PUT again (default@3), one round with --once"
err0=$(metric 'attestd_attestations_total{result="error"}')
rs0=$(metric 'attestd_replay_resets_total{reason="runtime_policy"}')
policy /usr/bin/tool-0 /usr/bin/tool-1 /usr/bin/tool-2 /usr/bin/tool-3 /usr/bin/tool-4
rc=0
agent_cmd --state-dir st --once >once.json 2>once.log || rc=$?
[ $rc = 0 ] || fail "--once after the PUT exited $rc: $(cat once.log)"
grep -q '^<6>evidence: HTTP 409 runtime_policy_changed: .*asking a fresh challenge$' once.log ||
        fail "the refusal is not logged as information: $(cat once.log)"
if grep -q '^<[34]>' once.log; then fail "a warning or an error: $(grep '^<[34]>' once.log)"; fi
grep -q '^<[56]>verdict: pass$' once.log || fail "no pass verdict: $(cat once.log)"
[ "$(jq -r .policy once.json)" = default@3 ] || fail "verdict: $(jq -c '{status, policy}' once.json)"
[ "$(metric 'attestd_attestations_total{result="error"}')" = "$err0" ] ||
        fail "attestd counted an error round: $err0 -> $(metric 'attestd_attestations_total{result="error"}')"
[ "$(metric 'attestd_replay_resets_total{reason="runtime_policy"}')" = $((rs0 + 1)) ] ||
        fail "attestd_replay_resets_total{reason=runtime_policy} $rs0 -> $(metric 'attestd_replay_resets_total{reason="runtime_policy"}')"
ok "default@3 (the same document): --once asked a fresh challenge at once, exit 0, pass under default@3, no error counted"
stop_daemon TERM
echo "all runtime e2e checks passed"
