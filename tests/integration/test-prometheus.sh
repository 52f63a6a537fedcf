#!/usr/bin/env bash
# The shipped alerting rules and dashboard against a real Prometheus (Debian's) scraping a real
# attestd over HTTPS on loopback, the host a real agent on swtpm (docs/monitoring.md):
#  1. every metric the rules (contrib/prometheus/attestd.rules.yml) and every panel of the Grafana
#     dashboard (contrib/grafana/attestd.json, checked with jq: valid JSON, panels with ids,
#     positions and expressions) name is in attestd's /metrics; the check itself refuses a
#     dashboard naming a metric attestd does not export
#  2. Prometheus (1 s scrape and evaluation, the rules file as shipped) scrapes attestd with the
#     test's CA; with the host passing, AttestdHostFailing is evaluated on that data and inactive
#  3. the host fails its policy: AttestdHostFailing reaches "firing" (Prometheus' HTTP API) with
#     its labels and summary; AttestdStoreNotWritable stays inactive
#  4. the database's tmpfs filled: attestd_store_writable 0, AttestdStoreNotWritable pending; space
#     freed: 1 again, the alert inactive
#  5. attestd stopped: AttestdDown goes pending (up{job="attestd"} == 0, for 2m)
# Usage: test-prometheus.sh ATTESTD AGENT ATTESTCTL SWTPM_RUN TOP
# (re-runs itself under SWTPM_RUN --ek-cert when no swtpm is given in SWTPM_TCTI)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
agent_test_args 5 "$@"
agent_test_begin tpm2_pcrread prometheus promtool mount umount dd
boot_host
# the database on a small tmpfs, filled in part 4 (root, as tests/hostile/test-api-diskfull.sh)
mkdir full
if ! mount -t tmpfs -o size=3m,mode=0700 tmpfs full 2>mount.err; then
        echo "not ok: cannot mount a tmpfs (run as root): $(cat mount.err)" >&2
        exit 1
fi
unmount_full() {
        kill_daemon
        umount "$work/full" 2>/dev/null || umount -l "$work/full" 2>/dev/null || true
}
at_exit unmount_full
RULES=$TOP/contrib/prometheus/attestd.rules.yml
DASH=$TOP/contrib/grafana/attestd.json

# the webhook metrics are there only with a receiver: one that never answers (nothing listens on
# port 1), so the failing host's event stays pending
(umask 077 && openssl rand -hex 32 >webhook.secret)
start_attestd -d "$work/full/attestd.db" --ek-ca "$SWTPM_STATE/ca" --interval 300 \
        --webhook "https://127.0.0.1:1/hook" \
        --webhook-secret-file "$work/webhook.secret" --webhook-backoff-max 1
api GET /v1/agents # no token: 401, so attestd_rejected_requests_total has a sample
expect 401 unauthorized -- "a refused request" >/dev/null

# ---- 1. the names the rules and the dashboard use are attestd's -------------------------------
curl -s --cacert "$CA" "https://127.0.0.1:$port/metrics" >metrics.txt
promtool check metrics <metrics.txt || fail "promtool check metrics: the exposition has problems"
awk '!/^#/ { sub(/[{ ].*/, ""); print }' metrics.txt | sort -u >exported.txt
[ "$(wc -l <exported.txt)" -ge 40 ] || fail "/metrics: only $(wc -l <exported.txt) names"

