#!/usr/bin/env bash
# Every recorded boot in tests/data, replayed into a fresh swtpm (tests/lib/replay-boot), gives the
# TPM exactly the PCR 0-10 values recorded on the real machine, in every bank; and
# `attestctl ima replay` against the TPM's own tpm2_pcrread output passes, boot_aggregate included.
# Usage: test-replay-boot.sh ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
ctl=$1 swtpm_run=$2 top=$3
fail=0 n=0
for boot in "$top"/tests/data/*/; do
        [ -f "$boot/binary_bios_measurements" ] || continue
        name=$(basename "$boot")
        out=$(mktemp)
        BOOT=$boot CTL=$ctl TOP=$top OUT=$out "$swtpm_run" -- bash -c '
                "$TOP/tests/lib/replay-boot" "$BOOT" "$CTL"
                sel=""
                for b in sha1 sha256 sha384 sha512; do sel="$sel${sel:++}$b:0,1,2,3,4,5,6,7,8,9,10"; done
                tpm2_pcrread "$sel" >"$OUT"'
        ok=1
        # the swtpm's values, "BANK:INDEX" -> hex (tpm2_pcrread YAML: "  sha256:" then
        # "    0 : 0xHEX"), read with one awk; the recorded ones with read (a process per value
        # was ~1,300 process starts a run)
        declare -A got=()
        while read -r k v; do got[$k]=$v; done < <(tr -d ' ' <"$out" | awk -F: '
                $2 == "" { b = $1; next } b != "" { print b ":" $1, tolower(substr($2, 3)) }')
        for b in sha1 sha256 sha384 sha512; do
                declare -A want=()
                while read -r i v _; do want[$i]=$v; done <"$boot/pcrs-$b.txt"
                for i in 0 1 2 3 4 5 6 7 8 9 10; do
                        [ "${want[$i]:-}" = "${got[$b:$i]:-}" ] ||
                                { echo "FAIL - $name $b:$i: recorded ${want[$i]:-}, swtpm ${got[$b:$i]:-}"; ok=0; }
                done
                unset want
        done
        unset got
        if "$ctl" ima replay --pcrs "$out" "$boot/binary_runtime_measurements" >"$out.r" 2>&1 &&
                grep -q 'boot_aggregate (entry 0): ok' "$out.r"; then :; else
                echo "FAIL - $name: attestctl ima replay against the swtpm PCRs"; cat "$out.r"; ok=0
        fi
        [ $ok -eq 1 ] && echo "ok   - $name: swtpm PCR 0-10 = recorded, all banks; replay + boot_aggregate pass"
        [ $ok -eq 1 ] || fail=1
        n=$((n + 1))
        rm -f "$out" "$out.r"
done
[ $n -ge 2 ] || { echo "FAIL - only $n boots found"; fail=1; }
exit $fail
