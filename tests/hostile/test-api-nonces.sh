#!/usr/bin/env bash
# Hostile API, issue 9 defect 4 (anonymous nonce exhaustion) and the database file modes:
#  1. file modes: a missing state directory is created 0700; the database, its WAL and SHM and
#     the generated nonce key are 0600 although the umask is 022
#  2. 10,000 anonymous challenges (4 concurrent TLS clients, bounded in count and time) for a
#     real agent's id: the database does not change (dump and file sizes), then the real agent
#     (attest-agent, swtpm, credential activation) passes its next round
#  3. evidence with a real quote over a replayed, an expired, a tampered and another agent's
#     nonce: 409 nonce_reused, 410 nonce_expired, 400 nonce_unknown, 409 nonce_wrong_agent
#  4. two attestd instances sharing the key and the database: a nonce issued by one verifies at
#     the other, and its replay at the first is 409 nonce_reused; a nonce survives a restart;
#     consumed nonces are purged once expired
# ATTESTD_EXTRA (words) is appended to every attestd command line (to run the old daemon with
# --nonces-max when showing that this test fails without the fix).
# Usage: test-api-nonces.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN" >&2; exit 2; }
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$4" --ek-cert -- "$0" "$@"
fi
ATTESTD=$(realpath "$1") TOP=$(realpath "$5")
export ATTESTD TOP
AGENT=$(realpath "$2") ATTESTCTL=$(realpath "$3") EVGEN=$(realpath "$6")
for t in openssl curl jq sqlite3 python3 tpm2_createek tpm2_createak tpm2_quote tpm2_pcrread \
        tpm2_pcrextend tpm2_evictcontrol; do
        command -v $t >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
# shellcheck source-path=SCRIPTDIR source=../integration/test-daemon-lib.sh
. "$TOP/tests/integration/test-daemon-lib.sh"
read -ra extra <<<"${ATTESTD_EXTRA:-}"

agent_pid="" daemon2_pid=""
cleanup_test() {
        local rc=$? p
        for p in "$agent_pid" "$daemon2_pid"; do
                if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
        done
        set +e # a failing command in an EXIT trap under set -e would end it here
        (exit $rc)
        cleanup_lib
}
trap cleanup_test EXIT

token ENROLL enroll
token READER reader
token ADMIN admin
printf %s "$ENROLL" >"$work/enroll.token"
cd "$work"
umask 022

# verifier NAME DB ARGS...: attestd on a free port with database DB (log daemon-NAME.log)
verifier() {
        local name=$1 db=$2
        shift 2
        spawn https "$work/daemon-$name.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
                --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                --db "$db" --tokens "$work/tokens" --threads 2 "$@" "${extra[@]}"
        ln -sf "daemon-$name.log" daemon.log # what fail() prints
}

mode() { stat -c %a "$1"; }

# wait_lines FILE PATTERN N SECONDS: until FILE has N lines matching PATTERN
wait_lines() {
        for _ in $(seq $(($4 * 20))); do
                [ "$(grep -cE "$2" "$1" 2>/dev/null || true)" -ge "$3" ] && return 0
                sleep 0.05
        done
        echo "--- $1" >&2; tail -20 "$1" >&2
        fail "no $3 x '$2' in $1 within $4 s"
}

start_agent() { # LOG: the real agent, state in st/
        "$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" --token-file enroll.token \
                --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st >"$1" 2>&1 &
        agent_pid=$!
}
stop_agent() {
        kill -TERM "$agent_pid"
        wait "$agent_pid" || fail "agent exited $? after SIGTERM"
        agent_pid=""
}

# the database without the connections' view: every row of every table, and the file sizes
db_state() {
        { sqlite3 -readonly "$1" .dump; stat -c '%n %s' "$1" "$1-wal" 2>/dev/null || true; } |
                sha256sum | cut -d' ' -f1
}

echo "# 1. file modes"
verifier one "$work/state/attestd.db" --ek-ca "$SWTPM_STATE/ca" --interval 1
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
"$TOP/tests/lib/replay-boot" "$TOP/tests/data/qemu61-good" "$ATTESTCTL"
cp "$TOP/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
start_agent a1.log
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
start_agent a2.log
wait_lines a2.log '^<5>verdict: pass' 1 60
stop_agent
ok "the real agent passed its next round after the flood"
api GET "/v1/agents/$id/results?limit=10" "" "$READER"
[ "$(jq '.results | length' <<<"$body")" -ge 2 ] || fail "results after the flood: $body"
stop_daemon TERM

echo "# 3. replayed, expired, tampered and another agent's nonce (real quotes)"
AKH=0x81010051
SEL="sha256:0,1,2,3,4,5,6,7,8,9,10"
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
flush
tpm2_evictcontrol -C o -c ak.ctx "$AKH" >/dev/null
tpm2_createak -C ek.ctx -c ak2.ctx -G ecc -g sha256 -s ecdsa -u ak2.pub >/dev/null
flush
# the log in the TPM (PCR 10) is the agent's boot log: the quote and ima.bin agree
cp ima.bin log.bin
n_log=$("$EVGEN" count log.bin)
verifier two "$work/two/attestd.db" --insecure-trust-ak --nonce-ttl 4
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ENROLL"
expect 201 "" -- enrol agent 1 "(--insecure-trust-ak)"
id1=$(jq -r .id <<<"$body")
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak2.pub)\"}" "$ENROLL"
expect 201 "" -- enrol agent 2
id2=$(jq -r .id <<<"$body")
challenge() { # [ID] [PORT]
        api POST "/v1/agents/${1:-$id1}/challenges"
        [ "$status" = 201 ] || fail "challenge: $status $body"
        nonce=$(jq -r .nonce <<<"$body")
        offset=$(jq -r .ima_offset <<<"$body")
}
quote() {
        tpm2_quote -c "$AKH" -l "$SEL" -q "$1" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$SEL" >q.pcrs
        flush
}
evidence() { "$EVGEN" evidence "$1" q.attest q.sig q.pcrs log.bin "$offset" "$n_log" >ev.json; }
submit() { api POST "/v1/agents/${1:-$id1}/evidence" @ev.json; }
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
# flip one bit of the expiry: a nonce that would live longer, quoted by the real TPM
tampered=$(python3 -c 'import sys; b = bytearray.fromhex(sys.argv[1]); b[12] ^= 1; print(b.hex())' "$nonce")
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
submit "$id1"
expect 409 nonce_wrong_agent -- "agent 2's nonce in agent 1's evidence"
api GET "/v1/agents/$id1" "" "$READER"
[ "$(jq -r .last_status <<<"$body")" = pass ] || fail "rejected nonces changed the agent: $body"

echo "# 4. two instances sharing key and database; a restart"
port_a=$port pid_a=$daemon_pid
daemon_pid=""
verifier three "$work/two/attestd.db" --insecure-trust-ak --nonce-ttl 4
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
used=$(sqlite3 -readonly two/attestd.db 'SELECT count(*) FROM nonces_used')
[ "$used" -ge 1 ] || fail "no consumed nonce remembered"
sleep 4.2
challenge
quote "$nonce"
evidence "$nonce"
submit
expect 200 "" -- "a round after the earlier nonces expired"
used=$(sqlite3 -readonly two/attestd.db 'SELECT count(*) FROM nonces_used')
[ "$used" = 1 ] || fail "expired consumed nonces not purged: $used remembered"
ok "expired consumed nonces are purged (1 remembered)"
stop_daemon TERM
sanitizer_check
echo "# all nonce checks passed"
