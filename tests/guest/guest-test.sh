#!/bin/bash
# Runs INSIDE the guest as attest-guest-test.service (systemd is PID 1), after multi-user.target;
# writes "ok: ..." / "not ok: ..." / "# ..." lines to /dev/ttyS1 (the host's results file), then
# powers off. Every wait is bounded. Files from the host: /root/test/{admin,reader,reader2}.token,
# reader2.hash, ca.pem.
# shellcheck disable=SC2015,SC2016,SC2034 # ok || bad on purpose; sh -c expands; seq counts only
exec >/dev/ttyS1 2>&1
set -uo pipefail
T=/root/test
URL=https://127.0.0.1:8443
ADMIN=$(cat $T/admin.token) READER=$(cat $T/reader.token)
fails=0
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*"; fails=$((fails + 1)); }
prop() { systemctl show -P "$2" "$1"; }
api() { # METHOD PATH [BODY] [TOKEN] -> $status $body
        local b=/tmp/api.body
        status=$(curl -s -o $b -w '%{http_code}' --max-time 60 --cacert $T/ca.pem -X "$1" \
                ${4:+-H "Authorization: Bearer $4"} ${3:+-H 'Content-Type: application/json' --data-binary "$3"} \
                "$URL$2") || status=000
        body=$(cat $b 2>/dev/null)
}
# wait_for SECONDS CMD...: CMD succeeds within SECONDS (polled each second)
wait_for() {
        local n=$1 i
        shift
        for i in $(seq "$n"); do "$@" && return 0; sleep 1; done
        return 1
}
verdicts() { journalctl -q -o cat -u attest-agent.service | grep -c '^verdict: ' || true; }
echo "# guest: $(uname -r), systemd $(systemctl --version | head -1 | cut -d' ' -f2), up $(cut -d' ' -f1 /proc/uptime) s"
# the boot is not "finished" while this unit (part of it) runs: the times of PID 1 and multi-user.target
echo "# boot: userspace (PID 1) at $(($(systemctl show -P UserspaceTimestampMonotonic) / 1000)) ms, multi-user.target at $(($(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target) / 1000)) ms after the kernel started"

# --- the installed units: verify and exposure
# --man=no: the guest has no man-db (the pages are in the packages: tests/guest/test-install.sh)
systemd-analyze verify --man=no attestd.socket attestd.service attest-agent.service >/tmp/verify.txt 2>&1 &&
        ok "systemd-analyze verify: attestd.socket attestd.service attest-agent.service" ||
        { bad "systemd-analyze verify"; sed 's/^/# /' /tmp/verify.txt; }
for u in attestd.service attest-agent.service; do
        echo "# exposure: $(systemd-analyze security "$u" 2>/dev/null | tail -1)"
done
s=$(systemd-analyze security attestd.service | tail -1 | grep -o 'level for attestd.service: [0-9.]*' | awk '{print $NF}')
awk -v s="${s:-9}" 'BEGIN { exit !(s <= 1.0) }' && ok "attestd.service exposure $s <= 1.0" ||
        bad "attestd.service exposure ${s:-?} > 1.0"

# --- the Debian way: enabled by the packages; the agent's sample config stopped it (status 2)
# attestd.service is enabled only through its socket (Also=): the first request starts it
for u in attestd.socket attestd.service attest-agent.service; do
        e=$(systemctl is-enabled $u)
        case $u:$e in
        attestd.service:indirect | *.socket:enabled | attest-agent.service:enabled) ok "$u $e by the package" ;;
        *) bad "$u is $e" ;;
        esac
done
[ "$(prop attest-agent.service ExecMainStatus)" = 2 ] && [ "$(prop attest-agent.service ActiveState)" != active ] &&
        ok "attest-agent with the sample config: exited 2, not restarted ($(prop attest-agent.service NRestarts) restarts)" ||
        { bad "attest-agent with the sample config: $(prop attest-agent.service ActiveState) status $(prop attest-agent.service ExecMainStatus), condition $(prop attest-agent.service ConditionResult)"
          systemctl status --no-pager -n 10 attest-agent.service 2>&1 | sed 's/^/# /'; }
echo "# IMA log: $(stat -c '%A %U:%G' /sys/kernel/security/ima/binary_runtime_measurements), tpmrm0: $(stat -c '%A %U:%G' /dev/tpmrm0)"
echo "# firmware event log: $(stat -c '%A %U:%G' /sys/kernel/security/tpm0/binary_bios_measurements 2>/dev/null || echo absent)"

