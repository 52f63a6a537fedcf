#!/usr/bin/env bash
# attest-agent private memory per round, by the size of the IMA log increment: the
# agent in loop mode against attestd (TLS, loopback) and swtpm (the set-up of the hostile agent
# tests, tests/lib/common.sh); for each size N (default 100, 10,000 and 100,000) one round
# sends an N-entry increment (imagen ima-ng entries, extended into PCR 10 so the round passes).
# During the round tests/lib/memsample.py samples RssAnon of /proc/PID/status (anonymous pages:
# the private memory) about every 0.2 ms after resetting VmHWM. Prints per size the peak RssAnon,
# the round's peak RSS (VmHWM) and RssFile, next to the goal (<= 4 MiB private, flat in N).
# Figures only: fails only when the bench cannot run or a round does not pass. Use a release
# build (ASan's shadow memory is anonymous too); AGENT=path measures another agent binary.
# Usage: tests/bench/run-agent-mem.sh BUILD_DIR [N...]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# common.sh runs this script again under swtpm-run with the test arguments: ours go in the
# environment
if [ -z "${AGENT_MEM_BUILD:-}" ]; then
        AGENT_MEM_BUILD=$(cd "${1:?usage: run-agent-mem.sh BUILD_DIR [N...]}" && pwd)
        shift
        AGENT_MEM_SIZES="${*:-100 10000 100000}"
        export AGENT_MEM_BUILD AGENT_MEM_SIZES
fi
build=$AGENT_MEM_BUILD
read -r -a sizes <<<"$AGENT_MEM_SIZES"
EVGEN=$build/tests/integration/test-daemon-evgen
[ -x "$EVGEN" ] || { echo "run-agent-mem: $EVGEN not built" >&2; exit 1; }
agent_test_args 5 "$build/daemon/attestd" "${AGENT:-$build/agent/attest-agent}" \
        "$build/attestctl/attestctl" "$TOP/tests/lib/swtpm-run" "$TOP"
agent_test_begin python3 tpm2_pcrextend
host_verifier

MALLOC_PERTURB_=0 start_agent agent.log --state-dir st
wait_lines agent.log '^<[56]>verdict: ' 1 60
id=$(cat st/agent-id)
mib() { echo "$1 / 1024" | bc -l; }

echo "# attest-agent private memory per round: $(nproc) cores (shared), $(uname -r), agent $AGENT"
printf '%-9s %11s %15s %13s %13s %9s\n' entries bytes "peak RssAnon" "VmHWM" "RssFile" samples
for n in "${sizes[@]}"; do
        "$EVGEN" gen "inc$n.bin" "files:$n"
        "$ATTESTCTL" ima hashes "inc$n.bin" >"inc$n.hashes"
        [ "$(wc -l <"inc$n.hashes")" = "$n" ] || fail "inc$n.bin: $(wc -l <"inc$n.hashes") entries"
        v=$(count agent.log '^<[56]>verdict: ')
        # the agent sleeps until next_due: stop it while the "kernel" measures
        kill -STOP "$agent_pid"
        xargs -n 256 tpm2_pcrextend <"inc$n.hashes" >/dev/null
        cat "inc$n.bin" >>ima.bin
        mem_start "mem$n.txt"
        kill -CONT "$agent_pid"
        # a round already past its quote when stopped sends nothing new: wait for the one that
        # sends the increment (the verifier's latest result names it)
        for k in 1 2 3 4 5; do
                wait_lines agent.log '^<[56]>verdict: ' $((v + k)) 180
                api GET "/v1/agents/$id/results?limit=1" "" "$READER"
                [ "$(jq -r '.results[0] | "\(.status) \(.verdict.ima.new_entries)"' <<<"$body")" = \
                        "pass $n" ] && break
                [ $k -lt 5 ] || fail "no round passed with the $n new entries"
        done
        mem_stop
        read -r anon hwm file samples <"mem$n.txt"
        printf '%-9s %11s %11.2f MiB %9.2f MiB %9.2f MiB %9s\n' "$n" "$(stat -c %s "inc$n.bin")" \
                "$(mib "$anon")" "$(mib "$hwm")" "$(mib "$file")" "$samples"
done
echo "# every measured round passed with exactly its new entries (attestd's results)"
echo "# goal: peak RssAnon <= 4 MiB, flat in the increment size"
