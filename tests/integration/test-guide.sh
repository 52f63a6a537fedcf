#!/usr/bin/env bash
# docs/operating.md cannot rot: every ```sh block of the guide runs, in order, in one bash shell
# (set -euo pipefail), against a real attestd and a real attest-agent on swtpm over loopback.
# The guide's variables (its first block) are set here to a scratch directory, a free loopback
# port, the swtpm, the recorded qemu61 boot's IMA log (replayed into the swtpm's PCRs) and the
# swtpm's local CA; attestd, attest-agent and attestctl are the build's, first in PATH.
# A block that starts with "# not run by the guide test: REASON" is not run and is listed here
# with its reason ("not run: ..."), never skipped silently. After the guide: what it did is
# checked from outside (the agent decommissioned, the rotated-out admin token refused, the new
# one accepted, the agent's exit status 3 when decommissioned).
# The guide runs as root and runs attestd as the user attestd (as attestd.service does, with
# setpriv), and lays out the agent's configuration for the user attest-agent: both system users
# are added here when the machine has none (useradd --system, as the packages' sysusers.d would;
# they are left in place: another run of this test may be using them). Checked after the guide:
# the daemon ran as attestd (its database is attestd's), every file it reads is root:attestd 0640
# or, a secret, attestd's 0600, its log lines carry an ISO 8601 time and no <N> prefix, and a
# configuration it may not read stops it with the file, the user and what the file needs (no
# "see --help").
# Usage: test-guide.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread jq
guide=$TOP/docs/operating.md
[ -f "$guide" ] || fail "no $guide"

# the units' users, as the packages' sysusers.d snippets make them
for u in attestd attest-agent; do
        getent passwd "$u" >/dev/null ||
                useradd --system --user-group --no-create-home --home-dir /nonexistent \
                        --shell /usr/sbin/nologin "$u" 2>/dev/null || getent passwd "$u" >/dev/null ||
                fail "cannot add the system user $u"
done
need setpriv
# the user attestd reaches its files in the work directory (mktemp made it 0700)
chmod 0711 "$work"

# the host: the recorded boot in the swtpm, its IMA log as ima.bin
boot_host
mkdir -p bin shell
ln -s "$ATTESTD" bin/attestd
ln -s "$AGENT" bin/attest-agent
ln -s "$ATTESTCTL" bin/attestctl
# the guide's python3 is Debian's (python3-jwt, python3-cryptography), not a pyenv one first in PATH
ln -s /usr/bin/python3 bin/python3

