# shellcheck shell=bash
# Helpers shared by the kernel/ scripts. Sourced, not run.

# The repository's kernel/ folder, wherever the caller was started from.
# shellcheck disable=SC2034 # used by the scripts that source this file
KERNEL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034
ATTEST_CACHE=${ATTEST_CACHE:-/var/cache/attestd}

log() {
        printf '%s: %s\n' "${0##*/}" "$*" >&2
}

die() {
        log "error: $*"
        exit 1
}

need() {
        local c
        for c in "$@"; do
                command -v "$c" >/dev/null 2>&1 || die "'$c' not found (see kernel/README.md for the packages)"
        done
}

# Seconds since the epoch with milliseconds, for stage timings.
now() {
        date +%s.%N
}

# elapsed START: seconds since START, one decimal.
elapsed() {
        awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

sha256_file() {
        sha256sum "$1" | cut -d' ' -f1
}

sha256_stdin() {
        sha256sum | cut -d' ' -f1
}
