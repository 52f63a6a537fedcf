#!/usr/bin/env bash
# attestd operations: --insecure-http only on loopback, TLS required otherwise, config file and
# flags, --help, SIGHUP token reload (a bad file keeps the old tokens), sd_notify READY / STATUS /
# WATCHDOG / STOPPING, socket activation, SIGTERM draining an in-flight upload, stale agents.
# Run under tests/lib/swtpm-run (one AK for the stale check).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
test_begin
cd "$work"

# --- --help documents every flag the config table has, and the man page too
"$ATTESTD" --help >help.txt
sed 's/\\-/-/g' "$TOP/docs/attestd.8" >man.txt
for f in listen tls-cert tls-key insecure-http threads db db-mode retain tokens nonce-ttl \
        interval grace pcr-selection max-evidence max-body config; do
        grep -q -- "--$f" help.txt || fail "--help lacks --$f"
        grep -q -- "--$f" man.txt || fail "attestd.8 lacks --$f"
done
ok "--help and attestd(8) document the flags"

# --- plain HTTP: refused on a non-loopback address, served on loopback
touch tokens
if "$ATTESTD" --insecure-http --listen 0.0.0.0:0 --db "$work/x.db" --tokens tokens \
        >refuse.log 2>&1; then
        fail "--insecure-http on 0.0.0.0 started"
fi
grep -q 'refused: the listening address is not loopback' refuse.log || fail "refusal reason"
ok "--insecure-http refused on 0.0.0.0"
if "$ATTESTD" --listen 127.0.0.1:0 --db "$work/x.db" --tokens tokens >notls.log 2>&1; then
        fail "started without TLS material"
fi
grep -q 'TLS needs --tls-cert and --tls-key' notls.log || fail "no-TLS reason"
ok "TLS is the default: no cert, no start"
spawn http "$work/plain.log" "$ATTESTD" --insecure-http --listen "127.0.0.1:@PORT@" \
        --db "$work/x.db" --tokens tokens
