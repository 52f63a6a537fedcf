#!/usr/bin/env bash
# shellcheck disable=SC2034,SC2120 # variables the tests read; functions with optional arguments
# The one shell library of the tests (sourced; defines functions and nothing else until a test
# calls test_begin). What a test script keeps is only what is its own.
#  - nap (the back-off of a polling loop without a process)
#  - arguments and set-up: need, agent_test_args (the ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
#    convention, re-running the test under swtpm-run), test_begin (work directory, TLS
#    certificates, the EXIT trap), at_exit / kill_at_exit (clean-ups), token / agent_tokens
#  - attestd: spawn (any server on a free loopback port, waits for /healthz), start_attestd,
#    start_daemon, stop_daemon, sanitizer_check
#  - HTTP: api (curl, sets $status and $body), expect, metric; fail and ok
#  - the real agent: boot_host (the recorded qemu61-good boot in the swtpm, its log as ima.bin),
#    agent_cmd, start_agent, stop_agent, verdicts, count, wait_lines, start_notify
#  - tpm2-tools: flush, persist_ak, challenge, quote, submit (an AK of the test's own and rounds
#    by hand); keys, activate, enrol_ek, credential, activate_api (enrolment by credential
#    activation)
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export TOP
# the programs' log lines keep their sd-daemon prefix ("<5>verdict: ...") in the tests' log files,
# which the tests match; util/log.h: a file would otherwise get an ISO 8601 time (test-log,
# test-docs-match and test-guide check the forms a program chooses by itself)
export ATTEST_LOG_FORMAT=journal
work=""
daemon_pid=""
port=""
fails=0
exit_hooks=()

# ---- polling ------------------------------------------------------------------------------------

# nap SECONDS: the back-off of a polling loop, without starting a process. `sleep` is one, and
# on a 2-core VM a process start costs ~12 ms of CPU (a `sleep 0.05` loop burns a quarter of a
# core waiting): read -t on a pipe this shell holds both ends of, where nothing ever arrives, so
# the read always times out after SECONDS. The pipe is opened on the first nap of each shell.
nap() {
        [ -n "${nap_fd:-}" ] || exec {nap_fd}<> <(:)
        read -rt "$1" -u "$nap_fd" _ || true
}

# ---- arguments and set-up ---------------------------------------------------------------------

# need TOOL...: every TOOL is installed, or the test fails (never a skip)
need() {
        local t
        for t; do
                command -v "$t" >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
        done
}

