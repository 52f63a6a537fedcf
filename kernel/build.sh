#!/usr/bin/env bash
# Build an attestd test kernel (Linux 6.1 or 6.12 bzImage, gcc or clang-16 with kCFI) from Debian's
# linux-source-<version>, cached by content.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
        cat <<EOF
usage: kernel/build.sh [options]

Build a Linux bzImage for the QEMU tests and print its path on stdout.

The source is Debian's linux-source-<version> tarball; the configuration is kernel/config/attest.config
merged with kernel/config/<version>.config (if present), kernel/config/kcfi.config for clang (and
kernel/config/kcfi-<version>.config, if present), kernel/config/kcfi-permissive.config for
--permissive, kernel/config/efi.config for --efi and kernel/config/ima-sig.config for --ima-sig, later lines overriding earlier ones for the
same option (savedefconfig form, expanded with 'make olddefconfig' and checked line by line); the
patches are kernel/patches/<version>/[0-9]*.patch, applied in name order with 'patch -p1' (the
cover letter 0000-cover-letter.patch is not applied). The result is cached in
\$ATTEST_CACHE/kernel/<key>/ (default cache /var/cache/attestd), where <key> is the sha256 of the
source tarball's sha256 and Debian version, the compiler and linker versions, every config file
and every patch, so a second run with the same inputs returns at once. The cache folder also holds the expanded
.config ('config'), the host tool scripts/selinux/mdp/mdp built against this source ('mdp', used
by kernel/initramfs.sh), the kernel release string, the build log and the stage times; when the
configuration builds modules (=m), also every module as installed ('modules/lib/modules/<release>',
debug info stripped, no modules.dep: the guest's busybox depmod writes it), which kernel/boot.sh
puts in the initramfs.

options:
  --version V     kernel version: 6.1 (default) or 6.12
  --cc CC         compiler: gcc (default) or clang-16 (LLVM=-16: clang-16, ld.lld-16, llvm-*-16;
                  adds kernel/config/kcfi.config, CONFIG_CFI_CLANG=y)
  --permissive    with clang: also kernel/config/kcfi-permissive.config (CONFIG_CFI_PERMISSIVE=y)
  --unpatched     apply no patches (the mainline behaviour, for comparison)
  --efi           also kernel/config/efi.config: the EFI stub, for UEFI boots with OVMF
                  (kernel/boot.sh --firmware ovmf); SeaBIOS boots it as well (tests/kernel/run.sh
                  builds its gcc 6.1 kernels with --efi --ima-sig)
  --ima-sig       also kernel/config/ima-sig.config: IMA appraisal and signature keys, tmpfs
                  xattrs (signed files, template ima-sig)
  --source FILE   source tarball (default /usr/src/linux-source-<version>.tar.xz)
  --config FILE   base config (default kernel/config/attest.config)
  --patches DIR   patch folder (default kernel/patches/<version>; missing or empty is fine)
  --cache DIR     cache root (default \$ATTEST_CACHE or /var/cache/attestd)
  --jobs N        make -j N (default \$ATTEST_JOBS or 2)
  --force         rebuild even if the cache has this key
  --no-ccache     compile without ccache (default: with it when installed, \$ATTEST_CCACHE=0 too)
  --keep-tree     keep the unpacked, built source tree (\$cache/kernel/tree-<key>)
  --seed-unpatched  (a patched build) leave the built tree for the --unpatched build of the same
                  configuration when that one is not cached yet (\$cache/kernel/seed-<its key>):
                  it then reverses the patches in it and recompiles only what they touch
  --print-key     print the cache key inputs and the key, then exit
  --config-only   unpack, expand and check the config, print the full .config, no build
  -h, --help      this text

needs: tar xz make gcc flex bison bc perl libelf-dev (Debian: linux-source-6.1 linux-source-6.12
       build-essential bc flex bison libelf-dev xz-utils cpio; clang-16 lld-16 llvm-16 for clang)
EOF
}

version=6.1
cc=gcc
permissive=0
unpatched=0
efi=0
imasig=0
src=
config=$KERNEL_DIR/config/attest.config
patches=
cache=$ATTEST_CACHE
jobs=${ATTEST_JOBS:-2}
force=0
keep=0
seed=0
use_ccache=${ATTEST_CCACHE:-1}
mode=build

