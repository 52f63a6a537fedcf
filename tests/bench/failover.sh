#!/usr/bin/env bash
# Failover bench (docs/scaling.md "Failover"): what losing the PostgreSQL primary costs under
# load. Each cycle is a fresh PostgreSQL 15 primary and streaming standby on loopback
# (tests/lib/pg-run.sh --standby, or --standby-async), two attestd on the multi-host URL of both
# (target_session_attrs=read-write), AGENTS simulated agents of bench-daemon (their own P-256 AKs,
# ENTRIES new IMA entries a round) on CLIENT_THREADS clients spread over both instances for
# SECONDS. After a third of SECONDS the standby is cut off (its replication connection closed and
# refused, as a network fault would) for CUT_MS, the primary's postmaster killed (kill -9), and
# PROMOTE_AFTER seconds later the standby promoted (pg_ctl promote, what an operator or a manager
# does). One row per cycle: verdicts acknowledged before the kill and after it, lost (acknowledged
# but not in the promoted database), judged twice (two results for one round), acknowledged while
# the standby was cut off, the outage (kill to the first verdict acknowledged after the promotion
# began), the errors clients were answered (by code), and the rate before and after.
# MODES (default "sync async"): sync cycles need a synchronous standby; an async cycle shows what
# an asynchronous one loses. CYCLES per mode (default 2).
# Fails when a sync cycle lost or doubled a verdict, or a cycle could not run; never on timing.
# Bounded: FAILOVER_BUDGET seconds in all (default 300); each bench-daemon run is bounded by
# --seconds and its 30 s request timeout, every attestd stopped and each cluster removed after its
# cycle (pg-run.sh).
# Not run by tests/bench/run.sh (CI): about 25 s a cycle with the defaults.
# Usage: failover.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]
#   THREADS (attestd worker threads, default 4), CLIENT_THREADS (default 8), CUT_MS (500),
#   PROMOTE_AFTER (2), MODES, CYCLES, FAILOVER_BUDGET
set -euo pipefail
# a result's verdict as JSON in SQL: the row keeps it without the head its columns hold (status,
# policy, time, next_due: docs/architecture.md §7), so its text starts "," (a row stored whole,
# "{"); the rest is an object once that first byte is "{"
vjson="('{' || substr(verdict, 2))::json"
build=$(cd "${1:?usage: failover.sh BUILD_DIR [SECONDS] [AGENTS] [ENTRIES]}" && pwd)
secs=${2:-15} agents=${3:-64} entries=${4:-3} part=${5:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
budget=${FAILOVER_BUDGET:-300}
threads=${THREADS:-4} cthreads=${CLIENT_THREADS:-8} cut_ms=${CUT_MS:-500}
promote_after=${PROMOTE_AFTER:-2} modes=${MODES:-sync async} cycles=${CYCLES:-2}

if [ -z "$part" ]; then # the driver: one cluster per cycle, the table at the end
        work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-failover.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        export FAILOVER_END=$(($(date +%s) + budget)) FAILOVER_WORK=$work
        echo "# failover bench: $agents agents on $cthreads clients over 2 attestd (--threads $threads), $entries IMA entries a round, ${secs}s a cycle; standby cut off ${cut_ms} ms before the kill, promoted ${promote_after}s after it; $(nproc) cores shared; $(uptime)"
        rc=0 n=0
        for mode in $modes; do
                case $mode in
                sync) opt=--standby ;;
                async) opt=--standby-async ;;
                *) echo "failover: unknown mode $mode" >&2; exit 2 ;;
                esac
                for c in $(seq "$cycles"); do
                        n=$((n + 1))
                        if [ $(($(date +%s) + secs + 15)) -gt "$FAILOVER_END" ]; then
                                echo "# budget spent: $mode cycle $c not run"
                                rc=1
                                continue
                        fi
                        "$top/tests/lib/pg-run.sh" "$opt" --max-connections 60 -- \
                                "$0" "$build" "$secs" "$agents" "$entries" "$(printf %02d "$n")-$mode" ||
                                rc=1
                done
        done
        echo
        echo "# acked: verdicts acknowledged (HTTP 200) before the kill / after it; lost: acknowledged,"
        echo "# not in the promoted database; twice: rounds with two results; cut: acknowledged while"
        echo "# the standby was cut off; outage: kill -> first verdict acknowledged after the"
        echo "# promotion began (promoted: pg_ctl promote done); errors: answers other than 201/200"
        echo "# clients saw (status/code x count; offset: a simulated agent the server asked for entries"
        echo "# it no longer has, after the database lost its acknowledged rounds: it stops); rates:"
        echo "# acknowledged/s before the cut, after the outage"
        printf '%-9s %7s %7s %5s %5s %5s %8s %9s %7s %7s  %s\n' cycle "acked<" "acked>" lost \
                twice cut "outage" promoted "rate<" "rate>" errors
        cat "$work"/row-* 2>/dev/null || true
        echo "# $((budget - FAILOVER_END + $(date +%s))) s in all; $(uptime)"
        [ $rc = 0 ] || echo "# a cycle failed, lost or doubled a verdict with a synchronous standby (above)"
        exit $rc
fi