# agent_test_args N ARGS...: the arguments of a test that starts attestd, the agent and its own
# swtpm: exactly N of them, ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP and then the test's own (the
# usage line is the script's "# Usage:" comment). Unless already under a swtpm, the test re-runs
# itself under SWTPM_RUN --ek-cert. Sets (absolute) and exports ATTESTD and TOP, sets AGENT,
# ATTESTCTL and SWTPM_RUN.
agent_test_args() {
        local n=$1
        shift
        if [ $# -ne "$n" ]; then
                grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2
                exit 2
        fi
        if [ -z "${SWTPM_TCTI:-}" ]; then
                exec "$4" --ek-cert -- "$0" "$@"
        fi
        ATTESTD=$(realpath "$1") TOP=$(realpath "$5")
        export ATTESTD TOP
        # shellcheck disable=SC2034 # used by the tests
        AGENT=$(realpath "$2") ATTESTCTL=$(realpath "$3") SWTPM_RUN=$(realpath "$4")
}

# test_begin [PREFIX]: the work directory (/tmp/PREFIX.XXXXXX, default attestd-test), TLS
# certificates in $work/certs ($CA the CA), and the EXIT trap: the at_exit clean-ups, then attestd
# stopped; the work directory is kept when the test failed or KEEP=1
test_begin() {
        need openssl curl jq
        work=$(mktemp -d "/tmp/${1:-attestd-test}.XXXXXX")
        trap cleanup_lib EXIT
        "$TOP/tests/lib/mkcerts.sh" "$work/certs" >/dev/null
        CA=$work/certs/ca.pem
}

# agent_test_begin [TOOL...]: need TOOLs, test_begin, agent_tokens, then in $work; the agent
# ($agent_pid) is killed at exit
agent_test_begin() {
        need "$@"
        test_begin
        agent_tokens
        cd "$work"
        kill_at_exit agent_pid
}

# at_exit CMD...: run CMD (words, as a command) when the test exits, before attestd is stopped;
# the latest first. kill_at_exit VAR...: kill the process whose pid VAR holds at exit (if any).
at_exit() { exit_hooks=("$*" ${exit_hooks[@]+"${exit_hooks[@]}"}); }
kill_var() { if [ -n "${!1:-}" ]; then kill "${!1}" 2>/dev/null || true; fi; }
kill_at_exit() {
        local v
        for v; do at_exit kill_var "$v"; done
}

# webhook_rx [ARGS...]: tests/lib/webhook-receiver.py in the background on rx/ of the working
# folder (certs/server.pem and .key, the HMAC secret in ./secret; ARGS: --port, --status ...),
# its pid in rx_pid (the caller kills it at exit: kill_at_exit rx_pid), its port in rx/port once
# it listens (fails after 5 s)
webhook_rx() {
        mkdir -p rx
        rm -f rx/port
        python3 "$TOP/tests/lib/webhook-receiver.py" --cert certs/server.pem --key certs/server.key \
                --secret secret --dir rx "$@" 2>>rx/stderr &
        rx_pid=$!
        for _ in $(seq 100); do [ -s rx/port ] && break; nap 0.05; done
        [ -s rx/port ] || fail "the receiver did not start: $(cat rx/stderr)"
}

cleanup_lib() {
        local rc=$? h
        set +e # a failing clean-up under set -e would end the trap here
        [ $rc -eq 0 ] || fails=$((fails + 1))
        for h in ${exit_hooks[@]+"${exit_hooks[@]}"}; do eval "$h"; done
        kill_daemon
        [ -n "$work" ] || return
        if [ "${KEEP:-0}" = 1 ] || [ $fails -ne 0 ]; then
                echo "# work dir kept: $work" >&2
        else
                rm -rf "$work"
        fi
}

fail() {
        echo "not ok: $*" >&2
        [ -f "$work/daemon.log" ] && { echo "--- daemon log (tail)" >&2; tail -30 "$work/daemon.log" >&2; }
        fails=$((fails + 1))
        exit 1
}
ok() { echo "ok: $*"; }

# token NAME ROLE: a random token, its hash appended to the tokens file; the token in $NAME
token() {
        local t
        t=$(openssl rand -hex 24)
        printf '%s %s %s\n' "$2" "$(printf %s "$t" | sha256sum | cut -d' ' -f1)" "$1" \
                >>"$work/tokens"
        printf -v "$1" %s "$t"
}

# agent_tokens: ENROLL, READER and ADMIN, the enrolment token also in $work/enroll.token
agent_tokens() {
        token ENROLL enroll
        token READER reader
        token ADMIN admin
        (umask 077 && printf %s "$ENROLL" >"$work/enroll.token")
}

# ---- attestd --------------------------------------------------------------------------------

# spawn [-p PORT] SCHEME LOG CMD...: run CMD with @PORT@ replaced by a free loopback port (or
# PORT), wait until SCHEME://127.0.0.1:PORT/healthz answers (SPAWN_WAIT seconds, default 10); on
# a free port retries a port clash. Sets daemon_pid and port.
spawn() {
        local fixed="" scheme log a args hexport
        if [ "$1" = -p ]; then fixed=$2; shift 2; fi
        scheme=$1 log=$2
        shift 2
        for _ in 1 2 3 4 5 6 7 8; do
                port=${fixed:-$((30000 + RANDOM % 20000))}
                args=()
                for a in "$@"; do args+=("${a//@PORT@/$port}"); done
                "${args[@]}" >>"$log" 2>&1 &
                daemon_pid=$!
                printf -v hexport %04X "$port"
                for _ in $(seq $((${SPAWN_WAIT:-10} * 20))); do
                        # curl (~45 ms of CPU a try) only once something listens on the port
                        # (one grep of /proc/net/tcp: a LISTEN socket, state 0A, on 127.0.0.1)
                        if grep -q "^ *[0-9]*: 0100007F:$hexport 00000000:0000 0A " /proc/net/tcp &&
                                curl -s --cacert "$CA" -o /dev/null "$scheme://127.0.0.1:$port/healthz"
                        then
                                return 0
                        fi
                        kill -0 "$daemon_pid" 2>/dev/null || break
                        nap 0.05
                done
                wait "$daemon_pid" 2>/dev/null || true
                daemon_pid=""
                [ -z "$fixed" ] || break
                tail -1 "$log" | grep -q "Address already in use" || break
        done
        fail "attestd did not start${fixed:+ on $fixed}: $(tail -3 "$log")"
}

# start_attestd [-n NAME] [-d DB] [-p PORT] [-e VAR=VALUE]... [-w WRAPPER] [--] ARGS...: attestd
# (under the words of WRAPPER, e.g. valgrind and its options, when given) over TLS on
# 127.0.0.1 (a free port, or PORT) with the test's certificate and tokens and --threads 2, the
# database DB (default $work/attestd.db), the log $work/daemon.log (with NAME daemon-NAME.log,
# linked as daemon.log, what fail prints), ARGS and then the words of ATTESTD_EXTRA (to run an
# older attestd with its flags when showing that a test fails without a fix); -e sets VAR in its
# environment. Waits for /healthz; sets daemon_pid and port.
start_attestd() {
        local log=$work/daemon.log db=$work/attestd.db fixed=() envs=() wrap=() extra=()
        while [ $# -gt 0 ]; do
                case $1 in
                -n) log=$work/daemon-$2.log; ln -sf "daemon-$2.log" "$work/daemon.log"; shift 2 ;;
                -d) db=$2; shift 2 ;;
                -p) fixed=(-p "$2"); shift 2 ;;
                -e) envs+=("$2"); shift 2 ;;
                -w) read -ra wrap <<<"$2"; shift 2 ;;
                --) shift; break ;;
                *) break ;;
                esac
        done
        read -ra extra <<<"${ATTESTD_EXTRA:-}"
        spawn ${fixed[@]+"${fixed[@]}"} https "$log" env ${envs[@]+"${envs[@]}"} \
                ${wrap[@]+"${wrap[@]}"} "$ATTESTD" \
                --listen "127.0.0.1:@PORT@" \
                --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
                --db "$db" --tokens "$work/tokens" --threads 2 "$@" ${extra[@]+"${extra[@]}"}
}

