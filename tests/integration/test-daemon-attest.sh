#!/usr/bin/env bash
# Attestation rounds against attestd with real quotes from swtpm over a synthetic IMA log whose
# entries the harness extended into PCR 10: pass; tampered, deleted and reordered entries fail
# with a reason and leave the replay state as it was; stale, reused and another agent's nonces
# and forged quotes are refused; three incremental rounds replay only the new entries (counted in
# /metrics); a simulated reboot restarts the replay from entry 0; kill -9 during a round loses no
# acknowledged result; history paging and retention. Run under tests/lib/swtpm-run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
: "${EVGEN:?EVGEN must name test-daemon-evgen}"
test_begin
cd "$work"

POLHASH=c128e15f74d3dcc1d830a3658a665b4790d6d5901fdc8ddd624d632b9f5689a8
persist_ak 0x81010021
tpm2_createak -C ek.ctx -c ak2.ctx -G ecc -g sha256 -s ecdsa -u ak2.pub >/dev/null
flush

token ADMIN admin
token READER reader
start_daemon --retain 50

api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol agent 1
id=$(jq -r .id <<<"$body")
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak2.pub)\"}" "$ADMIN"
expect 201 "" -- enrol agent 2
id2=$(jq -r .id <<<"$body")

# extend FROM TO: what the kernel does for entries [FROM, TO) of log.bin
extend() { "$EVGEN" extend log.bin "$1" "$2" | xargs -r -n 40 tpm2_pcrextend >/dev/null; }
# evidence NONCE FROM TO [MODE K] >ev.json (challenge, quote and submit: tests/lib/common.sh)
evidence() { "$EVGEN" evidence "$1" q.attest q.sig q.pcrs log.bin "$2" "$3" "${@:4}" >ev.json; }
# round FROM TO [MODE K]: challenge, quote, submit
round() {
        challenge
        [ "$offset" = "$1" ] || fail "challenge ima_offset $offset, want $1"
        quote "$nonce"
        evidence "$nonce" "$@"
        submit
}
replayed() { metric attestd_ima_entries_replayed_total; }
vstatus() { jq -r .status <<<"$body"; }
reason() { jq -r .reason.code <<<"$body"; }

# --- round 1: a whole boot log
"$EVGEN" gen log.bin boot sel:1 "hash:$POLHASH" kver:6.1.0 tk:tpm cfi:0 files:4
extend 0 10
round 0 10
expect 200 "" -- round 1 of a genuine log
[ "$(vstatus)" = pass ] || fail "round 1: $body"
[ "$(jq -r .ima.new_entries <<<"$body")" = 10 ] || fail "new_entries 10: $body"
[ -n "$(jq -r .next_due <<<"$body")" ] || fail "next_due: $body"
[ "$(replayed)" = 10 ] || fail "replayed after round 1: $(replayed)"
ok "round 1 passes, 10 entries replayed"

# --- rounds 2 and 3: only the new entries are replayed
"$EVGEN" gen log.bin files:5
extend 10 15
round 10 15
expect 200 "" -- round 2
[ "$(vstatus)" = pass ] || fail "round 2: $body"
[ "$(replayed)" = 15 ] || fail "replayed after round 2: $(replayed), want 15"
"$EVGEN" gen log.bin files:7
extend 15 22
round 15 22
expect 200 "" -- round 3
[ "$(vstatus)" = pass ] || fail "round 3: $body"
[ "$(jq -r .ima.entries <<<"$body")" = 22 ] || fail "entries 22: $body"
[ "$(replayed)" = 22 ] || fail "replayed after round 3: $(replayed), want 22"
ok "incremental: rounds 2 and 3 replayed 5 and 7 entries, nothing twice"

# --- a log that grew after the quote: the shortest matching prefix is accepted
"$EVGEN" gen log.bin files:2
extend 22 23
challenge
quote "$nonce"
extend 23 24
evidence "$nonce" 22 24
submit
expect 200 "" -- log grown between quote and read
[ "$(vstatus)" = pass ] || fail "grown log: $body"
[ "$(jq -r .ima.entries <<<"$body")" = 23 ] || fail "prefix kept at 23: $body"
round 23 24
[ "$(vstatus)" = pass ] || fail "after grown log: $body"

