#!/usr/bin/env bash
# The PostgreSQL fleet path's steady state, two attestd builds side by side in one run
# (docs/scaling.md): run-scale.sh's PostgreSQL part with every agent's first round untimed
# (SCALE_SQLITE=0 SCALE_WARM=1), its 1- and 4-instance timed parts (FLEET_PHASES), once for the
# base build's attestd and once for the new build's, alternately (base, new, base, new, ...: ROUNDS
# of each), each on a fresh throwaway PostgreSQL 15 and under the same client: the new build's
# bench-daemon (and delay-proxy), run-scale.sh's ATTESTD_BUILD. Prints one table: a row per round,
# build and configuration with run-scale.sh's columns (att/s, round p50/p99, and per attestation
# attestd CPU ms, PostgreSQL CPU ms, attestd_db_statements_total, PostgreSQL write transactions
# (xids), WAL bytes, all PostgreSQL transactions (pg_stat_database xact_commit + xact_rollback);
# errors a count), then each build's medians over its rounds and new/base of those medians per
# column. A build's label is its source tree's short commit (meson-info), "+dirty" when tracked
# files there have changes not committed, "+stale" when ninja would rebuild its attestd (the header
# has each attestd's sha256). The three binaries are copied first: a rebuild during the run does
# not mix builds.
# The instances, PostgreSQL and the client share this machine's cores: compare CPU, statements and
# transactions per attestation, not rates. Figures only: never fails on timing; exits 1 when a build
# lacks a binary or a run gave no rows. Bounded: each run-scale.sh is stopped after
# FLEET_RUN_BUDGET seconds (default SCALE_BUDGET / 2 + its hook's waits + 120, SCALE_BUDGET 360
# here; a run takes about 2 minutes with the defaults on a quiet machine: PostgreSQL's start,
# enrolment, warm-up, 2 x SECONDS, the waits).
# Usage: fleet-path.sh NEW_BUILD BASE_ATTESTD_BUILD [SECONDS] [AGENTS] [ENTRIES] [ROUNDS]
#        (defaults 6 10000 3 2)
#   NEW_BUILD           a release build directory of the current tree (daemon/attestd,
#                       tests/bench/bench-daemon)
#   BASE_ATTESTD_BUILD  a release build directory with daemon/attestd, e.g. the baseline's:
#                       git worktree add --detach /var/tmp/attestd-dd940f4 dd940f4 &&
#                       meson setup /var/tmp/attestd-dd940f4/build-rel /var/tmp/attestd-dd940f4
#                       --buildtype release && ninja -C /var/tmp/attestd-dd940f4/build-rel
#   FLEET_PHASES (default 1,4), FLEET_RUN_BUDGET, FLEET_KEEP=1 (keep the runs' logs, path
#   printed), BENCH_DIR (scratch, default /var/tmp); run-scale.sh's THREADS, CLIENT_THREADS,
#   PG_DELAY_US, SCALE_BUDGET, SCALE_SETTLE, SCALE_FILL (every agent at its retain count before
#   the timed parts: each verdict prunes one result) and SCALE_RECONNECT (a connection and TLS
#   handshake per round) pass through.
set -euo pipefail
usage="usage: fleet-path.sh NEW_BUILD BASE_ATTESTD_BUILD [SECONDS] [AGENTS] [ENTRIES] [ROUNDS]"
new=$(cd "${1:?$usage}" && pwd)
base=$(cd "${2:?$usage}" && pwd)
secs=${3:-6} agents=${4:-10000} entries=${5:-3} rounds=${6:-2}
here=$(cd "$(dirname "$0")" && pwd)
phases=${FLEET_PHASES:-1,4}
nparts=$(tr ',' '\n' <<<"$phases" | wc -l)
settle=${SCALE_SETTLE:-11}
# run-scale.sh's bench-daemon gets SCALE_BUDGET / 2 for enrolment, warm-up and the parts: more
# than its own default (175), as 10,000 agents' enrolment and warm-up take ~40 s on a quiet
# machine and much longer beside other work
export SCALE_BUDGET=${SCALE_BUDGET:-360}
run_budget=${FLEET_RUN_BUDGET:-$((SCALE_BUDGET / 2 + (2 * settle + 8) * nparts + 120))}

