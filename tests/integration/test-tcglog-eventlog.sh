#!/usr/bin/env bash
# Cross-check of the firmware event log reader with tpm2-tools: for every recorded boot in
# tests/data, `attestctl tcglog --json` (evidence/tcglog.c, replay by verify/boot.c) and
# `tpm2_eventlog` agree on every event (PCR, type, each bank's digest) and on the replayed PCRs
# of every bank; and both equal the PCR values recorded on the machine (pcrs-<bank>.txt); every
# separator of PCR 0-7 (00000000h from OVMF, FFFFFFFFh from SeaBIOS) shows "error": false.
# Usage: test-tcglog-eventlog.sh ATTESTCTL TOP
set -euo pipefail
ctl=$1 top=$2
command -v tpm2_eventlog >/dev/null || { echo "FAIL - tpm2_eventlog is not installed"; exit 1; }
work=$(mktemp -d /tmp/tcglog-xcheck.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0 n=0
for boot in "$top"/tests/data/*/; do
        log=$boot/binary_bios_measurements
        [ -f "$log" ] || continue
        name=$(basename "$boot")
        "$ctl" tcglog --json "$log" >"$work/ours.json"
        tpm2_eventlog "$log" >"$work/theirs.yaml" 2>/dev/null
        # events: "N PCR TYPE alg=hex alg=hex ..." (the Spec ID event: no digests)
        jq -r '.events[] | "\(.index) \(.pcr) \(.type)" +
                (if .index == 0 then "" else
                 " " + ([.digests | to_entries[] | "\(.key)=\(.value)"] | sort | join(" ")) end)' \
                "$work/ours.json" >"$work/ours.ev"
        awk '
                function flush() { if (num != "") print num, pcr, type, d; d = "" }
                /^- EventNum:/ { flush(); num = $3 }
                /^  PCRIndex:/ { pcr = $2 }
                /^  EventType:/ { type = $2 }
                /^  - AlgorithmId:/ { alg = $3 }
                /^    Digest:/ { v = $2; gsub(/"/, "", v); d = d (d == "" ? "" : " ") alg "=" v }
                /^pcrs:/ { flush(); num = "" }
                END { flush() }' "$work/theirs.yaml" |
                # the digests of each event in sorted order, as jq sorts them
                while read -r num pcr type rest; do
                        line="$num $pcr $type"
                        if [ -n "$rest" ]; then
                                line="$line $(tr ' ' '\n' <<<"$rest" | LC_ALL=C sort | tr '\n' ' ')"
                                line=${line% }
                        fi
                        echo "$line"
                done >"$work/theirs.ev"
        # PCRs: "bank N hex"
        jq -r '.pcrs | to_entries[] | .key as $b | .value | to_entries[] |
                "\($b) \(.key) \(.value)"' "$work/ours.json" | sort >"$work/ours.pcr"
        awk '/^pcrs:/ { on = 1; next } on && /^  [a-z0-9]+:$/ { b = $1; sub(":", "", b); next }
             on && /^    [0-9]+ *:/ { v = $NF; sub("^0x", "", v); print b, $1, tolower(v) }' \
                "$work/theirs.yaml" | sort >"$work/theirs.pcr"
        ok=1
        if ! diff -u "$work/theirs.ev" "$work/ours.ev" >"$work/d"; then
                echo "FAIL - $name: events differ from tpm2_eventlog"; head -20 "$work/d"; ok=0
        fi
        if ! diff -u "$work/theirs.pcr" "$work/ours.pcr" >"$work/d"; then
                echo "FAIL - $name: replayed PCRs differ from tpm2_eventlog"; head -20 "$work/d"; ok=0
        fi
        # the replayed values ("bank N hex" lines) and the recorded ones read with read, not two
        # awk processes a comparison (64 a boot)
        declare -A got=()
        while read -r b i v; do got[$b:$i]=$v; done <"$work/ours.pcr"
        for b in sha1 sha256 sha384 sha512; do
                declare -A want=()
                while read -r i v _; do want[$i]=$v; done <"$boot/pcrs-$b.txt"
                for i in 0 1 2 3 4 5 6 7; do
                        [ "${want[$i]:-}" = "${got[$b:$i]:-}" ] ||
                                { echo "FAIL - $name $b:$i: recorded ${want[$i]:-}, replay ${got[$b:$i]:-}"; ok=0; }
                done
                unset want
        done
        unset got
        # the separators of PCR 0-7 are delimiters (PFP: 00000000h, or FFFFFFFFh as SeaBIOS
        # writes them), none an error
        seps=$(jq -r '[.events[] | select(.type == "EV_SEPARATOR" and .pcr < 8) |
                .decoded.error | tostring] | join(" ")' "$work/ours.json")
        [ "$seps" = "false false false false false false false false" ] ||
                { echo "FAIL - $name: separators' error flags: $seps"; ok=0; }
        events=$(wc -l <"$work/ours.ev") pcrs=$(wc -l <"$work/ours.pcr")
        if [ "$events" -lt 10 ] || [ "$pcrs" -lt 32 ]; then echo "FAIL - $name: $events events, $pcrs PCRs"; ok=0; fi
        [ $ok -eq 1 ] && echo "ok   - $name: $events events and $pcrs PCR values = tpm2_eventlog; PCR 0-7 = recorded, 4 banks"
        [ $ok -eq 1 ] || fail=1
        n=$((n + 1))
done
[ $n -ge 6 ] || { echo "FAIL - only $n boots with a firmware log"; fail=1; }
exit $fail