# names_known FILE...: every attestd_* name in FILEs is in exported.txt
names_known() {
        local n missing=()
        while read -r n; do
                grep -qx "$n" exported.txt || missing+=("$n")
        done < <(grep -oh 'attestd_[a-z0-9_]*' "$@" | sort -u)
        [ ${#missing[@]} -eq 0 ] || { echo "not exported: ${missing[*]}" >&2; return 1; }
}
# dashboard_ok FILE: valid JSON, panels with unique ids, a position and targets, every target
# an expression; the expressions in FILE.exprs
dashboard_ok() {
        jq -e '(.panels | length) > 0
               and ([.panels[].id] | length == (unique | length))
               and all(.panels[]; (.gridPos | has("x") and has("y") and has("w") and has("h"))
                                  and (.targets | length) > 0
                                  and all(.targets[]; (.expr | type == "string" and length > 0)))' \
                "$1" >/dev/null || return 1
        jq -r '.panels[].targets[].expr' "$1" >"$1.exprs"
        names_known "$1.exprs"
}
grep -o 'expr:.*' "$RULES" >rules.exprs
sed -n '/expr: >-/,/labels:/p' "$RULES" >>rules.exprs
names_known rules.exprs || fail "the rules name metrics attestd does not export"
[ "$(grep -oh 'attestd_[a-z0-9_]*' rules.exprs | sort -u | wc -l)" -ge 8 ] ||
        fail "the rules' expressions were not read"
ok "the rules use $(grep -oh 'attestd_[a-z0-9_]*' rules.exprs | sort -u | wc -l) metrics, all exported"
cp "$DASH" dash.json
dashboard_ok dash.json || fail "the dashboard: not valid, or a metric attestd does not export"
ok "dashboard: valid JSON, $(jq '.panels | length' dash.json) panels, $(grep -oh 'attestd_[a-z0-9_]*' dash.json.exprs | sort -u | wc -l) metrics, all exported"
jq '.panels[0].targets[0].expr = "attestd_hosts_failing"' "$DASH" >bogus.json
if dashboard_ok bogus.json 2>/dev/null; then fail "the check took an invented metric"; fi
jq '.panels[1].targets = []' "$DASH" >bogus2.json
if dashboard_ok bogus2.json 2>/dev/null; then fail "the check took a panel without targets"; fi
echo '{"panels": [' >bogus3.json
if dashboard_ok bogus3.json 2>/dev/null; then fail "the check took invalid JSON"; fi
ok "the check refuses an invented metric, a panel without targets, invalid JSON"

# ---- 2. a real Prometheus, the host passing ---------------------------------------------------
cat >prometheus.yml <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: attestd
    scheme: https
    tls_config:
      ca_file: $CA
    static_configs:
      - targets: ["127.0.0.1:$port"]
YML
promtool check config prometheus.yml >/dev/null || fail "promtool check config"
prom_pid=""
kill_at_exit prom_pid
for _ in 1 2 3 4 5; do
        pport=$((30000 + RANDOM % 20000))
        prometheus --config.file=prometheus.yml --storage.tsdb.path="$work/tsdb" \
                --web.listen-address="127.0.0.1:$pport" --log.level=warn >>prometheus.log 2>&1 &
        prom_pid=$!
        for _ in $(seq 200); do
                curl -sf -o /dev/null "http://127.0.0.1:$pport/-/ready" && break 2
                kill -0 "$prom_pid" 2>/dev/null || break
                nap 0.05
        done
        kill "$prom_pid" 2>/dev/null || true
        wait "$prom_pid" 2>/dev/null || true
        prom_pid=""
done
[ -n "$prom_pid" ] || fail "prometheus did not start: $(tail -3 prometheus.log)"
ok "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') ready on 127.0.0.1:$pport"

# promq QUERY: the value of the one sample of an instant query, empty when there is none
promq() {
        curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
                jq -r '.data.result[0].value[1] // empty'
}
# until_eq WANT SECONDS CMD...: CMD's output is WANT within SECONDS (polled every 0.1 s), or 1
until_eq() {
        local want=$1 n=$(($2 * 10))
        shift 2
        for _ in $(seq "$n"); do
                [ "$("$@")" = "$want" ] && return 0
                nap 0.1
        done
        return 1
}
# wait_promq QUERY VALUE SECONDS: until QUERY answers VALUE
wait_promq() {
        until_eq "$2" "$3" promq "$1" || fail "$1: $(promq "$1"), not $2 within $3 s"
}
# rule NAME: the rule NAME as /api/v1/rules shows it (state, health, lastEvaluation, alerts)
rule() {
        curl -s "http://127.0.0.1:$pport/api/v1/rules?type=alert" |
                jq -c --arg n "$1" '[.data.groups[].rules[] | select(.name == $n)][0]'
}
rule_state() { rule "$1" | jq -r .state; }
# wait_rule_state NAME STATE SECONDS: until rule NAME is in STATE (pending, firing, inactive)
wait_rule_state() {
        until_eq "$2" "$3" rule_state "$1" || fail "$1 not $2 within $3 s: $(rule "$1")"
}
# evaluated_after NAME EPOCH: until rule NAME was evaluated after EPOCH (seconds)
evaluated_after() {
        local t
        for _ in $(seq 100); do
                t=$(rule "$1" | jq -r .lastEvaluation)
                if [ "$t" != null ] && [ "$(date -d "$t" +%s)" -gt "$2" ]; then return 0; fi
                nap 0.1
        done
        fail "$1 not evaluated after $2: $(rule "$1")"
}
[ "$(curl -s "http://127.0.0.1:$pport/api/v1/rules" | jq '[.data.groups[].rules[]] | length')" = \
        "$(grep -c -- '- alert:' "$RULES")" ] || fail "prometheus did not load every rule"

rc=0
agent_cmd --state-dir st --once >agent1.log 2>&1 || rc=$?
[ $rc = 0 ] || { cat agent1.log >&2; fail "the passing round exited $rc"; }
wait_promq 'up{job="attestd"}' 1 15
wait_promq 'attestd_agents{state="active"}' 1 15
t0=$(date +%s)
evaluated_after AttestdHostFailing "$t0"
r=$(rule AttestdHostFailing)
[ "$(jq -r '.state + " " + .health' <<<"$r")" = "inactive ok" ] || fail "a passing host: $r"
ok "scraped over HTTPS; one host passing: AttestdHostFailing evaluated, inactive"

# ---- 3. the host fails ------------------------------------------------------------------------
api PUT /v1/policies/default '{"name":"default","selinux":{"enforcing":false}}' "$ADMIN"
expect 201 "" -- "PUT a default policy the host fails" >/dev/null
rc=0
agent_cmd --state-dir st --once >agent2.log 2>&1 || rc=$?
[ $rc = 1 ] || { cat agent2.log >&2; fail "the failing round exited $rc, want 1"; }
[ "$(metric 'attestd_agents{state="failing"}')" = 1 ] || fail "attestd does not count it failing"
firing=""
for _ in $(seq 300); do
        firing=$(curl -s "http://127.0.0.1:$pport/api/v1/alerts" |
                jq -c '[.data.alerts[] | select(.labels.alertname == "AttestdHostFailing"
                                                and .state == "firing")][0] // empty')
        [ -n "$firing" ] && break
        nap 0.1
done
[ -n "$firing" ] || fail "AttestdHostFailing not firing within 30 s: $(rule AttestdHostFailing)"
[ "$(jq -r '[.labels.severity, .labels.job, .annotations.summary] | join("|")' <<<"$firing")" = \
        "critical|attestd|1 host(s) fail attestation" ] || fail "the alert: $firing"
ok "the host fails: AttestdHostFailing firing ($(jq -r .annotations.summary <<<"$firing"))"
for a in AttestdStoreNotWritable AttestdDown AttestdServerErrors; do
        [ "$(rule "$a" | jq -r '.state + " " + .health')" = "inactive ok" ] ||
                fail "$a: $(rule "$a")"
done
ok "AttestdStoreNotWritable, AttestdDown, AttestdServerErrors inactive"

# ---- 4. the disk fills, then space comes back ------------------------------------------------
dd if=/dev/zero of=full/fill bs=64k 2>/dev/null || true
wait_rule_state AttestdStoreNotWritable pending 30 # with the disk full
[ "$(promq 'attestd_store_writable')" = 0 ] || fail "attestd_store_writable not 0 with the disk full"
ok "the disk full: attestd_store_writable 0, AttestdStoreNotWritable pending (fires after 1 minute)"
rm -f full/fill
wait_promq 'attestd_store_writable' 1 30
t0=$(date +%s)
evaluated_after AttestdStoreNotWritable "$t0"
[ "$(rule AttestdStoreNotWritable | jq -r .state)" = inactive ] ||
        fail "space back: $(rule AttestdStoreNotWritable)"
ok "space back: attestd_store_writable 1, AttestdStoreNotWritable inactive"

# ---- 5. attestd gone --------------------------------------------------------------------------
stop_daemon
wait_rule_state AttestdDown pending 15 # after attestd stopped
ok "attestd stopped: AttestdDown pending (fires after 2 minutes)"
grep -E 'level=(error|warn)' prometheus.log | grep -v 'connection refused' | head -5 >&2 || true
