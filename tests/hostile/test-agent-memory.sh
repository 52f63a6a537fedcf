#!/usr/bin/env bash
# The agent's private memory does not grow with the IMA log increment: the evidence is
# streamed, the log never held whole. A real agent against attestd and swtpm sends a round of 100
# new entries, then one of 100,000 (about 10 MB of log, 14 MB of evidence); during each round
# tests/lib/memsample.py samples its RssAnon (anonymous pages: private memory). The increments are
# not extended into PCR 10 (that would take minutes): the verifier replays none of them and keeps
# its offset, so the second round sends all 100,000; memory is the same either way. First, the
# offline --dump-evidence file (the same stream, to a file) must verify with attestctl.
# Ceilings (memory, not timing; generous): release build: peak RssAnon <= 4 MiB and at most 1 MiB
# above the 100-entry round; AddressSanitizer build (shadow memory and the allocator's quarantine,
# cut to 1 MiB here, are anonymous too): at most 8 MiB above the 100-entry round. The agent before
# streaming peaked at 57.9 MiB with 100,000 entries (release build).
# Usage: test-agent-memory.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
evgen=$(realpath "$6")
agent_test_begin python3
host_verifier

asan=0
case "$(ldd "$AGENT" 2>/dev/null || true)" in *libasan*) asan=1 ;; esac
"$evgen" gen inc100.bin "files:100"
"$evgen" gen inc99900.bin "files:99900"

# the offline dump (--dump-evidence without a verifier) is written from the same stream: it must
# verify whole with attestctl (quote with the AK, IMA replay from entry 0 against the quoted PCRs)
"$AGENT" --dump-evidence ev.json --tcti "$SWTPM_TCTI" --ima-log ima.bin --state-dir st \
        >dump.log 2>&1 || fail "offline dump: $(tail -3 dump.log)"
"$ATTESTCTL" policy from-host ev.json --ak ev.json.ak.pub >from-host.json 2>from-host.err ||
        fail "the dumped evidence does not verify: $(tail -3 from-host.err)"
ok "offline --dump-evidence: $(stat -c %s ev.json) bytes that attestctl policy from-host verifies"

# meson test sets MALLOC_PERTURB_, which makes malloc touch every page it hands out
ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=1" MALLOC_PERTURB_=0 \
        start_agent agent.log --state-dir st --interval 1
wait_lines agent.log '^<[56]>verdict: ' 1 60

# round N: STOP, append FILE, sample while the round that sends TOTAL entries runs and answers
measure() { # FILE TOTAL -> "anon_kB hwm_kB file_kB samples" in mem.TOTAL
        local v
        kill -STOP "$agent_pid"
        cat "$1" >>ima.bin
        mem_start "mem.$2"
        kill -CONT "$agent_pid"
        wait_lines agent.log "IMA log: $2 entries from" 1 120
        v=$(count agent.log '^<[56]>verdict: ')
        wait_lines agent.log '^<[56]>verdict: ' $((v + 1)) 120
        mem_stop
}
measure inc100.bin 100
measure inc99900.bin 100000
read -r a1 h1 f1 _ <mem.100
read -r a2 h2 f2 _ <mem.100000
echo "# 100 entries: RssAnon peak $a1 kB (VmHWM $h1 kB, RssFile $f1 kB)"
echo "# 100000 entries ($(($(stat -c %s inc100.bin) + $(stat -c %s inc99900.bin))) bytes of log): RssAnon peak $a2 kB (VmHWM $h2 kB, RssFile $f2 kB)"
if grep -q '^<3>' agent.log; then fail "an error in a round: $(grep '^<3>' agent.log | tail -2)"; fi
if [ $asan -eq 1 ]; then
        [ $((a2 - a1)) -le 8192 ] || fail "ASan build: RssAnon grew by $((a2 - a1)) kB with the increment (ceiling 8192 kB)"
        ok "ASan build: RssAnon grew by $((a2 - a1)) kB from 100 to 100,000 entries (ceiling 8192 kB)"
else
        [ "$a2" -le 4096 ] || fail "RssAnon peak $a2 kB with 100,000 entries (ceiling 4096 kB)"
        [ $((a2 - a1)) -le 1024 ] || fail "RssAnon grew by $((a2 - a1)) kB with the increment (ceiling 1024 kB)"
        ok "RssAnon peak $a2 kB with 100,000 entries, $((a2 - a1)) kB above 100 (ceilings 4096, 1024 kB)"
fi
kill "$agent_pid"
wait "$agent_pid" || fail "agent exited $? after SIGTERM"
agent_pid=""
if grep -q "ERROR: LeakSanitizer\|ERROR: AddressSanitizer" agent.log; then
        fail "sanitizer report in agent.log"
fi
ok "agent memory flat in the increment"
