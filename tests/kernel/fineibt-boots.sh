#!/usr/bin/env bash
# fineibt-boots.sh KERNEL N: N bare boots of KERNEL with FineIBT forced (cfi=fineibt,norand,
# kernel/scenarios/fineibt-boot.scn), two at a time; counts the boots that reached init and those
# that died on a half-written FineIBT caller ("CFI failure ... expected type: 0x12345678", the race
# kernel/patches/6.12/0004 fixes). A rate, not a test: not run by the kernel stage. The figures in
# kernel/README.md ("The patch series", patch 4) come from it, on the kernel with and without
# patch 4. Needs what kernel/boot.sh needs.
set -euo pipefail
kernel=$(realpath "${1:?usage: fineibt-boots.sh KERNEL N}")
n=${2:?usage: fineibt-boots.sh KERNEL N}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /var/tmp/attestd-fineibt.XXXXXX)
trap 'rm -rf "$work"' EXIT

one() {
        local d=$work/$1
        timeout 200 "$top/kernel/boot.sh" --kernel "$kernel" \
                --scenario "$top/kernel/scenarios/fineibt-boot.scn" --out "$d" >"$d.out" 2>&1 || true
        if grep -q 'attest-init: survived' "$d/console.log" 2>/dev/null; then
                echo ok
        elif grep -q 'expected type: 0x12345678' "$d/console.log" 2>/dev/null; then
                echo race
        else
                echo other
        fi
        rm -rf "$d" "$d.out"
}
export -f one
export kernel top work
seq "$n" | xargs -P 2 -I{} bash -c 'one {}' >"$work/results"
printf '%s: %d boots: reached init %d, died on a half-written FineIBT caller %d, other %d\n' \
        "$kernel" "$n" "$(grep -c '^ok' "$work/results" || true)" \
        "$(grep -c '^race' "$work/results" || true)" "$(grep -c '^other' "$work/results" || true)"
