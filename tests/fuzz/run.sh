#!/usr/bin/env bash
# Run every libFuzzer binary (BUILD_DIR/tests/fuzz/fuzz-*) for SECONDS each, on a scratch copy of
# its seed corpus so the repository is not polluted. Fails if any target crashes, leaks, times out
# or exits non-zero; prints per target the executions, coverage when its corpus was loaded (cov0)
# and at the end (cov), the inputs that found something new (new) and how far into the run the
# last of them came (last, % of the executions): what the seconds bought. Crash inputs are kept
# in the scratch directory (printed) so they can be added to tests/fuzz/corpus/<name>/.
#
# Every target runs with -max_len at or above the largest cap of the parser it drives and
# -len_control=0 (libFuzzer otherwise grows inputs from small ones slowly and never gets near a
# 64 KiB cap), and its corpus gets the seeds at cap-1/cap/cap+1 that BUILD_DIR/tests/mkseeds
# writes (STYLE "Untrusted bytes").
#
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS
# Environment: FUZZ_JOBS=N runs N targets at a time (default 2: one a core on the CI machine, the
#              same seconds per target in half the wall clock; 1 runs them one by one),
#              FUZZ_PARALLEL=1 runs all targets at once (under nice; for the long campaign),
#              FUZZ_BIG_SEEDS=1 adds the 16 MiB evidence and HTTP body seeds (mkseeds --big).
set -euo pipefail
if [ $# -ne 2 ]; then
        echo "Usage: $0 BUILD_DIR SECONDS" >&2
        exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/attestd-fuzz.XXXXXX")
failed=0
ran=0

# -max_len per target: at or above the caps of its parser.
max_len_for() {
        case $1 in
        ima-ascii) echo 300000 ;;   # IMA_ASCII_LINE_MAX 135680, two lines over it
        ima-binary) echo 262144 ;;  # IMA_DATA_MAX 65536 per entry, several entries
        ima-stream) echo 300000 ;;  # as ima-ascii; the target repeats the log past its window
        kv) echo 8192 ;;            # CDATA_BUF_MAX 4096
        pcrs) echo 300000 ;;        # PCR_FILE_MAX 262144
        policy) echo 33554500 ;;    # POLICY_JSON_MAX 32 MiB
        quote) echo 65536 ;;        # TPM2B sizes are u16
        config | tokens) echo 1100000 ;; # CONFIG_FILE_MAX, AUTH_FILE_MAX 1 MiB
        agent-config) echo 70000 ;; # AGENT_CONFIG_FILE_MAX 64 KiB
        facts) echo 4194400 ;;      # FACTS_CONFIG_MAX 4 MiB
        evidence | evidence-diff | http) echo 16777300 ;; # EVIDENCE_JSON_MAX / --max-evidence 16 MiB
        replay-state) echo 65536 ;; # REPLAY_STATE_MAX 25799 bytes
        http-frame) echo 140000 ;;  # HTTP_FRAME_LEN_MAX 64 KiB, a target and a field over it
        keylime) echo 1200000 ;;    # keylime-caps seeds (1025 excludes, 1014-byte regex) and above
        util-kv) echo 70000 ;;      # FUZZ_KV_FILE_MAX (tests/fuzz/fuzz-util-kv.h)
        runtime) echo 2200000 ;;    # FUZZ_RUNTIME_MAX 2 MiB: excludes 1024 x 1024 bytes
        runtime-sig) echo 65600 ;;  # sig_size is a u16 after a 9-byte header
        *) echo 1048576 ;;
        esac
}

mapfile -t targets < <(find "$build/tests/fuzz" -maxdepth 1 -type f -name 'fuzz-*' -perm -u+x |
        sort)
