#!/usr/bin/env bash
# live.sh SCENARIO KERNEL BUILD: one live attestation boot (kernel/README.md, "Live attestation").
#
# attestd runs here on loopback (TLS, SQLite, EK CA = swtpm's local CA); the guest boots KERNEL in
# QEMU (TCG) with swtpm as its TPM, and attest-agent runs INSIDE the guest: its initramfs carries
# the agent and its libraries, the agent reads the kernel's securityfs IMA log and quotes with the
# kernel's /dev/tpmrm0. The guest's only network is QEMU user mode with restrict=on and one
# forward, 10.0.2.100:8443 -> attestd; the server certificate names IP 10.0.2.100, and the agent
# trusts only the test CA. The agent enrols by credential activation against the TPM's EK
# certificate and attests in rounds (--once, one per 'agent' step of the scenario) while the guest
# keeps running; 'wait-host' steps let this script change policies between rounds.
# Verdicts are read back from attestd's REST API and checked per scenario:
#   gcc       patched gcc kernel: trusted_keys.sources=[tpm] and cfi disabled pass, anchored;
#             then a policy demanding CFI fails, naming cfi.enabled (anchored) and the log entry
#   cfi-off   the patched clang kCFI kernel (6.12) booted with cfi=off: the gcc checks, on a
#             record that says CFI is off at run time although the kernel was built with it
#   fineibt   the same kernel booted with cfi=fineibt,norand: FineIBT patched in on a CPU without
#             IBT (TCG has none), so nothing stops a call landing past its check: the gcc checks,
#             on a record that says mode=fineibt but enabled=0, ibt=off, rand=0
#   fineibt-fail
#             the same kernel with cfi=fineibt,norand and the series' fail_cfi_rewrite=: the FineIBT
#             rewrite fails after the callers were stripped; the gcc checks, on a record that says
#             mode=none, enabled=0; the kernel's error line; LKDTM CFI_FORWARD_PROTO survives
#   clang     patched clang kCFI 6.12 kernel, trusted keys a module: cfi.enabled and
#             trusted_keys.source pass, anchored; trusted.ko unloaded and loaded with rng=bogus
#             (refused, a record source=none;...;error=22): round 2 fails on that last record;
#             loaded again; the series' KUnit module passes; LKDTM CFI_FORWARD_PROTO traps in the
#             same guest (kCFI live, not only configured)
#   selinux   enforcing 1 -> 0 -> 1 between rounds: pass, fail selinux.enforcing, fail
#             never_permissive; incremental rounds; the measured policy hash equals the sha256 of
#             the guest's /sys/fs/selinux/policy
#   unpatched unpatched kernel: trusted keys and CFI only as unanchored host facts; a policy that
#             demands anchored claims fails, saying they were not measured
#   rng       patched gcc kernel booted with trusted.rng=kernel: trusted keys from the TPM pass,
#             anchored, but a policy demanding key material from the TPM fails trusted_keys.rng,
#             naming the trusted-keys-source entry (rng=kernel)
#   badrng    patched gcc kernel booted with trusted.source=tpmx trusted.rng=bogus: the kernel's
#             prefix rule picks the TPM, the RNG is refused (EINVAL): the record says
#             source=none;requested=tpm;...;error=22; and a policy demanding the TPM fails, anchored
#   runtime-policy  patched gcc kernel, no boot IMA policy, a run-time one with the CRITICAL_DATA
#             rules written after boot: selinux-state is measured, trusted-keys-source and cfi-state
#             are not (boot-only records); a policy demanding them anchored comes out missing
#   forgery   a forged cfi-state line in place of the kernel's, in a copy of the log the agent
#             reads, fails the replay; appended after the quoted entries, it is never counted
#   ovmf      UEFI (OVMF) with Secure Boot on, the EFI-stub kernel signed with the snakeoil key
#             (kernel/build.sh --efi): the agent sends the firmware event log in round 1 and
#             nothing in round 2; the boot claims show Secure Boot on and, as the kernel, the
#             signed image's Authenticode hash (kernel/pe-hash.py), anchored on PCR 4/7
# The scenario files are kernel/scenarios/live-<SCENARIO>.scn.
# Needs: what kernel/boot.sh needs (qemu-system-x86, swtpm, swtpm-tools, socat, busybox-static,
# checkpolicy), curl, jq, openssl, xxd. Environment: BOOT_TIMEOUT (QEMU limit, default 240 s),
# BOOT_NIC (kernel/boot.sh --nic), KEEP=1 (keep the work folder).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SCENARIO KERNEL BUILD" >&2; exit 2; }
scn=$1
KERNEL=$(realpath "$2")
BUILD=$(realpath "$3")
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ATTESTD=$BUILD/daemon/attestd
AGENT=$BUILD/agent/attest-agent
export TOP ATTESTD
SCENARIO=$TOP/kernel/scenarios/live-$scn.scn
[ -f "$SCENARIO" ] || { echo "not ok: no scenario $SCENARIO" >&2; exit 2; }
[ -f "$KERNEL" ] || { echo "not ok: no kernel $KERNEL" >&2; exit 2; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$TOP/tests/lib/common.sh"
need xxd socat qemu-system-x86_64 swtpm
if [ ! -x "$AGENT" ] || [ ! -x "$ATTESTD" ]; then
        echo "not ok: build $BUILD first" >&2
        exit 1
fi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-240}

