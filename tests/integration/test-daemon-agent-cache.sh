#!/usr/bin/env bash
# The agent rows and live policy versions a round reads come from the store's memory cache
# (no SQLite reads on the hot path); every write path keeps it coherent, so each admin
# change judges the very next round: decommission and readmit, bind-policy and unbind, a policy
# PUT and DELETE, an agent DELETE and a new enrolment under the same id; a round's own state (the
# IMA offset the next challenge asks from) follows each verdict; a restarted daemon continues from
# the stored state. Each check runs right after a round filled the cache. Real attestd over TLS,
# real quotes from swtpm. Run under tests/lib/swtpm-run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
: "${EVGEN:?EVGEN must name test-daemon-evgen}"
test_begin
cd "$work"

AKH=0x81010022
SEL="sha256:0,1,2,3,4,5,6,7,8,9,10"
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
flush
tpm2_evictcontrol -C o -c ak.ctx "$AKH" >/dev/null

token ADMIN admin
start_daemon

enrol() {
        api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
        expect 201 "" -- enrol
        id=$(jq -r .id <<<"$body")
}
enrol

# challenge: sets $nonce and $offset (fails unless 201)
challenge() {
        api POST "/v1/agents/$id/challenges"
        [ "$status" = 201 ] || fail "challenge: $status $body"
        nonce=$(jq -r .nonce <<<"$body")
        offset=$(jq -r .ima_offset <<<"$body")
}
# submit [TO]: quote over $nonce and post the entries from $offset to TO; $status and $body
submit() {
        tpm2_quote -c "$AKH" -l "$SEL" -q "$nonce" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$SEL" >q.pcrs
        flush
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs log.bin "$offset" "${1:-$offset}" >ev.json
        api POST "/v1/agents/$id/evidence" @ev.json
}
# round [TO]: challenge + submit, must answer 200
round() {
        challenge
        submit "$@"
        [ "$status" = 200 ] || fail "evidence: $status $body"
}
verdict() { jq -r '.status + " " + (.policy // "none")' <<<"$body"; }

"$EVGEN" gen log.bin boot kver:6.1.0 files:4
entries=$("$EVGEN" count log.bin)
half=$((entries / 2))
"$EVGEN" extend log.bin 0 "$half" | xargs -r -n 40 tpm2_pcrextend >/dev/null

# --- a verdict's own state: the next challenge asks from where the last verdict ended
round "$half"
[ "$(verdict)" = "pass none" ] || fail "the first round: $body"
"$EVGEN" extend log.bin "$half" "$entries" | xargs -r -n 40 tpm2_pcrextend >/dev/null
challenge
[ "$offset" = "$half" ] || fail "the next challenge asks from $offset, want $half"
submit "$entries"
[ "$status" = 200 ] || fail "second half: $status $body"
challenge
[ "$offset" = "$entries" ] || fail "after the second verdict the challenge asks from $offset"
ok "each verdict moves the cached offset: challenges ask from $half, then $entries"

# --- decommission refuses the very next round, at the challenge and at the evidence
round
challenge
api POST "/v1/agents/$id/decommission" "" "$ADMIN"
expect 200 "" -- decommission
submit
expect 403 agent_decommissioned -- evidence on a nonce taken before the decommission
api POST "/v1/agents/$id/challenges"
expect 403 agent_decommissioned -- the next challenge
api POST "/v1/agents/$id/readmit" "" "$ADMIN"
expect 200 "" -- readmit
round
[ "$(verdict)" = "pass none" ] || fail "after readmit: $body"
ok "decommission and readmit judge the very next round"