while [ $# -gt 0 ]; do
        case $1 in
        --version) version=${2:?}; shift ;;
        --cc) cc=${2:?}; shift ;;
        --permissive) permissive=1 ;;
        --unpatched) unpatched=1 ;;
        --efi) efi=1 ;;
        --ima-sig) imasig=1 ;;
        --source) src=${2:?}; shift ;;
        --config) config=${2:?}; shift ;;
        --patches) patches=${2:?}; shift ;;
        --cache) cache=${2:?}; shift ;;
        --jobs) jobs=${2:?}; shift ;;
        --force) force=1 ;;
        --no-ccache) use_ccache=0 ;;
        --keep-tree) keep=1 ;;
        --seed-unpatched) seed=1 ;;
        --print-key) mode=key ;;
        --config-only) mode=config ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option '$1'" ;;
        esac
        shift
done

case $version in 6.1 | 6.12) ;; *) die "--version wants 6.1 or 6.12, not '$version'" ;; esac
src=${src:-/usr/src/linux-source-$version.tar.xz}
patches=${patches:-$KERNEL_DIR/patches/$version}
[ -f "$src" ] || die "source tarball $src not found (apt-get install linux-source-$version)"
[ -f "$config" ] || die "config $config not found"
case $jobs in '' | *[!0-9]*) die "--jobs wants a number, not '$jobs'" ;; esac

# The compiler: make variables, and the config fragments it brings.
fragments=()
[ -f "$KERNEL_DIR/config/$version.config" ] && fragments+=("$KERNEL_DIR/config/$version.config")
case $cc in
gcc)
        [ "$permissive" = 0 ] || die "--permissive needs --cc clang-16 (kCFI is a clang feature)"
        make_cc=(CC=gcc HOSTCC=gcc)
        need gcc
        cc_version() { gcc --version | head -n1; }
        ;;
clang-16)
        make_cc=(LLVM=-16)
        need clang-16 ld.lld-16 llvm-ar-16 llvm-nm-16 llvm-objcopy-16 llvm-strip-16
        cc_version() {
                clang-16 --version | head -n1
                ld.lld-16 --version | head -n1
        }
        fragments+=("$KERNEL_DIR/config/kcfi.config")
        [ ! -f "$KERNEL_DIR/config/kcfi-$version.config" ] ||
                fragments+=("$KERNEL_DIR/config/kcfi-$version.config")
        [ "$permissive" = 0 ] || fragments+=("$KERNEL_DIR/config/kcfi-permissive.config")
        ;;
*) die "--cc wants gcc or clang-16, not '$cc'" ;;
esac
[ "$efi" = 0 ] || fragments+=("$KERNEL_DIR/config/efi.config")
[ "$imasig" = 0 ] || fragments+=("$KERNEL_DIR/config/ima-sig.config")
for f in ${fragments[@]+"${fragments[@]}"}; do
        [ -f "$f" ] || die "config fragment $f not found"
done

patch_list=()
if [ -d "$patches" ]; then
        while IFS= read -r -d '' p; do
                patch_list+=("$p")
                done < <(find "$patches" -maxdepth 1 -type f -name '[0-9]*.patch' ! -name '0000-*' -print0 | sort -z)
fi
all_patches=(${patch_list[@]+"${patch_list[@]}"})
[ "$unpatched" = 0 ] || patch_list=()

# The cache key: everything that changes the bzImage, one line each.
key_text() {
        local deb p
        deb=$(dpkg-query -W -f='${Version}' "linux-source-$version" 2>/dev/null || echo unknown)
        printf 'attestd-kernel-cache 2\n'
        printf 'source %s %s\n' "$src_sha" "${src##*/}"
        printf 'source-version %s %s\n' "$version" "$deb"
        printf 'make %s\n' "${make_cc[*]}"
        cc_version | sed 's/^/compiler /'
        printf 'config %s\n' "$(sha256_file "$config")"
        for p in ${fragments[@]+"${fragments[@]}"}; do
                printf 'fragment %s %s\n' "$(sha256_file "$p")" "${p##*/}"
        done
        for p in ${patch_list[@]+"${patch_list[@]}"}; do
                printf 'patch %s %s\n' "$(sha256_file "$p")" "${p##*/}"
        done
}

t0=$(now)
src_sha=$(sha256_file "$src")
key_txt=$(key_text)
key=$(printf '%s\n' "$key_txt" | sha256_stdin)
if [ "$mode" = key ]; then
        printf '%s\nkey %s\n' "$key_txt" "$key"
        exit 0
fi