# start_daemon [OPTIONS] ARGS...: start_attestd trusting enrolled AKs without an EK
# (--insecure-trust-ak)
start_daemon() { start_attestd "$@" --insecure-trust-ak; }

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

# kill_daemon: stop attestd without judging its exit (clean-ups)
kill_daemon() {
        if [ -n "$daemon_pid" ]; then
                kill "$daemon_pid" 2>/dev/null || true
                wait "$daemon_pid" 2>/dev/null || true
        fi
        daemon_pid=""
}

# No AddressSanitizer/LeakSanitizer/UBSan report in any daemon log.
sanitizer_check() {
        if grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.log \
                2>/dev/null; then
                fail "sanitizer report in the daemon log"
        fi
}

# ---- HTTP -------------------------------------------------------------------------------------

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
                # one jq for both fields: "error" on the first line, whether "detail" is there on
                # the last (a body jq cannot read gives neither, and fails below)
                local ed
                ed=$(jq -r '.error, has("detail")' <<<"$body" 2>/dev/null) || ed=""
                [ "${ed%%$'\n'*}" = "$code" ] || fail "$*: error ${ed%%$'\n'*}, want $code: $body"
                [ "${ed##*$'\n'}" = true ] || fail "$*: no detail: $body"
        fi
        ok "$* ($status${code:+ $code})"
}

# metric NAME{LABELS}: the value of one sample of /metrics
metric() {
        curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" |
                awk -v k="$1" '$1 == k { print $2 }'
}

# ---- the real agent ---------------------------------------------------------------------------

# boot_host: the recorded qemu61-good boot replayed into the swtpm (PCR 0-10), its IMA log as
# ima.bin in the current directory (the agent's log, matching PCR 10)
boot_host() {
        need tpm2_pcrextend
        "$TOP/tests/lib/replay-boot" "$TOP/tests/data/qemu61-good" "$ATTESTCTL"
        cp "$TOP/tests/data/qemu61-good/binary_runtime_measurements" ima.bin
}

# host_verifier ARGS...: boot_host, and attestd trusting the swtpm's EK CA, --interval 1, ARGS
host_verifier() {
        boot_host
        start_attestd --ek-ca "$SWTPM_STATE/ca" --interval 1 "$@"
}

