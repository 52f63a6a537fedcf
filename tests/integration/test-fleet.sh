#!/usr/bin/env bash
# Operating a fleet (docs/operating.md) with the real agent, real attestd (TLS, SQLite), real swtpm:
#  1. host identity: the agent reports hostname, machine id and config labels at enrolment and
#     with each round; attestd stores them, shows them in agent objects, updates them on the next
#     round; the verdict (response and stored result) names the host; one log line per verdict
#     change naming host and failing claims
#  2. GET /v1/agents filters (?hostname=, ?label= AND, ?status=) and paging (?limit=, ?cursor=)
#     across pages with agents enrolled and deleted in between; hostile query strings -> 400
#     naming the parameter
#  3. metrics: attestd_build_info, per-claim failures, latency histogram per route (buckets
#     monotone, counts matching the requests made, no label from a client's path)
#  4. a failing agent that goes stale is still counted failing (and ?status=failing lists it);
#     one "stale" log line per transition
#  5. agent config label errors name the line; a malformed machine id is a clear error
# Usage: test-fleet.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
# (re-runs itself under SWTPM_RUN --ek-cert when no swtpm is given in SWTPM_TCTI)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread
boot_host

MID1=0123456789abcdef0123456789abcdef
MID2=fedcba9876543210fedcba9876543210

# host NAME LABEL...: this host's fake /proc (kernel release, host name), machine id and config
host() {
        local name=$1 l
        shift
        mkdir -p "proc-$name/sys/kernel"
        cp /proc/sys/kernel/osrelease "proc-$name/sys/kernel/osrelease"
        echo "$name" >"proc-$name/sys/kernel/hostname"
        : >"$name.conf"
        for l in "$@"; do echo "label = $l" >>"$name.conf"; done
}
# once NAME [ARGS...]: one round of host NAME's agent (state dir st-NAME); it must exit 0 or 1
once() {
        local name=$1 rc=0
        shift
        agent_cmd --config "$name.conf" --proc-root "proc-$name" --machine-id-file "mid-$name" \
                --state-dir "st-$name" --once "$@" >>"agent-$name.log" 2>&1 || rc=$?
        [ $rc -le 1 ] || { tail -5 "agent-$name.log" >&2; fail "agent $name exited $rc"; }
}
agent() { api GET "/v1/agents/$1" "" "$READER"; expect 200 "" -- "GET agent $1" >/dev/null; }
# ids QUERY: the ids GET /v1/agents?QUERY lists, sorted, space separated
ids() {
        api GET "/v1/agents?$1" "" "$READER"
        [ "$status" = 200 ] || fail "GET /v1/agents?$1: $status $body"
        jq -r '[.agents[].id] | sort | join(" ")' <<<"$body"
}
want_ids() { # QUERY IDS...
        local q=$1 got
        shift
        got=$(ids "$q")
        [ "$got" = "$(printf '%s\n' "$@" | sort | xargs)" ] || fail "?$q: got '$got', want '$*'"
        ok "?$q lists ${*:-nothing}"
}
bad_query() { # QUERY PARAMETER: 400 bad_query, the detail naming PARAMETER
        api GET "/v1/agents?$1" "" "$READER"
        expect 400 bad_query -- "?$1" >/dev/null
        [[ "$(jq -r .detail <<<"$body")" == *"$2"* ]] || fail "?$1: detail does not name $2: $body"
        ok "?${1:0:60}: 400 bad_query naming $2"
}

# ---- 1. host identity ---------------------------------------------------------------------------
echo "# 1. host identity at enrolment and each round"
# several agents share this one swtpm: with EK proofs the second would take over the first's
# identity (one live identity per EK, by design), so the verifier trusts AKs here
start_attestd --insecure-trust-ak --interval 600 --grace 600
host web-01 role=web dc=fra
echo "$MID1" >mid-web-01
once web-01
A=$(cat st-web-01/agent-id)
grep -q "agent $A host web-01 enrolled" daemon.log || fail "enrolment log names no host"
agent "$A"
[ "$(jq -c '[.hostname, .machine_id, .labels]' <<<"$body")" = \
        "[\"web-01\",\"$MID1\",{\"role\":\"web\",\"dc\":\"fra\"}]" ] || fail "identity: $body"
ok "agent object: hostname, machine_id, labels as reported"
api GET "/v1/agents/$A/results" "" "$READER"
[ "$(jq -r '.results[0].verdict.hostname' <<<"$body")" = web-01 ] ||
        fail "stored verdict names no host: $body"
grep -q "agent $A host web-01: first verdict pass, no policy bound (and none named default)$" daemon.log ||
        fail "no first-verdict line: $(grep "agent $A" daemon.log)"
