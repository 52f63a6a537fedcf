#!/usr/bin/env bash
# Hostile API, anonymous nonce exhaustion, and the database file modes:
#  1. file modes: a missing state directory is created 0700; the database, its WAL and SHM and
#     the generated nonce key are 0600 although the umask is 022
#  2. 10,000 anonymous challenges (4 concurrent TLS clients, bounded in count and time) for a
#     real agent's id: the database does not change (dump and file sizes), then the real agent
#     (attest-agent, swtpm, credential activation) passes its next round
#  3. evidence with a real quote over a replayed, an expired, a tampered and another agent's
#     nonce: 409 nonce_reused, 410 nonce_expired, 400 nonce_unknown, 409 nonce_wrong_agent
#  4. two attestd instances sharing the key and the database: a nonce issued by one verifies at
#     the other, and its replay at the first is 409 nonce_reused; a nonce survives a restart, and
#     its replay after the restart is refused too (single use lives in the agent's row, not in
#     a process: daemon/nonce.h); once expired, a replay is 410
# ATTESTD_EXTRA (words) is appended to every attestd command line (to run the old daemon with
# --nonces-max when showing that this test fails without the fix).
# Usage: test-api-nonces.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
EVGEN=$(realpath "$6")
agent_test_begin sqlite3 python3 tpm2_createek tpm2_createak tpm2_quote tpm2_pcrread \
        tpm2_evictcontrol
daemon2_pid=""
kill_at_exit daemon2_pid
umask 022

mode() { stat -c %a "$1"; }

# the database without the connections' view: every row of every table, and the file sizes
db_state() {
        { sqlite3 -readonly "$1" .dump; stat -c '%n %s' "$1" "$1-wal" 2>/dev/null || true; } |
                sha256sum | cut -d' ' -f1
}

echo "# 1. file modes"
start_attestd -n one -d "$work/state/attestd.db" --ek-ca "$SWTPM_STATE/ca" --interval 1
[ "$(mode state)" = 700 ] || fail "state directory mode $(mode state), want 700"
for f in state/attestd.db state/attestd.db-wal state/attestd.db-shm state/nonce.key; do
        [ -e "$f" ] || fail "$f missing"
        [ "$(mode "$f")" = 600 ] || fail "$f mode $(mode "$f"), want 600"
done
ok "state directory 700; database, WAL, SHM and nonce key 600 (umask 022)"
grep -qi "$(od -An -tx1 state/nonce.key | tr -d ' \n' | head -c 16)" daemon.log &&
        fail "the nonce key is in the log"
ok "the nonce key is not in the log"

echo "# 2. 10,000 anonymous challenges, then a real agent round"
boot_host
start_agent a1.log --state-dir st
wait_lines a1.log '^<5>verdict: pass' 1 60
id=$(cat st/agent-id)
stop_agent
ok "the real agent enrolled as $id and passed"
before=$(db_state state/attestd.db)
flood=$(python3 "$TOP/tests/hostile/flood.py" 127.0.0.1 "$port" "$CA" POST \
        "/v1/agents/$id/challenges" 10000 4 240)
echo "# flood: $flood"
[ "$(jq -r .sent <<<"$flood")" = 10000 ] || fail "flood did not send 10,000: $flood"
[ "$(jq -r '.status["201"] // 0' <<<"$flood")" = 10000 ] || fail "not all 201: $flood"
ok "10,000 anonymous challenges answered 201 in $(jq -r .seconds <<<"$flood") s"
after=$(db_state state/attestd.db)
[ "$before" = "$after" ] || fail "the database changed under anonymous challenges"
ok "the database did not change (dump and file sizes)"
start_agent a2.log --state-dir st
wait_lines a2.log '^<5>verdict: pass' 1 60
stop_agent
ok "the real agent passed its next round after the flood"
api GET "/v1/agents/$id/results?limit=10" "" "$READER"
[ "$(jq '.results | length' <<<"$body")" -ge 2 ] || fail "results after the flood: $body"
stop_daemon TERM

echo "# 3. replayed, expired, tampered and another agent's nonce (real quotes)"
persist_ak 0x81010051
tpm2_createak -C ek.ctx -c ak2.ctx -G ecc -g sha256 -s ecdsa -u ak2.pub >/dev/null
flush
# the log in the TPM (PCR 10) is the agent's boot log: the quote and ima.bin agree
cp ima.bin log.bin
n_log=$("$EVGEN" count log.bin)
start_attestd -n two -d "$work/two/attestd.db" --insecure-trust-ak --nonce-ttl 4
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ENROLL"
expect 201 "" -- enrol agent 1 "(--insecure-trust-ak)"
id=$(jq -r .id <<<"$body")
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak2.pub)\"}" "$ENROLL"
expect 201 "" -- enrol agent 2
id2=$(jq -r .id <<<"$body")
evidence() { "$EVGEN" evidence "$1" q.attest q.sig q.pcrs log.bin "$offset" "$n_log" >ev.json; }
challenge
quote "$nonce"
evidence "$nonce"
submit
expect 200 "" -- "a genuine round"
[ "$(jq -r .status <<<"$body")" = pass ] || fail "genuine round: $body"
submit
expect 409 nonce_reused -- "the same evidence again (replayed nonce)"
challenge
quote "$nonce"
evidence "$nonce"
sleep 4.2
submit
expect 410 nonce_expired -- "a nonce past its 4 s TTL"
challenge
# flip one bit of the expiry (bytes 6-11): a nonce that would live longer, quoted by the real TPM
tampered=$(python3 -c 'import sys; b = bytearray.fromhex(sys.argv[1]); b[10] ^= 1; print(b.hex())' "$nonce")
quote "$tampered"
evidence "$tampered"
submit
expect 400 nonce_unknown -- "a tampered nonce (expiry bit flipped)"
tampered=$(python3 -c 'import sys; b = bytearray.fromhex(sys.argv[1]); b[0] ^= 0x80; print(b.hex())' "$nonce")
quote "$tampered"
evidence "$tampered"
submit
expect 400 nonce_unknown -- "a tampered nonce (random part)"
challenge "$id2"
quote "$nonce"
evidence "$nonce"
submit "$id"
expect 409 nonce_wrong_agent -- "agent 2's nonce in agent 1's evidence"
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -r .last_status <<<"$body")" = pass ] || fail "rejected nonces changed the agent: $body"

echo "# 4. two instances sharing key and database; a restart"
port_a=$port pid_a=$daemon_pid
daemon_pid=""
start_attestd -n three -d "$work/two/attestd.db" --insecure-trust-ak --nonce-ttl 4
port_b=$port
daemon2_pid=$pid_a
port=$port_a
challenge
quote "$nonce"
evidence "$nonce"
port=$port_b
submit
expect 200 "" -- "instance B verifies a nonce instance A issued"
[ "$(jq -r .status <<<"$body")" = pass ] || fail "cross-instance round: $body"
port=$port_a
submit
expect 409 nonce_reused -- "its replay at instance A"
challenge
quote "$nonce"
evidence "$nonce"
kill -TERM "$daemon2_pid"
wait "$daemon2_pid" || fail "instance A exited $? after SIGTERM"
daemon2_pid=""
port=$port_b
submit
expect 200 "" -- "a nonce of a stopped instance, submitted to the other"
submit
expect 409 nonce_reused -- "its replay after the instance that issued it stopped"
sleep 4.2
submit
expect 410 nonce_expired -- "its replay once expired"
challenge
quote "$nonce"
evidence "$nonce"
submit
expect 200 "" -- "a round after the earlier nonces expired"
stop_daemon TERM
sanitizer_check
echo "# all nonce checks passed"