# agent_cmd ARGS...: attest-agent against the attestd on $port, the test's CA, enroll.token, the
# swtpm and ima.bin, then ARGS (with agent_exec=exec: in place of the shell)
agent_cmd() {
        ${agent_exec:-} "$AGENT" --verifier "https://127.0.0.1:$port" --ca "$CA" --token-file enroll.token \
                --tcti "$SWTPM_TCTI" --ima-log ima.bin "$@"
}

# start_agent LOG ARGS...: agent_cmd ARGS in the background, output in LOG; sets agent_pid
start_agent() {
        local log=$1
        shift
        agent_exec="exec" agent_cmd "$@" >"$log" 2>&1 &
        agent_pid=$!
}

# stop_agent: SIGTERM; the agent must exit 0 within 5 s
stop_agent() {
        local t0 rc=0
        t0=$(date +%s%N)
        kill -TERM "$agent_pid"
        for _ in $(seq 100); do kill -0 "$agent_pid" 2>/dev/null || break; nap 0.05; done
        kill -0 "$agent_pid" 2>/dev/null && fail "agent still running 5 s after SIGTERM"
        wait "$agent_pid" || rc=$?
        agent_pid=""
        [ $rc -eq 0 ] || fail "agent exited $rc after SIGTERM"
        ok "agent exited 0 $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGTERM"
}

# count FILE PATTERN: the lines of FILE matching PATTERN (0 when FILE does not exist)
count() {
        local n
        n=$(grep -cE "$2" "$1" 2>/dev/null) || true
        echo "${n:-0}"
}
# verdicts LOG: the verdicts an agent logged
verdicts() { count "$1" '^<[56]>verdict: '; }

# wait_lines FILE PATTERN N SECONDS: until FILE has N lines matching PATTERN (bounded); fails
# at once when the agent ($agent_pid) died meanwhile
wait_lines() {
        for _ in $(seq $(($4 * 20))); do
                [ "$(count "$1" "$2")" -ge "$3" ] && return 0
                if [ -n "${agent_pid:-}" ] && ! kill -0 "$agent_pid" 2>/dev/null; then
                        echo "--- $1" >&2; tail -20 "$1" >&2
                        fail "agent died waiting for $3 x '$2'"
                fi
                nap 0.05
        done
        echo "--- $1" >&2; tail -20 "$1" >&2
        fail "no $3 x '$2' in $1 within $4 s"
}

# start_notify: systemd's side of Type=notify on $PWD/notify.sock; every datagram the agent sends
# becomes one line of notify.txt (newlines as |). Sets notify_pid (killed at exit).
start_notify() {
        need python3
        cat >notify.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
        out.flush()
PY
        python3 notify.py "$PWD/notify.sock" "$PWD/notify.txt" &
        notify_pid=$!
        kill_at_exit notify_pid
        for _ in $(seq 50); do [ -S notify.sock ] && break; nap 0.05; done
}

# ---- tpm2-tools: an AK of the test's own, rounds by hand --------------------------------------

SEL="sha256:0,1,2,3,4,5,6,7,8,9,10"
flush() { tpm2_flushcontext -t >/dev/null; tpm2_flushcontext -s >/dev/null; }

# persist_ak HANDLE: the RSA EK (ek.ctx, ek.pub) and an RSA AK (ak.ctx, ak.pub) persisted at
# HANDLE ($AKH) in the swtpm of TPM2TOOLS_TCTI
persist_ak() {
        AKH=$1
        tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null
        flush
        tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pub >/dev/null
        flush
        tpm2_evictcontrol -C o -c ak.ctx "$AKH" >/dev/null
}