ok "the stored verdict and the log name the host"
# the next round reports a new host name, machine id and labels: stored
echo web-01b >proc-web-01/sys/kernel/hostname
echo "$MID2" >mid-web-01
printf 'label = role=db\nlabel = tier=gold\n' >web-01.conf
once web-01
[ "$(cat st-web-01/agent-id)" = "$A" ] || fail "the agent enrolled again"
agent "$A"
[ "$(jq -c '[.hostname, .machine_id, .labels]' <<<"$body")" = \
        "[\"web-01b\",\"$MID2\",{\"role\":\"db\",\"tier\":\"gold\"}]" ] || fail "update: $body"
ok "the next round updated hostname, machine_id and labels"
[ "$(count daemon.log "agent $A host .*(-> |first verdict )pass")" = 1 ] || fail "a line for an unchanged verdict"
ok "no log line for an unchanged verdict"
echo web-01 >proc-web-01/sys/kernel/hostname
printf 'label = role=web\nlabel = dc=fra\n' >web-01.conf
once web-01

# the failing host: pass, then a policy it fails
host db-01 role=db dc=fra
echo "$MID1" >mid-db-01
once db-01
C=$(cat st-db-01/agent-id)
api PUT /v1/policies/strict '{"name":"strict","selinux":{"enforcing":false}}' "$ADMIN"
expect 201 "" -- PUT strict policy >/dev/null
api PUT "/v1/agents/$C/policy" '{"policy":"strict"}' "$ADMIN"
expect 200 "" -- bind strict >/dev/null
fails0=$(metric 'attestd_claim_failures_total{claim="selinux.enforcing"}')
once db-01
grep -q "agent $C host db-01: pass -> fail (selinux.enforcing), policy strict@1" daemon.log ||
        { grep "agent $C" daemon.log >&2; fail "no pass -> fail line naming the claim"; }
ok "pass -> fail logged with host and failing claim"
[ "$(metric 'attestd_claim_failures_total{claim="selinux.enforcing"}')" = $((fails0 + 1)) ] ||
        fail "per-claim counter did not count the failure"
[ "$(metric 'attestd_claim_failures_total{claim="cfi.enabled"}')" = 0 ] || fail "cfi counted"
ok "attestd_claim_failures_total counts by claim"

host web-02 role=web dc=ber
echo "$MID1" >mid-web-02
once web-02
B=$(cat st-web-02/agent-id)

