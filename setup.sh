#!/usr/bin/env bash
# attestd set-up: installs the Debian 12 packages the project needs, builds, and runs the demo or the
# whole test suite. Usage: ./setup.sh demo | test | deps | build   (run as root for apt-get)
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"

packages=(
        build-essential meson ninja-build pkg-config clang libclang-rt-14-dev llvm clang-format
        check libssl-dev openssl libtss2-dev tpm2-tools swtpm swtpm-tools ima-evm-utils
        libpcre2-dev libjansson-dev libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libsqlite3-dev
        sqlite3 libsystemd-dev systemd zlib1g-dev curl valgrind xxd gnutls-bin time util-linux
        shellcheck jq python3 iproute2
        linux-source-6.1 linux-source-6.12 clang-16 lld-16 llvm-16 bc flex bison libelf-dev cpio
        xz-utils busybox-static checkpolicy qemu-system-x86
        socat haproxy ccache prometheus
        postgresql-15 libpq-dev
        ovmf sbsigntool keyutils attr systemd-boot-efi mtools dosfstools
        libjwt-dev python3-jwt python3-cryptography
        debhelper dpkg-dev fakeroot lintian mmdebstrap e2fsprogs
)

usage() {
        cat <<USAGE
Usage: $0 COMMAND

Commands:
  demo    install packages, build, run the demo (see README.md)
  test    install packages, build with ASan+UBSan, run the whole test suite, then the
          packages (meson dist, dpkg-buildpackage, lintian) in a Debian 12 guest (tests/guest)
  deps    only install the Debian packages (as root)
  build   only build (release-ish, into build/)
USAGE
}

stage_start=0
stage() {
        stage_end
        stage_name=$1
        stage_start=$(date +%s)
        printf '\n==> %s\n' "$stage_name"
}
stage_end() {
        if [ "$stage_start" -ne 0 ]; then
                printf '==> %s: %ss\n' "$stage_name" "$(($(date +%s) - stage_start))"
                stage_start=0
        fi
}

deps() {
        local missing=()
        for p in "${packages[@]}"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        if [ "$(id -u)" -ne 0 ]; then
                echo "setup.sh: missing packages (${missing[*]}); run as root to install them" >&2
                exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        # Debian's prometheus starts a service on :9090; the tests start their own on loopback
        if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
                systemctl disable --now prometheus >/dev/null 2>&1 || true
        fi
}

build() {
        [ -d build ] || meson setup build >/dev/null
        ninja -C build
}

cmd=${1:-}
case "$cmd" in
deps)
        stage "install Debian packages"
        deps
        ;;
build)
        stage "install Debian packages"
        deps
        stage "build"
        build
        ;;
demo)
        stage "install Debian packages"
        deps
        stage "build"
        build
        stage "demo"
        tests/demo.sh "$top/build"
        ;;
test)
        # one table of every stage with its seconds at the end (tests/stage-table.sh)
        STAGE_TABLE=$(mktemp /tmp/attestd-stages.XXXXXX)
        export STAGE_TABLE
        trap 'rm -f "$STAGE_TABLE"' EXIT
        t_all=$(date +%s)
        stage "install Debian packages"
        deps
        printf '%s\tok\tinstall Debian packages\n' "$(($(date +%s) - stage_start))" >>"$STAGE_TABLE"
        stage_end
        rc=0
        tests/run-all.sh || rc=$?
        # the packages from `meson dist`, lintian, and a Debian 12 guest under systemd as PID 1
        stage "guest: packages, lintian, Debian 12 under systemd (tests/guest/run.sh)"
        grc=0
        tests/guest/run.sh || grc=1
        printf '%s\t%s\t%s\n' "$(($(date +%s) - stage_start))" "$([ $grc = 0 ] && echo ok || echo FAILED)" \
                "guest: packages, lintian, Debian 12 under systemd" >>"$STAGE_TABLE"
        stage_end
        [ $grc = 0 ] || rc=1
        printf '%s\t%s\t%s\n' "$(($(date +%s) - t_all))" "$([ $rc = 0 ] && echo PASSED || echo FAILED)" \
                "./setup.sh test, wall clock" >>"$STAGE_TABLE"
        tests/stage-table.sh "$STAGE_TABLE"
        exit $rc
        ;;
-h | --help | help)
        usage
        ;;
*)
        usage >&2
        exit 2
        ;;
esac
stage_end
