#!/usr/bin/env bash
# Cross-check `attestctl ima replay` against ima-evm-utils' `evmctl ima_measurement` on every real
# IMA log in tests/data/ (every folder with a binary log and a PCR file; qemu61-good and qemu61-tcb
# are the two earliest boots, see tests/data/README.md) and on tampered copies of each: a flipped
# byte in the template data of entry k, a deleted entry, two swapped entries, a dropped last entry,
# a truncated last entry. For every bank with a PCR file both tools must agree with
# each other and with the expected verdict (pass on the real logs, fail on the tampered ones).
#
# Two cases are known differences, printed but not failures as long as each tool gives its own
# expected verdict:
#   - a violation entry whose file digest is not zero: attestctl rejects it (the kernel always logs
#     violations with a zero digest), evmctl replays 0xff.. and accepts it;
#   - a flipped logged sha1 template hash while replaying a bank other than sha1: evmctl checks the
#     logged sha1 of every entry against its template data ("Failed to verify template data
#     digest") whatever the bank; attestctl checks it only when it replays the sha1 bank or reads
#     an ascii log, since no other bank's PCR covers that field.
#
# evmctl cannot judge every case; such rows are printed as "not compared" with the reason and are
# never counted as passes:
#   - evmctl 1.4 knows only the sha1 and sha256 banks ("Unknown algorithm 'sha384'", and then it
#     exits 0 after "Failed to read any TPM PCRs", so its exit status alone is not a verdict: a
#     pass needs exit 0 *and* "Matched per TPM bank");
#   - evmctl ima_measurement does not check boot_aggregate against PCR 0-9.
# A run where nothing was compared fails: a missing evmctl or missing logs must not pass silently.
#
# Usage: test-evmctl.sh ATTESTCTL   (meson passes the built attestctl)
set -euo pipefail

