#!/usr/bin/env bash
# attestd A/B benchmark: two builds of attestd benched in ONE run, interleaved (A, B, A, B, ...
# rounds), under the same client (bench-daemon of BUILD_B, the current tree), the same agents,
# client threads, attestd threads and database mode. Each round starts a fresh attestd on a fresh
# database, enrols the agents (not timed) and runs SECONDS of attestations. Prints per round and,
# per build over all its rounds: attestations/s, attestd CPU ms per attestation (utime + stime of
# the attestd process over the timed part, from /proc/PID/stat, divided by the attestations),
# p50/p99 round latency, attestd RSS at the start and end of the timed part; then B/A.
# Figures only: never fails on timing, only when a build cannot start or the client reports errors.
#
# Usage: tests/bench/compare.sh BUILD_B [SECONDS] [AGENTS] [CLIENT_THREADS]   (defaults 10 64 16)
#   BASE=DIR          build directory of A (a release build with daemon/attestd). When unset, A is
#                     BASE_COMMIT built from `git archive` of this repository into
#                     $BENCH_CACHE/COMMIT/build-rel (default /var/cache/attestd/bench), once, and
#                     reused by later runs.
#   BASE_COMMIT=REV   the commit A is built from when BASE is unset (default de812f8: attestd before
#                     the typed pipeline, the reference of the one-core throughput goal)
#   ROUNDS=N          rounds per build (default 3)
#   PIN=1             attestd on CPU 0, the client on CPU 1 (taskset): CPU per attestation and the
#                     rate one dedicated core of attestd sustains (default 1)
#   THREADS=N         attestd --threads for both (default 16); THREADS_A / THREADS_B per build
#   DB_MODE=M         attestd --db-mode (default writer)
#   EXTRA_A / EXTRA_B further attestd flags for one build only (e.g. options A does not have)
#   FLOOR=1           (the default; 0 skips it) a third round F after each A and B: BUILD_B's
#                     http-floor (libmicrohttpd and GnuTLS set up as attestd's front end, none of
#                     its work) under the same load; then attestd's own CPU per attestation
#                     beyond that floor, A - F and B - F, and their ratio
# Not run by tests/bench/run.sh (CI): building the base takes minutes; run it by hand.
set -euo pipefail
build_b=$(cd "${1:?usage: compare.sh BUILD_B [SECONDS] [AGENTS] [CLIENT_THREADS]}" && pwd)
secs=${2:-10} agents=${3:-64} cthreads=${4:-16}
rounds=${ROUNDS:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ -n "${BASE:-}" ]; then
        build_a=$(cd "$BASE" && pwd)
else
        commit=$(git -C "$top" rev-parse --short=12 "${BASE_COMMIT:-de812f8}^{commit}")
        src="${BENCH_CACHE:-/var/cache/attestd/bench}/$commit"
        build_a="$src/build-rel"
        if [ ! -x "$build_a/daemon/attestd" ]; then
                echo "# building A ($commit) in $src"
                rm -rf "$src"
                mkdir -p "$src"
                git -C "$top" archive "$commit" | tar -x -C "$src"
                meson setup "$build_a" "$src" --buildtype=release >/dev/null
                ninja -C "$build_a" -j2 daemon/attestd >/dev/null
        fi
fi
for b in "$build_a" "$build_b"; do
        [ -x "$b/daemon/attestd" ] || { echo "compare: no $b/daemon/attestd"; exit 1; }
done
client="$build_b/tests/bench/bench-daemon"
[ -x "$client" ] || { echo "compare: no $client (build BUILD_B first)"; exit 1; }

work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/attestd-compare.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
. "$top/tests/bench/bench-lib.sh"
bench_setup
pin_d=() pin_c=()
if [ "${PIN:-1}" = 1 ]; then
        pin_d=(taskset -c 0)
        pin_c=(taskset -c 1)
fi
mode=${DB_MODE:-writer}
failed=0

# start attestd of build $1 with threads $2 and extra flags $3 (split into words); sets pid, port
start() {
        # shellcheck disable=SC2086
        bench_start "$1" "$work/attestd.log" --threads "$2" --db-mode "$mode" $3 || exit 1
}

echo "# attestd A/B: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)," \
        "db on $(df --output=source "$work" | tail -1), --db-mode $mode," \
        "${pin_d[*]:+attestd on CPU 0 and client on CPU 1, }$agents agents, $cthreads client threads," \
        "${secs}s x $rounds rounds each"
echo "# A: $build_a (threads ${THREADS_A:-${THREADS:-16}}${EXTRA_A:+, $EXTRA_A})"
echo "# B: $build_b (threads ${THREADS_B:-${THREADS:-16}}${EXTRA_B:+, $EXTRA_B})"
: >"$work/rows"
kinds="A B"
if [ "${FLOOR:-1}" = 1 ]; then
        [ -x "$build_b/tests/bench/http-floor" ] || { echo "compare: no $build_b/tests/bench/http-floor"; exit 1; }
        kinds="A B F"
        echo "# F: $build_b/tests/bench/http-floor (threads ${THREADS_B:-${THREADS:-16}})"