# a boot's files live longer than most tests': a work folder of this test's own prefix
test_begin attestd-kernel-live
boot_pid=""
kill_at_exit boot_pid

# The server certificate the guest checks: the test CA, SAN IP 10.0.2.100 (the address the agent
# connects to) and 127.0.0.1 (this script's REST calls).
(
        cd "$work/certs"
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out guest.key 2>/dev/null
        openssl req -new -key guest.key -subj "/CN=10.0.2.100" -out guest.csr 2>/dev/null
        printf '%s\n' "subjectAltName=IP:10.0.2.100,IP:127.0.0.1" "extendedKeyUsage=serverAuth" \
                >guest.ext
        openssl x509 -req -in guest.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
                -extfile guest.ext -out guest.pem 2>/dev/null
)
agent_tokens
cat >"$work/agent.conf" <<CONF
verifier = https://10.0.2.100:8443
ca = /etc/attest/ca.pem
token-file = /etc/attest/enroll.token
tcti = device:/dev/tpmrm0
state-dir = /run/attest-agent
timeout = 60
CONF

ekca=$work/ekca
spawn https "$work/daemon.log" "$ATTESTD" --listen "127.0.0.1:@PORT@" \
        --tls-cert "$work/certs/guest.pem" --tls-key "$work/certs/guest.key" \
        --db "$work/attestd.db" --tokens "$work/tokens" --threads 2 --ek-ca "$ekca"

# put_policy NAME JSON: store a policy (admin)
put_policy() {
        api PUT "/v1/policies/$1" "$2" "$ADMIN"
        expect 201 "" -- "PUT policy $1" >/dev/null
}

# agent_id: the one enrolled agent's id (sets $AID)
agent_id() {
        api GET /v1/agents "" "$READER"
        expect 200 "" -- "GET /v1/agents" >/dev/null
        [ "$(jq '.agents | length' <<<"$body")" = 1 ] || fail "want one agent: $body"
        AID=$(jq -r '.agents[0].id' <<<"$body")
}

# bind_policy NAME: bind the enrolled agent to policy NAME
bind_policy() {
        agent_id
        api PUT "/v1/agents/$AID/policy" "{\"policy\":\"$1\"}" "$ADMIN"
        expect 200 "" -- "bind $AID to $1" >/dev/null
}

out=$work/guest
adds=(--add "$work/agent.conf:/etc/attest-agent/agent.conf"
        --add "$work/certs/ca.pem:/etc/attest/ca.pem"
        --add "$work/enroll.token:/etc/attest/enroll.token")
# what the 'blocked' step must not reach: the host's attestd port through QEMU's gateway address,
# and the forward address on any other port
printf '10.0.2.2 %s\n10.0.2.100 %s\n' "$port" "$port" >"$work/probe"
adds+=(--add "$work/probe:/etc/attest/probe")
# this build's configuration, for the 'boot-config' step (kernel/build.sh caches it beside bzImage)
if [ -f "$(dirname "$KERNEL")/config" ]; then
        adds+=(--add "$(dirname "$KERNEL")/config:/etc/attest/kernel.config")
fi

# boot: kernel/boot.sh in the background; each @@ATTEST-WAIT TAG@@ the guest prints is handled by
# on_wait TAG, then answered with "go TAG" on the control line. Bounded by BOOT_TIMEOUT.
boot() {
        local answered=0 tag t0 rc=0
        t0=$(date +%s.%N)
        "$TOP/kernel/boot.sh" --scenario "$SCENARIO" --out "$out" --kernel "$KERNEL" \
                --agent "$AGENT" "${adds[@]}" --ek-ca "$ekca" --net "$port" --control \
                --timeout "$BOOT_TIMEOUT" ${BOOT_NIC:+--nic "$BOOT_NIC"} >"$work/boot.log" 2>&1 &
        boot_pid=$!
        for _ in $(seq $(((BOOT_TIMEOUT + 30) * 5))); do
                kill -0 "$boot_pid" 2>/dev/null || break
                [ -f "$out/console.log" ] || { sleep 0.2; continue; }
                tag=$(tr -d '\r' <"$out/console.log" |
                        sed -n 's/^@@ATTEST-WAIT \([A-Za-z0-9_-]*\)@@$/\1/p' |
                        sed -n "$((answered + 1))p")
                if [ -n "$tag" ]; then
                        on_wait "$tag"
                        # shellcheck disable=SC2016 # expanded by the inner sh
                        timeout 10 sh -c 'printf "go %s\n" "$1" >"$2"' sh "$tag" "$out/ctl.in" ||
                                fail "could not answer the guest's wait $tag"
                        answered=$((answered + 1))
                fi
                sleep 0.2
        done
        if kill -0 "$boot_pid" 2>/dev/null; then
                fail "kernel/boot.sh still running after $((BOOT_TIMEOUT + 30)) s"
        fi
        wait "$boot_pid" || rc=$?
        boot_pid=""
        if [ $rc -ne 0 ]; then
                echo "--- boot.log" >&2; tail -20 "$work/boot.log" >&2
                if [ -f "$out/console.log" ]; then
                        echo "--- console (tail)" >&2; tr -d '\r' <"$out/console.log" | tail -30 >&2
                fi
                fail "kernel/boot.sh failed ($rc)"
        fi
        printf 'boot %s: %s s wall (QEMU %s s)\n' "$scn" \
                "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
                "$(awk '$1 == "boot" { print $2 }' "$out/times.txt")"
}