# --- socket activation and READY
[ "$(prop attestd.socket ActiveState)" = active ] && [ "$(prop attestd.service ActiveState)" = inactive ] &&
        ok "before the first request: attestd.socket listening, attestd.service inactive" ||
        bad "before the first request: socket $(prop attestd.socket ActiveState), service $(prop attestd.service ActiveState)"
api GET /healthz
[ "$status" = 200 ] && ok "first request: /healthz 200" || bad "first request: /healthz $status $body"
[ "$(prop attestd.service ActiveState)" = active ] && [ "$(prop attestd.service Type)" = notify ] &&
        ok "attestd.service socket-activated, READY (Type=notify active): $(prop attestd.service StatusText)" ||
        bad "attestd.service after the first request: $(prop attestd.service ActiveState)"

# --- the agent enrols by credential activation and attests on its interval
cat >/etc/attest-agent/agent.conf <<CONF
verifier = $URL
ca = /etc/attest-agent/ca.pem
token-file = /etc/attest-agent/enroll.token
CONF
t=$(date +%s)
systemctl restart attest-agent.service
wait_for 240 sh -c '[ "$(journalctl -q -o cat -u attest-agent.service | grep -c "^verdict: ")" -ge 1 ]' &&
        ok "agent enrolled and attested in $(($(date +%s) - t)) s: $(journalctl -q -o cat -u attest-agent.service | grep -m1 -i 'enrol')" ||
        { bad "no verdict from the agent in 240 s"; journalctl -q -o cat -u attest-agent.service | tail -20 | sed 's/^/# /'; }
api GET /v1/agents "" "$READER"
AID=$(jq -r '.agents[0].id' <<<"$body")
echo "# agent $AID"
echo "# STATUS: $(prop attest-agent.service StatusText)"
# least privilege: the running agent's user, groups and capabilities
st=/proc/$(prop attest-agent.service MainPID)/status
uid=$(awk '/^Uid:/ {print $2}' "$st") groups=$(awk '/^Groups:/ {$1=""; print}' "$st")
capeff=$(awk '/^CapEff:/ {print $2}' "$st") capbnd=$(awk '/^CapBnd:/ {print $2}' "$st")
echo "# agent process: uid $uid ($(id -nu "$uid")), groups$groups, CapEff $capeff, CapBnd $capbnd"
[ "$uid" = "$(id -u attest-agent)" ] && [[ " $groups " == *" $(getent group tss | cut -d: -f3) "* ]] &&
        [ "$capeff" = 0000000000000000 ] && [ "$capbnd" = 0000000000000000 ] &&
        ok "the agent attests as attest-agent (group tss), no capability" || bad "the agent's privileges: uid $uid groups$groups CapEff $capeff"
prop attest-agent.service StatusText | grep -q '^last verdict: ' && ok "systemctl status shows STATUS=$(prop attest-agent.service StatusText)" ||
        bad "agent STATUS: $(prop attest-agent.service StatusText)"

# --- a policy from this very host (attestctl policy from-host), bound, and the verdict under it
# the agent's state dir rules (0700, owned by the user) hold for the offline dump too
# (an empty --config: /etc/attest-agent/agent.conf names a verifier, and with one the agent attests)
mkdir -m 0700 /tmp/dump && : >/tmp/dump.conf &&
        timeout 300 attest-agent --config /tmp/dump.conf --dump-evidence /tmp/dump/ev.json --state-dir /tmp/dump >/tmp/dump.log 2>&1 &&
        attestctl policy from-host /tmp/dump/ev.json --ak /tmp/dump/ev.json.ak.pub --name guest >/tmp/policy.json 2>/tmp/policy.err &&
        ok "attestctl policy from-host on this guest: $(jq -c . /tmp/policy.json | head -c 600)" ||
        { bad "policy from-host"; cat /tmp/dump.log /tmp/policy.err 2>&1 | sed 's/^/# /'; }
echo "# LSMs: $(cat /sys/kernel/security/lsm), SELinux: $(cat /sys/fs/selinux/enforce 2>/dev/null || echo 'not enabled')"
api PUT /v1/policies/guest "$(cat /tmp/policy.json)" "$ADMIN"
[ "$status" = 201 ] && ok "PUT /v1/policies/guest: $body" || bad "PUT policy: $status $body"
api PUT "/v1/agents/$AID/policy" '{"policy":"guest"}' "$ADMIN"
[ "$status" = 200 ] && ok "bound to guest" || bad "bind: $status $body"
n=$(verdicts)
t=$(date +%s)
wait_for 120 sh -c "[ \$(journalctl -q -o cat -u attest-agent.service | grep -c '^verdict: ') -gt $n ]" &&
        ok "next round on the interval after $(($(date +%s) - t)) s" || bad "no round within 120 s"
