#!/usr/bin/env bash
# Linux 6.1's scripts/check-local-export, once over a whole built tree: fails (exit 1, one line per
# case on stderr) when an object exports a symbol (it defines __ksymtab_NAME) that is local in it
# (nm's type letter lowercase). The kernel runs its script after every object it compiles (a
# shell, nm and awk per object); kernel/build.sh turns that step off and runs this instead: the
# same rule on the same objects, one nm for all of them.
#
# usage: kernel/check-local-export.sh TREE [NM]     (NM: nm (default) or llvm-nm-16)
# tests/kernel/test-check-local-export.sh checks that it judges objects as the kernel's script does.
set -euo pipefail
tree=${1:?usage: check-local-export.sh TREE [NM]}
nm=${2:-nm}
cd "$tree"
# every object Kbuild compiled: not the host tools (scripts/, tools/), which export nothing and
# are not checked by the kernel either, and not vmlinux.o (every object linked into one: a name
# local in one file and global in another would look exported and local)
find . \( -path ./scripts -o -path ./tools \) -prune -o -type f -name '*.o' ! -name vmlinux.o \
        -print0 | sort -z >"${TMPDIR:-/tmp}/cle.$$"
trap 'rm -f "${TMPDIR:-/tmp}/cle.$$"' EXIT
[ -s "${TMPDIR:-/tmp}/cle.$$" ] || { echo "check-local-export: no objects in $tree" >&2; exit 1; }
# POSIX format with file names, the same for GNU nm and llvm-nm: "FILE: NAME TYPE [VALUE SIZE]"
# (no "--": llvm-nm refuses it; every path starts with "./").
# Undefined symbols (U, and lowercase w/v: undefined weak) carry no value in the kernel's reading
# and are skipped as its script skips them.
xargs -0 "$nm" -A -P <"${TMPDIR:-/tmp}/cle.$$" | awk '
        {
                file = $1
                sub(/:$/, "", file)
                if ($3 ~ /^[Uwv]$/)
                        next
                type[file, $2] = $3
                if ($2 ~ /^__ksymtab_/) {
                        name = substr($2, 11)
                        exports[file, name] = 1
                }
        }
        END {
                bad = 0
                for (k in exports) {
                        split(k, p, SUBSEP)
                        if (type[p[1], p[2]] ~ /[a-z]/) {
                                printf "%s: error: local symbol %s was exported\n", p[1], p[2] | "cat 1>&2"
                                bad = 1
                        }
                }
                exit bad
        }'
