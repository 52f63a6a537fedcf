#!/usr/bin/env bash
# Policies are parsed once: a PUT parses the document once and the evaluation path
# takes the parsed policy from the cache, so N attestations against one policy parse it no more
# (attestd_policy_parses_total in /metrics); a PUT of a new version judges the very next round; a
# deleted policy judges no round after the DELETE; a restarted daemon parses the stored text once
# on its first miss. Real attestd over TLS, real quotes from swtpm. Run under tests/lib/swtpm-run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
: "${EVGEN:?EVGEN must name test-daemon-evgen}"
test_begin
cd "$work"

AKH=0x81010021
SEL="sha256:0,1,2,3,4,5,6,7,8,9,10"
N=20
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
flush
tpm2_evictcontrol -C o -c ak.ctx "$AKH" >/dev/null

token ADMIN admin
token READER reader
start_daemon

api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol
id=$(jq -r .id <<<"$body")

# round [TO]: challenge, quote, submit the entries from the agent's offset to TO (default: none
# new); sets $body to the verdict
round() {
        api POST "/v1/agents/$id/challenges"
        [ "$status" = 201 ] || fail "challenge: $status $body"
        local nonce offset
        nonce=$(jq -r .nonce <<<"$body")
        offset=$(jq -r .ima_offset <<<"$body")
        tpm2_quote -c "$AKH" -l "$SEL" -q "$nonce" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$SEL" >q.pcrs
        flush
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs log.bin "$offset" "${1:-$offset}" >ev.json
        api POST "/v1/agents/$id/evidence" @ev.json
        [ "$status" = 200 ] || fail "evidence: $status $body"
}
parses() { metric attestd_policy_parses_total; }
verdict_policy() { jq -r .policy <<<"$body"; }

"$EVGEN" gen log.bin boot kver:6.1.0 files:2
entries=$("$EVGEN" count log.bin)
"$EVGEN" extend log.bin 0 "$entries" | xargs -r -n 40 tpm2_pcrextend >/dev/null
round "$entries"
[ "$(jq -r .status <<<"$body")" = pass ] || fail "the first round: $body"
[ "$(verdict_policy)" = null ] || fail "no policy yet: $body"
[ "$(parses)" = 0 ] || fail "parses before any policy: $(parses)"

# --- a PUT parses once; N rounds parse no more
api PUT /v1/policies/default '{"kernel":{"versions":["6.1.*"]}}' "$ADMIN"
expect 201 "" -- PUT default
[ "$(parses)" = 1 ] || fail "the PUT parses once: $(parses)"
for _ in $(seq "$N"); do
        round
        [ "$(verdict_policy)" = default@1 ] || fail "judged by default@1: $body"
        [ "$(jq -r .status <<<"$body")" = pass ] || fail "kernel 6.1.0 passes 6.1.*: $body"
done
[ "$(parses)" = 1 ] || fail "$N rounds parsed the policy again: $(parses) parses"
[ "$(metric attestd_policy_cache_hits_total)" = "$N" ] ||
        fail "hits $(metric attestd_policy_cache_hits_total), want $N"
[ "$(metric attestd_policy_cache_misses_total)" = 0 ] || fail "misses after a PUT"
ok "$N rounds against one policy: 1 parse (the PUT's), $N cache hits"

# --- a new version judges the next round
api PUT /v1/policies/default '{"kernel":{"versions":["5.*"]}}' "$ADMIN"
expect 201 "" -- PUT default version 2
round
[ "$(verdict_policy)" = default@2 ] || fail "the next round uses version 2: $body"
[ "$(jq -r .status <<<"$body")" = fail ] || fail "kernel 6.1.0 fails 5.*: $body"
[ "$(parses)" = 2 ] || fail "version 2 parsed once, by its PUT: $(parses)"
ok "a PUT of version 2 judges the very next round"

# --- a deleted policy judges nothing
api DELETE /v1/policies/default "" "$ADMIN"
expect 204 "" -- DELETE default
[ "$(metric attestd_policy_cache_entries)" = 0 ] || fail "entries after DELETE"
round
[ "$(verdict_policy)" = null ] || fail "a deleted policy judged a round: $body"
[ "$(jq -r .status <<<"$body")" = pass ] || fail "no policy: pass on the quote: $body"
ok "a deleted policy is not served from the cache"

# --- a restart: the stored text is parsed once, on the first miss
api PUT /v1/policies/default '{"kernel":{"versions":["6.*"]}}' "$ADMIN"
expect 201 "" -- PUT default version 3
stop_daemon TERM
start_daemon
for _ in 1 2 3; do
        round
        [ "$(verdict_policy)" = default@3 ] || fail "judged by default@3 after a restart: $body"
done
[ "$(parses)" = 1 ] || fail "after a restart: one parse on the first miss, got $(parses)"
[ "$(metric attestd_policy_cache_misses_total)" = 1 ] || fail "one miss after a restart"
ok "after a restart the stored policy is parsed once for 3 rounds"
stop_daemon TERM
echo "# all policy cache checks passed"