api GET "/v1/agents/$AID/results?limit=1" "" "$READER"
echo "$body" | jq -c '.' | head -c 3000 | sed 's/^/# verdict: /'; echo
last=$(echo "$body" | jq -r '.results[0].status // empty') pol=$(echo "$body" | jq -r '.results[0].policy // empty')
[ "$last" = pass ] && [[ $pol == guest@* ]] && ok "verdict on the stock kernel under its own from-host policy $pol: pass" ||
        bad "verdict under the from-host policy: ${last:-?} (policy ${pol:-none})"
echo "$body" | jq -r '.results[0].verdict.claims[]? | "# claim \(.name): expected \(.expected), observed \(.observed), anchored \(.anchored), \(.result)"'
echo "# unchecked: $(echo "$body" | jq -r '.results[0].verdict.sections_unchecked // [] | join(",")')"
echo "# policy sections: selinux $(jq -c '.selinux // "absent"' /tmp/policy.json), trusted_keys $(jq -c '.trusted_keys // "absent"' /tmp/policy.json), cfi $(jq -c '.cfi // "absent"' /tmp/policy.json)"
anch=$(echo "$body" | jq '[.results[0].verdict.claims[]? | select(.name | test("trusted|cfi")) | select(.anchored == true)] | length')
panch=$(jq '[.trusted_keys.anchored, .cfi.anchored] | map(select(. == true)) | length' /tmp/policy.json)
[ "$anch" = 0 ] && [ "$panch" = 0 ] && ok "trusted keys and CFI unanchored on the stock kernel (verdict and policy)" ||
        bad "trusted keys or CFI anchored on a stock kernel: verdict $anch, policy $panch"

# --- WatchdogSec restarts a hung attestd; store and history survive
api GET "/v1/agents/$AID/results" "" "$READER"
before=$(echo "$body" | jq '(.results // .) | length')
pid=$(prop attestd.service MainPID) r0=$(prop attestd.service NRestarts)
t=$(date +%s)
kill -STOP "$pid"
wait_for 120 sh -c "[ \"\$(systemctl show -P NRestarts attestd.service)\" -gt $r0 ]" &&
        ok "kill -STOP: watchdog restarted attestd after $(($(date +%s) - t)) s (WatchdogSec=$(prop attestd.service WatchdogUSec))" ||
        bad "no watchdog restart in 120 s"
api GET "/v1/agents/$AID/results" "" "$READER"
after=$(echo "$body" | jq '(.results // .) | length')
[ "$status" = 200 ] && [ "${after:-0}" -ge "${before:-1}" ] && ok "history survived the restart: $before -> $after results" ||
        bad "history after the restart: $status, $before -> ${after:-?}"

# --- systemctl reload re-reads tokens
api GET /v1/agents "" "$(cat $T/reader2.token)"
s1=$status
cat $T/reader2.hash >>/etc/attestd/tokens
api GET /v1/agents "" "$(cat $T/reader2.token)"
s2=$status
systemctl reload attestd.service
api GET /v1/agents "" "$(cat $T/reader2.token)"
[ "$s1" = 401 ] && [ "$s2" = 401 ] && [ "$status" = 200 ] && ok "new token: $s1, appended $s2, after systemctl reload $status" ||
        bad "token reload: $s1 $s2 $status"

# --- stopping the agent mid-round finishes the round: attestd is held (SIGSTOP) from 5 s before
# the agent's next round (its interval, 20 s, runs from the last verdict's journal timestamp, not
# from when this script saw it: a loaded guest's journal lags) until the round's request waits in
# attestd's socket (the server side of port 8443 = 0x20FB with bytes queued, on the agent's
# kept-alive connection or a new one; attestd.socket's ListenStream=8443 is an IPv6 socket that
# takes IPv4 too, so its connections are in /proc/net/tcp6); then systemd stops the agent and
# attestd goes on. The hold is at most 5 + 15 s by the clock, within attestd's 30 s watchdog
# (pinged every second).
waiting() { awk '$2 ~ /:20FB$/ && $4 == "01" { split($5, q, ":"); if (q[2] != "00000000") f = 1 } END { exit !f }' /proc/net/tcp /proc/net/tcp6; }
last_verdict_at() { journalctl -q -o short-unix -u attest-agent.service | grep ': verdict: ' | tail -1 | cut -d. -f1; }
pid=$(prop attestd.service MainPID)
held=0
for _ in 1 2 3; do
        n=$(verdicts)
        wait_for 60 sh -c "[ \$(journalctl -q -o cat -u attest-agent.service | grep -c '^verdict: ') -gt $n ]"
        n=$(verdicts)
        lead=$(($(last_verdict_at) + 15 - $(date +%s)))
        [ "$lead" -ge 1 ] || continue # seen too late for this interval: the next one
        sleep "$lead"
        kill -STOP "$pid"
        held=1
        until_t=$(($(date +%s) + 15))
        until waiting || [ "$(date +%s)" -ge "$until_t" ]; do sleep 0.1; done
        waiting && echo "# the round's request waits in attestd's socket" ||
                echo "# no request queued within 15 s of the hold"
        break