if [ ${#targets[@]} -eq 0 ]; then
        echo "fuzz: no fuzz-* binaries in $build/tests/fuzz (configure with CC=clang -Dfuzz=true)" >&2
        exit 1
fi
seedgen="$scratch/cap-seeds"
if [ -x "$build/tests/mkseeds" ]; then
        "$build/tests/mkseeds" ${FUZZ_BIG_SEEDS:+--big} "$seedgen"
        "$top/tests/fuzz/mkseeds-evidence.sh" "$seedgen" \
                "$top/tests/fuzz/corpus/evidence/qemu61-good.json"
else
        echo "fuzz: $build/tests/mkseeds missing: no cap seeds" >&2
        exit 1
fi

run_one() {
        local bin=$1 name=${1##*/fuzz-} work rc
        work="$scratch/$name"
        mkdir -p "$work/corpus" "$work/artifacts"
        [ -d "$top/tests/fuzz/corpus/$name" ] && cp -r "$top/tests/fuzz/corpus/$name/." "$work/corpus/"
        [ -d "$seedgen/$name" ] && cp -r "$seedgen/$name/." "$work/corpus/"
        [ "$name" = evidence-diff ] && cp -r "$seedgen/evidence/." "$work/corpus/"
        set +e
        ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                ${FUZZ_PARALLEL:+nice} "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 \
                -timeout=25 -max_len="$(max_len_for "$name")" -len_control=0 \
                -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
                "$work/corpus" >"$work/log" 2>&1
        rc=$?
        set -e
        echo $rc >"$work/rc"
}

report_one() {
        local name=$1 work="$scratch/$1" rc execs rate cov result init new last lastpct
        rc=$(cat "$work/rc")
        # (a target that dies on its first input prints no cov: line; that must not end the run)
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
        cov=$({ grep -oE 'cov: [0-9]+' "$work/log" || true; } | tail -1 | cut -d' ' -f2)
        # what the seconds bought beyond the seed corpus: coverage when the corpus was loaded
        # (INITED), inputs that found new coverage or features (NEW), and how far into the run
        # the last one came (its execution number against the total): a target whose last NEW
        # comes early would find nothing more in a longer run of the same kind
        init=$({ grep -oE 'INITED cov: [0-9]+' "$work/log" || true; } | head -1 | awk '{ print $3 }')
        new=$({ grep -cE '^#[0-9]+[[:space:]]+NEW ' "$work/log" || true; })
        last=$({ grep -E '^#[0-9]+[[:space:]]+NEW ' "$work/log" || true; } | tail -1 | sed -E 's/^#([0-9]+).*/\1/')
        lastpct=-
        if [ -n "$last" ] && [ -n "${execs:-}" ] && [ "${execs:-0}" -gt 0 ]; then
                lastpct=$((100 * last / execs))%
        fi
        maxlen=$(max_len_for "$name")
        result=ok
        if [ "$rc" -ne 0 ] || ls "$work/artifacts/"* >/dev/null 2>&1; then
                result="FAILED rc=$rc"
                failed=1
        fi
        printf '%-14s %8s %9s %12s %8s %6s %6s %5s %6s  %s\n' "$name" "$seconds" "$maxlen" \
                "${execs:-?}" "${rate:-?}" "${init:-?}" "${cov:-?}" "$new" "$lastpct" "$result"
        if [ "$result" != ok ]; then
                { grep -E 'ERROR|SUMMARY|invariant failed|==[0-9]+==|#[0-9]+ 0x' "$work/log" || true; } |
                        head -30 | sed 's/^/    /'
                for a in "$work/artifacts/"*; do
                        [ -e "$a" ] && echo "    input: $a"
                done
                echo "    full log: $work/log"
        fi
}

jobs=${FUZZ_JOBS:-2}
[ -z "${FUZZ_PARALLEL:-}" ] || jobs=${#targets[@]}
case $jobs in '' | *[!0-9]* | 0) echo "fuzz: FUZZ_JOBS wants a number > 0, not '$jobs'" >&2; exit 2 ;; esac
# at most $jobs targets at a time; each one's seconds and limits are the same as alone
running=0
for bin in "${targets[@]}"; do
        if [ "$running" -ge "$jobs" ]; then
                wait -n || true
                running=$((running - 1))
        fi
        run_one "$bin" &
        running=$((running + 1))
done
wait
printf '%-14s %8s %9s %12s %8s %6s %6s %5s %6s  %s\n' target seconds max_len execs exec/s \
        cov0 cov new last result
for bin in "${targets[@]}"; do
        report_one "${bin##*/fuzz-}"
        ran=$((ran + 1))
done
echo "fuzz: $ran targets, ${seconds}s each, $jobs at a time, $([ $failed -eq 0 ] && echo 'no crashes' || echo FAILED)"
if [ $failed -eq 0 ]; then
        rm -rf "$scratch"
else
        echo "fuzz: scratch kept in $scratch"
fi
exit $failed