for f in "$new/daemon/attestd" "$new/tests/bench/bench-daemon" "$base/daemon/attestd"; do
        [ -x "$f" ] || { echo "fleet-path: no $f" >&2; exit 1; }
done

work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-fleet.XXXXXX")
if [ "${FLEET_KEEP:-0}" = 1 ]; then
        trap 'echo "# logs kept in $work"' EXIT
else
        trap 'rm -rf "$work"' EXIT
fi

# label BUILD: the short commit of BUILD's source tree, +dirty when tracked files changed there,
# +stale when ninja would rebuild its attestd (the binary is not that tree's)
label() {
        local src l
        src=$(sed -n 's/.*"directories": {"source": "\([^"]*\)".*/\1/p' "$1/meson-info/meson-info.json" 2>/dev/null)
        [ -n "$src" ] || src=$1
        l=$(git -C "$src" rev-parse --short HEAD 2>/dev/null) || l=$(basename "$(dirname "$1")")
        [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || l+=+dirty
        ninja -C "$1" -n daemon/attestd 2>/dev/null | grep -q '^ninja: no work to do' || l+=+stale
        echo "$l"
}
# describe BUILD: where its source is and what state it is in, for the header
describe() {
        local src n
        src=$(sed -n 's/.*"directories": {"source": "\([^"]*\)".*/\1/p' "$1/meson-info/meson-info.json" 2>/dev/null)
        n=$(git -C "${src:-$1}" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
        printf '%s (source %s, %s tracked files changed, attestd sha256 %s' "$1" "${src:-?}" "$n" \
                "$(sha256sum "$1/daemon/attestd" | cut -c1-12)"
        ninja -C "$1" -n daemon/attestd 2>/dev/null | grep -q '^ninja: no work to do' ||
                printf '; NOT UP TO DATE: ninja would rebuild daemon/attestd'
        printf ')'
}
lb=$(label "$base") ln=$(label "$new")
[ "$lb" != "$ln" ] || { lb="base:$lb" ln="new:$ln"; }

# the binaries as they are now: a rebuild during the run changes nothing here
mkdir -p "$work/base/daemon" "$work/new/daemon" "$work/client/tests/bench"
cp "$base/daemon/attestd" "$work/base/daemon/"
cp "$new/daemon/attestd" "$work/new/daemon/"
cp "$new/tests/bench/bench-daemon" "$work/client/tests/bench/"
[ ! -x "$new/tests/bench/delay-proxy" ] || cp "$new/tests/bench/delay-proxy" "$work/client/tests/bench/"

echo "# fleet path, PostgreSQL steady state: $agents agents, $entries IMA entries a round," \
        "${secs}s a timed part, parts of $phases instances, $rounds rounds a build alternating," \
        "attestd --threads ${THREADS:-4}, ${CLIENT_THREADS:-8} client threads${PG_DELAY_US:+, PostgreSQL ${PG_DELAY_US} us away each way}," \
        "$([ "${SCALE_RECONNECT:-0}" = 0 ] && echo "keep-alive connections" || echo "a connection and TLS handshake per round")"
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores shared by attestd, PostgreSQL and the client" \
        "(other work on the machine counts too), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# base $lb: $(describe "$base")"
echo "# new  $ln: $(describe "$new")"
echo "# client: $new/tests/bench/bench-daemon; each run-scale.sh stopped after ${run_budget}s"

: >"$work/rows"
failed=0
for r in $(seq "$rounds"); do
        for which in base new; do
                if [ $which = base ]; then l=$lb; else l=$ln; fi
                log="$work/run-$r-$which.log"
                echo "# round $r $l: $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)," \
                        "other benches' processes running: $(pgrep -c -x attestd || true) attestd," \
                        "$(pgrep -c -x bench-daemon || true) bench-daemon, $(pgrep -c -x postgres || true) postgres"
                rc=0
                SCALE_SQLITE=0 SCALE_WARM=1 SCALE_PHASES=$phases ATTESTD_BUILD="$work/$which" \
                        BENCH_DIR="$work" timeout -k 30 "$run_budget" "$here/run-scale.sh" \
                        "$work/client" "$secs" "$agents" "$entries" >"$log" 2>&1 || rc=$?
                [ $rc = 0 ] || echo "#   run-scale.sh exit $rc$([ $rc != 124 ] || echo ' (stopped: FLEET_RUN_BUDGET)')"
                grep -E '^# (bench-daemon reported|the PostgreSQL part failed|attestd did not start|PostgreSQL through)' "$log" |
                        sed 's/^# /#   /' || true
                if ! awk -v l="$l" -v r="$r" '/^postgresql-[0-9]/ { print l, r, $0; n++ } END { exit n == 0 }' \
                        "$log" >>"$work/rows"; then
                        echo "#   no rows from this run: $(tail -2 "$log" | tr '\n' ' ')"
                        failed=1
                fi
        done
done

echo
echo "# per attestation: CPU ms of attestd (all instances) and of PostgreSQL, DB statements"
echo "# (attestd_db_statements_total), write transactions (xids), WAL bytes, all transactions"
echo "# (pg_stat_database commits + rollbacks); att/s, round latency; errors a count. med: the"
echo "# median over a build's rounds; new/base: the ratio of the medians"
awk -v lb="$lb" -v ln="$ln" '
        function med(key,   i, j, t, a, m) {
                m = 0
                for (i = 1; i <= cnt[key]; i++)
                        if (val[key, i] != "-") a[++m] = val[key, i]
                if (!m) return "-"
                for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        function line(b, r, c, v) {
                printf "%-15s %5s %-13s %7s %7s %7s %10s %11s %6s %6s %8s %6s %6s\n", b, r, c, v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]
        }
        BEGIN { split("att/s p50_ms p99_ms attestd_ms postgres_ms stmts xacts WAL_B errors txns", hd, " ")
                printf "%-15s %5s %-13s %7s %7s %7s %10s %11s %6s %6s %8s %6s %6s\n", "build", "round", "config", hd[1], hd[2], hd[3], hd[4], hd[5], hd[6], hd[7], hd[8], hd[9], hd[10] }
        {       # build round config att/s p50 p99 attestd postgres stmts xacts WAL errors txns
                for (i = 1; i <= 10; i++) v[i] = $(i + 3)
                line($1, $2, $3, v)
                if (!($3 in seen)) { seen[$3] = 1; configs[++nc] = $3 }
                for (i = 1; i <= 10; i++) { k = $1 SUBSEP $3 SUBSEP i; cnt[k]++; val[k, cnt[k]] = $(i + 3) == "-" ? "-" : $(i + 3) + 0 }
        }
        END {
                for (c = 1; c <= nc; c++) {
                        for (w = 0; w < 2; w++) {
                                b = w ? ln : lb
                                for (i = 1; i <= 10; i++) {
                                        m[w, i] = med(b SUBSEP configs[c] SUBSEP i)
                                        v[i] = m[w, i] == "-" ? "-" : sprintf(i == 1 || i == 8 || i == 9 ? "%.0f" : i == 4 || i == 5 ? "%.3f" : "%.2f", m[w, i])
                                }
                                line(b, "med", configs[c], v)
                        }
                        for (i = 1; i <= 10; i++)
                                v[i] = (i == 9 || m[0, i] == "-" || m[1, i] == "-" || m[0, i] + 0 == 0) ? "-" : sprintf("%.2f", m[1, i] / m[0, i])
                        line("new/base", "ratio", configs[c], v)
                }
        }' "$work/rows"
echo "# end $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
