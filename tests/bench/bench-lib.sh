# The attestd benches' shared set-up (sourced by run-daemon.sh, compare.sh, profile.sh, soak.sh,
# callgrind.sh, run-scale.sh, openloop.sh): certificates and an admin token in $work, and one
# attestd (or http-floor) started with the bench's options, or several on one database.
# The caller sets work (a scratch directory) and top; pin_d (an array, e.g. (taskset -c 0))
# pins attestd when set.

# bench_setup: $work/certs, a fresh admin token in $tok, its hash in $work/tokens
bench_setup() {
        "$top/tests/lib/mkcerts.sh" "$work/certs" >/dev/null
        tok=$(openssl rand -hex 24)
        echo "admin $(printf %s "$tok" | sha256sum | cut -d' ' -f1) bench" >"$work/tokens"
}

# bench_spawn LOG CMD...: CMD in the background (pinned by pin_d), @PORT@ in its words replaced by
# a random loopback port; five tries, for a port taken meanwhile, each waiting up to
# BENCH_START_TRIES x 50 ms (default 100) for https://127.0.0.1:PORT/healthz. Sets pid and port
# once it answers; returns 1 when no try did.
bench_spawn() {
        local log=$1 a
        local -a cmd
        shift
        for _ in 1 2 3 4 5; do
                port=$((30000 + RANDOM % 20000))
                cmd=()
                for a in "$@"; do
                        cmd+=("${a//@PORT@/$port}")
                done
                ${pin_d[@]+"${pin_d[@]}"} "${cmd[@]}" 2>"$log" &
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
        return 1
}

# bench_start BUILD LOG [ATTESTD_ARGS...]: BUILD's attestd on a fresh database (bench_spawn), TLS,
# --insecure-trust-ak (the simulated agents have no TPM), ARGS last. Returns 1 with the log's
# tail on stderr when it did not start.
bench_start() {
        local build=$1 log=$2
        shift 2
        rm -f "$work"/attestd.db*
        bench_spawn "$log" "$build/daemon/attestd" --listen "127.0.0.1:@PORT@" \
                --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                --db "$work/attestd.db" --tokens "$work/tokens" --retain 20 \
                --nonce-ttl 60 --interval 300 --insecure-trust-ak "$@" && return 0
        echo "bench: attestd ($build) did not start: $(tail -2 "$log")" >&2
        return 1
}

# floor_start BUILD: BUILD's tests/bench/http-floor (libmicrohttpd and GnuTLS set up as attestd's
# front end, none of its work; bench_spawn) with attestd's certificate, --threads ${threads:-16},
# --entries 10 (bench-daemon's default round).
floor_start() {
        bench_spawn "$work/floor.log" "$1/tests/bench/http-floor" --listen @PORT@ \
                --threads "${threads:-16}" --cert "$work/certs/server.pem" \
                --key "$work/certs/server.key" --entries 10 && return 0
        echo "bench: http-floor ($1) did not start: $(tail -2 "$work/floor.log")" >&2
        return 1
}

# scale_start BUILD DB N [ATTESTD_ARGS...]: N attestd of BUILD on database DB (bench_spawn, up to
# BENCH_START_TRIES x 50 ms each, default 200 here: a PostgreSQL schema takes a while) with the
# scale benches' options (TLS, --retain 20, --nonce-ttl 60, --interval 300, --insecure-trust-ak,
# --threads ${threads:-4}, one nonce key $work/nonce.key shared by all), ARGS last; their URLs in
# urls[], their pids in pids[] (added to as they start: the caller's trap kills them), logs in
# $work/attestd-N-I.log. Returns 1 with the last log's tail on stdout when one did not start.
scale_start() {
        local build=$1 db=$2 n=$3 i
        shift 3
        urls=() pids=()
        [ -e "$work/nonce.key" ] || (umask 077 && head -c 32 /dev/urandom >"$work/nonce.key")
        for i in $(seq "$n"); do
                if ! BENCH_START_TRIES=${BENCH_START_TRIES:-200} bench_spawn "$work/attestd-$n-$i.log" \
                        "$build/daemon/attestd" --listen "127.0.0.1:@PORT@" \
                        --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                        --db "$db" --tokens "$work/tokens" --nonce-key "$work/nonce.key" \
                        --retain 20 --nonce-ttl 60 --interval 300 --insecure-trust-ak \
                        --threads "${threads:-4}" "$@"; then
                        echo "# attestd did not start: $(tail -2 "$work/attestd-$n-$i.log")"
                        return 1
                fi
                urls+=("https://127.0.0.1:$port")
                pids+=("$pid")
        done
}

# scale_part ROWS MODE: one configuration of the scale benches (run-scale.sh, openloop.sh): rows
# (where its table rows go) is ROWS, its scratch directory work is ROWS/MODE (certificates, token,
# nonce key, logs), entered and set up; its attestd are stopped when the script exits.
scale_part() {
        rows=$1 work=$1/$2
        mkdir -p "$work"
        cd "$work" || return 1
        bench_setup
        pids=()
        trap 'scale_stop' EXIT
}

# scale_stop: stop the instances in pids[] and wait for them
scale_stop() {
        local p
        for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
        for p in ${pids[@]+"${pids[@]}"}; do wait "$p" 2>/dev/null || true; done
        pids=()
}