# --- bind-policy, a new version, unbind, DELETE
api PUT /v1/policies/strict '{"kernel":{"versions":["5.*"]}}' "$ADMIN"
expect 201 "" -- PUT strict
round
[ "$(verdict)" = "pass none" ] || fail "strict is not bound yet: $body"
api PUT "/v1/agents/$id/policy" '{"policy":"strict"}' "$ADMIN"
expect 200 "" -- bind strict
round
[ "$(verdict)" = "fail strict@1" ] || fail "bound strict@1 judges the next round: $body"
api PUT /v1/policies/strict '{"kernel":{"versions":["6.1.*"]}}' "$ADMIN"
expect 201 "" -- PUT strict version 2
round
[ "$(verdict)" = "pass strict@2" ] || fail "strict@2 judges the next round: $body"
api PUT "/v1/agents/$id/policy" '{"policy":null}' "$ADMIN"
expect 200 "" -- unbind
round
[ "$(verdict)" = "pass none" ] || fail "unbound: no policy, no default: $body"
api PUT /v1/policies/default '{"kernel":{"versions":["4.*"]}}' "$ADMIN"
expect 201 "" -- PUT default
round
[ "$(verdict)" = "fail default@1" ] || fail "a new default judges the next round: $body"
api DELETE /v1/policies/default "" "$ADMIN"
expect 204 "" -- DELETE default
round
[ "$(verdict)" = "pass none" ] || fail "a deleted default judges nothing: $body"
ok "bind, a new version, unbind, a new default and its DELETE each judge the very next round"

# --- an agent DELETE: the next round finds no agent; enrolling again starts from entry 0
challenge
api DELETE "/v1/agents/$id" "" "$ADMIN"
expect 204 "" -- DELETE agent
submit
expect 404 agent_not_found -- evidence after the agent was deleted
api POST "/v1/agents/$id/challenges"
expect 404 agent_not_found -- challenge after the agent was deleted
enrol
challenge
[ "$offset" = 0 ] || fail "a new enrolment asks from entry 0, not $offset"
submit "$entries"
[ "$status" = 200 ] || fail "the new enrolment's first round: $status $body"
ok "a deleted agent is not served from the cache; enrolled again it starts from 0"

# --- a restart continues from the stored state
api PUT "/v1/agents/$id/policy" '{"policy":"strict"}' "$ADMIN"
expect 200 "" -- bind strict again
round
[ "$(verdict)" = "pass strict@2" ] || fail "before the restart: $body"
stop_daemon TERM
start_daemon
challenge
[ "$offset" = "$entries" ] || fail "after a restart the challenge asks from $offset"
submit
[ "$status" = 200 ] || fail "after a restart: $status $body"
[ "$(verdict)" = "pass strict@2" ] || fail "after a restart: $body"
ok "a restarted daemon continues from the stored offset and binding"

# --- /metrics shows the cache at work: the restarted daemon's second round read the agent from
# it (the first lookup after the start missed and filled it)
round
api GET /metrics
metric() { awk -v n="$1" '$1 == n { print $2 }' <<<"$body"; }
hits=$(metric attestd_agent_cache_hits_total) misses=$(metric attestd_agent_cache_misses_total)
[ "${hits:-0}" -gt 0 ] && [ "${misses:-0}" -gt 0 ] && [ "$(metric attestd_agent_cache_entries)" = 1 ] ||
        fail "agent cache metrics: hits '$hits' misses '$misses': $(grep agent_cache <<<"$body")"
[ "$(metric attestd_store_wal_pages_total)" -gt 0 ] || fail "no WAL pages counted"
ok "/metrics: agent cache hits $hits, misses $misses, WAL pages $(metric attestd_store_wal_pages_total)"
# both evidence rounds since the restart took the agent row their challenge kept (rowstash.h),
# none read it; a replay of the last one finds no row kept for its nonce (taken), reads it, and
# is refused by the nonce's binding to the agent's last result
kept=$(metric 'attestd_evidence_rows_total{from="challenge"}')
read=$(metric 'attestd_evidence_rows_total{from="store"}')
[ "$kept" = 2 ] && [ "$read" = 0 ] || fail "evidence rows: kept '$kept', read '$read', want 2 and 0"
api POST "/v1/agents/$id/evidence" @ev.json
expect 409 nonce_reused -- "the last round's evidence again"
api GET /metrics
[ "$(metric 'attestd_evidence_rows_total{from="challenge"}')" = 2 ] &&
        [ "$(metric 'attestd_evidence_rows_total{from="store"}')" = 1 ] ||
        fail "evidence rows after the replay: $(grep evidence_rows <<<"$body")"
ok "the rounds since the restart used their challenge's row ($kept), the replay read one"
stop_daemon TERM
echo "# all agent cache checks passed"