# a free loopback port for attestd (below the ephemeral range and swtpm-run's)
for _ in $(seq 20); do
        p=$((10000 + RANDOM % 10000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || break
done

# the guide's blocks as one script: its variables first, each block announced by its line
awk -v vars="$work/vars.sh" '
        BEGIN {
                print "set -euo pipefail"; print ". \"" vars "\""
                # what the guide started is stopped by the test, also when a block fails
                print "trap '\''printf \"ID=%q\\nATTESTD_PID=%q\\nRECEIVER_PID=%q\\n\" \"${ID:-}\" \"${ATTESTD_PID:-}\" \"${RECEIVER_PID:-}\" >\"$GUIDE_OUT\"'\'' EXIT"
        }
        /^```sh$/ { inb = 1; start = NR; first = 1; skip = 0; n++; next }
        inb && /^```$/ { inb = 0; next }
        inb && first {
                first = 0
                if ($0 ~ /^# not run by the guide test:/) {
                        skip = 1
                        sub(/^# not run by the guide test: */, "")
                        print "echo \"not run: guide block " n " (line " start "): " $0 "\""
                        next
                }
                print "echo \"# guide block " n " (line " start ")\""
                print "echo \"# guide block " n " (line " start ")\" >&2"
        }
        inb && !skip { print }
        END { if (inb) { print "echo unterminated block; exit 1" } }
' "$guide" >guide.sh
blocks=$(grep -c '^```sh$' "$guide")
skipped=$(grep -c '^echo "not run: ' guide.sh || true)
[ "$blocks" -ge 15 ] || fail "only $blocks sh blocks in the guide"

cat >vars.sh <<EOF
ETC=$work/etc
STATE=$work/state
VERIFIER=localhost
LISTEN=127.0.0.1:$p
PORT=$p
OPS=$work/ops
SWTPM_LOCALCA=$SWTPM_STATE/ca
AGENT_ETC=$work/agent-etc
AGENT_STATE=$work/agent-state
TCTI=$SWTPM_TCTI
IMA_LOG=$work/ima.bin
SRC=$TOP
PATH=$work/bin:\$PATH
EOF
export GUIDE_OUT=$work/guide.out
# attestd started by the guide: stopped at exit by its pid (the guide reports it at its end)
at_exit 'if [ -s guide.out ]; then . ./guide.out; kill $ATTESTD_PID $RECEIVER_PID 2>/dev/null; fi'
rc=0
# the programs choose their log form themselves here (util/log.h): attestd's log is a file
(cd shell && unset ATTEST_LOG_FORMAT && exec bash ../guide.sh) >guide.log 2>guide.err || rc=$?
if [ $rc != 0 ]; then
        echo "--- the guide's output (tail)" >&2
        tail -15 guide.log >&2
        tail -25 guide.err >&2
        tail -10 state/attestd.log >&2 2>/dev/null || true
        fail "the guide failed (exit $rc) in $(grep '^# guide block' guide.err | tail -1)"
fi
ran=$(grep -c '^# guide block' guide.log)
grep '^not run: ' guide.log || true
[ "$ran" = $((blocks - skipped)) ] || fail "$ran blocks ran, want $((blocks - skipped))"
ok "the guide: $ran sh blocks ran in order, $skipped not run (listed above)"

# ---- what the guide did, seen from outside -----------------------------------------------------
# shellcheck disable=SC1091
. ./guide.out
# get PATH TOKEN-FILE: attestd (as the guide made it: its CA, the name localhost) answers $status
get() {
        status=$(curl -s --cacert etc/ca.pem -o resp.json -w '%{http_code}' \
                -H "Authorization: Bearer $(tr -d '\n' <"$2")" "https://localhost:$p$1") || status=000
        body=$(cat resp.json 2>/dev/null || true)
}
grep -q "^attest-agent exited 3$" guide.log || fail "the decommissioned agent did not exit 3"
get "/v1/agents/$ID" ops/reader.token
[ "$status" = 200 ] && [ "$(jq -r .state <<<"$body")" = decommissioned ] ||
        fail "agent $ID after the guide: $status $body"
ok "the guide's host is decommissioned and its agent exited 3"
# the admin token the guide rotated out has left the tokens file; the rotated-in one works
[ "$(grep -c '^admin ' etc/tokens)" = 1 ] || fail "$(grep -c '^admin ' etc/tokens) admin tokens after the rotation"
grep -q 'ops team, rotated$' etc/tokens || fail "the rotated token is not in the tokens file"
get /v1/policies ops/admin.token
[ "$status" = 200 ] && [ "$(jq -r '.policies[0].name' <<<"$body")" = prod ] ||
        fail "the rotated-in admin token: $status $body"
grep -q "^prod.json: valid policy 'prod'$" guide.log || fail "policy validate: $(grep -i valid guide.log)"
ok "the tokens file holds only the rotated admin token, and it works; policy prod is stored"

# section 5: the receiver got each change once, signed, in order; sections 7 and 8 added the
# re-enrolment (enrolled, then its first verdict) and the decommission
for _ in $(seq 100); do # delivery is asynchronous: up to 10 s for the last event
        grep -q '"agent.decommissioned"' state/hooks/events.jsonl && break
        nap 0.1
done
types=$(jq -r .type state/hooks/events.jsonl | tr '\n' ' ')
[ "$types" = "agent.fail agent.pass agent.deleted agent.enrolled agent.pass agent.decommissioned " ] ||
        fail "webhook events: $types"
ids=$(jq -r .id state/hooks/events.jsonl | tr '\n' ' ')
[ "$(jq -r .id state/hooks/events.jsonl | sort -n | tr '\n' ' ')" = "$ids" ] || fail "event ids out of order: $ids"
jq -se 'map(select(.type == "agent.fail")) | any(.[].failing_claims[]; . == "kernel.version")' \
        state/hooks/events.jsonl >/dev/null || fail "agent.fail does not name kernel.version"
! grep -v ' ok ' state/hooks/requests || fail "a request whose signature did not verify"
ok "webhooks: $types(ids $ids), every signature verified by the receiver"
grep -Eq '^webhooks: +[0-9]+ events pending, 0 of 1 receivers retrying, 0 dropped$' guide.log ||
        fail "attestctl status shows no webhook backlog: $(grep '^webhooks' guide.log)"
# section 6: PyJWT verified the EAR against the JWKS, with the relying party's nonce
grep -Eq '^EAR (affirming|warning) prod@[0-9]+ ' guide.log || fail "EAR: $(grep '^EAR' guide.log)"
ok "EAR verified by PyJWT: $(grep '^EAR' guide.log | cut -d' ' -f2-3)"

# ---- as the unit's user --------------------------------------------------------------------------
# mode owner:group FILE...: each file is so
modes() {
        local want=$1 f
        shift
        for f; do
                [ "$(stat -c '%a %U:%G' "$f")" = "$want" ] || fail "$f: $(stat -c '%a %U:%G' "$f"), want $want"
        done
}
[ "$(stat -c %U state/attestd.db)" = attestd ] || fail "the database is $(stat -c %U state/attestd.db)'s: attestd did not run as attestd"
modes "640 root:attestd" etc/attestd.conf etc/tokens etc/server.pem etc/ek-ca/*.pem
modes "600 attestd:attestd" etc/server.key etc/webhook.secret etc/ear.key state/nonce.key
modes "750 root:attestd" etc etc/ek-ca
modes "600 root:root" etc/ca.key
modes "600 root:root" ops/admin.token ops/reader.token ops/enroll.token
modes "600 attest-agent:attest-agent" agent-etc/enroll.token
modes "640 root:attest-agent" agent-etc/agent.conf
ok "attestd ran as attestd; its files root:attestd 0640, its secrets attestd's 0600; the agent's for attest-agent"
# the log: an ISO 8601 UTC time and the level on every line written to the file, no <N> prefix
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (error|warning|notice|info|debug): '
n=$(grep -c . state/attestd.log)
[ "$n" -gt 10 ] && [ "$(grep -cE "$iso" state/attestd.log)" = "$n" ] ||
        fail "attestd.log: $(grep -vE "$iso" state/attestd.log | head -3)"
grep -Eq "${iso%: }: listening on 127\.0\.0\.1:$p\$" state/attestd.log || fail "no timed 'listening on' line"
ok "attestd.log: $n lines, each with its UTC time and level ($(head -1 state/attestd.log | cut -c1-40)...)"
# a configuration the unit's user may not read: what it needs, not "see --help"
install -m 0600 etc/attestd.conf root-only.conf
rc=0
setpriv --reuid=attestd --regid=attestd --init-groups env -u ATTEST_LOG_FORMAT "$ATTESTD" \
        --config "$work/root-only.conf" 2>denied.log || rc=$?
[ $rc = 2 ] || fail "attestd with a config it cannot read exited $rc: $(cat denied.log)"
grep -Eq "${iso%: }: $work/root-only.conf: Permission denied; attestd runs as user attestd \(uid [0-9]+\), group attestd \(gid [0-9]+\); the file is root:root 0600: it must be readable by attestd" denied.log ||
        fail "the refusal does not say who needs what: $(cat denied.log)"
if grep -q 'see --help' denied.log; then fail "a permission error sent to --help: $(cat denied.log)"; fi
ok "a configuration attestd may not read: $(cut -c26- denied.log | head -c 160)..."
[ $fails = 0 ]