# ---- 2. filters, paging, hostile queries --------------------------------------------------------
echo "# 2. filters and paging"
want_ids "hostname=web-01" "$A"
want_ids "hostname=web-0" # exact, not a prefix
want_ids "label=role=web" "$A" "$B"
want_ids "label=role=web&label=dc=fra" "$A"
want_ids "label=dc=fra&label=role=db" "$C"
want_ids "label=role=web&label=dc=nowhere"
want_ids "status=pass" "$A" "$B"
want_ids "status=fail" "$C"
want_ids "status=failing" "$C"
want_ids "status=stale"
want_ids "status=active" "$A" "$B" "$C"
want_ids "status=pass&label=role=web&hostname=web-02" "$B"
api GET /v1/agents "" "$READER"
[ "$(jq -r .next <<<"$body")" = null ] || fail "one page has a next cursor: $body"
# pages of 2 while agents come and go: every page in id order, no agent twice, each agent that
# lived through the whole walk listed once
more=()
for n in 1 2 3; do host "x$n"; echo "$MID1" >"mid-x$n"; once "x$n"; more+=("$(cat "st-x$n/agent-id")"); done
all=$(ids "limit=1000")
seen=() cursor="" pages=0 deleted="" added=""
while :; do
        api GET "/v1/agents?limit=2${cursor:+&cursor=$cursor}" "" "$READER"
        [ "$status" = 200 ] || fail "page: $status $body"
        mapfile -t page < <(jq -r '.agents[].id' <<<"$body")
        [ ${#page[@]} -le 2 ] || fail "page of ${#page[@]} > limit 2"
        seen+=("${page[@]}")
        cursor=$(jq -r '.next // empty' <<<"$body")
        pages=$((pages + 1))
        [ $pages -le 20 ] || fail "more than 20 pages"
        if [ $pages = 1 ]; then
                # delete the first agent listed and the last one, enrol one more
                deleted="${page[0]} $(tr ' ' '\n' <<<"$all" | tail -1)"
                for d in $deleted; do
                        api DELETE "/v1/agents/$d" "" "$ADMIN"
                        expect 204 "" -- "delete $d between pages" >/dev/null
                done
                host x4; echo "$MID1" >mid-x4; once x4; added=$(cat st-x4/agent-id)
        fi
        [ -n "$cursor" ] || break
done
printf '%s\n' "${seen[@]}" | LC_ALL=C sort -c || fail "pages not in id order: ${seen[*]}"
[ "$(printf '%s\n' "${seen[@]}" | sort | uniq -d)" = "" ] || fail "an agent listed twice: ${seen[*]}"
for x in $all; do
        case " $deleted " in *" $x "*) continue ;; esac
        printf '%s\n' "${seen[@]}" | grep -qx "$x" || fail "agent $x missing from the pages"
done
ok "$pages pages of 2 across deletes and an enrolment: in order, none twice, none missing"
[ -n "$added" ] || fail "x4 did not enrol"
# the cursor of a deleted agent still pages on (ids after it)
first_deleted=${deleted%% *}
cur=$(printf '%s' "$first_deleted" | od -An -tx1 | tr -d ' \n')
api GET "/v1/agents?limit=1000&cursor=$cur" "" "$READER"
[ "$status" = 200 ] || fail "cursor of a deleted agent: $status $body"
jq -e --arg d "$first_deleted" 'all(.agents[].id; . > $d)' <<<"$body" >/dev/null ||
        fail "the cursor does not start after its id: $body"
ok "a cursor stays valid after its agent was deleted"
api GET "/v1/agents?limit=1" "" "$READER"
{ [ "$(jq '.agents | length' <<<"$body")" = 1 ] && [ "$(jq -r .next <<<"$body")" != null ]; } ||
        fail "limit=1: $body"
ok "limit=1: one agent and a next cursor"

echo "# 2b. hostile query strings"
bad_query "cursor=zz" cursor
bad_query "cursor=$(head -c 300 /dev/zero | tr '\0' 'a')" cursor
bad_query "cursor=" cursor
bad_query "cursor=2e2e" cursor # ".." is not an id
bad_query "label=role" label
bad_query "label=role=" label
bad_query "label=Role=web" label
bad_query "label=role=web%27--" label
bad_query "label=a=1&label=b=2&label=c=3&label=d=4&label=e=5" "label: at most 4"
bad_query "status=bogus" status
bad_query "status=pass&status=fail" "status: given more than once"
bad_query "hostname=a&hostname=b" hostname
bad_query "hostname=x%27%20OR%201=1" hostname
bad_query "hostname=" hostname
bad_query "limit=0" limit
bad_query "limit=1001" limit
bad_query "limit=-1" limit
bad_query "limit=99999999999999999999999" limit
bad_query "colour=red" "colour"
api GET "/v1/agents?label=a=1&label=b=2&label=c=3&label=d=4&limit=1&status=pass&hostname=h&cursor=61&x=1" "" "$READER"
expect 400 bad_query -- "nine query parameters" >/dev/null
want_ids "label=a=1&label=b=2&label=c=3&label=d=4"

# ---- 3. metrics ---------------------------------------------------------------------------------
echo "# 3. build info, latency histogram"
curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" >m0.txt
grep -qE '^attestd_build_info\{version="[0-9][^"]*"\} 1$' m0.txt || fail "no attestd_build_info"
ok "attestd_build_info{version=...} 1"
L='route="/v1/agents",method="GET"'
n0=$(awk -v k="attestd_http_request_duration_seconds_count{$L}" '$1 == k { print $2 }' m0.txt)
for _ in 1 2 3 4 5 6 7; do api GET /v1/agents "" "$READER"; done
# hostile paths (answered 404 before any body byte, api-preflight.c): no new label values
for i in $(seq 20); do api GET "/x$RANDOM/$i/%2e%2e/evil%22label" "" "$READER"; done
curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" >m1.txt
n1=$(awk -v k="attestd_http_request_duration_seconds_count{$L}" '$1 == k { print $2 }' m1.txt)
[ "$n1" = $((n0 + 7)) ] || fail "GET /v1/agents count $n0 -> $n1 after 7 requests"
ok "latency count of GET /v1/agents grew by exactly the 7 requests made"
labels0=$(grep -c '^attestd_http_request_duration_seconds' m0.txt)
labels1=$(grep -c '^attestd_http_request_duration_seconds' m1.txt)
[ "$labels0" = "$labels1" ] || fail "series $labels0 -> $labels1: a client made label values"
ok "20 hostile paths made no new series ($labels1)"
# every histogram: buckets non-decreasing, +Inf equal to its count
awk '
/^attestd_http_request_duration_seconds_bucket/ {
        k = $1; sub(/,le="[^"]*"\}/, "}", k)
        if (k == prev && $2 + 0 < last + 0) { print "not monotone: " $0; bad = 1 }
        prev = k; last = $2
        if ($1 ~ /le="\+Inf"/) inf[k] = $2
}
/^attestd_http_request_duration_seconds_count/ {
        k = $1; sub(/_count/, "_bucket", k); cnt[k] = $2
}
END {
        for (k in cnt) if (inf[k] != cnt[k]) { print "+Inf != count: " k; bad = 1 }
        exit bad
}' m1.txt || fail "latency histogram inconsistent"
ok "latency buckets monotone, +Inf equal to each count"

