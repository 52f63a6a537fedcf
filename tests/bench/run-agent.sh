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
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$top/tests/lib/common.sh"
agent_test_begin bc
"$EVGEN" gen inc.bin "files:$entries"
"$ATTESTCTL" ima hashes inc.bin >inc.hashes
[ "$(wc -l <inc.hashes)" = "$entries" ] || fail "inc.bin: $(wc -l <inc.hashes) entries"

host_verifier
start_agent agent.log --state-dir st
at_exit '[ -z "$agent_pid" ] || kill -CONT "$agent_pid" 2>/dev/null' # stopped while the kernel measures

wait_verdicts() { wait_lines agent.log '^<[56]>verdict: ' "$1" 60; }
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
        v=$(verdicts agent.log)
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