[ "$(curl -s "http://127.0.0.1:$port/healthz" | jq -r .status)" = ok ] || fail "plain HTTP on loopback"
stop_daemon TERM
grep -q '^<4>serving plain HTTP on loopback' plain.log || fail "plain HTTP warning"
ok "--insecure-http on 127.0.0.1 serves, with a warning"

# --- config file: key = value, unknown keys and bad values name file:line, flags win
cat >bad.conf <<CONF
# comment
threads = 2
colour = blue
CONF
if "$ATTESTD" --config bad.conf --help >/dev/null 2>badconf.log; then fail "bad key accepted"; fi
grep -q 'bad.conf:3: unknown key' badconf.log || fail "bad key reason: $(cat badconf.log)"
printf 'retain = lots\n' >bad2.conf
if "$ATTESTD" --config bad2.conf --help >/dev/null 2>badconf.log; then fail "bad value accepted"; fi
grep -q 'bad2.conf:1: retain wants a number' badconf.log || fail "bad value reason"
ok "config errors name file:line"
cat >good.conf <<CONF
listen = 127.0.0.1:1
tls-cert = $work/certs/server.pem
tls-key = $work/certs/server.key
db = $work/conf.db
tokens = $work/tokens
pcr-selection = sha256:0-10+sha1:10
CONF
token ADMIN admin
spawn https "$work/conf.log" "$ATTESTD" --config good.conf --listen "127.0.0.1:@PORT@"
api GET /healthz
expect 200 "" -- daemon from a config file, --listen overriding it
stop_daemon TERM
grep -q 'PCRs sha1:10+sha256:0-10' conf.log || fail "pcr-selection from the file: $(cat conf.log)"
ok "config file values used"

# --- sd_notify and watchdog, via a notify socket of our own
cat >notify.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        msg = s.recv(4096).decode()
        out.write(msg.replace("\n", "|") + "\n")
        out.flush()
PY
python3 notify.py "$work/notify.sock" "$work/notify.txt" &
np=$!
for _ in $(seq 50); do [ -S notify.sock ] && break; nap 0.05; done
NOTIFY_SOCKET=$work/notify.sock WATCHDOG_USEC=200000 start_daemon
sleep 0.6
# SIGHUP: RELOADING then READY again
kill -HUP "$daemon_pid"
sleep 0.3
stop_daemon TERM
sleep 0.2
kill $np; wait $np 2>/dev/null || true
grep -q '^READY=1|STATUS=serving HTTPS' notify.txt || fail "no READY/STATUS: $(cat notify.txt)"
[ "$(grep -c '^WATCHDOG=1$' notify.txt)" -ge 3 ] || fail "watchdog pings: $(cat notify.txt)"
grep -q '^RELOADING=1$' notify.txt || fail "no RELOADING"
grep -q '^STOPPING=1|STATUS=draining' notify.txt || fail "no STOPPING"
ok "sd_notify READY/STATUS, WATCHDOG every WATCHDOG_USEC/2, RELOADING, STOPPING"

# --- SIGHUP reloads tokens; a malformed file keeps the old ones
start_daemon
api GET /v1/agents "" "$ADMIN"
expect 200 "" -- admin token before reload
cp tokens tokens.old
token NEW reader
api GET /v1/agents "" "$NEW"
expect 401 unauthorized -- new token before SIGHUP
kill -HUP "$daemon_pid"
sleep 0.3
api GET /v1/agents "" "$NEW"
expect 200 "" -- new token after SIGHUP
echo "bogus line" >>tokens
kill -HUP "$daemon_pid"
sleep 0.3
grep -q 'reload: keeping the old tokens' daemon.log || fail "bad reload not reported"
api GET /v1/agents "" "$NEW"
expect 200 "" -- a malformed file keeps the old tokens
grep -v "$(printf %s "$NEW" | sha256sum | cut -d' ' -f1)" tokens.old >tokens
kill -HUP "$daemon_pid"
sleep 0.3
api GET /v1/agents "" "$NEW"
expect 401 unauthorized -- removed token after SIGHUP

# --- stale: an agent past next_due + grace
stop_daemon TERM
start_daemon --interval 1 --grace 1
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
tpm2_flushcontext -t >/dev/null
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol
api GET /v1/agents "" "$ADMIN"
[ "$(jq -r '.agents[0].stale' <<<"$body")" = false ] || fail "stale at once: $body"
[ "$(metric 'attestd_agents{state="never_attested"}')" = 1 ] || fail "never_attested gauge"
sleep 2.3
api GET /v1/agents "" "$ADMIN"
[ "$(jq -r '.agents[0].stale' <<<"$body")" = true ] || fail "not stale after 2.3 s: $body"
[ "$(jq -r '.agents[0].state' <<<"$body")" = stale ] || fail "state not stale: $body"
[ "$(metric 'attestd_agents{state="stale"}')" = 1 ] || fail "stale gauge"
ok "agent stale after interval + grace, in GET /v1/agents and /metrics"

# --- SIGTERM drains: a slow upload in flight is answered, new connections are refused
head -c 3000000 /dev/zero >slow.bin
curl -s --cacert "$CA" --limit-rate 1M -o slow.out -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary @slow.bin \
        "https://127.0.0.1:$port/v1/agents/x/evidence" >slow.status &
cpid=$!
sleep 0.8
kill -TERM "$daemon_pid"
sleep 0.3
if curl -s --cacert "$CA" -o /dev/null "https://127.0.0.1:$port/healthz"; then
        fail "new connection accepted while draining"
fi
wait $cpid || true
[ "$(cat slow.status)" = 404 ] || fail "in-flight upload not answered: $(cat slow.status)"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
[ $rc -eq 0 ] || fail "attestd exited $rc after draining"
sanitizer_check
ok "SIGTERM: the in-flight 3 MB upload was read to its end and answered (404: no agent x), new connections refused"

# --- socket activation: systemd-socket-activate passes the listening socket
spawn https "$work/daemon.log" systemd-socket-activate -l "127.0.0.1:@PORT@" "$ATTESTD" \
        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --listen 127.0.0.1:1
api GET /healthz
expect 200 "" -- first request through the activated socket
grep -q 'listening on the socket systemd passed' daemon.log || fail "socket activation not used"
stop_daemon TERM

# --- the unit's sandboxing: exposure at most 2.0 (threshold in tenths)
systemd-analyze security --offline=yes --threshold=20 "$TOP/systemd/attestd.service" >analyze.txt ||
        fail "systemd-analyze exposure above 2.0: $(tail -1 analyze.txt)"
ok "$(tail -1 analyze.txt | sed 's/ *$//')"
echo "# all operations checks passed"
