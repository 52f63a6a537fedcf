#!/usr/bin/env bash
# bench-daemon --hook for wal-study.sh: "before-N" applies the next phase's variant (words joined by
# '+', variants below) and records the window's start; "after-N" records its end, VACUUMs (its
# WAL measured apart), waits for the statistics to be flushed and reverts the variant.
# Files in $OUT: phase-idx (the phases begun), win-I (name, lsn/xid/time before, after, after vacuum),
# relmap-I, stats-I-{before,after}, samples-I.
set -euo pipefail
cd "$OUT"
q() { # each argument one -c (one transaction each: VACUUM and CHECKPOINT need that)
        local a=() x
        for x; do a+=(-c "$x"); done
        $PSQL "${a[@]}"
}
when=$1
if [ "${when%%-*}" = before ]; then
        echo x >>phase-idx
fi
i=$(wc -l <phase-idx)
name=$(sed -n "${i}p" phases)

func() { # install the verdict function variant $1 (mkfuncs.py writes them once)
        [ -f func-orig.sql ] || { q "SELECT pg_get_functiondef('${FUNC:-attestd_verdict}'::regproc)" >func-def.sql &&
                python3 "$HERE/mkfuncs.py" func-def.sql .; }
        $PSQL -f "func-$1.sql" >/dev/null
}
apply() {
        case $1 in
        settle | base) ;;
        a) q "ALTER TABLE agents SET (fillfactor = 70)" "DROP INDEX IF EXISTS agents_by_stale" \
                "VACUUM FULL agents" ;;
        ff70) q "ALTER TABLE agents SET (fillfactor = 70)" "VACUUM FULL agents" ;;
        nopk) q "ALTER TABLE results DROP CONSTRAINT IF EXISTS results_pkey" ;; # not reverted
        b | c | d | bcd | bc) func "$1" ;;
        fpw) q "ALTER SYSTEM SET full_page_writes = on" "SELECT pg_reload_conf()" >/dev/null
             sleep 1; q "CHECKPOINT" ;;
        lz4) q "ALTER SYSTEM SET wal_compression = lz4" "SELECT pg_reload_conf()" >/dev/null; sleep 1 ;;
        prefill*) # results up to N per agent, interleaved by round as a fleet writes them
                n=${1#prefill}
                q "INSERT INTO results (agent, time, status, policy, verdict, ear_status,
                   ear_tv_instance_identity, ear_tv_configuration, ear_tv_executables, ear_tv_hardware)
                   SELECT r.agent, r.time - (g * 60000), r.status, r.policy, r.verdict, r.ear_status,
                   r.ear_tv_instance_identity, r.ear_tv_configuration, r.ear_tv_executables,
                   r.ear_tv_hardware FROM generate_series($n, 1, -1) g,
                   (SELECT DISTINCT ON (agent) * FROM results ORDER BY agent, id DESC) r
                   ORDER BY g DESC, r.agent" "VACUUM ANALYZE results" "CHECKPOINT" ;;
        *) echo "hook: unknown variant $1" >&2; exit 1 ;;
        esac
}
revert() {
        case $1 in
        b | c | d | bcd | bc) func orig ;;
        fpw) q "ALTER SYSTEM SET full_page_writes = off" "SELECT pg_reload_conf()" >/dev/null ;;
        lz4) q "ALTER SYSTEM SET wal_compression = off" "SELECT pg_reload_conf()" >/dev/null ;;
        *) ;;
        esac
}
mark() { q "SELECT pg_current_wal_lsn(), pg_current_xact_id(), extract(epoch from clock_timestamp())" | tr '|' ' '; }
stats() {
        q "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup FROM pg_stat_user_tables ORDER BY 1"
        q "SELECT 'wal', wal_records, wal_fpi, wal_bytes FROM pg_stat_wal"
}
if [ "${when%%-*}" = before ]; then
        IFS=+ read -ra vs <<<"$name"
        for v in "${vs[@]}"; do apply "$v"; done
        q "SELECT pg_relation_filenode(c.oid), coalesce(o.relname, c.relname), c.relname, c.relkind
           FROM pg_class c LEFT JOIN pg_class o ON o.reltoastrelid = c.oid
           LEFT JOIN pg_index x ON x.indexrelid = c.oid
           WHERE pg_relation_filenode(c.oid) IS NOT NULL" >"relmap-$i"
        stats >"stats-$i-before"
        # the sampler: time, LSN, results' identity counter, each second
        (exec >"samples-$i" 2>/dev/null </dev/null
         while :; do q "SELECT extract(epoch from clock_timestamp()), pg_current_wal_lsn(), (SELECT last_value FROM results_id_seq)" | tr '|' ' '; sleep 1; done) &
        echo $! >sampler.pid
        echo "$name before $(mark) $(date -u +%FT%TZ)" >"win-$i"
else
        echo "$name after $(mark) $(date -u +%FT%TZ)" >>"win-$i"
        kill "$(cat sampler.pid)" 2>/dev/null || true
        vac=()
        for t in ${VACUUM_TABLES:-agents results}; do vac+=("VACUUM $t"); done
        q "${vac[@]}"
        echo "$name vacuum $(mark) $(date -u +%FT%TZ)" >>"win-$i"
        sleep 11
        stats >"stats-$i-after"
        IFS=+ read -ra vs <<<"$name"
        for ((k = ${#vs[@]} - 1; k >= 0; k--)); do revert "${vs[k]}"; done
fi