done
[ $held = 1 ] || { bad "stop mid-round: every verdict seen less than 5 s before the next round"; kill -STOP "$pid"; }
systemctl stop --no-block attest-agent.service
sleep 0.5
kill -CONT "$pid"
wait_for 90 sh -c '[ "$(systemctl show -P ActiveState attest-agent.service)" = inactive ]'
m=$(verdicts)
order=$(journalctl -q -o cat -u attest-agent.service | grep -E '^(Stopping attest-agent|verdict: |signal [0-9]+: stopping)' | tail -2 | tr '\n' '|')
[ "$m" -gt "$n" ] && [ "$(prop attest-agent.service Result)" = success ] && [[ $order == "Stopping attest-agent"*"|verdict: "* ]] &&
        ok "stop mid-round: systemd's stop, then the round's verdict ($n -> $m verdicts: $order), clean exit" ||
        { bad "stop mid-round: $n -> $m verdicts, result $(prop attest-agent.service Result), last lines: $order"; journalctl -q -o cat -u attest-agent.service | tail -8 | sed 's/^/# /'; }

# --- webhooks: the packaged attestd.service has no network of its own (socket activation hands
# it the listening socket: PrivateNetwork=yes, AF_UNIX only), so its events wait in the outbox;
# the drop-in docs/webhooks.md gives lets it reach receivers, and after a restart the events
# made before it (enrolment, first verdict) arrive, signed, at the receiver beside it
mkdir -p /etc/systemd/system/attestd.service.d
cat >/etc/systemd/system/attestd.service.d/webhooks.conf <<'CONF'
[Service]
PrivateNetwork=no
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
IPAddressAllow=localhost
CONF
systemctl daemon-reload
systemctl restart attestd.service
echo "# exposure with the webhook drop-in: $(systemd-analyze security attestd.service 2>/dev/null | tail -1)"
wait_for 60 grep -q '"agent.pass"' /root/test/rx/events.jsonl
types=$(jq -r .type /root/test/rx/events.jsonl 2>/dev/null | tr '\n' ' ')
[ "$(jq -r .type /root/test/rx/events.jsonl | head -2 | tr '\n' ' ')" = "agent.enrolled agent.pass " ] &&
        ! grep -qv ' ok ' /root/test/rx/requests && [ "$(jq -r .hostname /root/test/rx/events.jsonl | head -1)" = "$(cat /proc/sys/kernel/hostname)" ] &&
        ok "webhooks: $types(every HMAC verified by the receiver, host $(cat /proc/sys/kernel/hostname))" ||
        { bad "webhooks: events '$types', requests: $(tr '\n' '|' </root/test/rx/requests 2>/dev/null)"
          systemctl status --no-pager -n 8 attest-webhook-receiver.service 2>&1 | sed 's/^/# /'
          journalctl -q -o cat -u attestd.service | grep -i webhook | tail -8 | sed 's/^/# /'; }

# --- Restart=on-failure with back-off
systemctl start attest-agent.service
r0=$(prop attest-agent.service NRestarts)
kill -SEGV "$(prop attest-agent.service MainPID)"
t=$(date +%s)
wait_for 60 sh -c "[ \"\$(systemctl show -P NRestarts attest-agent.service)\" -gt $r0 ] && [ \"\$(systemctl show -P ActiveState attest-agent.service)\" = active ]" &&
        ok "SIGSEGV: restarted after $(($(date +%s) - t)) s (RestartSec=$(prop attest-agent.service RestartUSec), StartLimitBurst=$(prop attest-agent.service StartLimitBurst))" ||
        bad "no restart after SIGSEGV"

echo "# guest test: $fails failed, $(cut -d' ' -f1 /proc/uptime) s since boot"
echo "@@GUEST-DONE $fails@@"
sync
systemctl poweroff --no-block
