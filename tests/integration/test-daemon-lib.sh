#!/usr/bin/env bash
# Helpers for the attestd integration tests (sourced): certificates, a daemon on a free loopback
# port with TLS, curl wrappers that set $status and $body, assertions that fail loudly.
# Needs ATTESTD (the binary) and TOP (the source tree) in the environment.
set -euo pipefail

: "${ATTESTD:?ATTESTD must name the attestd binary}"
: "${TOP:?TOP must name the source tree}"
work=$(mktemp -d /tmp/attestd-test.XXXXXX)
daemon_pid=""
port=""
fails=0

cleanup_lib() {
        local rc=$?
        [ $rc -eq 0 ] || fails=$((fails + 1))
        if [ -n "$daemon_pid" ]; then
                kill "$daemon_pid" 2>/dev/null || true
                wait "$daemon_pid" 2>/dev/null || true
        fi
        if [ "${KEEP:-0}" = 1 ] || [ $fails -ne 0 ]; then
                echo "# work dir kept: $work" >&2
        else
                rm -rf "$work"
        fi
}
trap cleanup_lib EXIT

fail() {
        echo "not ok: $*" >&2
        [ -f "$work/daemon.log" ] && { echo "--- daemon log (tail)" >&2; tail -30 "$work/daemon.log" >&2; }
        fails=$((fails + 1))
        exit 1
}
ok() { echo "ok: $*"; }

"$TOP/tests/lib/mkcerts.sh" "$work/certs" >/dev/null
CA=$work/certs/ca.pem

# token NAME ROLE: a random token, its hash appended to the tokens file; the token in $NAME
token() {
        local t
        t=$(openssl rand -hex 24)
        printf '%s %s %s\n' "$2" "$(printf %s "$t" | sha256sum | cut -d' ' -f1)" "$1" \
                >>"$work/tokens"
        printf -v "$1" %s "$t"
}

# spawn SCHEME LOG CMD...: run CMD with @PORT@ replaced by a free loopback port, wait until
# SCHEME://127.0.0.1:PORT/healthz answers; retries on a port clash. Sets daemon_pid and port.
spawn() {
        local scheme=$1 log=$2 i a args
        shift 2
        for i in 1 2 3 4 5 6 7 8; do
                port=$((30000 + RANDOM % 20000))
                args=()
                for a in "$@"; do args+=("${a//@PORT@/$port}"); done
                "${args[@]}" >>"$log" 2>&1 &
                daemon_pid=$!
                for _ in $(seq 200); do
                        if curl -s --cacert "$CA" -o /dev/null "$scheme://127.0.0.1:$port/healthz"
                        then
                                return 0
                        fi
                        kill -0 "$daemon_pid" 2>/dev/null || break
                        sleep 0.05
                done
                wait "$daemon_pid" 2>/dev/null || true
                daemon_pid=""
                tail -1 "$log" | grep -q "Address already in use" || break
        done
        fail "attestd did not start: $(tail -3 "$log")"
}

# start_daemon ARGS...: TLS on 127.0.0.1, a database and tokens in $work
start_daemon() {
        spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
                --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 --insecure-trust-ak "$@"
}

# stop_daemon [SIGNAL]: after SIGTERM (the default) the daemon must exit 0 (a sanitizer report
# at exit makes it fail)
stop_daemon() {
        local sig=${1:-TERM} rc=0
        [ -n "$daemon_pid" ] || return 0
        kill "-$sig" "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || rc=$?
        daemon_pid=""
        if [ "$sig" = TERM ] && [ $rc -ne 0 ]; then fail "attestd exited $rc after SIGTERM"; fi
        sanitizer_check
}

# No AddressSanitizer/LeakSanitizer/UBSan report in any daemon log.
sanitizer_check() {
        if grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.log \
                2>/dev/null; then
                fail "sanitizer report in the daemon log"
        fi
}

# api METHOD PATH [BODY [TOKEN [CONTENT-TYPE]]]: sets $status, $body (BODY "@file" reads a file)
api() {
        local m=$1 p=$2 data=${3:-} tok=${4:-} ct=${5:-application/json}
        local args=(-s --cacert "$CA" -X "$m" -o "$work/resp" -w '%{http_code}')
        [ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
        if [ -n "$data" ]; then
                args+=(-H "Content-Type: $ct" --data-binary "$data")
        fi
        status=$(curl "${args[@]}" "https://127.0.0.1:$port$p") || status=000
        body=$(cat "$work/resp" 2>/dev/null || true)
}

# expect STATUS [ERROR-CODE] -- what: the last api call answered STATUS (and that error code)
expect() {
        local want=$1 code=${2:-}
        shift 2 || shift
        [ "${1:-}" = "--" ] && shift
        [ "$status" = "$want" ] || fail "$*: status $status, want $want: $body"
        if [ -n "$code" ]; then
                [ "$(jq -r .error <<<"$body")" = "$code" ] ||
                        fail "$*: error $(jq -r .error <<<"$body"), want $code: $body"
                [ "$(jq -r 'has("detail")' <<<"$body")" = true ] || fail "$*: no detail: $body"
        fi
        ok "$* ($status${code:+ $code})"
}

# metric NAME{LABELS}: the value of one sample of /metrics
metric() {
        curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" |
                awk -v k="$1" '$1 == k { print $2 }'
}