# --- tampered, deleted, reordered entries: fail with a reason; the state stays where it was
"$EVGEN" gen log.bin files:3
extend 24 27
for m in tamper:25 delete:25 swap:25; do
        round 24 27 "${m%%:*}" "${m#*:}"
        expect 200 "" -- "entry 25 ${m%%:*} judged"
        [ "$(vstatus)" = fail ] || fail "$m passed: $body"
        [ "$(reason)" != null ] || fail "$m without a reason: $body"
        ok "${m%%:*}: fail, reason $(reason): $(jq -r .reason.detail <<<"$body" | head -c 100)"
done
r=$(replayed)
round 24 27
[ "$(vstatus)" = pass ] || fail "genuine round after the failures: $body"
[ "$(jq -r .ima.new_entries <<<"$body")" = 3 ] || fail "3 new entries after failures: $body"
ok "failed rounds did not advance the replay state"
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -r .last_status <<<"$body")" = pass ] || fail "last_status: $body"
[ "$(jq -r .ima_offset <<<"$body")" = 27 ] || fail "ima_offset 27: $body"

# --- nonces: reused, another agent's, unknown, quote over another nonce, forged signature
"$EVGEN" gen log.bin files:1
extend 27 28
round 27 28
[ "$(vstatus)" = pass ] || fail "round before reuse: $body"
submit
expect 409 nonce_reused -- the same evidence twice
jq -c '.quote.colour = 1' ev.json >ev2.json
api POST "/v1/agents/$id/evidence" @ev2.json
expect 400 evidence_unknown_field -- evidence with an unknown field
[[ "$(jq -r .detail <<<"$body")" == *'$.quote.colour'* ]] || fail "path of the field: $body"
challenge "$id2"
n2=$nonce
quote "$n2"
evidence "$n2" 28 28
submit "$id"
expect 409 nonce_wrong_agent -- agent 2 nonce in agent 1 evidence
challenge
quote "$nonce"
evidence "$(openssl rand -hex 32)" 28 28
submit
expect 400 nonce_unknown -- a nonce never issued
challenge
old=$nonce
challenge
quote "$old"
evidence "$nonce" 28 28
submit
expect 422 quote_nonce -- quote over an older nonce
challenge
quote "$nonce"
sz=$(stat -c %s q.sig)
# flip every bit of one signature byte (writing a fixed byte left it as it was when it already
# had that value: 1 run in 256 sent the genuine signature)
b=$(od -An -tu1 -j $((sz - 10)) -N1 q.sig | tr -d ' ')
printf "\\x$(printf %02x $((b ^ 0xff)))" | dd of=q.sig bs=1 seek=$((sz - 10)) conv=notrunc 2>/dev/null
evidence "$nonce" 28 28
submit
expect 422 quote_signature -- forged signature
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -r .last_status <<<"$body")" = pass ] || fail "rejected evidence changed the agent"
ok "rejected evidence left the agent's status alone"
[ "$(metric 'attestd_attestations_total{result="error"}')" -ge 2 ] || fail "error counter"

# --- history: paging and the policy reference
api PUT /v1/policies/default '{"name":"default"}' "$ADMIN"
expect 201 "" -- a default policy
round 28 28
[ "$(jq -r .policy <<<"$body")" = default@1 ] || fail "verdict names the policy version: $body"
# the results row keeps the verdict without the head its columns hold (status, policy, time,
# next_due: docs/architecture.md §7); the history and the agent give back the text answered,
# byte for byte (jq -c keeps the members' order)
answered=$(jq -c 'del(.id)' <<<"$body")
rid=$(jq -r .id <<<"$body")
[ "$(jq -c 'keys_unsorted[1:5]' <<<"$body")" = '["status","policy","time","next_due"]' ] ||
        fail "the head first: $body"
stored=$(sqlite3 "$work/attestd.db" "SELECT verdict FROM results WHERE id = $rid")
[[ "$stored" == ',"claims":'* && "$stored" != *'"status"'* && "$stored" != *'"next_due"'* ]] ||
        fail "stored without its head: $stored"
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
[ "$(jq -c '.results[0].verdict' <<<"$body")" = "$answered" ] ||
        fail "history's verdict differs from the answer: $body vs $answered"
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -c '.last_verdict' <<<"$body")" = "$answered" ] ||
        fail "agent's last_verdict differs from the answer: $body vs $answered"