# results: the agent's verdicts from attestd, oldest first, into $work/results.json; sets $nres
results() {
        agent_id
        api GET "/v1/agents/$AID/results?limit=100" "" "$READER"
        expect 200 "" -- "GET results" >/dev/null
        jq '[.results | reverse | .[] | .verdict + {stored_status: .status}]' <<<"$body" \
                >"$work/results.json"
        nres=$(jq length "$work/results.json")
}

# v N FILTER: jq FILTER on verdict N (1-based, oldest first)
v() { jq -r --argjson i "$(($1 - 1))" ".[\$i] | $2" "$work/results.json"; }
# c N CLAIM FIELD: FIELD of the claim named CLAIM in verdict N ("none" when there is no such claim)
c() {
        jq -r --argjson i "$(($1 - 1))" --arg n "$2" --arg f "$3" \
                '[(.[$i].claims // [])[] | select(.name == $n)] | if length == 0 then "none" else .[0][$f] end' \
                "$work/results.json"
}
# want WHAT GOT EXPECTED
want() {
        [ "$2" = "$3" ] || {
                echo "--- verdicts" >&2; jq -c '.[] | {status, policy, reason, claims}' "$work/results.json" >&2
                fail "$1: got '$2', want '$3'"
        }
        ok "$1 = $3"
}
# rounds N: the guest ran N agent rounds with these exit statuses (0 pass, 1 fail) and attestd
# stored N verdicts
rounds() {
        local n=$1 i st
        shift
        results
        want "verdicts stored" "$nres" "$n"
        for i in $(seq "$n"); do
                st=$(tr -d '\r' <"$out/console.log" | sed -n "s/^@@ATTEST-ROUND $i \([0-9]*\)@@\$/\1/p")
                want "round $i: agent exit status" "$st" "$1"
                # the verdict the agent printed in the guest is the one attestd stored
                want "round $i: verdict in the guest" "$(jq -r .status "$out/round-$i.json")" \
                        "$(v "$i" .status)"
                shift
        done
}
# log_line N: line N+1 of the guest's ascii IMA log (entry N, 0-based)
log_line() { sed -n "$(($1 + 1))p" "$out/ascii_runtime_measurements"; }
# event_entry EVENT: the 0-based index of the last entry named EVENT in the guest's log, or none
event_entry() {
        awk -v ev="$1" '$3 == "ima-buf" && $5 == ev { n = NR - 1 } END { print n == "" ? "none" : n }' \
                "$out/ascii_runtime_measurements"
}
# event_buf EVENT: the buffer of the last entry named EVENT, as text
event_buf() {
        awk -v ev="$1" '$3 == "ima-buf" && $5 == ev { b = $6 } END { print b }' \
                "$out/ascii_runtime_measurements" | xxd -r -p
}

# ---- scenarios ------------------------------------------------------------------------------------
P_TK_NOCFI='{"name":"@N@","trusted_keys":{"sources":["tpm"],"anchored":true},
        "cfi":{"enabled":false,"anchored":true}}'
P_CFI='{"name":"@N@","cfi":{"enabled":true,"anchored":true}}'
P_TK_CFI='{"name":"@N@","trusted_keys":{"sources":["tpm"],"anchored":true},
        "cfi":{"enabled":true,"anchored":true}}'
pol() { printf '%s' "${2//@N@/$1}"; }

on_wait() { fail "unexpected wait-host $1"; }

# cfi_record WANT [LINE]: the cfi-state buffer is WANT, and the kernel's own log line for the
# scheme it chose (arch/x86/kernel/alternative.c) agrees with the record's mode (LINE: the line
# to look for instead, for mode=none after a failed rewrite)
cfi_record() {
        want "cfi-state record" "$(event_buf cfi-state)" "$1"
        local line=${2:-}
        case $1 in
        *"mode=none;"*) line=${line:-"Disabling CFI"} ;;
        *"mode=kcfi;"*) line="Using kCFI" ;;
        *"mode=fineibt;"*) line="Using FineIBT CFI" ;;
        *) fail "cfi_record: no known mode in '$1'" ;;
        esac
        grep -q "$line" "$out/dmesg.txt" || fail "the guest's dmesg has no '$line'"
        ok "the kernel's log: $(grep -m1 "$line" "$out/dmesg.txt")"
}

