#!/usr/bin/env bash
# attest-agent footprint: the agent in loop mode against attestd (TLS, loopback) and swtpm, each
# measured round sending a 10,000-entry IMA log increment (imagen ima-ng entries, extended into
# PCR 10 so the round passes). Prints per round the agent's CPU time (user+sys from
# /proc/PID/task/*/stat and on-CPU time from schedstat) and at the end its peak RSS (VmHWM) and
# private memory (RssAnon), next to the goals (< 50 ms CPU per round, < 4 MiB RSS).
# Never fails on timing; fails only if a round does not pass or the bench cannot run.
# Usage: tests/bench/run-agent.sh BUILD_DIR [ROUNDS] [ENTRIES]
set -euo pipefail
build=$(cd "${1:?usage: run-agent.sh BUILD_DIR [ROUNDS] [ENTRIES]}" && pwd)
rounds=${2:-5} entries=${3:-10000}
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${SWTPM_TCTI:-}" ]; then
        exec "$top/tests/lib/swtpm-run" --ek-cert -- "$0" "$build" "$rounds" "$entries"
fi
export ATTESTD=$build/daemon/attestd TOP=$top
AGENT=$build/agent/attest-agent ATTESTCTL=$build/attestctl/attestctl
EVGEN=$build/tests/integration/test-daemon-evgen
for f in "$ATTESTD" "$AGENT" "$ATTESTCTL" "$EVGEN"; do
        [ -x "$f" ] || { echo "run-agent: $f not built" >&2; exit 1; }
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
        (exit $rc) # cleanup_lib keeps the work directory of a failed run
        cleanup_lib
}
trap cleanup_agent EXIT
token ENROLL enroll
token READER reader
printf %s "$ENROLL" >"$work/enroll.token"
cd "$work"

"$top/tests/lib/replay-boot" "$top/tests/data/qemu61-good" "$ATTESTCTL"
cp "$top/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
"$EVGEN" gen inc.bin "files:$entries"
"$ATTESTCTL" ima hashes inc.bin >inc.hashes
[ "$(wc -l <inc.hashes)" = "$entries" ] || fail "inc.bin: $(wc -l <inc.hashes) entries"

spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 --ek-ca "$SWTPM_STATE/ca" \
        --interval 1
"$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" --token-file enroll.token \
        --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st >agent.log 2>&1 &
agent_pid=$!

verdicts() { grep -cE '^<[56]>verdict: ' agent.log || true; }
wait_verdicts() { # N: until the agent logged N verdicts (60 s at most)
        for _ in $(seq 1200); do
                [ "$(verdicts)" -ge "$1" ] && return 0
                kill -0 "$agent_pid" 2>/dev/null || fail "agent died: $(tail -5 agent.log)"
                sleep 0.05
        done
        fail "no verdict $1 within 60 s: $(tail -5 agent.log)"
}
ticks() { cat /proc/"$agent_pid"/task/*/stat | awk '{ t += $14 + $15 } END { print t }'; }
ns() { cat /proc/"$agent_pid"/task/*/schedstat | awk '{ t += $1 } END { print t }'; }

wait_verdicts 1
grep -q 'enrolled as agent' agent.log || fail "agent did not enrol"
hwm0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$agent_pid/status")
hz=$(getconf CLK_TCK)
echo "# attest-agent footprint: $(nproc) cores, $(uname -r), $rounds rounds of $entries new entries, $(stat -c %s inc.bin) bytes each"
printf '%-6s %14s %16s\n' round "user+sys ms" "on-CPU ms"
sum_t=0 sum_n=0
for r in $(seq "$rounds"); do
        v=$(verdicts)
        # the agent sleeps until next_due now: stop it while the "kernel" measures
        kill -STOP "$agent_pid"
        xargs -n 64 tpm2_pcrextend <inc.hashes >/dev/null
        cat inc.bin >>ima.bin
        t0=$(ticks) n0=$(ns)
        kill -CONT "$agent_pid"
        wait_verdicts $((v + 1))
        t1=$(ticks) n1=$(ns)
        sum_t=$((sum_t + t1 - t0)) sum_n=$((sum_n + n1 - n0))
        printf '%-6s %14d %16.1f\n' "$r" $(((t1 - t0) * 1000 / hz)) "$(echo "($n1 - $n0) / 1000000" | bc -l)"
done
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$agent_pid/status")
anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$agent_pid/status")
file=$(awk '/^RssFile:/ { print $2 }' "/proc/$agent_pid/status")
kill "$agent_pid"
wait "$agent_pid" || fail "agent exited $? after SIGTERM"
agent_pid=""

api GET "/v1/agents/$(cat st/agent-id)/results?limit=$((rounds + 1))" "" "$READER"
[ "$status" = 200 ] || fail "results: $status $body"
got=$(jq -r '.results[] | "\(.status) \(.verdict.ima.new_entries)"' <<<"$body" | head -"$rounds" |
        sort | uniq -c | awk '{ print $1, $2, $3 }')
[ "$got" = "$rounds pass $entries" ] || fail "rounds: want $rounds x 'pass $entries', got: $got"
echo "# all $rounds rounds passed with $entries new entries each"
printf '# CPU per round: %d ms user+sys (ticks of %d ms), %.1f ms on-CPU (schedstat)  goal < 50 ms\n' \
        $((sum_t * 1000 / hz / rounds)) $((1000 / hz)) "$(echo "$sum_n / $rounds / 1000000" | bc -l)"
mib() { echo "$1 / 1024" | bc -l; }
printf '# peak RSS (VmHWM): %.1f MiB after the rounds, %.1f MiB after enrolment and a 6-entry round  goal < 4 MiB\n' \
        "$(mib "$hwm")" "$(mib "$hwm0")"
printf '# RSS at the end: RssAnon %.1f MiB (private), RssFile %.1f MiB (shared libraries, mapped files)\n' \
        "$(mib "$anon")" "$(mib "$file")"
stop_daemon TERM