# a row holding its verdict whole (as written before the split) is given back as it is
sqlite3 "$work/attestd.db" "UPDATE results SET verdict = '{\"status\":\"pass\",\"old\":1}' WHERE id = $rid"
api GET "/v1/agents/$id/results?limit=1" "" "$READER"
[ "$(jq -c '.results[0].verdict' <<<"$body")" = '{"status":"pass","old":1}' ] ||
        fail "a whole stored verdict: $body"
sqlite3 "$work/attestd.db" "UPDATE results SET verdict = '$stored' WHERE id = $rid"
ok "the row keeps the verdict without its head; history and agent give back the answered text"
api GET "/v1/agents/$id/results?limit=3" "" "$READER"
expect 200 "" -- results page 1
[ "$(jq '.results | length' <<<"$body")" = 3 ] || fail "3 results: $body"
[ "$(jq -r '.results[0].policy' <<<"$body")" = default@1 ] || fail "newest first: $body"
before=$(jq -r .next_before <<<"$body")
api GET "/v1/agents/$id/results?limit=3&before=$before" "" "$READER"
expect 200 "" -- results page 2
[ "$(jq -r '.results[0].id' <<<"$body")" -lt "$before" ] || fail "paging: $body"
total=$(curl -s --cacert "$CA" -H "Authorization: Bearer $READER" \
        "https://127.0.0.1:$port/v1/agents/$id/results?limit=1000" | jq '.results | length')

# --- kill -9 during a round (at several moments): an acknowledged result is never lost, the
# history and the replay state agree, and the replay continues incrementally after the restart
cur=28 end=28 hist=$total
for delay in 0.002 0.01 0.03 0.06; do
        "$EVGEN" gen log.bin files:300
        extend "$end" $((end + 300))
        end=$((end + 300))
        challenge
        [ "$offset" = "$cur" ] || fail "offset $offset before the kill, want $cur"
        quote "$nonce"
        evidence "$nonce" "$cur" "$end"
        curl -s --cacert "$CA" -o killed.out -w '%{http_code}' -H 'Content-Type: application/json' \
                --data-binary @ev.json "https://127.0.0.1:$port/v1/agents/$id/evidence" \
                >killed.status &
        cpid=$!
        sleep "$delay"
        kill -9 "$daemon_pid"
        wait "$daemon_pid" 2>/dev/null || true
        daemon_pid=""
        wait $cpid || true
        start_daemon --retain 50
        api GET "/v1/agents/$id/results?limit=1000" "" "$READER"
        after=$(jq '.results | length' <<<"$body")
        api GET "/v1/agents/$id" "" "$READER"
        off=$(jq -r .ima_offset <<<"$body")
        if [ "$(cat killed.status)" = 200 ]; then
                [ "$after" = $((hist + 1)) ] || fail "acknowledged result lost: $hist -> $after"
        fi
        if [ "$after" = $((hist + 1)) ]; then
                [ "$off" = "$end" ] || fail "result stored but state at $off, want $end"
                cur=$end
        else
                [ "$after" = "$hist" ] || fail "history $hist -> $after"
                [ "$off" = "$cur" ] || fail "no result but state moved to $off"
        fi
        hist=$after
        ok "kill -9 after ${delay}s (response $(cat killed.status)): history $after, offset $off, consistent"
done
[ "$(replayed)" = 0 ] || fail "fresh process counter"
from=$cur
"$EVGEN" gen log.bin files:2
extend "$end" $((end + 2))
end=$((end + 2))
round "$from" "$end"
expect 200 "" -- round after the restarts
[ "$(vstatus)" = pass ] || fail "after restart: $body"
[ "$(replayed)" = $((end - from)) ] || fail "restart replayed $(replayed), want $((end - from))"
ok "after restart only the $((end - from)) entries not yet verified were replayed"