# event_bufs EVENT: the buffers of every entry named EVENT, as text, one a line, oldest first
event_bufs() {
        local h
        awk -v ev="$1" '$3 == "ima-buf" && $5 == ev { print $6 }' "$out/ascii_runtime_measurements" |
                while read -r h; do
                        xxd -r -p <<<"$h"
                        echo
                done
}
# event_entries EVENT: the 0-based indexes of the entries named EVENT, space separated
event_entries() {
        awk -v ev="$1" '$3 == "ima-buf" && $5 == ev { printf "%s%d", s, NR - 1; s = " " }' \
                "$out/ascii_runtime_measurements"
}

# tk_log_agrees: the trusted-keys-source records and the kernel's own log agree: each record
# with a source stands for one registration of the key type ("Key type trusted registered"),
# a record with source=none for none
tk_log_agrees() {
        local srcs nsrc nreg
        srcs=$(event_bufs trusted-keys-source | sed -n 's/^source=\([a-z]*\);.*/\1/p' | tr '\n' ' ')
        [ -n "$srcs" ] || fail "no source= in a trusted-keys-source record"
        nsrc=$(wc -w <<<"${srcs//none/}")
        nreg=$(grep -c 'Key type trusted registered' "$out/dmesg.txt" || true)
        [ "$nsrc" = "$nreg" ] ||
                fail "records with a source: $nsrc ($srcs), key type registrations in the kernel's log: $nreg"
        ok "trusted-keys-source records (source: $srcs) agree with the kernel's log ($nreg registrations)"
}

case $scn in
gcc | cfi-off | fineibt | fineibt-fail)
        put_policy default "$(pol default "$P_TK_NOCFI")"
        put_policy demand-cfi "$(pol demand-cfi "$P_CFI")"
        on_wait() {
                [ "$1" = demand-cfi ] || fail "unexpected wait-host $1"
                bind_policy demand-cfi
        }
        boot
        rounds 2 0 1
        tk=$(event_entry trusted-keys-source) cfi=$(event_entry cfi-state)
        [ "$tk" != none ] || fail "no trusted-keys-source entry in the guest's IMA log"
        [ "$cfi" != none ] || fail "no cfi-state entry in the guest's IMA log"
        ok "guest log: entry $tk trusted-keys-source '$(event_buf trusted-keys-source)'," \
                "entry $cfi cfi-state '$(event_buf cfi-state)'"
        want "round 1 status" "$(v 1 .status)" pass
        want "round 1 policy" "$(v 1 .policy)" default@1
        want "round 1 trusted_keys.source" "$(c 1 trusted_keys.source result)/$(c 1 trusted_keys.source observed)" pass/tpm
        want "round 1 trusted_keys.source anchored" "$(c 1 trusted_keys.source anchored)" true
        want "round 1 trusted_keys.source entry" "$(c 1 trusted_keys.source entry)" "$tk"
        want "round 1 trusted_keys.anchored" "$(c 1 trusted_keys.anchored result)" pass
        want "round 1 cfi.enabled" "$(c 1 cfi.enabled result)/$(c 1 cfi.enabled observed)" pass/false
        want "round 1 cfi.enabled anchored" "$(c 1 cfi.enabled anchored)" true
        want "round 1 cfi.enabled entry" "$(c 1 cfi.enabled entry)" "$cfi"
        want "round 1 cfi.anchored" "$(c 1 cfi.anchored result)" pass
        want "round 2 status" "$(v 2 .status)" fail
        want "round 2 policy" "$(v 2 .policy)" demand-cfi@1
        want "round 2 cfi.enabled" "$(c 2 cfi.enabled result)/$(c 2 cfi.enabled observed)" fail/false
        want "round 2 cfi.enabled anchored" "$(c 2 cfi.enabled anchored)" true
        want "round 2 cfi.enabled entry" "$(c 2 cfi.enabled entry)" "$cfi"
        want "round 2 cfi.enabled reason" "$(c 2 cfi.enabled reason)" "entry $cfi: enabled=0"
        want "round 2 replayed only new entries" "$(v 2 .ima.offset)" "$(v 1 .ima.entries)"
        log_line "$cfi" | grep -q ' ima-buf sha256:[0-9a-f]\{64\} cfi-state ' ||
                fail "entry $cfi of the guest's log is not cfi-state: $(log_line "$cfi")"
        ok "entry $cfi of the guest's log: $(log_line "$cfi" | cut -c1-60)..."
        tk_log_agrees
        if [ "$scn" != gcc ]; then
                # built with kCFI and FineIBT (the kernel's config): what runs is decided at boot
                grep -qx 'CONFIG_FINEIBT=y' "$(dirname "$KERNEL")/config" ||
                        fail "$scn wants a kernel built with CONFIG_CFI_CLANG=y and CONFIG_FINEIBT=y"
        fi
        case $scn in
        # cfi=off: no scheme, and cfi=off also turns off the re-keying
        cfi-off) cfi_record "enabled=0;mode=none;permissive=0;ibt=off;rand=0;" ;;
        # FineIBT is in the code, but without IBT its check can be jumped over: not enabled
        fineibt) cfi_record "enabled=0;mode=fineibt;permissive=0;ibt=off;rand=0;" ;;
        # the rewrite failed after the callers were stripped: no CFI at all, and the record says so
        fineibt-fail)
                grep -q 'FAULT_INJECTION: forcing a failure' "$out/dmesg.txt" ||
                        fail "fail_cfi_rewrite= did not fire (no 'FAULT_INJECTION: forcing a failure')"
                cfi_record "enabled=0;mode=none;permissive=0;ibt=off;rand=0;" \
                        "Something went horribly wrong trying to rewrite the CFI implementation"
                # and it is the truth: LKDTM's mismatched indirect call goes through
                grep -q 'survived mismatched prototype' "$out/dmesg.txt" ||
                        fail "LKDTM's CFI_FORWARD_PROTO did not survive: the kernel still has CFI"
                ! grep -q 'CFI failure at' "$out/dmesg.txt" ||
                        fail "a CFI failure was reported: the kernel still has CFI"
                ok "without CFI indeed: $(grep -m1 'survived mismatched prototype' "$out/dmesg.txt")"
                ;;
        esac
        ;;
