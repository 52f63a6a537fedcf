#!/usr/bin/env bash
# Check a captured boot (tests/data/<name>/) against itself: IMA replay, boot_aggregate, firmware log.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/check-log.sh [--no-evmctl] DIR

DIR holds one boot as kernel/capture.sh writes it: binary_runtime_measurements,
ascii_runtime_measurements, binary_bios_measurements, cmdline.txt and pcrs-<bank>.txt (lines
"N HEX", N = 0..23). This script is an independent, slow, plain-bash reference used to vouch for
the files, not part of attestd. It checks, and prints what it found:
  - the binary log parses to the end (templates ima, ima-ng, ima-sig, ima-buf and any field list);
    for every non-violation entry the logged sha1 template hash is sha1 of the template data;
  - replaying PCR 10 from the binary log gives the PCR 10 of every bank file (non-sha1 banks hash
    the template data with the bank's hash; a violation extends 0xFF.. of the bank's size);
  - the ascii log has the same entries (PCR, template hash, template name) in the same order;
  - boot_aggregate equals H(PCR0 || .. || PCR9) of the bank matching its digest algorithm
    (PCR0..7 only for sha1, as the kernel does);
  - replaying the TCG2 firmware event log gives PCR 0..9 of every bank;
  - with evmctl (ima-evm-utils) present and not --no-evmctl: 'evmctl ima_measurement
    --ignore-violations --pcrs BANK,FILE' agrees, for the sha1 and sha256 banks (the only ones
    evmctl 1.4 knows), the PCR files converted to its "PCR-NN: HEX" format in a temp folder.
EOF
}

use_evmctl=1
while [ $# -gt 0 ]; do
        case $1 in
        --no-evmctl) use_evmctl=0 ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; die "unknown option '$1'" ;;
        *) break ;;
        esac
        shift
done
[ $# = 1 ] || { usage >&2; exit 2; }
dir=$1
need xxd sha1sum sha256sum sha384sum sha512sum
for f in binary_runtime_measurements ascii_runtime_measurements pcrs-sha1.txt; do
        [ -f "$dir/$f" ] || die "$dir/$f missing"
done

failed=0
bad() {
        log "FAIL: $*"
        failed=1
}

# hash ALG: hex on stdin -> hex digest of the bytes.
hash() {
        xxd -r -p | "${1}sum" | cut -d' ' -f1
}

declare -A size=([sha1]=20 [sha256]=32 [sha384]=48 [sha512]=64)
declare -A tpm_alg=([0004]=sha1 [000b]=sha256 [000c]=sha384 [000d]=sha512)
banks=()
for b in sha1 sha256 sha384 sha512; do
        [ -f "$dir/pcrs-$b.txt" ] && banks+=("$b")
done

# pcr BANK N: the value from pcrs-BANK.txt.
pcr() {
        awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }' "$dir/pcrs-$1.txt" ||
                die "pcrs-$1.txt has no PCR $2"
}