# The key of this configuration without the patches: where a patched build leaves its tree for
# the unpatched one (--seed-unpatched), and where the unpatched build looks for it.
twin_key=
if [ ${#all_patches[@]} -gt 0 ]; then
        twin_key=$(printf '%s\n' "$(patch_list=(); key_text)" | sha256_stdin)
fi
[ "$seed" = 0 ] || [ "$unpatched" = 0 ] || die "--seed-unpatched is for a patched build"

out=$cache/kernel/$key
if [ "$mode" = build ] && [ "$force" = 0 ] && [ -f "$out/bzImage" ] && [ -x "$out/mdp" ]; then
        log "cached: $out (key ${key:0:16}, $(elapsed "$t0") s)"
        printf '%s\n' "$out/bzImage"
        exit 0
fi

need tar xz make flex bison bc perl patch flock
mkdir -p "$cache/kernel"
exec {lockfd}>"$cache/kernel/.lock"
flock "$lockfd"

# Another run may have finished this key while we waited for the lock.
if [ "$mode" = build ] && [ "$force" = 0 ] && [ -f "$out/bzImage" ] && [ -x "$out/mdp" ]; then
        log "cached: $out (built by a concurrent run)"
        printf '%s\n' "$out/bzImage"
        exit 0
fi

tree=$cache/kernel/tree-$key
stage=$cache/kernel/.stage-$key.$$
times=()
cleanup() {
        rm -rf "$stage"
        if [ "$keep" = 0 ]; then rm -rf "$tree"; fi
}
trap cleanup EXIT
mkdir -p "$stage"
printf '%s\n' "$key_txt" >"$stage/key.txt"

timed() {
        local name=$1 t
        shift
        t=$(now)
        "$@"
        times+=("$name $(elapsed "$t")")
        log "stage $name: $(elapsed "$t") s"
}

# The tarball is unpacked once per tarball into a pristine tree in the cache ($pristine, kept: the
# patched and unpatched 6.1 kernels and the clang one share it), and each build gets a hard-linked
# copy of it (cp -al, ~2 s instead of ~22 s for tar+xz). Sharing inodes is safe because patch(1)
# and the kernel build replace files (write a new file, rename) and never write into one;
# check_pristine verifies that after each build.
pristine=$cache/kernel/src-${src_sha:0:16}
do_extract() {
        rm -rf "$tree"
        if [ ! -f "$pristine/.unpacked" ]; then
                rm -rf "$pristine" "$pristine.tmp"
                mkdir -p "$pristine.tmp"
                tar -xf "$src" -C "$pristine.tmp" --strip-components=1
                [ -f "$pristine.tmp/Makefile" ] || die "$src did not unpack to a kernel tree"
                touch "$pristine.tmp/.unpacked"
                mv "$pristine.tmp" "$pristine"
        fi
        cp -al "$pristine" "$tree"
        rm -f "$tree/.unpacked"
}

# No file of the pristine tree may be newer than its unpacking: a build that wrote into a shared
# inode would have changed it for every later build. Such a build's own result is what a fresh
# tarball would have given (the same write), so it is kept, but the pristine tree is dropped.
check_pristine() {
        local changed
        changed=$(find "$pristine" -newer "$pristine/.unpacked" -type f -print -quit)
        if [ -n "$changed" ]; then
                log "warning: the build wrote into the shared source tree ($changed); dropping $pristine"
                rm -rf "$pristine"
        fi
}

# The seed a patched build leaves for its unpatched twin: the built tree, where it was built (its
# path is part of what Kbuild recorded: tools/objtool is built with absolute paths, and a moved
# tree relinks objtool and so recompiles every object), with .seed listing the patches applied
# (sha256 and name, one per line), and $cache/kernel/seed-<twin key> naming that tree. Used
# only when .seed lists exactly the patches of this tree's folder: the twin reverses them
# (patch -R, last first) in place, and Kbuild's own dependency records recompile what they
# touched (the files and every object including a changed header) and relink. One use: the
# twin's build removes the tree as any build does.
seed_list() {
        local p
        for p in ${all_patches[@]+"${all_patches[@]}"}; do
                printf '%s %s\n' "$(sha256_file "$p")" "${p##*/}"
        done
}
take_seed() {
        local ptr=$cache/kernel/seed-$key s i
        [ "$unpatched" = 1 ] && [ "$mode" = build ] && [ -f "$ptr" ] || return 1
        s=$(cat "$ptr")
        rm -f "$ptr"
        case $s in "$cache"/kernel/tree-*) ;; *) log "seed $ptr names $s; not used"; return 1 ;; esac
        if [ ! -f "$s/.seed" ] || [ "$(cat "$s/.seed")" != "$(seed_list)" ]; then
                log "seed $s was left by other patches; not used"
                rm -rf "$s"
                return 1
        fi
        rm -rf "$tree"
        tree=$s # the cleanup removes it after this build
        rm -f "$tree/.seed"
        for ((i = ${#all_patches[@]} - 1; i >= 0; i--)); do
                log "reversing ${all_patches[i]##*/} in the patched build's tree"
                patch -d "$tree" -p1 -R --batch --quiet <"${all_patches[i]}" ||
                        die "reversing ${all_patches[i]##*/} failed"
        done
}

leave_seed() {
        local ptr=$cache/kernel/seed-$twin_key old
        [ "$seed" = 1 ] && [ -n "$twin_key" ] || return 0
        [ ! -f "$cache/kernel/$twin_key/bzImage" ] || return 0
        # at most one seed: a built tree is ~0.3 GB of objects
        for old in "$cache"/kernel/seed-*; do
                [ -f "$old" ] || continue
                rm -rf "$(cat "$old")"
                rm -f "$old"
        done
        seed_list >"$tree/.seed"
        printf '%s\n' "$tree" >"$ptr"
        keep=1 # the cleanup leaves it
        log "left the built tree $tree for the unpatched build ($ptr)"
}

do_patch() {
        local p
        for p in ${patch_list[@]+"${patch_list[@]}"}; do
                log "applying ${p##*/}"
                patch -d "$tree" -p1 --batch --forward --quiet <"$p" || die "patch ${p##*/} failed"
        done
}

# The base config and the fragments in order, one line per option: a later line for the same option
# replaces the earlier one (in place), comments and blank lines are dropped.
merge_config() {
        awk '
                {
                        opt = ""
                        if (match($0, /^CONFIG_[A-Za-z0-9_]+=/)) opt = substr($0, 1, RLENGTH - 1)
                        else if (match($0, /^# CONFIG_[A-Za-z0-9_]+ is not set$/)) opt = $2
                        if (opt == "") next
                        if (!(opt in line)) order[n++] = opt
                        line[opt] = $0
                }
                END { for (i = 0; i < n; i++) print line[order[i]] }' "$config" ${fragments[@]+"${fragments[@]}"}
}

# Every option line of the config must hold in the expanded .config: kconfig silently drops an
# option whose dependencies are not met, and a test kernel without IMA would still boot.
check_config() {
        awk '
                FNR == NR {
                        if (match($0, /^CONFIG_[A-Za-z0-9_]+=/)) want[$0] = 1
                        else if (match($0, /^# CONFIG_[A-Za-z0-9_]+ is not set$/)) off[$2] = 1
                        next
                }
                { have[$0] = 1; if (match($0, /^CONFIG_[A-Za-z0-9_]+=/)) on[substr($0, 1, RLENGTH - 1)] = 1 }
                END {
                        bad = 0
                        for (w in want) if (!(w in have)) { print "config: not set as asked: " w; bad = 1 }
                        for (o in off) if (o in on) { print "config: asked off but on: " o; bad = 1 }
                        exit bad
                }' "$stage/merged.config" "$tree/.config" >&2 || die "expanded config differs from the merged config"
}

# ccache (Debian's) with the cache folder inside the attestd cache, so that it lives and dies with
# it: each key builds in its own tree, so paths are made relative to the tree (CCACHE_BASEDIR) and
# the working directory is not hashed (CCACHE_NOHASHDIR); then the patched and unpatched 6.1
# kernels (one configuration) share every object the patches do not touch. ccache returns the
# object the compiler would produce, so it is no input of the key.
# Kbuild writes generated headers (autoconf.h, asm-offsets.h, ...) moments before the objects that
# include them compile; ccache may then keep no direct-mode manifest for those objects ("include
# file too new"), and a later tree would find them only through the preprocessor. Each tree is
# built once and its headers are not rewritten during the build, so the mtime and ctime checks buy
# nothing here; with them off, the unpatched 6.1 build after the patched one was all direct-mode
# hits (1,381 direct, 0 preprocessed; docs/design-notes.md).
# Depend mode (CCACHE_DEPEND): a miss compiles once and takes the include list from the
# compiler's own -MMD file, instead of running the preprocessor first to hash its output. Only
# direct-mode hits remain, which is all this cache ever gets. Measured on kernel/ and mm/ of the
# gcc 6.1 tree (192 objects, `make -j2`, CPU seconds user+sys, each pair at the same machine
# load): no ccache 309 against ccache cold 377 (+22 %); no ccache 281 against ccache depend
# cold 286 (+2 %); then depend mode warm, all 194 direct hits, 95.
ccache_cc=()
if [ "$use_ccache" != 0 ] && command -v ccache >/dev/null 2>&1; then
        export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$cache/kernel CCACHE_NOHASHDIR=1
        export CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime CCACHE_DEPEND=1
        export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}
        case $cc in
        gcc) ccache_cc=(CC="ccache gcc" HOSTCC="ccache gcc") ;;
        clang-16) ccache_cc=(CC="ccache clang-16" HOSTCC="ccache clang-16") ;;
        esac
else
        use_ccache=0
fi

# Linux 6.1 runs scripts/check-local-export (a shell, nm and awk: three processes) after every
# object, outside ccache: ~4,200 process starts and half the wall clock of a build whose objects
# all come from ccache (the unpatched build: 411.7 s with it, 200.7 s without). The check reads
# each object's symbols and fails when an exported symbol (__ksymtab_NAME) is local. Here Kbuild's
# per-object step is off (cmd_check_local_export=) and the same check runs once after the build
# over every object Kbuild compiled, with one nm for all of them (kernel/check-local-export.sh;
# tests/kernel/test-check-local-export.sh checks that it judges objects as the kernel's script
# does). 6.12 has no such step.
skip_checks=()
[ "$version" != 6.1 ] || skip_checks=(cmd_check_local_export=)

kmake() {
        make -C "$tree" -j"$jobs" "${make_cc[@]}" ${ccache_cc[@]+"${ccache_cc[@]}"} \
                ${skip_checks[@]+"${skip_checks[@]}"} \
                KBUILD_BUILD_USER=attestd KBUILD_BUILD_HOST=attestd KBUILD_BUILD_VERSION=1 \
                KBUILD_BUILD_TIMESTAMP="$(date -u -r "$src" '+%Y-%m-%d %H:%M:%S UTC')" "$@"
}

do_configure() {
        merge_config >"$stage/merged.config"
        cp "$stage/merged.config" "$tree/.config"
        kmake -s olddefconfig >>"$stage/build.log" 2>&1 || die "olddefconfig failed (see $stage/build.log)"
        check_config
}

# modular: the configuration builds modules
modular() { grep -q '=m$' "$tree/.config"; }

do_build() {
        local goals=(bzImage)
        ! modular || goals+=(modules)
        if ! kmake "${goals[@]}" >>"$stage/build.log" 2>&1; then
                tail -n 40 "$stage/build.log" >&2
                cp "$stage/build.log" "$cache/kernel/failed-$key.log"
                die "kernel build failed (log: $cache/kernel/failed-$key.log)"
        fi
}

do_install() {
        cp "$tree/arch/x86/boot/bzImage" "$stage/bzImage"
        cp "$tree/.config" "$stage/config"
        cp "$tree/scripts/selinux/mdp/mdp" "$stage/mdp"
        kmake -s kernelrelease >"$stage/kernelrelease"
        if modular; then
                # DEPMOD=true: depmod (kmod) is not needed on the build host
                kmake -s INSTALL_MOD_PATH="$stage/modules" INSTALL_MOD_STRIP=1 DEPMOD=true \
                        modules_install >>"$stage/build.log" 2>&1 || die "modules_install failed"
                rm -f "$stage/modules/lib/modules/$(cat "$stage/kernelrelease")/build"
        fi
        rm -rf "$out"
        mv "$stage" "$out"
}

if take_seed; then
        times+=("extract seed")
else
        timed extract do_extract
        timed patch do_patch
fi
timed configure do_configure
if [ "$mode" = config ]; then
        cat "$tree/.config"
        exit 0
fi
[ "$use_ccache" = 0 ] || ccache -z >/dev/null
timed build do_build
if [ "$version" = 6.1 ]; then
        timed exports "$KERNEL_DIR/check-local-export.sh" "$tree" \
                "$([ "$cc" = clang-16 ] && echo llvm-nm-16 || echo nm)"
fi
check_pristine
if [ "$use_ccache" != 0 ]; then
        hits=$(ccache --print-stats | awk '$1 == "direct_cache_hit" { d = $2 }
                $1 == "preprocessed_cache_hit" { p = $2 } $1 == "cache_miss" { m = $2 }
                END { printf "%d hits (%d direct), %d misses", d + p, d, m }')
        log "ccache: $hits (CCACHE_DIR $CCACHE_DIR)"
        times+=("ccache:${hits// /_}")
fi
printf '%s\n' "${times[@]}" >"$stage/times.txt"
timed install do_install
leave_seed
log "built $out/bzImage ($(cat "$out/kernelrelease"), key ${key:0:16}) in $(elapsed "$t0") s"
log "stage times (s): ${times[*]}"
printf '%s\n' "$out/bzImage"