clang)
        grep -qx 'CONFIG_TRUSTED_KEYS=m' "$(dirname "$KERNEL")/config" ||
                fail "clang wants the 6.12 kernel with trusted keys as a module (kernel/build.sh --cc clang-16 --version 6.12)"
        put_policy default "$(pol default "$P_TK_CFI")"
        boot
        rounds 2 0 1
        cfi=$(event_entry cfi-state)
        [ "$cfi" != none ] || fail "no cfi-state entry in the guest's IMA log"
        ok "guest log: entry $cfi cfi-state '$(event_buf cfi-state)'"
        for i in 1 2; do
                want "round $i cfi.enabled" "$(c $i cfi.enabled result)/$(c $i cfi.enabled observed)" pass/true
                want "round $i cfi.enabled anchored" "$(c $i cfi.enabled anchored)" true
                want "round $i cfi.enabled entry" "$(c $i cfi.enabled entry)" "$cfi"
                want "round $i cfi.anchored" "$(c $i cfi.anchored result)" pass
        done
        # on 6.12 (FineIBT built) the record has the effective state: kCFI chosen at boot (no IBT
        # under TCG, so cfi=auto is kCFI), hashes re-keyed
        cfi_record "enabled=1;mode=kcfi;permissive=0;ibt=off;rand=1;"
        # one record per attempt to load trusted.ko, refused ones included (busybox modprobe
        # tries finit_module, then init_module: the refused load is two attempts, two "Unsupported
        # RNG" lines), and each round judged by the last record before it
        tke=() tkb=()
        read -r -a tke <<<"$(event_entries trusted-keys-source)"
        mapfile -t tkb < <(event_bufs trusted-keys-source)
        nbad=$(grep -c 'Unsupported RNG' "$out/dmesg.txt" || true)
        [ "$nbad" -ge 1 ] || fail "no 'Unsupported RNG' in the guest's dmesg"
        want "trusted-keys-source records (2 loads, $nbad refused attempts)" "${#tke[@]}" "$((nbad + 2))"
        last=$((${#tke[@]} - 1))
        want "record 1 (entry ${tke[0]})" "${tkb[0]}" "source=tpm;requested=any;builtin=tpm,tee;rng=tpm;error=0;"
        for i in $(seq 1 "$nbad"); do
                want "record $((i + 1)) (entry ${tke[$i]}, rng=bogus)" "${tkb[$i]}" \
                        "source=none;requested=any;builtin=tpm,tee;rng=none;error=22;"
        done
        want "record $((last + 1)) (entry ${tke[$last]})" "${tkb[$last]}" "${tkb[0]}"
        want "round 1 trusted_keys.source" "$(c 1 trusted_keys.source result)/$(c 1 trusted_keys.source observed)" pass/tpm
        want "round 1 trusted_keys.source anchored" "$(c 1 trusted_keys.source anchored)" true
        want "round 1 trusted_keys.source entry" "$(c 1 trusted_keys.source entry)" "${tke[0]}"
        want "round 2 trusted_keys.source" "$(c 2 trusted_keys.source result)/$(c 2 trusted_keys.source observed)" fail/none
        want "round 2 trusted_keys.source entry" "$(c 2 trusted_keys.source entry)" "${tke[$nbad]}"
        want "round 2 replayed only new entries" "$(v 2 .ima.offset)" "$(v 1 .ima.entries)"
        tk_log_agrees
        # the series' KUnit cases (patches/6.12/0003) ran when their module loaded: the suite's
        # KTAP result line, and no case failed
        grep -qx 'CONFIG_TRUSTED_KEYS_KUNIT_TEST=m' "$(dirname "$KERNEL")/config" ||
                fail "the kernel has no KUnit module for the series (CONFIG_TRUSTED_KEYS_KUNIT_TEST=m)"
        grep -Eq '(^|\] )ok [0-9]+ trusted_keys_record$' "$out/dmesg.txt" ||
                fail "no 'ok N trusted_keys_record' (KUnit) in the guest's dmesg"
        if grep -Eq 'not ok [0-9]+ ' "$out/dmesg.txt"; then
                fail "a KUnit case failed: $(grep -E -m3 'not ok [0-9]+ ' "$out/dmesg.txt")"
        fi
        ok "KUnit: $(grep -m1 -o '# trusted_record_test: pass:[0-9]* fail:[0-9]* skip:[0-9]* total:[0-9]*' "$out/dmesg.txt")"
        # kCFI is live: LKDTM's mismatched indirect call trapped in this guest
        grep -q 'CFI failure at' "$out/dmesg.txt" ||
                fail "no 'CFI failure' in the guest's dmesg after provoke CFI_FORWARD_PROTO"
        ok "kCFI trapped: $(grep -m1 'CFI failure at' "$out/dmesg.txt")"
        # enforcing, not permissive: the offending task dies (SIGSEGV) instead of going on
        want "the provoking shell's exit status" "$(tr -d '\r' <"$out/console.log" |
                sed -n 's/^attest-init: provoke CFI_FORWARD_PROTO: exit \([0-9]*\)$/\1/p')" 139
        if grep -q 'survived mismatched prototype' "$out/dmesg.txt"; then
                fail "LKDTM survived the mismatched call: kCFI did not stop it"
        fi
        ;;
selinux)
        on_wait() {
                [ "$1" = policy ] || fail "unexpected wait-host $1"
                H=$(tr -d '\r' <"$out/console.log" |
                        sed -n 's/^@@ATTEST-FACT selinux_policy_sha256 \([0-9a-f]\{64\}\)@@$/\1/p')
                [ -n "$H" ] || fail "the guest printed no policy hash"
                put_policy default "{\"name\":\"default\",\"selinux\":{\"enforcing\":true,
                        \"never_permissive\":true,\"policy_sha256\":[\"$H\"]}}"
        }
        boot
        rounds 3 0 1 1
        # The hash the guest printed before round 1 is the sha256 of /sys/fs/selinux/policy, and
        # so is the copy the guest dumped at the end (the policy was not reloaded in between).
        want "guest's dumped /sys/fs/selinux/policy" "$(sha256sum <"$out/selinux_policy" | cut -d' ' -f1)" "$H"
        want "round 1" "$(v 1 .status)" pass
        want "round 1 selinux.policy_sha256 observed" "$(c 1 selinux.policy_sha256 observed)" "$H"
        want "round 1 selinux.policy_sha256" "$(c 1 selinux.policy_sha256 result)/$(c 1 selinux.policy_sha256 anchored)" pass/true
        want "round 1 selinux.enforcing" "$(c 1 selinux.enforcing result)" pass
        want "round 2" "$(v 2 .status)" fail
        want "round 2 selinux.enforcing" "$(c 2 selinux.enforcing result)/$(c 2 selinux.enforcing observed)" fail/false
        e=$(c 2 selinux.enforcing entry)
        want "round 2 selinux.enforcing anchored" "$(c 2 selinux.enforcing anchored)" true
        log_line "$e" | awk '{ print $6 }' | xxd -r -p | grep -q 'enforcing=0;' ||
                fail "entry $e of the guest's log is no selinux-state with enforcing=0: $(log_line "$e")"
        ok "round 2 names entry $e, the guest's selinux-state with enforcing=0"
        want "round 2 selinux.never_permissive" "$(c 2 selinux.never_permissive result)" fail
        want "round 3" "$(v 3 .status)" fail
        want "round 3 selinux.enforcing" "$(c 3 selinux.enforcing result)" pass
        want "round 3 selinux.never_permissive" "$(c 3 selinux.never_permissive result)" fail
        want "round 3 selinux.policy_sha256 observed" "$(c 3 selinux.policy_sha256 observed)" "$H"
        # incremental: each round replays only what the kernel measured since the last one
        for i in 2 3; do
                want "round $i starts where round $((i - 1)) ended" "$(v $i .ima.offset)" "$(v $((i - 1)) .ima.entries)"
                [ "$(v $i .ima.new_entries)" -ge 1 ] || fail "round $i: no new entries"
                want "round $i rebooted" "$(v $i .ima.rebooted)" false
        done
        ok "rounds 2 and 3 replayed $(v 2 .ima.new_entries) and $(v 3 .ima.new_entries) new entries"
        ;;
unpatched)
        put_policy default "$(pol default "$P_TK_NOCFI")"
        boot
        rounds 1 1
        for hp in "10.0.2.2 $port" "10.0.2.100 $port"; do
                grep -q "^@@ATTEST-FACT blocked $hp@@" <(tr -d '\r' <"$out/console.log") ||
                        fail "the guest did not report $hp as blocked"
                ok "guest could not connect to ${hp/ /:} (restrict=on)"
        done
        want "trusted-keys-source entries in the guest's log" "$(event_entry trusted-keys-source)" none
        want "cfi-state entries in the guest's log" "$(event_entry cfi-state)" none
        want "status" "$(v 1 .status)" fail
        # the agent's reports (trusted.source= on the command line, CFI from /boot/config-*) are
        # used, but only as unanchored claims
        want "trusted_keys.source" "$(c 1 trusted_keys.source observed)/$(c 1 trusted_keys.source anchored)" tpm/false
        want "cfi.enabled" "$(c 1 cfi.enabled observed)/$(c 1 cfi.enabled anchored)" false/false
        for s in trusted_keys cfi; do
                want "$s.anchored" "$(c 1 $s.anchored result)/$(c 1 $s.anchored observed)" fail/false
                r=$(c 1 $s.anchored reason)
                grep -q "not measured" <<<"$r" || fail "$s.anchored reason does not say 'not measured': $r"
                ok "$s.anchored reason: $r"
        done
        ;;