if [ $# -ne 1 ]; then
        echo "Usage: $0 ATTESTCTL" >&2
        exit 2
fi
attestctl=$1
top=${ATTEST_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
evmctl=${EVMCTL:-evmctl}

if ! command -v "$evmctl" >/dev/null; then
        echo "test-evmctl: evmctl not found (setup.sh installs ima-evm-utils)" >&2
        exit 1
fi
if [ ! -x "$attestctl" ]; then
        echo "test-evmctl: $attestctl is not executable" >&2
        exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/test-evmctl.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- binary log layout: one line "start data_start data_len end violation template" per entry ----
# The log's bytes are read once (one od, a decimal number a line, into $bytes) and every field is
# taken from that array: a process per field (od, tr, dd) was a thousand processes a run.
load_bytes() {
        mapfile -t bytes < <(od -An -v -tu1 -w1 "$1")
}

# u32le OFFSET: the little-endian 32-bit number at OFFSET of the loaded log, in $u
u32le() {
        u=$((bytes[$1] + (bytes[$1 + 1] << 8) + (bytes[$1 + 2] << 16) + (bytes[$1 + 3] << 24)))
}

entry_table() { # of the loaded log
        local size=${#bytes[@]} off=0 tlen tname p dlen dstart viol i hex ch
        while [ "$off" -lt "$size" ]; do
                u32le $((off + 24))
                tlen=$u
                tname=""
                for ((i = off + 28; i < off + 28 + tlen; i++)); do
                        printf -v hex %02x "${bytes[i]}"
                        printf -v ch "\\x$hex"
                        tname+=$ch
                done
                p=$((off + 28 + tlen))
                if [ "$tname" = ima ]; then
                        dstart=$p
                        u32le $((p + 20))
                        dlen=$((24 + u))
                else
                        dstart=$((p + 4))
                        u32le "$p"
                        dlen=$u
                fi
                # a violation: the logged sha1 template hash is 20 zero bytes
                viol=1
                for ((i = off + 4; i < off + 24; i++)); do
                        [ $((bytes[i])) -eq 0 ] || { viol=0; break; }
                done
                echo "$off $dstart $dlen $((dstart + dlen)) $viol $tname"
                off=$((dstart + dlen))
        done
}

# bytes [from, to) of a file (one dd)
slice() {
        local f=$1 from=$2 to=$3
        [ "$to" -gt "$from" ] || return 0
        dd if="$f" bs=64K iflag=skip_bytes,count_bytes skip="$from" count=$((to - from)) \
                status=none
}

# flip_byte SRC DST AT: DST a copy of the loaded log SRC with byte AT xor 0x5a
flip_byte() {
        local src=$1 dst=$2 at=$3 hex
        cp "$src" "$dst"
        printf -v hex %02x $((bytes[at] ^ 0x5a))
        # shellcheck disable=SC2059
        printf "\\x$hex" | dd of="$dst" bs=1 seek="$at" conv=notrunc 2>/dev/null
}

# ---- the two verdicts: pass, fail, or "n/a: reason" ----
# Each sets a global (av, ev) instead of printing for $(...): 357 cases x 2 tools, and a subshell
# and a grep per check were most of this test's time (two processes per case are left: the tools)
slurp() { # FILE -> $out (bash builtins: no process)
        out=""
        IFS= read -r -d '' out <"$1" || true
}
attest_verdict() {
        local log=$1 bank=$2 pcrs=$3
        if "$attestctl" ima replay --format binary --bank "$bank" --pcrs "$pcrs" "$log" \
                >"$work/attest.out" 2>&1; then
                av=pass
        else
                av=fail
        fi
}

# evmctl's answer for a bank it does not know does not depend on the log: asked once per bank
declare -A evm_unknown=()
evm_verdict() {
        local log=$1 bank=$2 pcrs=$3 rc=0
        if [ -n "${evm_unknown[$bank]:-}" ]; then
                ev="n/a: evmctl has no $bank bank"
                return
        fi
        "$evmctl" ima_measurement --ignore-violations --pcrs "$bank,$pcrs" "$log" \
                >"$work/evm.out" 2>&1 || rc=$?
        slurp "$work/evm.out"
        if [[ $out == *"Unknown algorithm"* ]]; then
                evm_unknown[$bank]=1
                ev="n/a: evmctl has no $bank bank"
        elif [ $rc -eq 0 ] && [[ $out == *"Matched per TPM bank"* ]]; then
                ev=pass
        elif [ $rc -ne 0 ]; then
                ev=fail
        else
                out=${out%$'\n'}
                ev="n/a: evmctl exit 0 without a match (${out##*$'\n'})"
        fi
}

# ---- data sets: every folder with a binary log and at least one PCR file, deduplicated ----
sets=()
declare -A seen=()
for d in "$top"/tests/data/*/; do
        [ -f "$d/binary_runtime_measurements" ] || continue
        ls "$d"/pcrs-*.txt >/dev/null 2>&1 || continue
        sum=$(cat "$d/binary_runtime_measurements" "$d"/pcrs-*.txt | sha256sum | cut -c1-16)
        if [ -n "${seen[$sum]:-}" ]; then
                continue
        fi
        seen[$sum]=$d
        sets+=("${d%/}")
done
if [ ${#sets[@]} -eq 0 ]; then
        echo "test-evmctl: no IMA logs found in $top/tests/data" >&2
        exit 1
fi

agree=0
disagree=0
wrong=0
notcmp=0
rows=()

known=0

# record SET CASE BANK EXPECT_ATTESTCTL EXPECT_EVMCTL REASON ATTESTCTL EVMCTL
record() {
        local set=$1 case=$2 bank=$3 xa=$4 xe=$5 why=$6 a=$7 e=$8 verdict expect=$4 row
        if [ "$xa" != "$xe" ]; then
                expect="$xa/$xe"
        fi
        if [[ $e == n/a* ]]; then
                verdict="not compared (${e#n/a: })"
                notcmp=$((notcmp + 1))
                if [ "$a" != "$xa" ]; then
                        verdict="ATTESTCTL WRONG; evmctl ${e}"
                        wrong=$((wrong + 1))
                fi
                e=n/a
        elif [ "$a" = "$xa" ] && [ "$e" = "$xe" ]; then
                if [ "$a" = "$e" ]; then
                        verdict=agree
                        agree=$((agree + 1))
                else
                        verdict="known difference ($why)"
                        known=$((known + 1))
                fi
        elif [ "$a" != "$e" ]; then
                verdict=DISAGREE
                disagree=$((disagree + 1))
        else
                verdict="BOTH WRONG"
                wrong=$((wrong + 1))
        fi
        printf -v row '%-16s %-32s %-7s %-9s %-9s %-6s %s' "$set" "$case" "$bank" "$expect" "$a" \
                "$e" "$verdict"
        rows+=("$row")
}

for d in "${sets[@]}"; do
        name=${d##*/}
        log="$d/binary_runtime_measurements"
        load_bytes "$log"
        mapfile -t tab < <(entry_table)
        n=${#tab[@]}
        if [ "$n" -lt 3 ]; then
                echo "test-evmctl: $log has only $n entries; need 3 for the tampered copies" >&2
                exit 1
        fi
        # every bank the TPM reported, as attestctl would get them from a quote
        cat "$d"/pcrs-*.txt >"$work/pcrs-all.txt"

        # the cases: name|attestctl expects|evmctl expects|why they may differ|file
        cases=()
        cp "$log" "$work/orig"
        cases+=("original|pass|pass||$work/orig")
        # flip a byte in the middle of the template data of the first, second and last
        # non-violation entries. A violation entry extends 0xff.., whatever its data: a changed
        # name passes both; a non-zero digest is rejected by attestctl only.
        picked=0
        for k in $(seq 0 $((n - 1))); do
                read -r s ds dl e v t <<<"${tab[$k]}"
                if [ "$v" = 1 ]; then
                        case $t in
                        ima-ng | ima-sig | ima-buf | ima-modsig) ;;
                        *) continue ;; # fields in an order this script does not know
                        esac
                        # fields d-ng "sha256:\0" digest, then n-ng name NUL: flip the name's
                        # last byte, and the digest's last byte
                        u32le "$ds"
                        l1=$u
                        u32le $((ds + 4 + l1))
                        l2=$u
                        flip_byte "$log" "$work/flipvn$k" $((ds + 4 + l1 + 4 + l2 - 2))
                        cases+=("flip name, violation entry $k|pass|pass||$work/flipvn$k")
                        flip_byte "$log" "$work/flipvd$k" $((ds + 4 + l1 - 1))
                        cases+=("flip digest, violation entry $k|fail|pass|violation digest must be zero|$work/flipvd$k")
                        continue
                fi
                if [ $picked -lt 2 ] || [ "$k" -eq $((n - 1)) ]; then
                        flip_byte "$log" "$work/flip$k" $((ds + dl / 2))
                        cases+=("flip data byte, entry $k|fail|fail||$work/flip$k")
                        picked=$((picked + 1))
                fi
        done
        # flip the logged sha1 template hash of entry 1
        read -r s1 ds1 dl1 e1 v1 t1 <<<"${tab[1]}"
        flip_byte "$log" "$work/fliph1" $((s1 + 4))
        # delete entry 1; swap entries 1 and 2; drop the last entry; cut the last one in half
        read -r s2 ds2 dl2 e2 v2 t2 <<<"${tab[2]}"
        read -r sl dsl dll el vl tl <<<"${tab[$((n - 1))]}"
        { slice "$log" 0 "$s1"; slice "$log" "$e1" "$el"; } >"$work/del1"
        cases+=("delete entry 1|fail|fail||$work/del1")
        if cmp -s <(slice "$log" "$s1" "$e1") <(slice "$log" "$s2" "$e2"); then
                echo "test-evmctl: $name: entries 1 and 2 are identical; swap skipped" >&2
        else
                { slice "$log" 0 "$s1"; slice "$log" "$s2" "$e2"; slice "$log" "$s1" "$e1"
                  slice "$log" "$e2" "$el"; } >"$work/swap12"
                cases+=("swap entries 1 and 2|fail|fail||$work/swap12")
        fi
        slice "$log" 0 "$sl" >"$work/droplast"
        cases+=("drop last entry|fail|fail||$work/droplast")
        slice "$log" 0 $((sl + (el - sl) / 2)) >"$work/trunc"
        cases+=("truncate inside last entry|fail|fail||$work/trunc")

        for pf in "$d"/pcrs-*.txt; do
                bank=${pf##*/pcrs-}
                bank=${bank%.txt}
                # evmctl 1.4 reads "PCR-NN: HEX" lines, PCR 0 first
                awk '{ printf "PCR-%02d: %s\n", $1, $2 }' "$pf" >"$work/evm-$bank.txt"
                for c in "${cases[@]}"; do
                        IFS='|' read -r cname xa xe why file <<<"$c"
                        attest_verdict "$file" "$bank" "$work/pcrs-all.txt"
                        evm_verdict "$file" "$bank" "$work/evm-$bank.txt"
                        record "$name" "$cname" "$bank" "$xa" "$xe" "$why" "$av" "$ev"
                done
                # the logged sha1 hash: the sha1 bank extends it; no other bank's PCR covers it
                [ "$bank" = sha1 ] && xa=fail || xa=pass
                attest_verdict "$work/fliph1" "$bank" "$work/pcrs-all.txt"
                evm_verdict "$work/fliph1" "$bank" "$work/evm-$bank.txt"
                record "$name" "flip logged sha1 hash, entry 1" "$bank" "$xa" fail \
                        "evmctl checks the logged sha1 in every bank" "$av" "$ev"
        done
        # PCR 0 changed in every bank of the PCR input: only the boot_aggregate check notices
        awk '$1 == 0 { $2 = "ff" substr($2, 3) } { print }' "$work/pcrs-all.txt" \
                >"$work/pcrs-pcr0.txt"
        attest_verdict "$log" sha256 "$work/pcrs-pcr0.txt"
        record "$name" "PCR 0 changed (boot_aggregate)" sha256 fail fail "" "$av" \
                "n/a: evmctl does not check boot_aggregate"
done

printf '%-16s %-32s %-7s %-9s %-9s %-6s %s\n' "log" "case" "bank" "expect" "attestctl" "evmctl" \
        "verdict"
printf '%s\n' "${rows[@]}"
printf '\ntest-evmctl: %d logs, %d cases: %d agree, %d known differences, %d disagree, ' \
        ${#sets[@]} ${#rows[@]} $agree $known $disagree
printf '%d wrong verdicts, %d not compared\n' $wrong $notcmp
if [ $agree -eq 0 ]; then
        echo "test-evmctl: nothing was compared" >&2
        exit 1
fi
[ $disagree -eq 0 ] && [ $wrong -eq 0 ]
