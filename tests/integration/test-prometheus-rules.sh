#!/usr/bin/env bash
# The shipped Prometheus alerting rules (contrib/prometheus/attestd.rules.yml, docs/monitoring.md):
#  1. promtool check rules; promtool test rules with the unit tests beside them
#     (contrib/prometheus/attestd.rules.test.yml)
#  2. every alert of the rules has a test where it fires and one where it must not
#  3. the tests notice a broken rule: each mutation of the rules (a fleet alert per instance, a
#     threshold, a "for" dropped, a label selector widened) makes promtool test rules fail
# Usage: test-prometheus-rules.sh TOP
set -euo pipefail
TOP=$(cd "${1:?usage: test-prometheus-rules.sh TOP}" && pwd)
for t in promtool awk sed; do
        command -v "$t" >/dev/null || { echo "not ok: $t is not installed" >&2; exit 1; }
done
work=$(mktemp -d /tmp/attestd-promrules.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "not ok: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
src=$TOP/contrib/prometheus

promtool check rules "$src/attestd.rules.yml" || fail "promtool check rules"
(cd "$src" && promtool test rules attestd.rules.test.yml) || fail "promtool test rules"
n=$(grep -c -- '- alert:' "$src/attestd.rules.yml")
ok "promtool: $n rules, their unit tests pass"

awk '/alertname:/ { a = $2 } /exp_alerts: \[\]/ { print a, "quiet" } /- exp_labels:/ { print a, "fires" }' \
        "$src/attestd.rules.test.yml" | sort -u >"$work/covered"
while read -r a; do
        grep -qx "$a fires" "$work/covered" || fail "$a: no test where it fires"
        grep -qx "$a quiet" "$work/covered" || fail "$a: no test where it must not fire"
done < <(awk '/- alert:/ { print $3 }' "$src/attestd.rules.yml")
ok "every alert has a test where it fires and one where it must not"

# mutant NAME SED: the rules changed by SED must fail their tests
mutant() {
        cp "$src/attestd.rules.test.yml" "$work/"
        sed "$2" "$src/attestd.rules.yml" >"$work/attestd.rules.yml"
        cmp -s "$work/attestd.rules.yml" "$src/attestd.rules.yml" && fail "mutation $1 changed nothing"
        if (cd "$work" && promtool test rules attestd.rules.test.yml >/dev/null 2>&1); then
                fail "the tests pass with $1"
        fi
}
mutant "failing per instance" 's/max by (job) (attestd_agents{state="failing"})/attestd_agents{state="failing"}/'
mutant "5xx threshold 50 %" 's/> 0.05$/> 0.5/'
mutant "stale without for" '/alert: AttestdHostStale/,/for:/ s/for: 5m/for: 0m/'
mutant "any job down" 's/up{job="attestd"}/up/'
mutant "delivered ignored" 's/ and on (job) sum by (job) (increase(attestd_webhook_delivered_total\[15m\])) == 0//'
mutant "resets of any reason" 's/{reason="state_unusable"}//'
ok "six broken rules each fail the tests"