runtime-policy)
        put_policy default "$(pol default "$P_TK_NOCFI")"
        boot
        rounds 1 1
        [ "$(event_entry selinux-state)" != none ] ||
                fail "no selinux-state entry: the run-time policy did not measure critical data"
        ok "the run-time policy measures: selinux-state at entry $(event_entry selinux-state)"
        want "trusted-keys-source entries in the guest's log" "$(event_entry trusted-keys-source)" none
        want "cfi-state entries in the guest's log" "$(event_entry cfi-state)" none
        want "status" "$(v 1 .status)" fail
        # nothing under the quote and nothing from the agent: missing, and the reason names the
        # boot policy's CRITICAL_DATA rule
        for s in trusted_keys cfi; do
                want "$s.anchored" "$(c 1 $s.anchored result)/$(c 1 $s.anchored observed)" missing/null
                r=$(c 1 $s.anchored reason)
                grep -q "not measured.*boot IMA policy has a CRITICAL_DATA rule" <<<"$r" ||
                        fail "$s.anchored reason does not say why it was not measured: $r"
                ok "$s.anchored reason: $r"
        done
        ;;
rng)
        put_policy default '{"name":"default","trusted_keys":{"sources":["tpm"],"rng":["tpm"],
                "requested":["any"],"anchored":true}}'
        boot
        rounds 1 1
        tk=$(event_entry trusted-keys-source)
        [ "$tk" != none ] || fail "no trusted-keys-source entry in the guest's IMA log"
        buf=$(event_buf trusted-keys-source)
        grep -q '^source=tpm;.*rng=kernel;' <<<"$buf" ||
                fail "the kernel did not measure rng=kernel: '$buf'"
        ok "guest log: entry $tk trusted-keys-source '$buf'"
        want "status" "$(v 1 .status)" fail
        want "trusted_keys.source" "$(c 1 trusted_keys.source result)/$(c 1 trusted_keys.source observed)/$(c 1 trusted_keys.source anchored)" pass/tpm/true
        want "trusted_keys.requested" "$(c 1 trusted_keys.requested result)/$(c 1 trusted_keys.requested observed)" pass/any
        want "trusted_keys.anchored" "$(c 1 trusted_keys.anchored result)" pass
        want "trusted_keys.rng" "$(c 1 trusted_keys.rng result)/$(c 1 trusted_keys.rng observed)/$(c 1 trusted_keys.rng anchored)" fail/kernel/true
        want "trusted_keys.rng entry" "$(c 1 trusted_keys.rng entry)" "$tk"
        want "trusted_keys.rng reason" "$(c 1 trusted_keys.rng reason)" \
                "entry $tk: rng=kernel: new key material comes from 'kernel', which the policy does not accept"
        # the only claim that did not pass
        want "claims not passing" "$(v 1 '[.claims[] | select(.result != "pass") | .name] | join(",")')" trusted_keys.rng
        ;;
