#!/usr/bin/env bash
# attestd's ima.runtime check against Keylime's own, on the same logs and policies: verdicts
# entry by entry, and the speed ratio on one core. Keylime is not in Debian and is never part of
# this tree: point KEYLIME_SRC at a checkout of github.com/keylime/keylime (run unmodified, its
# keylime/ima module imported from there; Debian's python3-jsonschema, -cryptography, -yaml,
# -gpg, -lark and -packaging are all it needs for that). Without KEYLIME_SRC the script is
# skipped: exit 77, which is not a pass.
#
#  1. every runtime-policy JSON in Keylime's tree through attestctl policy import-keylime: which
#     import, which are refused and why;
#  2. the real logs of tests/data with our Keylime-format policies (tests/data/keylime) and
#     variants that fail (a changed digest, no excludes, no ima-buf list): Keylime's
#     process_measurement_list one entry at a time against attestctl policy runtime-check
#     --entries, under Keylime's default ignore_tomtou_errors = False and under True (imported
#     with --violations fail);
#  3. a 100,000-path allowlist and a 1,000,000-entry log (tests/bench/keylime-gen, through
#     tests/lib/imagen): the failing entries of both, PCR 10, and CPU time on one core
#     (taskset -c 0), entries per second and the ratio.
#
# Usage: KEYLIME_SRC=DIR tests/bench/keylime-compare.sh BUILD_DIR   (a release build)
# Environment: PATHS (100000), ENTRIES (1000000), RUNS (3: the best of each side is kept).
set -euo pipefail
if [ -z "${KEYLIME_SRC:-}" ]; then
        echo "SKIP: keylime-compare needs KEYLIME_SRC=<a keylime checkout>; not run, not passed" >&2
        exit 77
