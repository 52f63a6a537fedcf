#!/usr/bin/env bash
# A compromised host must never hide its verdict behind bytes (hostile round three, item 1): the
# real agent on a real swtpm, attestd over TLS with EAR and a webhook receiver. The host measures
# files outside its ima.runtime allowlist whose names are hostile bytes (appended to its IMA log,
# PCR 10 extended, as the kernel does):
#   h1  a valid UTF-8 name whose multi-byte characters straddle the reason's cut
#   h2  invalid UTF-8 (/tmp/x\xff)
#   h3  terminal escapes and control characters (OSC title, clear screen, CR, LF, CSI as C1)
#   h4  a 4 KiB name of two-byte characters (cut at the stored 255 bytes)
#   h5  every byte 0x01..0xff
# Each round ends in a stored fail naming the escaped path (docs/attestd-policy.5, "Bytes in
# paths"; checked against this script's own implementation of the rule), the ima.runtime claim's
# reason valid UTF-8 and cut on a whole character, EAR contraindicated, agent.fail delivered with
# ima.runtime among its failing claims, attestations_total{result="fail"} up and "error" not.
# Between cases a new policy version excludes the names seen so far, so the host passes again.
# Last, a round that cannot be judged (its stored policy no longer parses) is stored as an error:
# status "error", agent.error delivered, result="error" counted, EAR "none", never the old pass.
# Usage: test-verdict-bytes.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP EVGEN
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 6 "$@"
EVGEN=$(realpath "$6")
need tpm2_pcrextend jq python3 sqlite3 xxd
test_begin attestd-vbytes
agent_tokens
cd "$work"
kill_at_exit agent_pid

(umask 077 && openssl rand -hex 32 >secret &&
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ear.key 2>/dev/null)

# ---- the receiver ----
rx_pid=""
kill_at_exit rx_pid
webhook_rx --port 0
# wait_event TYPE N: the receiver holds N events of TYPE (bounded: 20 s)
wait_event() {
        for _ in $(seq 200); do
                [ "$(jq -c --arg t "$1" 'select(.type == $t)' rx/events.jsonl 2>/dev/null | wc -l)" -ge "$2" ] &&
                        return 0
                nap 0.1
        done
        fail "fewer than $2 $1 events within 20 s: $(jq -c '[.id,.type]' rx/events.jsonl 2>/dev/null | tr '\n' ' ')"
}

boot_host
start_attestd --ek-ca "$SWTPM_STATE/ca" --interval 1 --ear-key "$work/ear.key" \
        --webhook "https://127.0.0.1:$(cat rx/port)/hook" --webhook-ca "$CA" \
        --webhook-secret-file "$work/secret" --webhook-backoff-max 1 --grace 3600

# policy N: version N of "default": ima.runtime allowing nothing but a placeholder, excluding the
# hostile names h1 .. h(N-1) (dot-all: the names hold newlines)
zero=sha256:$(printf '0%.0s' $(seq 64))
policy() {
        local ex='[]'
        [ "$1" -gt 1 ] && ex="[\"(?s)/tmp/h[1-$(($1 - 1))]-.*\"]"
        api PUT /v1/policies/default "$(jq -nc --arg z "$zero" --argjson ex "$ex" \
                '{ima: {runtime: {digests: {"/nonexistent": [$z]}, excludes: $ex, violations: "fail",
                 failures_max: 8}}}')" "$ADMIN"
        [ "$status" = 200 ] || [ "$status" = 201 ] || fail "PUT policy version $1: $status $body"
}
last_result() { # the newest result in $res, its verdict in $v
        api GET "/v1/agents/$id/results?limit=1" "" "$READER"
        [ "$status" = 200 ] || fail "GET results: $status $body"
        res=$body
        v=$(jq -c '.results[0].verdict' <<<"$res")
}
ear_status() { # the ear.status of the agent's EAR now
        api GET "/v1/agents/$id/ear" "" "$READER"
        [ "$status" = 200 ] || fail "GET ear: $status $body"
        python3 -c 'import base64, json, sys
t = sys.argv[1].split(".")[1]
c = json.loads(base64.urlsafe_b64decode(t + "=" * (-len(t) % 4)))
s = list(c["submods"].values())[0]
print(s["ear.status"], json.dumps(s["ear.trustworthiness-vector"], sort_keys=True))' "$body"
}