# ---- 4. a failing agent that stops reporting stays failing ------------------------------------
echo "# 4. failing and stale"
stop_daemon
start_attestd -n stale -d "$work/stale.db" --insecure-trust-ak --interval 2 --grace 0
rm -rf st-db-01
once db-01
C=$(cat st-db-01/agent-id)
api PUT /v1/policies/strict '{"name":"strict","selinux":{"enforcing":false}}' "$ADMIN"
expect 201 "" -- PUT strict policy >/dev/null
api PUT "/v1/agents/$C/policy" '{"policy":"strict"}' "$ADMIN"
expect 200 "" -- bind strict >/dev/null
once db-01
for _ in $(seq 100); do
        agent "$C"
        [ "$(jq -r .stale <<<"$body")" = true ] && break
        nap 0.2
done
[ "$(jq -r .stale <<<"$body")" = true ] || fail "agent never went stale: $body"
ok "the failing agent stopped reporting and is stale"
[ "$(metric 'attestd_agents{state="failing"}')" = 1 ] || fail "failing+stale not counted failing"
[ "$(metric 'attestd_agents{state="stale"}')" = 0 ] || fail "failing agent counted stale too"
ok "attestd_agents{state=failing} 1 while it is stale (stale 0: each agent counted once)"
want_ids "status=failing" "$C"
want_ids "status=fail"
want_ids "status=stale" "$C"
# one stale line, however many scans run (one a second)
for _ in $(seq 100); do [ "$(count daemon.log "agent $C host db-01: stale")" -ge 1 ] && break; nap 0.1; done
sleep 3
[ "$(count daemon.log "agent $C host db-01: stale \(last verdict fail")" = 1 ] ||
        { grep "agent $C" daemon.log >&2; fail "stale logged $(count daemon.log "agent $C host db-01: stale") times, want 1"; }
ok "one log line when it went stale, none on later scans"
# a verdict re-arms it: reporting again, then silent again, logs stale once more
once db-01
for _ in $(seq 100); do [ "$(count daemon.log "agent $C host db-01: stale")" -ge 2 ] && break; nap 0.1; done
[ "$(count daemon.log "agent $C host db-01: stale")" = 2 ] || fail "no second stale line"
ok "stale again after a verdict: logged again"

# ---- 5. agent-side errors ------------------------------------------------------------------------
echo "# 5. config label errors, malformed machine id"
printf 'label = role=web\n# x\nlabel = Role=db\n' >bad.conf
rc=0
agent_cmd --config bad.conf --state-dir st-bad --once >bad.log 2>&1 || rc=$?
[ $rc = 2 ] || fail "bad label: exit $rc, want 2"
grep -q 'bad.conf:3: label: key: wants' bad.log || fail "label error names no line: $(cat bad.log)"
ok "a bad label key: exit 2, 'bad.conf:3: label: key: ...'"
printf 'label = role=web\nlabel = role=db\n' >dup.conf
rc=0
agent_cmd --config dup.conf --state-dir st-bad --once >dup.log 2>&1 || rc=$?
{ [ $rc = 2 ] && grep -q 'dup.conf:2: label: key role given twice' dup.log; } ||
        fail "duplicate label: exit $rc: $(cat dup.log)"
ok "a label key given twice names its line"
echo "0123456789ABCDEF0123456789abcdef" >mid-db-01
rc=0
agent_cmd --config db-01.conf --proc-root proc-db-01 --machine-id-file mid-db-01 \
        --state-dir st-db-01 --once >>agent-db-01.log 2>&1 || rc=$?
[ $rc = 2 ] || fail "a round with a malformed machine id: exit $rc, want 2"
grep -q "mid-db-01: not a machine id (32 lower-case hex digits" agent-db-01.log ||
        fail "malformed machine id: $(tail -3 agent-db-01.log)"
ok "a malformed machine id is an error naming the file"
rm -rf st-mid
rc=0
agent_cmd --machine-id-file mid-db-01 --state-dir st-mid --once >mid.log 2>&1 || rc=$?
{ [ $rc = 2 ] && grep -q "host identity: mid-db-01: not a machine id" mid.log; } ||
        fail "enrolment with a malformed machine id: exit $rc: $(cat mid.log)"
ok "enrolment with a malformed machine id: exit 2, naming the file"

sanitizer_check
echo "PASS"