fi
[ $# -eq 1 ] || { echo "Usage: KEYLIME_SRC=DIR $0 BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
ksrc=$(cd "$KEYLIME_SRC" && pwd)
ctl=$build/attestctl/attestctl gen=$build/tests/bench/keylime-gen
py=${PYTHON:-/usr/bin/python3}
paths=${PATHS:-100000} entries=${ENTRIES:-1000000} runs=${RUNS:-3}
for t in "$ctl" "$gen"; do [ -x "$t" ] || { echo "missing $t" >&2; exit 2; }; done
for t in jq taskset "$py"; do command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }; done
[ -f "$ksrc/keylime/ima/ima.py" ] || { echo "$ksrc: no keylime/ima/ima.py" >&2; exit 2; }
work=$(mktemp -d /tmp/keylime-compare.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
unexplained=0

# The driver: Keylime's check as its verifier calls it (cloud_verifier_common: the tenant keyring
# from the policy's verification-keys, boot_aggregates from the quoted PCRs, here the log's own
# value, i.e. a quote that matches). Nothing of Keylime is changed: a logging handler only
# records the paths its warnings name.
cat >driver.py <<'PY'
import json, logging, sys, time
src, policy_path, log_path, ba_hex, mode = sys.argv[1:6]
sys.path.insert(0, src)
from keylime.ima import ima, file_signatures
from keylime.common.algorithms import Hash

class Catch(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.paths = []
    def emit(self, r):
        if r.msg.startswith("File not found in allowlist") or r.msg.startswith("Hashes for file"):
            self.paths.append(r.args[0])

catch = Catch()
for name in ("keylime.ima", "keylime.ima.ast", "keylime.file_signatures"):
    lg = logging.getLogger(name)
    lg.addHandler(catch)
    lg.propagate = False
    lg.setLevel(logging.WARNING)
with open(policy_path, encoding="utf-8") as f:
    policy = ima.deserialize_runtime_policy(f.read())
ima.validate_runtime_policy(policy)
with open(log_path, encoding="utf-8") as f:
    lines = f.read().split("\n")
keyrings = file_signatures.ImaKeyrings()
keyrings.set_tenant_keyring(file_signatures.ImaKeyring.from_string(policy["verification-keys"]))
bas = {"any": [ba_hex]} if ba_hex else None
out = {"entries": sum(1 for l in lines if l)}
if mode == "per-entry":
    out["failing"] = []
    for i, l in enumerate([l for l in lines if l]):
        _, failure = ima.process_measurement_list(None, [l], policy, None, keyrings, bas, Hash.SHA1)
        if failure:
            out["failing"].append([i, sorted({e.event_id for e in failure.events})])
else:
    t0 = time.process_time()
    running, failure = ima.process_measurement_list(None, lines, policy, None, keyrings, bas,
                                                    Hash.SHA1)
    out["cpu_s"] = time.process_time() - t0
    out["pcr10_sha1"] = running
    out["failing_paths"] = catch.paths
    out["events"] = len(failure.events)
json.dump(out, sys.stdout)
print()
PY
keylime() { "$py" driver.py "$ksrc" "$@" 2>/dev/null; }

# ---- 1. Keylime's own policies ----
echo "== 1. runtime-policy JSON in Keylime's tree ($(git -C "$ksrc" rev-parse --short HEAD 2>/dev/null || echo '?'))"
found=0 imported=0
while IFS= read -r f; do
        found=$((found + 1))
        rel=${f#"$ksrc"/}
        # a DSSE envelope: verified with the public keys Keylime keeps beside it (up to 8)
        keys=()
        if jq -e 'type == "object" and has("payload")' "$f" >/dev/null 2>&1; then
                while IFS= read -r k; do
                        keys+=(--dsse-key "$k")
                done < <(find "$(dirname "$f")" -maxdepth 1 -type f \( -name '*pub*.pem' \
                        -o -name '*.pub' \) -exec grep -l -e '-BEGIN PUBLIC KEY-' \
                        -e '-BEGIN CERTIFICATE-' {} + | sort | head -8)
        fi
        if "$ctl" policy import-keylime "$f" ${keys[@]+"${keys[@]}"} -o /dev/null 2>err.txt; then
                imported=$((imported + 1))
                echo "  imported  $rel ($(grep -o 'imported .*' err.txt | cut -d, -f1))"
        else
                echo "  refused   $rel: $(grep -v '^attestctl: note' err.txt | head -1 | sed "s|$ksrc/||")"
        fi
done < <({ find "$ksrc" -name '*.json' \( -name '*runtime-policy*' -o -name '*allowlist*' \
        -o -name '*runtime_policy*' \); grep -rl --include='*.json' '"digests"' "$ksrc"; } |
        sort -u)
echo "  $imported of $found imported"

# ---- 2. the real logs ----
echo "== 2. tests/data logs: failing entries, Keylime (one entry at a time) vs attestctl runtime-check"
ba_of() { awk 'NR==1 { n = split($4, a, ":"); print a[n] }' "$1"; }
# compare NAME KEYLIME-POLICY LOG TOMTOU: import, judge with both, compare the failing indices
compare() {
        local name=$1 kpol=$2 log=$3 tomtou=$4 viol=() k a
        [ "$tomtou" = True ] && viol=(--violations fail)
        "$ctl" policy import-keylime "$kpol" "${viol[@]}" -o a.json 2>/dev/null
        KEYLIME_VERIFIER_IGNORE_TOMTOU_ERRORS=$tomtou keylime "$kpol" "$log" "$(ba_of "$log")" \
                per-entry >k.json
        k=$(jq -r '[.failing[][0]] | join(" ")' k.json)
        a=$({ "$ctl" policy runtime-check a.json "$log" --entries || true; } |
                awk '!/^entries / {print $1}' | paste -sd' ')
        # entries Keylime cannot parse (templates it has no parser for) are compared apart
        local unparsed kp ap
        unparsed=$(jq -r '[.failing[] | select(.[1] == ["ima.parser.entry"]) | .[0]] | join(" ")' k.json)
        kp=$(jq -r '[.failing[] | select(.[1] != ["ima.parser.entry"]) | .[0]] | join(" ")' k.json)
        ap=$(for i in $a; do [[ " $unparsed " == *" $i "* ]] || echo "$i"; done | paste -sd' ')
        if [ "$k" = "$a" ]; then
                echo "  same      $name (tomtou $tomtou): failing [${a}]"
        elif [ "$kp" = "$ap" ]; then
                echo "  same      $name (tomtou $tomtou): failing [${ap}], apart from entries" \
                        "[${unparsed}] Keylime cannot parse (template" \
                        "$(awk 'NR==1 {print $3}' "$log"); attestd fails [${a}])"
        else
                echo "  DIFFERS   $name (tomtou $tomtou): Keylime [${k}] attestd [${a}]" \
                        "$(jq -c .failing k.json)"
                unexplained=$((unexplained + 1))
        fi
}
for pair in tcb-sha256:qemu61-tcb ima-sha1:ima-sha1 custom-sha384:custom-fmt \
        sig-sha512:ima-sig-sha512; do
        pol=$top/tests/data/keylime/${pair%%:*}.json log=$top/tests/data/${pair#*:}/ascii_runtime_measurements
        for tomtou in False True; do
                compare "${pair%%:*}" "$pol" "$log" "$tomtou"
        done
        jq '.digests["/bin/hello.sh"] = ["'"$(printf '0%.0s' {1..63})1"'"]' "$pol" >v1.json
        compare "${pair%%:*}+wrong-digest" v1.json "$log" False
        jq '.excludes = [] | .digests |= with_entries(select(.key | startswith("/data/") | not))' \
                "$pol" >v2.json
        compare "${pair%%:*}+no-data" v2.json "$log" False
        jq '."ima-buf" = {}' "$pol" >v3.json
        compare "${pair%%:*}+no-ima-buf" v3.json "$log" False
done

# ---- 3. the big one: verdicts and speed on one core ----
echo "== 3. $paths-path allowlist, $entries-entry log (keylime-gen), one core (taskset -c 0)"
mkdir big
"$gen" "$paths" "$entries" big
"$ctl" policy import-keylime big/policy-keylime.json -o big/policy.json 2>/dev/null
best_a="" best_k=""
for _ in $(seq "$runs"); do
        taskset -c 0 "$ctl" policy runtime-check big/policy.json big/log.ascii --entries --time \
                >a.out 2>a.err || true
        s=$(sed -n 's/.* in \([0-9.]*\) s CPU.*/\1/p' a.err)
        if [ -z "$best_a" ] || awk -v a="$s" -v b="$best_a" 'BEGIN { exit !(a < b) }'; then best_a=$s; fi
        KEYLIME_VERIFIER_IGNORE_TOMTOU_ERRORS=False taskset -c 0 "$py" driver.py "$ksrc" \
                big/policy-keylime.json big/log.ascii "$(cat big/boot_aggregate)" whole \
                2>/dev/null >k.json
        s=$(jq -r .cpu_s k.json)
        if [ -z "$best_k" ] || awk -v a="$s" -v b="$best_k" 'BEGIN { exit !(a < b) }'; then best_k=$s; fi
done
awk '!/^entries / {print $1, $3}' a.out >a-fail.txt
jq -r '.failing_paths[]' k.json >k-fail.txt
if diff -q <(awk '{print $2}' big/expected-failures) k-fail.txt >/dev/null &&
        diff -q big/expected-failures a-fail.txt >/dev/null; then
        echo "  same failing entries: $(wc -l <a-fail.txt) (the $(wc -l <big/expected-failures) made to fail), in order"
else
        echo "  DIFFERENT failing entries: attestd $(wc -l <a-fail.txt), Keylime $(wc -l <k-fail.txt)"
        unexplained=$((unexplained + 1))
fi
pa=$(awk '/^entries / {print $NF}' a.out) pk=$(jq -r .pcr10_sha1 k.json)
[ "$pa" = "$pk" ] && echo "  same PCR 10 (sha1): $pa" ||
        { echo "  PCR 10 differs: attestd $pa Keylime $pk"; unexplained=$((unexplained + 1)); }
awk -v n="$entries" -v a="$best_a" -v k="$best_k" 'BEGIN {
        printf "  attestd  attestctl policy runtime-check --time: %.3f s CPU, %.0f entries/s\n", a, n / a
        printf "  Keylime  ima.process_measurement_list:          %.3f s CPU, %.0f entries/s\n", k, n / k
        printf "  ratio    %.1fx (best of %d runs each; parse, sha1 template hash check, PCR 10 replay, policy)\n", k / a, '"$runs"' }'
echo "  commands: taskset -c 0 $ctl policy runtime-check POLICY LOG --entries --time;"
echo "            KEYLIME_VERIFIER_IGNORE_TOMTOU_ERRORS=False taskset -c 0 $py driver.py KEYLIME_SRC POLICY LOG BOOT_AGGREGATE whole"
[ "$unexplained" -eq 0 ] || { echo "$unexplained unexplained differences" >&2; exit 1; }
echo "no unexplained differences"
