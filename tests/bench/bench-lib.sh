# The attestd benches' shared set-up (sourced by run-daemon.sh, compare.sh, profile.sh, soak.sh):
# certificates and an admin token in $work, and one attestd (or http-floor) started with the
# bench's options.
# The caller sets work (a scratch directory) and top; pin_d (an array, e.g. (taskset -c 0))
# pins attestd when set.

# bench_setup: $work/certs, a fresh admin token in $tok, its hash in $work/tokens
bench_setup() {
        "$top/tests/lib/mkcerts.sh" "$work/certs" >/dev/null
        tok=$(openssl rand -hex 24)
        echo "admin $(printf %s "$tok" | sha256sum | cut -d' ' -f1) bench" >"$work/tokens"
}

# bench_start BUILD LOG [ATTESTD_ARGS...]: BUILD's attestd on a fresh database and a random
# loopback port (five tries, for a port taken meanwhile; BENCH_START_TRIES x 50 ms for /healthz,
# default 100), TLS, --insecure-trust-ak (the simulated
# agents have no TPM), ARGS last; sets pid and port once /healthz answers. Returns 1 with the log's
# tail on stderr when it did not start.
bench_start() {
        local build=$1 log=$2
        shift 2
        rm -f "$work"/attestd.db*
        for _ in 1 2 3 4 5; do
                port=$((30000 + RANDOM % 20000))
                ${pin_d[@]+"${pin_d[@]}"} "$build/daemon/attestd" --listen "127.0.0.1:$port" \
                        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                        --db "$work/attestd.db" --tokens "$work/tokens" --retain 20 \
                        --nonce-ttl 60 --interval 300 --insecure-trust-ak "$@" 2>"$log" &
                pid=$!
                for _ in $(seq "${BENCH_START_TRIES:-100}"); do
                        curl -s --cacert "$work/certs/ca.pem" -o /dev/null \
                                "https://127.0.0.1:$port/healthz" && return 0
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.05
                done
                kill "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                pid=""
        done
        echo "bench: attestd ($build) did not start: $(tail -2 "$log")" >&2
        return 1
}

# floor_start BUILD: BUILD's tests/bench/http-floor (libmicrohttpd and GnuTLS set up as attestd's
# front end, none of its work) with attestd's certificate on a random loopback port, --threads
# ${threads:-16}, --entries 10 (bench-daemon's default round); sets pid and port once it answers.
floor_start() {
        local build=$1
        for _ in 1 2 3 4 5; do
                port=$((30000 + RANDOM % 20000))
                ${pin_d[@]+"${pin_d[@]}"} "$build/tests/bench/http-floor" --listen "$port" \
                        --threads "${threads:-16}" --cert "$work/certs/server.pem" \
                        --key "$work/certs/server.key" --entries 10 &
                pid=$!
                for _ in $(seq "${BENCH_START_TRIES:-100}"); do
                        curl -s --cacert "$work/certs/ca.pem" -o /dev/null -X POST \
                                "https://127.0.0.1:$port/v1/policies/probe" && return 0
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.05
                done
                kill "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                pid=""
        done
        echo "bench: http-floor ($build) did not start" >&2
        return 1
}