# challenge [ID]: a challenge for agent ID (default $id); sets $nonce and $offset
challenge() {
        api POST "/v1/agents/${1:-$id}/challenges"
        [ "$status" = 201 ] || fail "challenge: $status $body"
        local no
        no=$(jq -r '.nonce, .ima_offset' <<<"$body") # one jq for both
        nonce=${no%%$'\n'*} offset=${no#*$'\n'}
}
# quote NONCE: the AK at $AKH quotes $SEL over NONCE: q.attest, q.sig, and the PCRs in q.pcrs
quote() {
        tpm2_quote -c "$AKH" -l "$SEL" -q "$1" -m q.attest -s q.sig -g sha256 >/dev/null
        tpm2_pcrread "$SEL" >q.pcrs
        flush
}
# submit [ID]: POST ev.json as the evidence of agent ID (default $id)
submit() { api POST "/v1/agents/${1:-$id}/evidence" @ev.json; }

# ---- tpm2-tools: enrolment by credential activation -------------------------------------------

# keys DIR: the RSA EK (public area, certificate from NV) and a new AK of the TPM in
# TPM2TOOLS_TCTI: DIR/ek.ctx, ek.pub, ek.der, ak.ctx, ak.pub, ak.name
keys() {
        local d=$1
        mkdir -p "$d"
        tpm2_flushcontext -t >/dev/null 2>&1 || true
        tpm2_createek -c "$d/ek.ctx" -G rsa -u "$d/ek.pub" >/dev/null
        tpm2_createak -C "$d/ek.ctx" -c "$d/ak.ctx" -G rsa -g sha256 -s rsassa -u "$d/ak.pub" \
                -n "$d/ak.name" >/dev/null
        tpm2_flushcontext -t >/dev/null 2>&1 || true
        tpm2_nvread 0x01c00002 -o "$d/ek.der" 2>/dev/null
}

# activate DIR CRED PROOF: TPM2_ActivateCredential with DIR's AK and EK (EK policy session);
# returns its status, the TPM's words in DIR/activate.log
activate() {
        local d=$1 rc=0
        tpm2_flushcontext -t >/dev/null 2>&1 || true
        tpm2_startauthsession --policy-session -S "$d/s.ctx" >/dev/null || fail "policy session"
        tpm2_policysecret -S "$d/s.ctx" -c e >/dev/null || fail "PolicySecret(endorsement)"
        tpm2_activatecredential -c "$d/ak.ctx" -C "$d/ek.ctx" -i "$2" -o "$3" \
                -P "session:$d/s.ctx" >"$d/activate.log" 2>&1 || rc=$?
        tpm2_flushcontext "$d/s.ctx" >/dev/null 2>&1 || true
        return $rc
}

b64() { base64 -w0 "$1"; }

# enrol_ek TOKEN AK_DIR [EK_DIR [CERT_DIR|none]]: POST /v1/agents with AK_DIR's AK, EK_DIR's EK
# public (default AK_DIR's) and CERT_DIR's EK certificate (default EK_DIR's)
enrol_ek() {
        local tok=$1 ak=$2 ek=${3:-$2} cert=${4:-${3:-$2}} req
        req=$(jq -nc --arg ak "$(b64 "$ak/ak.pub")" --arg ek "$(b64 "$ek/ek.pub")" \
                '{ak_public: $ak, ek_public: $ek}')
        if [ "$cert" != none ]; then
                req=$(jq -c --arg c "$(b64 "$cert/ek.der")" '. + {ek_cert: $c}' <<<"$req")
        fi
        api POST /v1/agents "$req" "$tok"
}

# credential FILE: the credential of the last enrolment answer in tpm2-tools' file format
# (BE32 magic 0xBADCC0DE, BE32 version 1, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET)
credential() {
        local blob secret
        blob=$(jq -er .credential.blob <<<"$body") || fail "no credential.blob: $body"
        secret=$(jq -er .credential.secret <<<"$body") || fail "no credential.secret: $body"
        { printf '\xba\xdc\xc0\xde\x00\x00\x00\x01'; base64 -d <<<"$blob"; base64 -d <<<"$secret"; } \
                >"$1"
}

# activate_api ID PROOF-FILE: POST the TPM's proof to /v1/agents/ID/activate
activate_api() {
        api POST "/v1/agents/$1/activate" "$(jq -nc --arg p "$(b64 "$2")" '{proof: $p}')"
}

# mem_start FILE ... mem_stop: the agent's private memory over a stretch (tests/lib/memsample.py:
# VmHWM reset, RssAnon sampled) into FILE, "anon_peak_kB VmHWM_kB RssFile_kB samples".
mem_start() {
        need python3
        rm -f mem.stop mem.ready
        python3 "$TOP/tests/lib/memsample.py" "$agent_pid" mem.stop 300 mem.ready >"$1" &
        mem_pid=$!
        kill_at_exit mem_pid
        for _ in $(seq 200); do
                [ -e mem.ready ] && return 0
                nap 0.05
        done
        fail "the memory sampler did not start"
}
mem_stop() {
        touch mem.stop
        wait "$mem_pid"
        mem_pid=""
}
