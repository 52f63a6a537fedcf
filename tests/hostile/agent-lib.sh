#!/usr/bin/env bash
# Shared set-up of the hostile agent tests (sourced, with the test's own arguments): re-runs the
# test under swtpm-run with an EK certificate, starts a real attestd over TLS trusting swtpm's
# EK CA (--interval 1), makes enroll/reader/admin tokens, replays the recorded qemu61-good boot
# into the swtpm and puts its log in ima.bin; the EXIT trap stops the agent ($agent_pid) and any
# helper ($notify_pid, $mem_pid) and then attestd. Gives count, wait_lines, start_notify and
# mem_start/mem_stop.
# Usage (in a test): . "$(dirname "$0")/agent-lib.sh" ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
[ $# -eq 5 ] || { echo "usage: $0 ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP" >&2; exit 2; }
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$4" --ek-cert -- "$0" "$@"
fi
ATTESTD=$(realpath "$1") TOP=$(realpath "$5")
export ATTESTD TOP
# shellcheck disable=SC2034 # used by the tests that source this
AGENT=$(realpath "$2") ATTESTCTL=$(realpath "$3")
for t in openssl curl jq python3 tpm2_pcrextend; do
        command -v $t >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
# shellcheck source-path=SCRIPTDIR source=../integration/test-daemon-lib.sh
. "$TOP/tests/integration/test-daemon-lib.sh"

agent_pid="" notify_pid="" mem_pid=""
cleanup_agent() {
        local rc=$? p
        for p in "$agent_pid" "$notify_pid" "$mem_pid"; do
                if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
        done
        set +e # a failing command in an EXIT trap under set -e would end it here
        (exit $rc)
        cleanup_lib
}
trap cleanup_agent EXIT

token ENROLL enroll
token READER reader
token ADMIN admin
printf %s "$ENROLL" >"$work/enroll.token"
cd "$work"
"$TOP/tests/lib/replay-boot" "$TOP/tests/data/qemu61-good" "$ATTESTCTL"
cp "$TOP/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 \
        --ek-ca "$SWTPM_STATE/ca" --interval 1

count() { grep -cE "$2" "$1" || true; }
# wait_lines FILE PATTERN N SECONDS: until FILE has N lines matching PATTERN (bounded)
wait_lines() {
        for _ in $(seq $(($4 * 20))); do
                [ "$(count "$1" "$2")" -ge "$3" ] && return 0
                if [ -n "$agent_pid" ] && ! kill -0 "$agent_pid" 2>/dev/null; then
                        echo "--- $1" >&2; tail -20 "$1" >&2
                        fail "agent died waiting for $3 x '$2'"
                fi
                sleep 0.05
        done
        echo "--- $1" >&2; tail -20 "$1" >&2
        fail "no $3 x '$2' in $1 within $4 s"
}

# start_notify: systemd's side of Type=notify on $PWD/notify.sock; every datagram the agent sends
# becomes one line of notify.txt (newlines as |). Sets notify_pid (stopped by the EXIT trap).
start_notify() {
        cat >notify.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
        out.flush()
PY
        python3 notify.py "$PWD/notify.sock" "$PWD/notify.txt" &
        notify_pid=$!
        for _ in $(seq 50); do [ -S notify.sock ] && break; sleep 0.05; done
}

# mem_start FILE ... mem_stop: the agent's private memory over a stretch (tests/lib/memsample.py:
# VmHWM reset, RssAnon sampled) into FILE, "anon_peak_kB VmHWM_kB RssFile_kB samples".
mem_start() {
        rm -f mem.stop mem.ready
        python3 "$TOP/tests/lib/memsample.py" "$agent_pid" mem.stop 300 mem.ready >"$1" &
        mem_pid=$!
        for _ in $(seq 200); do
                [ -e mem.ready ] && return 0
                sleep 0.05
        done
        fail "the memory sampler did not start"
}
mem_stop() {
        touch mem.stop
        wait "$mem_pid"
        mem_pid=""
}