# The escaping as docs/attestd-policy.5 states it, written here independently of util/esc.c:
# HEX -> the stored path as the verdict must show it (255 bytes kept, cut before a character)
cat >expect.py <<'PY'
import sys
BAD = ({0x061c, 0x180e, 0xfeff} | set(range(0x200b, 0x2010)) | set(range(0x2028, 0x202f)) |
       set(range(0x2060, 0x2070)) | set(range(0xfff9, 0xfffc)) | set(range(0xe0000, 0xe0080)))
def esc(b):
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                ch = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            ch = None
        if ch is not None and len(ch) == 1:
            cp = ord(ch)
            if not (cp < 0x20 or cp == 0x7f or 0x80 <= cp <= 0x9f or cp in BAD):
                out.append("\\\\" if ch == "\\" else ch)
                i += len(ch.encode())
                continue
        out.append("\\x%02x" % b[i])
        i += 1
    return "".join(out)
name = bytes.fromhex(sys.argv[1])
cut = len(name) > 255
n = 255 if cut else len(name)
k = 0
while cut and k < 3 and (name[n] & 0xc0) == 0x80:
    n -= 1
    k += 1
print(esc(name[:n]) + ("..." if cut else ""))
PY

policy 1
start_agent a.log --state-dir st
wait_lines a.log '^<5>verdict: pass' 1 60
id=$(cat st/agent-id)
wait_event agent.pass 1
ok "the host passes under default@1 before any hostile name"

hexof() { printf '%s' "$1" | xxd -p | tr -d '\n'; }
declare -A cases
cases[h1]=$(hexof "/tmp/h1-$(printf 'a%.0s' $(seq 191))")$(hexof 'ééé')
cases[h2]=$(hexof '/tmp/h2-x')ff
cases[h3]=$(hexof '/tmp/h3-')1b5d303b7469746c65071b5b324a0d0a6c696e65c29b313b33316d$(hexof done)
cases[h4]=$(hexof '/tmp/h4-')$(printf 'c3a9%.0s' $(seq 2044))
cases[h5]=$(hexof '/tmp/h5-')$(python3 -c 'print(bytes(range(1, 256)).hex())')

k=0
for c in h1 h2 h3 h4 h5; do
        k=$((k + 1))
        hex=${cases[$c]}
        want=$(python3 expect.py "$hex")
        fails0=$(metric 'attestd_attestations_total{result="fail"}')
        errs0=$(metric 'attestd_attestations_total{result="error"}')
        n=$(count a.log '^<5>verdict: fail')
        rm -f one.bin
        "$EVGEN" gen one.bin "name:$hex"
        # the log first: a round between the two replays the prefix the quote covers
        cat one.bin >>ima.bin
        "$ATTESTCTL" ima hashes one.bin | xargs -r -n 40 tpm2_pcrextend >/dev/null
        wait_lines a.log '^<5>verdict: fail' $((n + 1)) 30
        last_result
        [ "$(jq -r '.results[0].status' <<<"$res")" = fail ] || fail "$c: the stored result is not a fail: $res"
        jq -e --arg p "$want" '.status == "fail" and ([.runtime.failures[].path] | index($p) != null)' \
                <<<"$v" >/dev/null || fail "$c: no failure naming $want: $v"
        reason=$(jq -r '[.claims[] | select(.name == "ima.runtime")][0] | select(.result == "fail") | .reason' <<<"$v")
        [ -n "$reason" ] || fail "$c: no failing ima.runtime claim: $v"
        if [ $k = 1 ]; then
                # the first failure is the one the reason names: a prefix of the escaped path,
                # cut on a whole character and marked
                python3 - "$reason" "$want" <<'PY' || fail "$c: the reason splits the path: $reason"