# --- a stored replay state attestd cannot decode (a corrupt row, another version's format): the
# challenge asks for the log from entry 0, the round replays it whole and stores a good state
# again. Before, the challenge handed out the row's offset, the evidence round (replaying from 0)
# refused it with 409, and the agent was sent the same offset for ever.
stop_daemon
sqlite3 attestd.db "UPDATE agents SET replay_state = X'00ff' WHERE id = '$id'"
[ "$(sqlite3 attestd.db "SELECT ima_offset FROM agents WHERE id = '$id'")" = "$end" ] ||
        fail "the corrupted row keeps its offset"
start_daemon --retain 50
r0=$(replayed)
challenge
[ "$offset" = 0 ] || fail "challenge over an unusable state: ima_offset $offset, want 0"
quote "$nonce"
evidence "$nonce" 0 "$end"
submit
expect 200 "" -- round over an unusable stored state
[ "$(vstatus)" = pass ] || fail "after the corrupt state: $body"
[ "$(replayed)" = $((r0 + end)) ] || fail "replayed $(replayed), want $((r0 + end))"
grep -q "stored replay state unusable" "$work/daemon.log" || fail "no warning in the log"
"$EVGEN" gen log.bin files:1
extend "$end" $((end + 1))
round "$end" $((end + 1))
expect 200 "" -- incremental round after the state was rebuilt
[ "$(vstatus)" = pass ] || fail "incremental after rebuild: $body"
end=$((end + 1))
ok "an undecodable stored state: the log is asked from entry 0, replayed whole, then incremental"

# --- reboot: resetCount changes, the old offset is refused, the replay restarts at 0
tpm2_shutdown -c
swtpm_ioctl --tcp "127.0.0.1:$SWTPM_CTRL_PORT" -i
tpm2_startup -c
rm -f log.bin
"$EVGEN" gen log.bin boot sel:1 "hash:$POLHASH" kver:6.1.0 files:3
extend 0 7
challenge
quote "$nonce"
evidence "$nonce" 0 7
# the agent still believes in its old offset: forge that by rewriting the offset
jq -c --argjson o "$end" '.ima.offset = $o' ev.json >ev2.json && mv ev2.json ev.json
submit
expect 409 ima_offset_reboot -- old offset after a reboot
r0=$(replayed)
round 0 7
expect 200 "" -- first round after reboot
[ "$(vstatus)" = pass ] || fail "after reboot: $body"
[ "$(jq -r .ima.rebooted <<<"$body")" = true ] || fail "rebooted flag: $body"
[ "$(replayed)" = $((r0 + 7)) ] || fail "reboot replay: $(replayed)"
ok "reboot: replay restarted from entry 0"

# --- policies: each violation fails with the claim that says why
claim() { jq -r --arg n "$1" '[.claims[] | select(.name == $n) | .result] | first // "absent"' <<<"$body"; }
putpol() { # NAME JSON: a new version; sets $ver
        api PUT "/v1/policies/$1" "$2" "$ADMIN"
        [ "$status" = 201 ] || fail "PUT policy $1: $status $body"
        ver=$(jq -r .version <<<"$body")
}
sel='"selinux":{"initialized":true,"enforcing":true,"policy_sha256":["'$POLHASH'"],"never_permissive":true}'
tk='"trusted_keys":{"sources":["tpm"],"anchored":true}'
cfi='"cfi":{"enabled":true,"permissive":false,"anchored":true}'
kern='"kernel":{"versions":["6.1.*"]}'
api PUT /v1/policies/prod '{"selinux":{"colour":1}}' "$ADMIN"
expect 400 policy_unknown_field -- policy with an unknown field
[[ "$(jq -r .detail <<<"$body")" == *'$.selinux.colour'* ]] || fail "policy error path: $body"
putpol prod "{$sel,$tk,$kern}"
api PUT "/v1/agents/$id/policy" '{"policy":"prod"}' "$ADMIN"
expect 200 "" -- bind prod
round 7 7
[ "$(vstatus)" = fail ] || fail "no trusted-keys entry passed: $body"
[ "$(claim trusted_keys.source)" = missing ] || fail "trusted_keys.source: $body"
[ "$(claim selinux.enforcing)" = pass ] || fail "selinux.enforcing: $body"
[ "$(jq -r .policy <<<"$body")" = "prod@$ver" ] || fail "policy ref: $body"
ok "missing trusted-keys entry: fail, trusted_keys.source missing (prod@$ver)"
"$EVGEN" gen log.bin tk:tpm cfi:0
extend 7 9
putpol prod "{$sel,$tk,$cfi,$kern}"
round 7 9
[ "$(vstatus)" = pass ] || fail "full policy on a good log: $body"
[ "$(claim cfi.permissive)" = pass ] || fail "cfi.permissive: $body"
ok "every section of prod@$ver passes on the good log"
putpol prod "{${sel/$POLHASH/$(printf 'ab%.0s' $(seq 32))},$tk,$cfi,$kern}"
round 9 9
[ "$(vstatus)" = fail ] || fail "unknown policy hash passed: $body"
[ "$(claim selinux.policy_sha256)" = fail ] || fail "selinux.policy_sha256: $body"
ok "unknown SELinux policy hash: fail, selinux.policy_sha256"
putpol prod "{$sel,$tk,$cfi,$kern}"
"$EVGEN" gen log.bin cfi:1
extend 9 10
round 9 10
[ "$(vstatus)" = fail ] || fail "CFI permissive passed: $body"
[ "$(claim cfi.permissive)" = fail ] || fail "cfi.permissive: $body"
ok "CFI permissive: fail, cfi.permissive"
putpol prod "{$sel,$tk,$kern}"
"$EVGEN" gen log.bin sel:0 sel:1
extend 10 12
round 10 12
[ "$(vstatus)" = fail ] || fail "enforcing=0 in the history passed: $body"
[ "$(claim selinux.never_permissive)" = fail ] || fail "never_permissive: $body"
[ "$(claim selinux.enforcing)" = pass ] || fail "latest state enforcing: $body"
ok "enforcing=0 in the history: fail, selinux.never_permissive (latest state enforcing)"
[ "$(metric 'attestd_attestations_total{result="fail"}')" -ge 4 ] || fail "fail counter"

