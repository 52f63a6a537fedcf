#!/usr/bin/env bash
# kernel/check-local-export.sh (one nm over a whole tree) must judge objects exactly as Linux
# 6.1's own scripts/check-local-export (run per object by Kbuild) does. Objects compiled here with
# gcc and clang-16 (when present): a local function, a local datum and a local bss symbol
# exported (the kernel's script fails each), a global function, weak and undefined exports and an
# object with no symbols (it passes each). Each object alone in a tree: the two must agree on the
# exit status and name the same symbol; then all of them in one tree: the same failures.
# usage: tests/kernel/test-check-local-export.sh   (reads the kernel's script from the unpacked
# 6.1 source in the kernel cache, or from Debian's linux-source-6.1 tarball)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ours=$top/kernel/check-local-export.sh
tmp=$(mktemp -d /tmp/attestd-cle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

theirs=$(ls -d "${ATTEST_CACHE:-/var/cache/attestd}"/kernel/src-*/scripts/check-local-export 2>/dev/null |
        xargs -r grep -l . 2>/dev/null | head -1 || true)
if [ -z "$theirs" ]; then
        tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
        [ -n "$tarball" ] || { echo "not ok: no Linux 6.1 source (cache or /usr/src/linux-source-6.1.tar.xz)"; exit 1; }
        tar -xJf "$tarball" -C "$tmp" --wildcards '*/scripts/check-local-export'
        theirs=$(find "$tmp" -path '*/scripts/check-local-export' | head -1)
fi
echo "# the kernel's script: $theirs"

# NAME: C source of one object
declare -A src=(
        [static-func]='static int f(void) { return 1; } int g(void) { return f(); }
__attribute__((used)) const void *__ksymtab_f = (void *)f;'
        [static-data]='static int d = 3; int *g(void) { return &d; }
__attribute__((used)) const void *__ksymtab_d = &d;'
        [static-bss]='static int z; int *g(void) { return &z; }
__attribute__((used)) const void *__ksymtab_z = &z;'
        [global-func]='int f(void) { return 1; }
__attribute__((used)) const void *__ksymtab_f = (void *)f;'
        [weak-func]='__attribute__((weak)) int f(void) { return 1; }
__attribute__((used)) const void *__ksymtab_f = (void *)f;'
        [undefined]='extern int f(void);
__attribute__((used)) const void *__ksymtab_f = (void *)f;'
        [weak-undefined]='extern int f(void) __attribute__((weak));
__attribute__((used)) const void *__ksymtab_f = (void *)f;'
        [no-export]='static int f(void) { return 1; } int g(void) { return f(); }'
        [no-symbols]=''
)

# judge CC NM NAME: both checkers on one object; they must agree
compilers=(gcc:nm)
command -v clang-16 >/dev/null && command -v llvm-nm-16 >/dev/null && compilers+=(clang-16:llvm-nm-16)
mkdir -p "$tmp/all"
for cn in "${compilers[@]}"; do
        cc=${cn%%:*} nm=${cn##*:}
        for name in "${!src[@]}"; do
                d=$tmp/$cc-$name
                mkdir -p "$d"
                printf '%s\n' "${src[$name]}" >"$d/x.c"
                "$cc" -O2 -c "$d/x.c" -o "$d/x.o"
                cp "$d/x.o" "$tmp/all/$cc-$name.o"
                t_rc=0 o_rc=0
                (cd "$d" && NM=$nm AWK=awk "$theirs" x.o) 2>"$d/theirs.err" || t_rc=$?
                "$ours" "$d" "$nm" 2>"$d/ours.err" || o_rc=$?
                t_sym=$(sed -n 's/.*local symbol \([^ ]*\) was exported/\1/p' "$d/theirs.err")
                o_sym=$(sed -n 's/.*local symbol \([^ ]*\) was exported/\1/p' "$d/ours.err")
                if [ "$t_rc" = "$o_rc" ] && [ "$t_sym" = "$o_sym" ]; then
                        echo "ok: $cc $name: both exit $t_rc${t_sym:+ (local symbol $t_sym)}"
                else
                        echo "not ok: $cc $name: the kernel's script exit $t_rc ($t_sym), ours $o_rc ($o_sym)"
                        fail=1
                fi
        done
done

# all objects in one tree: ours names exactly the objects the kernel's script fails
want=$(cd "$tmp/all" && for o in *.o; do
        case $o in clang-16-*) nm=llvm-nm-16 ;; *) nm=nm ;; esac
        NM=$nm AWK=awk "$theirs" "$o" 2>&1 >/dev/null | sed 's|^\./||'
done | sort)
got=$("$ours" "$tmp/all" 2>&1 >/dev/null | sed 's|^\./||' | sort || true)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
        echo "ok: one tree of $(ls "$tmp/all" | wc -l) objects: the same $(printf '%s\n' "$want" | wc -l) failures"
else
        printf 'not ok: one tree: the kernel script says\n%s\nours says\n%s\n' "$want" "$got"
        fail=1
fi
exit $fail