import sys
r, want = sys.argv[1], sys.argv[2]
head = r.split(" first: entry ", 1)[1].split(" ", 1)[1].rsplit(" (", 1)[0]
assert head.endswith("..."), head
assert want.startswith(head[:-3]) and len(head[:-3]) < len(want), (head, want)
r.encode("utf-8")
PY
        fi
        read -r es tv < <(ear_status)
        [ "$es" = contraindicated ] || fail "$c: EAR $es $tv, want contraindicated"
        wait_event agent.fail "$k"
        jq -e -s 'map(select(.type == "agent.fail")) | last | .failing_claims | index("ima.runtime") != null' \
                rx/events.jsonl >/dev/null || fail "$c: agent.fail without ima.runtime: $(tail -1 rx/events.jsonl)"
        [ "$(metric 'attestd_attestations_total{result="fail"}')" -gt "$fails0" ] || fail "$c: no fail counted"
        [ "$(metric 'attestd_attestations_total{result="error"}')" = "$errs0" ] || fail "$c: an error was counted"
        ok "$c: stored fail naming $(printf '%.60s' "$want")..., EAR contraindicated, agent.fail delivered"
        # the next version excludes what was seen: the host passes again (judged from entry 0)
        policy $((k + 1))
        wait_event agent.pass $((k + 1))
done
grep -qE 'ERROR: AddressSanitizer|runtime error' daemon.log && fail "sanitizer report"
grep -c $'\x1b' daemon.log a.log rx/events.jsonl | grep -v ':0$' && fail "a raw ESC reached a log or an event"
ok "no raw ESC byte in attestd's log, the agent's log or the webhook events"

# ---- a round that cannot be judged is stored as an error ------------------------------------------
echo "# the stored policy no longer parses: the round is an error, not the old pass"
stop_agent
stop_daemon TERM
sqlite3 attestd.db "UPDATE policies SET body = '{\"ima\":{\"runtime\":{\"from_the_future\":1}}}' WHERE name = 'default'"
start_attestd --ek-ca "$SWTPM_STATE/ca" --interval 1 --ear-key "$work/ear.key" \
        --webhook "https://127.0.0.1:$(cat rx/port)/hook" --webhook-ca "$CA" \
        --webhook-secret-file "$work/secret" --webhook-backoff-max 1 --grace 3600
errs0=$(metric 'attestd_attestations_total{result="error"}')
start_agent a2.log --state-dir st
wait_lines a2.log '^<[3-6]>verdict: error' 1 30
stop_agent
last_result
jq -e '.results[0].status == "error" and .results[0].verdict.status == "error" and
        .results[0].verdict.reason.code == "judge_failed"' <<<"$res" >/dev/null ||
        fail "the unjudged round was not stored as an error: $res"
api GET "/v1/agents/$id" "" "$READER"
[ "$(jq -r .last_status <<<"$body")" = error ] || fail "last_status is not error: $body"
api GET "/v1/agents?status=failing" "" "$READER"
jq -e --arg id "$id" '[.agents[].id] | index($id) != null' <<<"$body" >/dev/null ||
        fail "an agent in error is not listed as failing: $body"
[ "$(metric 'attestd_attestations_total{result="error"}')" -gt "$errs0" ] || fail "no error counted"
read -r es tv < <(ear_status)
[ "$es" = none ] && [ "$tv" = '{"configuration": -1, "executables": -1, "hardware": -1, "instance-identity": -1}' ] ||
        fail "EAR of an unjudged round: $es $tv"
wait_event agent.error 1
ok "unjudged round: stored error (judge_failed), last_status error, listed failing, counted, agent.error delivered, EAR none with verifier-malfunction (-1)"
stop_daemon TERM
echo "all verdict-bytes checks passed"