# --- two submissions of one agent at once: one verdict, the other refused, no mixed state
"$EVGEN" gen log.bin files:2
extend 12 14
challenge
na=$nonce
quote "$na"
evidence "$na" 12 14
mv ev.json eva.json
challenge
nb=$nonce
quote "$nb"
evidence "$nb" 12 14
mv ev.json evb.json
cpids=()
for x in a b; do
        curl -s --cacert "$CA" -o "conc-$x.out" -w '%{http_code}' -H 'Content-Type: application/json' \
                --data-binary "@ev$x.json" "https://127.0.0.1:$port/v1/agents/$id/evidence" \
                >"conc-$x.status" &
        cpids+=($!)
done
wait "${cpids[@]}"
codes=$( (cat conc-a.status; echo; cat conc-b.status; echo) | sort | tr '\n' ' ')
[ "$codes" = "200 409 " ] || fail "concurrent submissions: $codes $(cat conc-*.out)"
refused=$(cat conc-a.out conc-b.out | jq -r 'select(.error) | .error')
# the loser learns that another round came first: from the store's seq check (agent_busy), its
# replay or quote checks against the new state, or its nonce, which the winner's verdict made
# stale when the loser's round read the agent after it (nonce_reused)
[[ "$refused" =~ ^(agent_busy|ima_offset_mismatch|quote_clock_rewind|nonce_reused)$ ]] ||
        fail "refusal code: $refused"
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -r .ima_offset <<<"$body")" = 14 ] || fail "state after the race: $body"
ok "concurrent submissions: one verdict, the other 409 $refused"

# --- stale nonce: a short TTL
stop_daemon TERM
start_daemon --retain 5 --nonce-ttl 1
challenge
quote "$nonce"
evidence "$nonce" 14 14
sleep 1.3
submit
expect 410 nonce_expired -- nonce past its TTL
# the next round under the default TTL: a 1 s TTL would also expire a fresh round's nonce on a
# loaded machine (challenge, swtpm quote and evidence in under a second)
stop_daemon TERM
start_daemon --retain 5
round 14 14
[ "$(jq -r .status <<<"$body")" != null ] || fail "round with a fresh nonce: $body"
api GET "/v1/agents/$id/results?limit=1000" "" "$READER"
[ "$(jq '.results | length' <<<"$body")" = 5 ] || fail "retention 5: $(jq '.results | length' <<<"$body")"
ok "retention keeps the newest 5 results"
stop_daemon TERM
echo "# all attestation checks passed"