badrng)
        put_policy default '{"name":"default","trusted_keys":{"sources":["tpm"],"requested":["tpm"],
                "anchored":true}}'
        boot
        rounds 1 1
        tk=$(event_entry trusted-keys-source)
        [ "$tk" != none ] || fail "no trusted-keys-source entry in the guest's IMA log"
        # requested: what init_trusted() matched by prefix ("tpmx" -> tpm), never the raw value
        want "trusted-keys-source record" "$(event_buf trusted-keys-source)" \
                "source=none;requested=tpm;builtin=tpm,tee;rng=none;error=22;"
        grep -q 'Unsupported RNG' "$out/dmesg.txt" || fail "the guest's dmesg has no 'Unsupported RNG'"
        tk_log_agrees
        ok "the kernel's log: $(grep -m1 'Unsupported RNG' "$out/dmesg.txt")"
        want "status" "$(v 1 .status)" fail
        want "trusted_keys.source" "$(c 1 trusted_keys.source result)/$(c 1 trusted_keys.source observed)/$(c 1 trusted_keys.source anchored)" fail/none/true
        want "trusted_keys.source entry" "$(c 1 trusted_keys.source entry)" "$tk"
        want "trusted_keys.requested" "$(c 1 trusted_keys.requested result)/$(c 1 trusted_keys.requested observed)" pass/tpm
        want "claims not passing" "$(v 1 '[.claims[] | select(.result != "pass") | .name] | join(",")')" trusted_keys.source
        ;;
