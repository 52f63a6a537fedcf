#!/usr/bin/env bash
# Hostile API, issue 9 defect 6 (readiness): attestd's database on a real, small tmpfs that is
# then filled up. /healthz must say 503 store_unavailable while writes cannot succeed (it said
# "ok"), come back to 200 once space is freed, and nothing stored before is lost (policies, the
# agent and its results, across a restart, integrity_check ok).
# Needs root (mount -t tmpfs; setup.sh runs as root): a failure to mount fails the test, never a skip.
# Usage: test-api-diskfull.sh ATTESTD SWTPM_RUN TOP EVGEN
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ATTESTD SWTPM_RUN TOP EVGEN" >&2; exit 2; }
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$2" -- "$0" "$@"
fi
ATTESTD=$(realpath "$1") TOP=$(realpath "$3") EVGEN=$(realpath "$4")
export ATTESTD TOP
for t in curl jq sqlite3 tpm2_createek tpm2_createak tpm2_quote tpm2_pcrread tpm2_pcrextend \
        tpm2_evictcontrol mount umount; do
        command -v $t >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
# shellcheck source-path=SCRIPTDIR source=../integration/test-daemon-lib.sh
. "$TOP/tests/integration/test-daemon-lib.sh"
read -ra extra <<<"${ATTESTD_EXTRA:-}"
cd "$work"
mkdir full
if ! mount -t tmpfs -o size=3m,mode=0700 tmpfs full 2>mount.err; then
        echo "not ok: cannot mount a tmpfs (run as root): $(cat mount.err)" >&2
        exit 1
fi
cleanup_full() {
        local rc=$?
        if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
        daemon_pid=""
        umount "$work/full" 2>/dev/null || umount -l "$work/full" 2>/dev/null || true
        set +e # a failing command in an EXIT trap under set -e would end it here
        (exit $rc)
        cleanup_lib
}
trap cleanup_full EXIT
token ADMIN admin
token READER reader

verifier() {
        spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
                --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                --db "$work/full/attestd.db" --tokens "$work/tokens" --threads 2 \
                --insecure-trust-ak "${extra[@]}"
}
health() { # the /healthz status, and its body in $body
        status=$(curl -s --cacert "$CA" -o resp -w '%{http_code}' "https://127.0.0.1:$port/healthz") ||
                status=000
        body=$(cat resp)
}
wait_health() { # STATUS SECONDS: until /healthz answers STATUS
        for _ in $(seq $(($2 * 10))); do
                health
                [ "$status" = "$1" ] && return 0
                sleep 0.1
        done
        fail "/healthz still $status after $2 s, want $1: $body"
}

# an agent with a real AK and a verified round before the disk fills
AKH=0x81010061
SEL="sha256:0,1,2,3,4,5,6,7,8,9,10"
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
flush
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
flush
tpm2_evictcontrol -C o -c ak.ctx "$AKH" >/dev/null
"$EVGEN" gen log.bin boot files:3
n=$("$EVGEN" count log.bin)
"$EVGEN" extend log.bin 0 "$n" | xargs -r -n 40 tpm2_pcrextend >/dev/null

verifier
health
[ "$status" = 200 ] || fail "/healthz before: $status $body"
[ "$(jq -r .store <<<"$body")" = writable ] || fail "/healthz does not report the store: $body"
ok "/healthz 200, store writable"
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- "enrol an agent"
id=$(jq -r .id <<<"$body")
round() {
        api POST "/v1/agents/$id/challenges"
        [ "$status" = 201 ] || fail "challenge: $status $body"
        nonce=$(jq -r .nonce <<<"$body")
        tpm2_quote -c "$AKH" -l "$SEL" -q "$nonce" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$SEL" >q.pcrs
        flush
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs log.bin "$(jq -r .ima_offset <<<"$body")" \
                "$n" >ev.json
        api POST "/v1/agents/$id/evidence" @ev.json
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
health
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