# one cycle, under pg-run.sh (ATTEST_PG_URL_HA, PGRUN_*)
mode=${part#*-}
rows=$FAILOVER_WORK work=$FAILOVER_WORK/$part
mkdir -p "$work"
cd "$work"
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
pids=() bench_pid=""
# shellcheck disable=SC2317 # the EXIT trap
stop_all() {
        [ -z "$bench_pid" ] || kill "$bench_pid" 2>/dev/null || true
        scale_stop
}
trap stop_all EXIT
now_ms() { date +%s%3N; }
# shellcheck disable=SC2086 # PGRUN_AS: words
pg1() { (cd / && ${PGRUN_AS} "$PGRUN_BIN/psql" -qtAX -h "$PGRUN_SOCK" -p "$PGRUN_PORT" -U attest -d attestd -c "$1"); }
# shellcheck disable=SC2086 # PGRUN_AS: words
pg2() { (cd / && ${PGRUN_AS} "$PGRUN_BIN/psql" -qtAX -h "$PGRUN_STANDBY_SOCK" -p "$PGRUN_STANDBY_PORT" -U attest -d attestd -c "$1"); }

# every result kept (--retain): the acknowledged verdicts are looked up in them afterwards
scale_start "$build" "$ATTEST_PG_URL_HA" 2 --retain 1000000 || exit 1
"$build/tests/bench/bench-daemon" --url "${urls[0]}" --url "${urls[1]}" --ca "$work/certs/ca.pem" \
        --token "$tok" --agents "$agents" --threads "$cthreads" --entries "$entries" \
        --seconds "$secs" --retry-ms 100 --acks acks.txt --errors errors.txt >bench.out 2>bench.err &
bench_pid=$!
# the load under way (enrolment done: the first verdict acknowledged), then a third of it
for _ in $(seq 1200); do [ -s acks.txt ] && break; sleep 0.1; done
[ -s acks.txt ] || { echo "# $part: no verdict within 120 s: $(tail -3 bench.err)"; exit 1; }
t_load=$(now_ms)
sleep "$((secs / 3))"

# the standby cut off: the replication role refused (the first line of pg_hba.conf, pg-run.sh),
# its connection closed
sed -i '1s/ trust$/ reject/' "$PGRUN_DATA/pg_hba.conf"
pg1 "SELECT pg_reload_conf()" >/dev/null
pg1 "SELECT pg_terminate_backend(pid) FROM pg_stat_replication WHERE application_name = 'standby1'" >/dev/null
for _ in $(seq 100); do [ "$(pg1 "SELECT count(*) FROM pg_stat_replication")" = 0 ] && break; sleep 0.05; done
t_cut=$(now_ms)
sleep "$(awk -v m="$cut_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
t_kill=$(now_ms)
kill -9 "$(sed -n 1p "$PGRUN_DATA/postmaster.pid")"
sleep "$promote_after"
t_promote=$(now_ms)
# shellcheck disable=SC2086 # PGRUN_AS: words
(cd / && ${PGRUN_AS} "$PGRUN_BIN/pg_ctl" -D "$PGRUN_STANDBY_DATA" -w -t 30 promote) >promote.log 2>&1 ||
        { echo "# $part: pg_ctl promote failed: $(cat promote.log)"; exit 1; }
t_promoted=$(now_ms)
wait "$bench_pid" || true
bench_pid=""
t_end=$(now_ms)

# the figures
pg2 "SELECT agent || ' ' || ($vjson->'ima'->>'entries') FROM results" | sort -u >held.txt
awk '{ print $1, $2 }' acks.txt | sort -u >want.txt
lost=$(comm -23 want.txt held.txt | wc -l)
twice=$(pg2 "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY agent,
        $vjson->'ima'->>'entries' HAVING count(*) > 1) d")
before=$(awk -v t="$t_kill" '$3 < t' acks.txt | wc -l)
after=$(awk -v t="$t_kill" '$3 >= t' acks.txt | wc -l)
cut=$(awk -v a="$t_cut" -v b="$t_kill" '$3 >= a && $3 < b' acks.txt | wc -l)
first=$(awk -v t="$t_promote" '$3 >= t { print $3 }' acks.txt | sort -n | sed -n 1p)
outage=- rate_after=0
if [ -n "$first" ]; then
        outage="$((first - t_kill))ms"
        rate_after=$(awk -v a="$first" -v e="$t_end" '$3 >= a { n++ } END {
                printf "%.0f", (e > a) ? n * 1000 / (e - a) : 0 }' acks.txt)
fi
rate_before=$(awk -v a="$t_load" -v c="$t_cut" '$3 >= a && $3 < c { n++ } END {
        printf "%.0f", (c > a) ? n * 1000 / (c - a) : 0 }' acks.txt)
errs=$(awk '{ print ($3 == "offset" ? "offset" : $4 "/" $5) }' errors.txt | sort | uniq -c |
        awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')
printf '%-9s %7s %7s %5s %5s %5s %8s %9s %7s %7s  %s\n' "$part" "$before" "$after" "$lost" "$twice" \
        "$cut" "$outage" "+$((t_promoted - t_kill))ms" "$rate_before" "$rate_after" "${errs:-none}" \
        >"$rows/row-$part"
cat "$rows/row-$part"
if [ "$mode" = sync ] && { [ "$lost" != 0 ] || [ "$twice" != 0 ]; }; then
        comm -23 want.txt held.txt | sed -n '1,10s/^/# lost: /p'
        exit 1
fi
if [ -z "$first" ] && [ "$mode" = sync ]; then
        echo "# $part: no verdict acknowledged after the promotion"
        exit 1
fi
exit 0