# Little-endian u32 at hex offset $2 (in bytes) of the hex string in $1.
u32le() {
        local h=${1:$(($2 * 2)):8}
        [ ${#h} = 8 ] || return 1
        echo $((16#${h:6:2}${h:4:2}${h:2:2}${h:0:2}))
}
u16le() {
        local h=${1:$(($2 * 2)):4}
        [ ${#h} = 4 ] || return 1
        echo $((16#${h:2:2}${h:0:2}))
}

hexstr() {
        xxd -r -p
}

# --- IMA binary log ---
log_hex=$(xxd -p "$dir/binary_runtime_measurements" | tr -d '\n')
total=$((${#log_hex} / 2))
declare -A pcr10
for b in "${banks[@]}"; do
        pcr10[$b]=$(printf '%0*d' $((size[$b] * 2)) 0)
done
off=0
n=0
viol=0
declare -A tmpl_count=() cd_count=() ph_seen=()
enforcing=()
ph_alg=
ph_buf=
entries=()
ba_line=
while [ "$off" -lt "$total" ]; do
        n=$((n + 1))
        [ $((total - off)) -ge 32 ] || die "entry $n at byte $off: truncated header"
        ipcr=$(u32le "$log_hex" "$off")
        th=${log_hex:$(((off + 4) * 2)):40}
        nlen=$(u32le "$log_hex" $((off + 24)))
        [ "$nlen" -le 255 ] || die "entry $n at byte $off: template name length $nlen"
        tname=$(printf '%s' "${log_hex:$(((off + 28) * 2)):$((nlen * 2))}" | hexstr)
        p=$((off + 28 + nlen))
        if [ "$tname" = ima ]; then
                # digest (20, no length) | u32 name length | name without NUL; hashed as
                # digest || name zero-padded to 256 bytes.
                d=${log_hex:$((p * 2)):40}
                fl=$(u32le "$log_hex" $((p + 20)))
                [ "$fl" -le 255 ] || die "entry $n: ima name length $fl"
                fname=${log_hex:$(((p + 24) * 2)):$((fl * 2))}
                hashed=$d$fname$(printf '%0*d' $(((256 - fl) * 2)) 0)
                p=$((p + 24 + fl))
                fields=("$d" "$fname")
        else
                dl=$(u32le "$log_hex" "$p")
                [ $((total - p - 4)) -ge "$dl" ] || die "entry $n at byte $off: data length $dl past the end"
                hashed=${log_hex:$(((p + 4) * 2)):$((dl * 2))}
                # Split the fields (u32 length | bytes each) for the ascii comparison.
                fields=()
                q=0
                while [ "$q" -lt "$dl" ]; do
                        fl=$(u32le "$hashed" "$q") || die "entry $n: truncated field"
                        [ $((dl - q - 4)) -ge "$fl" ] || die "entry $n: field overruns the template data"
                        fields+=("${hashed:$(((q + 4) * 2)):$((fl * 2))}")
                        q=$((q + 4 + fl))
                done
                p=$((p + 4 + dl))
        fi
        tmpl_count[$tname]=$((${tmpl_count[$tname]:-0} + 1))
        zero=$(printf '%040d' 0)
        if [ "$th" = "$zero" ]; then
                viol=$((viol + 1))
        else
                [ "$(printf '%s' "$hashed" | hash sha1)" = "$th" ] ||
                        bad "entry $n: sha1 template hash is not sha1 of the template data"
        fi
        if [ "$ipcr" = 10 ]; then
                for b in "${banks[@]}"; do
                        if [ "$th" = "$zero" ]; then
                                t=$(printf 'f%.0s' $(seq $((size[$b] * 2))))
                        else
                                t=$(printf '%s' "$hashed" | hash "$b")
                        fi
                        pcr10[$b]=$(printf '%s%s' "${pcr10[$b]}" "$t" | hash "$b")
                done
        fi
        # Entry name (second field) as text, for the summary and the ascii check.
        ename=$(printf '%s' "${fields[1]:-}" | hexstr | tr -d '\0')
        entries+=("$ipcr $th $tname $ename")
        if [ "$ename" = boot_aggregate ] && [ -z "$ba_line" ]; then
                ba_line=${fields[0]}
        fi
        case $ename in
        selinux-state | selinux-policy-hash | kernel_version)
                cd_count[$ename]=$((${cd_count[$ename]:-0} + 1))
                ;;
        esac
        if [ "$ename" = selinux-state ]; then
                st=$(printf '%s' "${fields[2]:-}" | hexstr)
                st=${st#*enforcing=}
                enforcing+=("${st%%;*}")
        fi
        if [ "$ename" = selinux-policy-hash ]; then
                ph_alg=$(printf '%s' "${fields[0]%%3a00*}" | hexstr)
                ph_buf=${fields[2]:-}
                ph_seen[$ph_buf]=1
        fi
        off=$p
done
log "binary log: $n entries, $viol violations, $total bytes; templates: $(for k in "${!tmpl_count[@]}"; do printf '%s=%s ' "$k" "${tmpl_count[$k]}"; done)"

if [ ${#cd_count[@]} -gt 0 ]; then
        log "critical data: $(for k in "${!cd_count[@]}"; do printf '%s=%s ' "$k" "${cd_count[$k]}"; done)(${#ph_seen[@]} distinct policy hashes); selinux-state enforcing: ${enforcing[*]:-none}"
fi
# The selinux-policy-hash buffer is the policy as the kernel re-serialises it, hashed with IMA's
# hash algorithm (ima_hash=), not always sha256. selinux_policy, when the capture has it, is
# /sys/fs/selinux/policy read after the snapshot: it must match the last policy hash entry.
if [ -n "$ph_buf" ] && [ -f "$dir/selinux_policy" ]; then
        calc=$("${ph_alg}sum" <"$dir/selinux_policy" | cut -d' ' -f1)
        if [ "$calc" = "$ph_buf" ]; then
                log "selinux_policy: $ph_alg of it is the last selinux-policy-hash buffer ($calc)"
        else
                bad "selinux_policy: $ph_alg $calc != last selinux-policy-hash buffer $ph_buf"
        fi
fi

for b in "${banks[@]}"; do
        want=$(pcr "$b" 10)
        if [ "${pcr10[$b]}" = "$want" ]; then
                log "PCR 10 $b: replay matches ($want)"
        else
                bad "PCR 10 $b: replay ${pcr10[$b]} != TPM $want"
        fi
done

# --- ascii log: same PCR, template hash, template name and entry name, in order ---
i=0
while read -r ap ath atn arest; do
        e=${entries[$i]:-}
        [ -n "$e" ] || { bad "ascii line $((i + 1)): no binary entry"; break; }
        read -r bp bth btn bname <<<"$e"
        [ "$ap $ath $atn" = "$bp $bth $btn" ] || bad "ascii line $((i + 1)) differs: '$ap $ath $atn' vs '$bp $bth $btn'"
        case " $arest " in *" $bname "* | *" $bname") ;; *) bad "ascii line $((i + 1)): name '$bname' not in '$arest'" ;; esac
        i=$((i + 1))
done <"$dir/ascii_runtime_measurements"
[ "$i" = "$n" ] || bad "ascii log has $i entries, binary $n"
[ "$i" = "$n" ] && log "ascii log: $i entries, same order, PCRs, hashes and names"

# --- boot_aggregate ---
if [ -n "$ba_line" ]; then
        # d-ng: "<algo>:\0<digest>", d (ima template): 20-byte sha1 digest.
        if [ "${#ba_line}" = 40 ]; then
                alg=sha1
                digest=$ba_line
        else
                prefix=$(printf '%s' "${ba_line%%3a00*}" | hexstr)
                alg=$prefix
                digest=${ba_line#*3a00}
        fi
        last=9
        [ "$alg" = sha1 ] && last=7
        cat_hex=
        for i in $(seq 0 "$last"); do
                cat_hex+=$(pcr "$alg" "$i")
        done
        calc=$(printf '%s' "$cat_hex" | hash "$alg")
        if [ "$calc" = "$digest" ]; then
                log "boot_aggregate: $alg over PCR 0..$last of the $alg bank matches ($digest)"
        else
                bad "boot_aggregate: $alg(PCR0..$last) = $calc, log has $digest"
        fi
else
        bad "no boot_aggregate entry"
fi

# --- TCG2 firmware event log (crypto-agile), PCR 0..9 ---
if [ -f "$dir/binary_bios_measurements" ]; then
        bh=$(xxd -p "$dir/binary_bios_measurements" | tr -d '\n')
        btotal=$((${#bh} / 2))
        # First event: TCG_PCR_EVENT (sha1 format) holding the Spec ID event.
        esz=$(u32le "$bh" 28)
        [ "$(printf '%s' "${bh:64:32}" | hexstr | tr -d '\0')" = "Spec ID Event03" ] ||
                die "firmware log: no Spec ID Event03 header"
        nalg=$(u32le "$bh" $((32 + 24)))
        declare -A algsize fw
        for ((k = 0; k < nalg; k++)); do
                id=${bh:$(((32 + 28 + k * 4) * 2)):4}
                id=${id:2:2}${id:0:2}
                algsize[$id]=$(u16le "$bh" $((32 + 28 + k * 4 + 2)))
        done
        o=$((32 + esz))
        events=1
        while [ "$o" -lt "$btotal" ]; do
                ep=$(u32le "$bh" "$o")
                cnt=$(u32le "$bh" $((o + 8)))
                o=$((o + 12))
                for ((k = 0; k < cnt; k++)); do
                        id=${bh:$((o * 2)):4}
                        id=${id:2:2}${id:0:2}
                        sz=${algsize[$id]:-}
                        [ -n "$sz" ] || die "firmware log: unknown algorithm $id"
                        dg=${bh:$(((o + 2) * 2)):$((sz * 2))}
                        b=${tpm_alg[$id]:-}
                        if [ -n "$b" ]; then
                                cur=${fw[$b,$ep]:-$(printf '%0*d' $((sz * 2)) 0)}
                                fw[$b,$ep]=$(printf '%s%s' "$cur" "$dg" | hash "$b")
                        fi
                        o=$((o + 2 + sz))
                done
                es=$(u32le "$bh" "$o")
                o=$((o + 4 + es))
                events=$((events + 1))
        done
        [ "$o" = "$btotal" ] || bad "firmware log: trailing bytes"
        ok=0
        for b in "${banks[@]}"; do
                for i in $(seq 0 9); do
                        want=$(pcr "$b" "$i")
                        got=${fw[$b,$i]:-$(printf '%0*d' $((size[$b] * 2)) 0)}
                        if [ "$got" = "$want" ]; then ok=$((ok + 1)); else bad "firmware log: $b PCR $i replay $got != $want"; fi
                done
        done
        log "firmware log: $events events, $ok of $((${#banks[@]} * 10)) bank/PCR values (0..9) replay to the TPM"
fi

# --- evmctl ---
# ima-evm-utils 1.4 (Debian 12) knows only the sha1 and sha256 banks ("Unknown algorithm 'sha384'",
# and exit status 0 all the same), takes one --pcrs file per run here, and without
# --ignore-violations extends violations as zeros, unlike the kernel. So: one run per bank it
# knows, and the verdict is its "Matched" line plus its exit status.
if [ "$use_evmctl" = 1 ] && command -v evmctl >/dev/null 2>&1; then
        tmp=$(mktemp -d)
        for b in "${banks[@]}"; do
                case $b in sha1 | sha256) ;; *) continue ;; esac
                awk '{ printf "PCR-%02d: %s\n", $1, $2 }' "$dir/pcrs-$b.txt" >"$tmp/$b"
                if evmctl ima_measurement --ignore-violations --pcrs "$b,$tmp/$b" \
                        "$dir/binary_runtime_measurements" >"$tmp/out" 2>&1 &&
                        grep -q '^Matched per TPM bank' "$tmp/out"; then
                        log "evmctl ima_measurement --ignore-violations --pcrs $b,...: matched"
                else
                        bad "evmctl ($b): $(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
                fi
        done
        rm -rf "$tmp"
fi

[ "$failed" = 0 ] || die "$dir: checks failed"
log "$dir: all checks passed"