forgery)
        "$TOP/tests/kernel/forge-line.sh" cfi-state "enabled=1;mode=kcfi;permissive=0;" >"$work/forged-cfi.line"
        adds+=(--add "$work/forged-cfi.line:/etc/attest/forged-cfi.line")
        put_policy default "$(pol default "$P_CFI")"
        boot
        rounds 3 1 1 1
        cfi=$(event_entry cfi-state)
        [ "$cfi" != none ] || fail "no cfi-state entry in the guest's IMA log"
        grep -q '^enabled=0;' <<<"$(event_buf cfi-state)" ||
                fail "the kernel's cfi-state is not enabled=0: $(event_buf cfi-state)"
        # round 1: the forged entry in place of the kernel's
        want "round 1 (forged entry in place) reason" "$(v 1 .reason.code)" ima_replay_mismatch
        want "round 1 claims" "$(v 1 '.claims // [] | length')" 0
        ok "round 1: $(v 1 .reason.detail)"
        # round 2: the forged entry after the quoted ones is never counted
        want "round 2 (forged entry appended) starts at" "$(v 2 .ima.offset)" 0
        want "round 2 accepted entries" "$(v 2 .ima.entries)" "$(wc -l <"$out/ascii_runtime_measurements")"
        want "round 2 cfi.enabled" "$(c 2 cfi.enabled result)/$(c 2 cfi.enabled observed)/$(c 2 cfi.enabled entry)" "fail/false/$cfi"
        want "round 3 (the kernel's log) new entries" "$(v 3 .ima.new_entries)" 0
        want "round 3 cfi.enabled" "$(c 3 cfi.enabled result)/$(c 3 cfi.enabled observed)" fail/false
        ;;
ovmf)
        # the policy needs the booted kernel's digest: the guest waits until it is in place
        on_wait() {
                [ "$1" = policy ] || fail "unexpected wait-host $1"
                [ -f "$out/bzImage.signed" ] || fail "kernel/boot.sh signed no kernel"
                KH=$("$TOP/kernel/pe-hash.py" "$out/bzImage.signed" | cut -d' ' -f1)
                put_policy default "{\"name\":\"default\",\"boot\":{\"secureboot\":true,
                        \"pcrs_replay\":true,\"kernels\":[\"sha256:$KH\"],\"separators\":true}}"
        }
        boot
        rounds 2 0 0
        fw=$(wc -c <"$out/binary_bios_measurements")
        grep -q 'secureboot: Secure boot enabled' "$out/dmesg.txt" ||
                fail "the guest's kernel did not see Secure Boot on"
        ok "guest: $(grep -m1 'secureboot:' "$out/dmesg.txt"), firmware log $fw bytes"
        # the agent's own evidence log lines: the whole firmware log, then nothing
        want "round 1 status" "$(v 1 .status)" pass
        want "round 1 policy" "$(v 1 .policy)" default@1
        want "round 1 boot.secureboot" "$(c 1 boot.secureboot result)/$(c 1 boot.secureboot observed)/$(c 1 boot.secureboot anchored)" pass/true/true
        want "round 1 boot.kernels" "$(c 1 boot.kernels result)/$(c 1 boot.kernels observed)/$(c 1 boot.kernels anchored)" "pass/sha256:$KH/true"
        want "round 1 boot.pcrs_replay" "$(c 1 boot.pcrs_replay result)" pass
        want "round 1 boot.separators" "$(c 1 boot.separators result)" pass
        # the kernel digest is the signed kernel's Authenticode hash, which the firmware logged
        tpm2_eventlog "$out/binary_bios_measurements" >"$work/eventlog.yaml" ||
                fail "tpm2_eventlog cannot read the guest's firmware log"
        grep -q "Digest: \"$KH\"" "$work/eventlog.yaml" ||
                fail "tpm2_eventlog finds no event with digest $KH in the guest's firmware log"
        ok "boot.kernels observed sha256:$KH = kernel/pe-hash.py of the signed bzImage = the firmware log's EV_EFI_BOOT_SERVICES_APPLICATION"
        want "round 2 status" "$(v 2 .status)" pass
        want "round 2 boot.secureboot" "$(c 2 boot.secureboot result)/$(c 2 boot.secureboot observed)" pass/true
        want "round 2 boot.kernels" "$(c 2 boot.kernels observed)" "sha256:$KH"
        ;;
*) fail "unknown scenario $scn" ;;
esac
sanitizer_check
ok "live $scn"
