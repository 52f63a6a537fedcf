#!/usr/bin/env bash
# attest-agent private memory per round, by the size of the IMA log increment (issue 15): the
# agent in loop mode against attestd (TLS, loopback) and swtpm; for each size N (default 100,
# 10,000 and 100,000) one round sends an N-entry increment (imagen ima-ng entries, extended into
# PCR 10 so the round passes). During the round tests/lib/memsample.py samples RssAnon of
# /proc/PID/status (anonymous pages: the private memory) about every 0.2 ms after resetting
# VmHWM. Prints per size the peak RssAnon, the round's peak RSS (VmHWM) and RssFile, next to the
# goal (<= 4 MiB private, flat in N). Figures only: fails only when the bench cannot run or a round
# does not pass. Build in a release build (ASan's shadow memory is anonymous too).
# Usage: tests/bench/run-agent-mem.sh BUILD_DIR [N...]
set -euo pipefail
build=$(cd "${1:?usage: run-agent-mem.sh BUILD_DIR [N...]}" && pwd)
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 10000 100000)
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$top/tests/lib/swtpm-run" --ek-cert -- "$0" "$build" "${sizes[@]}"
fi
export ATTESTD=$build/daemon/attestd TOP=$top
AGENT=${AGENT:-$build/agent/attest-agent} ATTESTCTL=$build/attestctl/attestctl
EVGEN=$build/tests/integration/test-daemon-evgen
for f in "$ATTESTD" "$AGENT" "$ATTESTCTL" "$EVGEN"; do
        [ -x "$f" ] || { echo "run-agent-mem: $f not built" >&2; exit 1; }
done
# shellcheck source-path=SCRIPTDIR/../integration source=test-daemon-lib.sh
. "$top/tests/integration/test-daemon-lib.sh"
agent_pid=""
cleanup_agent() {
        local rc=$?
        if [ -n "$agent_pid" ]; then
                kill -CONT "$agent_pid" 2>/dev/null || true
                kill "$agent_pid" 2>/dev/null || true
        fi
        (exit $rc)
        cleanup_lib
}
trap cleanup_agent EXIT
token ENROLL enroll
token READER reader
printf %s "$ENROLL" >"$work/enroll.token"
cd "$work"

"$top/tests/lib/replay-boot" "$top/tests/data/qemu61-good" "$ATTESTCTL"
cp "$top/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 --ek-ca "$SWTPM_STATE/ca" \
        --interval 1
"$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" --token-file enroll.token \
        --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st >agent.log 2>&1 &
agent_pid=$!

verdicts() { grep -cE '^<[56]>verdict: ' agent.log || true; }
wait_verdicts() { # N: until the agent logged N verdicts (180 s at most)
        for _ in $(seq 3600); do
                [ "$(verdicts)" -ge "$1" ] && return 0
                kill -0 "$agent_pid" 2>/dev/null || fail "agent died: $(tail -5 agent.log)"
                sleep 0.05
        done
        fail "no verdict $1 within 180 s: $(tail -5 agent.log)"
}
mib() { echo "$1 / 1024" | bc -l; }

wait_verdicts 1
grep -q 'enrolled as agent' agent.log || fail "agent did not enrol"
id=$(cat st/agent-id)
echo "# attest-agent private memory per round: $(nproc) cores (shared), $(uname -r), agent $AGENT"
printf '%-9s %11s %15s %13s %13s %9s\n' entries bytes "peak RssAnon" "VmHWM" "RssFile" samples
for n in "${sizes[@]}"; do
        "$EVGEN" gen "inc$n.bin" "files:$n"
        "$ATTESTCTL" ima hashes "inc$n.bin" >"inc$n.hashes"
        [ "$(wc -l <"inc$n.hashes")" = "$n" ] || fail "inc$n.bin: $(wc -l <"inc$n.hashes") entries"
        v=$(verdicts)
        # the agent sleeps until next_due: stop it while the "kernel" measures
        kill -STOP "$agent_pid"
        xargs -n 256 tpm2_pcrextend <"inc$n.hashes" >/dev/null
        cat "inc$n.bin" >>ima.bin
        rm -f stop
        python3 "$top/tests/lib/memsample.py" "$agent_pid" stop 300 >"mem$n.txt" &
        sampler=$!
        sleep 0.2 # the sampler has reset VmHWM and runs
        kill -CONT "$agent_pid"
        # a round already past its quote when stopped sends nothing new: wait for the one that
        # sends the increment (the verifier's latest result names it)
        for k in 1 2 3 4 5; do
                wait_verdicts $((v + k))
                api GET "/v1/agents/$id/results?limit=1" "" "$READER"
                [ "$(jq -r '.results[0] | "\(.status) \(.verdict.ima.new_entries)"' <<<"$body")" = "pass $n" ] &&
                        break
                [ $k -lt 5 ] || fail "no round sent the $n new entries"
        done
        touch stop
        wait "$sampler"
        read -r anon hwm file samples <"mem$n.txt"
        printf '%-9s %11s %11.2f MiB %9.2f MiB %9.2f MiB %9s\n' "$n" "$(stat -c %s "inc$n.bin")" \
                "$(mib "$anon")" "$(mib "$hwm")" "$(mib "$file")" "$samples"
done
kill "$agent_pid"
wait "$agent_pid" || fail "agent exited $? after SIGTERM"
agent_pid=""

echo "# every measured round passed with exactly its new entries (attestd's results)"
echo "# goal: peak RssAnon <= 4 MiB, flat in the increment size"
stop_daemon TERM
