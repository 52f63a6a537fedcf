#!/usr/bin/env bash
# tests/kernel/run.sh [BUILD]: the kernel stage of the suite (kernel/README.md, "Live attestation").
# Builds (or takes from the cache) the test kernels with kernel/build.sh, then boots each live
# scenario (tests/kernel/live.sh) with the agent inside the guest attesting to attestd on this
# host. Prints every build's and boot's time; exits non-zero when any build or scenario fails.
#   BUILD  a meson build folder with daemon/attestd and agent/attest-agent (default build-rel)
# Environment: KERNEL_BUILD (default kernel/build.sh of this tree), ATTEST_CACHE (kernel cache),
# KERNEL_SCENARIOS (default: all, space separated: gcc selinux forgery rng badrng runtime-policy ovmf
# unpatched clang-6.12 cfi-off-6.12 fineibt-6.12 fineibt-fail-6.12).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$top/build-rel}")
kbuild=${KERNEL_BUILD:-$top/kernel/build.sh}
scenarios=${KERNEL_SCENARIOS:-gcc selinux forgery rng badrng runtime-policy ovmf unpatched clang-6.12 cfi-off-6.12 fineibt-6.12 fineibt-fail-6.12}
failed=0
t0=$(date +%s)

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# kernel NAME ARGS...: build (or reuse) one kernel; its bzImage path in K_<NAME>
declare -A kern
kernel() {
        local name=$1 t img
        shift
        t=$(date +%s.%N)
        if img=$("$kbuild" "$@" 2>"$tmp/build-$name.log") && [ -f "$img" ]; then
                kern[$name]=$img
                printf '==> kernel %s: %s s (%s; %s)\n' "$name" "$(elapsed "$t")" \
                        "$(grep -q 'cached: ' "$tmp/build-$name.log" && echo cached || echo built)" "$img"
                grep -h 'stage times' "$tmp/build-$name.log" || true
        else
                printf '==> kernel %s: FAILED after %s s (kernel/build.sh %s)\n' "$name" "$(elapsed "$t")" "$*"
                tail -20 "$tmp/build-$name.log"
                failed=1
        fi
}

tmp=$(mktemp -d /tmp/attestd-kernel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# kernel/build.sh runs Linux 6.1's local-export check once per tree (kernel/check-local-export.sh)
# instead of once per object: it must judge objects as the kernel's own script does.
t=$(date +%s.%N)
if "$top/tests/kernel/test-check-local-export.sh" >"$tmp/cle.log" 2>&1; then
        printf '==> check-local-export agrees with the kernel'"'"'s script: %s s (%s cases)\n' \
                "$(elapsed "$t")" "$(grep -c '^ok' "$tmp/cle.log")"
else
        cat "$tmp/cle.log"
        printf '==> check-local-export: FAILED\n'
        failed=1
fi

# Three kernels. One gcc 6.1 configuration (attest.config with the EFI stub and IMA appraisal
# folded in) serves the SeaBIOS boots and the OVMF one, and the unpatched kernel uses it too: every
# object includes autoconf.h, so only with the same .config does ccache share the objects the
# patches do not touch (a few files instead of a full build). One clang-16 kCFI 6.12 kernel serves
# the 6.12 boots: kCFI enforcing (cfi=auto, which is kCFI where the CPU has no IBT, as under TCG),
# the same kernel with cfi=off and with cfi=fineibt,norand (FineIBT without IBT), whose records
# must say CFI is not enforced (the checks of the gcc boot).
need_kernel() { # SCENARIO -> kernel name
        case $1 in
        gcc | selinux | forgery | rng | badrng | runtime-policy | ovmf) echo gcc-6.1 ;;
        unpatched) echo unpatched-6.1 ;;
        clang-6.12 | cfi-off-6.12 | fineibt-6.12 | fineibt-fail-6.12) echo clang-6.12 ;;
        *) echo "unknown" ;;
        esac
}
declare -A want
for s in $scenarios; do want[$(need_kernel "$s")]=1; done
# unpatched right after gcc-6.1
# (and, when the unpatched kernel is wanted and not cached, gcc-6.1 leaves it its built tree: the
# unpatched build then reverses the patches there and recompiles only what they touch)
seed=()
[ -z "${want[unpatched-6.1]:-}" ] || seed=(--seed-unpatched)
[ -z "${want[gcc-6.1]:-}" ] || kernel gcc-6.1 --efi --ima-sig ${seed[@]+"${seed[@]}"}
[ -z "${want[unpatched-6.1]:-}" ] || kernel unpatched-6.1 --unpatched --efi --ima-sig
[ -z "${want[clang-6.12]:-}" ] || kernel clang-6.12 --cc clang-16 --version 6.12

for s in $scenarios; do
        k=$(need_kernel "$s")
        live=${s%-6.12}
        if [ -z "${kern[$k]:-}" ]; then
                printf '==> live %s: FAILED (no %s kernel)\n' "$s" "$k"
                failed=1
                continue
        fi
        t=$(date +%s.%N)
        printf '\n==> live %s on %s (%s)\n' "$s" "$k" "${kern[$k]}"
        if "$top/tests/kernel/live.sh" "$live" "${kern[$k]}" "$build" 2>&1; then
                printf '==> live %s on %s: ok, %s s\n' "$s" "$k" "$(elapsed "$t")"
        else
                printf '==> live %s on %s: FAILED after %s s\n' "$s" "$k" "$(elapsed "$t")"
                failed=1
        fi
done
printf '==> kernel stage: %s s, %s\n' "$(($(date +%s) - t0))" "$([ $failed -eq 0 ] && echo PASSED || echo FAILED)"
exit $failed