fi
for r in $(seq "$rounds"); do
        for ab in $kinds; do
                if [ $ab = A ]; then
                        b=$build_a t=${THREADS_A:-${THREADS:-16}} x=${EXTRA_A:-}
                else
                        b=$build_b t=${THREADS_B:-${THREADS:-16}} x=${EXTRA_B:-}
                fi
                if [ $ab = F ]; then
                        threads=$t floor_start "$b" || exit 1
                else
                        start "$b" "$t" "$x"
                fi
                if ! "${pin_c[@]}" "$client" --url "https://127.0.0.1:$port" \
                        --ca "$work/certs/ca.pem" --token "$tok" --agents "$agents" \
                        --threads "$cthreads" --entries 10 --seconds "$secs" --pid "$pid" \
                        >"$work/out" 2>"$work/err"; then
                        echo "# round $r $ab: bench-daemon reported errors: $(tail -1 "$work/err")"
                        failed=1
                fi
                kill "$pid"
                wait "$pid" || true
                pid=""
                # one row: AB attestations seconds cpu_s p50 p99 rss_before rss_after
                awk -v ab=$ab '
                        /^agents=/ { split($0, f, "seconds="); s = f[2] }
                        /^attestations=/ { split($1, f, "="); n = f[2] }
                        /^round latency/ { split($3, f, "="); p50 = f[2]; split($5, f, "="); p99 = f[2] }
                        /^attestd rss/ { split($3, f, "="); r0 = f[2]; split($5, f, "="); r1 = f[2] }
                        /^attestd cpu=/ { split($2, f, "="); c = f[2] }
                        /^client cpu=/ { split($2, f, "="); cc = f[2] }
                        /^attestd context switches=/ { split($3, f, "="); x = f[2] }
                        END { printf "%s %d %s %s %s %s %s %s %s %s\n", ab, n, s + 0, c + 0, p50 + 0, p99 + 0, r0 + 0, r1 + 0, x + 0, cc + 0 }
                ' "$work/out" | tee -a "$work/rows" | awk -v r="$r" '{
                        printf "# round %d %s: %6.0f/s  %.3f ms CPU/attestation (%.0f %% of a core)  p50 %s ms  p99 %s ms  RSS %s -> %s kB  %.1f context switches/attestation  client %.3f ms CPU/attestation (%.0f %%)\n",
                                r, $1, ($3 > 0 ? $2 / $3 : 0), ($2 > 0 ? $4 * 1000 / $2 : 0), ($3 > 0 ? 100 * $4 / $3 : 0), $5, $6, $7, $8, ($2 > 0 ? $9 / $2 : 0), ($2 > 0 ? $10 * 1000 / $2 : 0), ($3 > 0 ? 100 * $10 / $3 : 0) }'
        done
done
awk '
        { n[$1] += $2; s[$1] += $3; c[$1] += $4; cs[$1] += $9; cc[$1] += $10; k[$1]++
          p50[$1, k[$1]] = $5; if ($6 > p99[$1]) p99[$1] = $6
          cpr[$1, k[$1]] = $2 > 0 ? $4 * 1000 / $2 : 0
          if (!($1 in r0)) r0[$1] = $7; if ($8 > r1[$1]) r1[$1] = $8 }
        function medc(ab,   i, j, t, a) {
                for (i = 1; i <= k[ab]; i++) a[i] = cpr[ab, i]
                for (i = 1; i <= k[ab]; i++) for (j = i + 1; j <= k[ab]; j++)
                        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return k[ab] % 2 ? a[(k[ab] + 1) / 2] : (a[k[ab] / 2] + a[k[ab] / 2 + 1]) / 2
        }
        function med(ab,   i, j, t, a) {
                for (i = 1; i <= k[ab]; i++) a[i] = p50[ab, i]
                for (i = 1; i <= k[ab]; i++) for (j = i + 1; j <= k[ab]; j++)
                        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return a[int((k[ab] + 1) / 2)]
        }
        END {
                for (ab = 0; ab < 3; ab++) {
                        x = substr("ABF", ab + 1, 1)
                        if (!k[x])
                                continue
                        rate[x] = s[x] > 0 ? n[x] / s[x] : 0
                        cpu[x] = n[x] > 0 ? c[x] * 1000 / n[x] : 0
                        printf "%s: %d attestations in %.1f s: %.0f/s, %.3f ms attestd CPU/attestation (%.0f %% of a core), %.1f context switches/attestation, p50 %s ms (median round), p99 %s ms (worst round), RSS %s kB at the first start, %s kB at the largest end; client %.3f ms CPU/attestation\n", \
                                x, n[x], s[x], rate[x], cpu[x], (s[x] > 0 ? 100 * c[x] / s[x] : 0), (n[x] > 0 ? cs[x] / n[x] : 0), med(x), p99[x], r0[x], r1[x], (n[x] > 0 ? cc[x] * 1000 / n[x] : 0)
                }
                printf "median round CPU/attestation (less swayed by one lucky or unlucky round on a shared machine): A %.3f ms, B %.3f ms, B/A x%.2f\n", \
                        medc("A"), medc("B"), (medc("A") > 0 ? medc("B") / medc("A") : 0)
                if (rate["A"] > 0 && cpu["B"] > 0)
                        printf "B/A: throughput x%.2f, CPU per attestation x%.2f (A/B: B is %.2fx as efficient)\n", \
                                rate["B"] / rate["A"], cpu["B"] / cpu["A"], cpu["A"] / cpu["B"]
                if (k["F"] && medc("B") > medc("F"))
                        printf "beyond the HTTP floor F (median rounds): A %.3f ms, B %.3f ms of attestd'"'"'s own CPU/attestation, A/B x%.2f; F is %.0f %% of B\n", \
                                medc("A") - medc("F"), medc("B") - medc("F"), (medc("A") - medc("F")) / (medc("B") - medc("F")), 100 * medc("F") / medc("B")
        }' "$work/rows"
exit $failed
