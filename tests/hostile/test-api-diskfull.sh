#!/usr/bin/env bash
# Hostile API, readiness: attestd's database on a real, small tmpfs that is
# then filled up. /healthz must say 503 store_unavailable while writes cannot succeed (it said
# "ok"), come back to 200 once space is freed, and nothing stored before is lost (policies, the
# agent and its results, across a restart, integrity_check ok).
# Needs root (mount -t tmpfs; setup.sh runs as root): a failure to mount fails the test, never a skip.
# Usage: test-api-diskfull.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
EVGEN=$(realpath "$6")
agent_test_begin sqlite3 tpm2_createek tpm2_createak tpm2_quote tpm2_pcrread tpm2_pcrextend \
        tpm2_evictcontrol mount umount
mkdir full
if ! mount -t tmpfs -o size=3m,mode=0700 tmpfs full 2>mount.err; then
        echo "not ok: cannot mount a tmpfs (run as root): $(cat mount.err)" >&2
        exit 1
fi
unmount_full() {
        kill_daemon
        umount "$work/full" 2>/dev/null || umount -l "$work/full" 2>/dev/null || true
}
at_exit unmount_full

verifier() { start_daemon -d "$work/full/attestd.db"; }
wait_health() { # STATUS SECONDS: until /healthz answers STATUS
        for _ in $(seq $(($2 * 10))); do
                api GET /healthz
                [ "$status" = "$1" ] && return 0
                nap 0.1
        done
        fail "/healthz still $status after $2 s, want $1: $body"
}

# an agent with a real AK and a verified round before the disk fills
persist_ak 0x81010061
"$EVGEN" gen log.bin boot files:3
n=$("$EVGEN" count log.bin)
"$EVGEN" extend log.bin 0 "$n" | xargs -r -n 40 tpm2_pcrextend >/dev/null

verifier
api GET /healthz
[ "$status" = 200 ] || fail "/healthz before: $status $body"
[ "$(jq -r .store <<<"$body")" = writable ] || fail "/healthz does not report the store: $body"
ok "/healthz 200, store writable"
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- "enrol an agent"
id=$(jq -r .id <<<"$body")
round() {
        challenge
        quote "$nonce"
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs log.bin "$offset" "$n" >ev.json
        submit
}
round
expect 200 "" -- "a verified round before the disk fills"
api PUT /v1/policies/keep '{"name":"keep"}' "$ADMIN"
expect 201 "" -- "a policy before the disk fills"

echo "# fill the file system"
dd if=/dev/zero of=full/filler bs=64k 2>/dev/null || true
dd if=/dev/zero of=full/filler2 bs=4k 2>/dev/null || true
df -k full | tail -1 | sed 's/^/# /'
# the probe runs at most once a second: the answer may lag by that much
wait_health 503 5
[ "$(jq -r .error <<<"$body")" = store_unavailable ] || fail "/healthz error: $body"
ok "/healthz 503 store_unavailable on a full disk: $(jq -r .detail <<<"$body")"
wfail=0
for i in $(seq 20); do
        api PUT "/v1/policies/full$i" '{"name":"x"}' "$ADMIN"
        [ "$status" = 201 ] || wfail=$((wfail + 1))
done
echo "# 20 policy writes on the full disk: $wfail failed"
api GET /healthz
[ "$status" = 503 ] || fail "/healthz $status while full: $body"

echo "# free the space"
rm -f full/filler full/filler2
wait_health 200 5
ok "/healthz 200 again once space is freed"
round
expect 200 "" -- "a verified round after the disk was freed"
api PUT /v1/policies/after '{"name":"after"}' "$ADMIN"
expect 201 "" -- "a write after the disk was freed"
stop_daemon TERM
[ "$(sqlite3 -readonly full/attestd.db 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
verifier
api GET /v1/policies/keep "" "$READER"
expect 200 "" -- "the policy stored before the disk filled, after a restart"
api GET "/v1/agents/$id/results?limit=100" "" "$READER"
expect 200 "" -- "the agent's results after a restart"
[ "$(jq '[.results[] | select(.status == "pass")] | length' <<<"$body")" -ge 2 ] ||
        fail "results lost: $body"
ok "nothing stored was lost (policy, agent, both verified rounds; integrity_check ok)"
stop_daemon TERM
echo "# all disk-full checks passed"
