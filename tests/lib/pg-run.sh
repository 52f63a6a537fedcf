#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL 15 cluster on loopback, then stop and remove it.
#
# Usage: pg-run.sh [--password] [--max-connections N] [--standby | --standby-async] [--keep] --
#                  COMMAND [ARGS...]
#   --password           password (scram-sha-256) authentication over TCP; the password is random
#                        and is written to a 0600 file whose path is in ATTEST_PG_PASSWORD_FILE
#                        (default: trust authentication, no password)
#   --max-connections N  the server's max_connections (default 40)
#   --standby            also a synchronous streaming standby (docs/scaling.md "Failover"): the
#                        primary with wal_level=replica, synchronous_commit=on and
#                        synchronous_standby_names=standby1, a role "replicator" (REPLICATION) that
#                        pg_hba lets in from 127.0.0.1 only for replication; the standby made by
#                        pg_basebackup -R (application_name=standby1 in its primary_conninfo),
#                        on a port and socket directory of its own, synchronous_standby_names
#                        empty (after a promotion it waits for no standby); started once the
#                        primary reports it streaming and sync. The first line of the primary's
#                        pg_hba.conf is "host replication replicator 127.0.0.1/32 trust" (a test
#                        may make it reject to cut the standby off). Not with --password.
#   --standby-async      the same standby, asynchronous (synchronous_standby_names stays empty):
#                        what a failover loses then (tests/integration/test-pg-failover.sh
#                        FAILOVER_ASYNC=1, tests/bench/failover.sh)
#   --keep               keep the cluster's directory afterwards (its path is printed)
# The cluster runs as an unprivileged user (nobody when started by root), listens on 127.0.0.1
# only, on a random free port, with its socket in the temporary directory. The command sees
#   ATTEST_PG_URL   postgresql://attest@127.0.0.1:PORT/attestd  (database attestd, owner attest,
#                   a superuser of this cluster only)
#   ATTEST_PG_PASSWORD_FILE (with --password)
#   PGRUN_PORT, PGRUN_DIR (the cluster's directory), PGRUN_BIN (the PostgreSQL binaries),
#   PGRUN_SOCK (the socket directory: "$PGRUN_BIN/psql -h $PGRUN_SOCK -p $PGRUN_PORT -U attest"
#   connects with trust auth, for set-up and inspection)
# With --standby also
#   ATTEST_PG_URL_HA  postgresql://attest@127.0.0.1:PORT,127.0.0.1:SPORT/attestd?
#                     target_session_attrs=read-write (both servers; whichever takes writes)
#   PGRUN_STANDBY_PORT, PGRUN_STANDBY_SOCK, PGRUN_STANDBY_DATA (its data directory; promote
#   with "$PGRUN_BIN/pg_ctl -D $PGRUN_STANDBY_DATA promote" as the server's user, PGRUN_AS),
#   PGRUN_DATA (the primary's data directory), PGRUN_AS (the words that run a command as the
#   servers' user: "runuser -u nobody --" as root, empty otherwise)
# Every wait is bounded (30 s to start, 30 s to stop). The exit status is the command's. A
# server whose postmaster is gone (a test killed it) is not stopped but its leftover processes
# (those whose working directory is its data directory) are killed by pid and its System V
# shared memory segment (postmaster.pid) removed.
set -euo pipefail

password=0 maxconn=40 keep=0 standby=0 async=0
while [ $# -gt 0 ]; do
        case "$1" in
        --password) password=1; shift ;;
        --max-connections) maxconn=$2; shift 2 ;;
        --standby) standby=1; shift ;;
        --standby-async) standby=1 async=1; shift ;;
        --keep) keep=1; shift ;;
        --) shift; break ;;
        -h | --help) sed -n '2,43p' "$0"; exit 0 ;;
        *) echo "pg-run: unknown option $1" >&2; exit 2 ;;
        esac
done
[ $# -gt 0 ] || { echo "pg-run: no command" >&2; exit 2; }
case "$maxconn" in '' | *[!0-9]*) echo "pg-run: bad --max-connections" >&2; exit 2 ;; esac
if [ $standby -eq 1 ] && [ $password -eq 1 ]; then
        echo "pg-run: --standby goes without --password" >&2
        exit 2
fi

bin=/usr/lib/postgresql/15/bin
if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
        echo "pg-run: PostgreSQL 15 is not installed ($bin; package postgresql-15)" >&2
        exit 1
fi

# The server refuses to run as root: run it as nobody then, as ourselves otherwise.
as=()
if [ "$(id -u)" -eq 0 ]; then
        as=(runuser -u nobody --)
fi

dir=$(mktemp -d /tmp/pgrun.XXXXXX)
chmod 0755 "$dir"
mkdir "$dir/sock"
pid_started=0 standby_started=0
# stop_server DATADIR: pg_ctl stop (fast, then immediate); when its postmaster is gone (killed),
# the processes it left (working directory DATADIR: backends that have not yet noticed) are
# killed by pid and its System V shared memory segment removed
# shellcheck disable=SC2317 # called by cleanup
stop_server() {
        local data=$1 pm="" shm="" p
        if [ -f "$data/postmaster.pid" ]; then
                pm=$(sed -n 1p "$data/postmaster.pid")
                shm=$(sed -n 7p "$data/postmaster.pid" | awk '{ print $2 }')
        fi
        if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
                "${as[@]}" "$bin/pg_ctl" -D "$data" -m fast -t 30 -w stop >/dev/null 2>&1 ||
                        "${as[@]}" "$bin/pg_ctl" -D "$data" -m immediate -t 30 -w stop \
                                >/dev/null 2>&1 || true
                return 0
        fi
        for p in /proc/[0-9]*; do
                [ "$(readlink "$p/cwd" 2>/dev/null)" = "$data" ] && kill -9 "${p#/proc/}" 2>/dev/null
        done
        if [ -n "$shm" ] && [ "$shm" != 0 ]; then
                for _ in $(seq 50); do
                        ipcrm -m "$shm" 2>/dev/null && break
                        ipcs -m -i "$shm" >/dev/null 2>&1 || break
                        sleep 0.1
                done
        fi
        return 0
}
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
        if [ "$standby_started" -eq 1 ]; then
                stop_server "$dir/standby"
        fi
        if [ "$pid_started" -eq 1 ]; then
                stop_server "$dir/data"
        fi
        if [ "$keep" -eq 1 ]; then
                echo "pg-run: kept $dir" >&2
        else
                rm -rf "$dir"
        fi
}
trap cleanup EXIT
if [ ${#as[@]} -gt 0 ]; then
        chown nobody "$dir" "$dir/sock"
fi

initargs=(-D "$dir/data" -U attest -E UTF8 --locale=C --no-sync --auth-local=trust)
if [ $password -eq 1 ]; then
        pw=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
        # the superuser's password for initdb (readable by the server's user only, removed at once)
        (umask 077 && printf '%s\n' "$pw" >"$dir/initpw")
        [ ${#as[@]} -eq 0 ] || chown nobody "$dir/initpw"
        initargs+=(--auth-host=scram-sha-256 --pwfile="$dir/initpw")
        # the file attestd reads (owned by whoever runs the command, 0600)
        (umask 077 && printf '%s' "$pw" >"$dir/password")
        export ATTEST_PG_PASSWORD_FILE=$dir/password
else
        initargs+=(--auth-host=trust)
fi
"${as[@]}" "$bin/initdb" "${initargs[@]}" >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
rm -f "$dir/initpw"

# start_on DATADIR LOG SOCKDIR OPTIONS: pg_ctl start on a random free port; retry when another
# process wins the race for it. Sets $started to the port (empty when it could not start).
start_on() {
        local p
        started=""
        for _ in 1 2 3 4 5 6 7 8; do
                p=$((20000 + RANDOM % 20000))
                if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then continue; fi
                if "${as[@]}" "$bin/pg_ctl" -D "$1" -l "$2" -w -t 30 \
                        -o "-c listen_addresses=127.0.0.1 -p $p -k $3 -c max_connections=$maxconn -c fsync=off -c synchronous_commit=on -c full_page_writes=off $4" \
                        start >/dev/null 2>&1; then
                        started=$p
                        return 0
                fi
        done
}

primary_opts=""
if [ $standby -eq 1 ]; then
        # replication from 127.0.0.1 only, for the replication role only (before initdb's lines)
        hba=$dir/data/pg_hba.conf
        { echo "host replication replicator 127.0.0.1/32 trust"; cat "$hba"; } >"$dir/hba.new"
        cat "$dir/hba.new" >"$hba"
        rm -f "$dir/hba.new"
        primary_opts="-c wal_level=replica -c max_wal_senders=4"
fi
start_on "$dir/data" "$dir/server.log" "$dir/sock" "$primary_opts"
port=$started
[ -n "$port" ] || { echo "pg-run: could not start PostgreSQL" >&2; tail -20 "$dir/server.log" >&2 || true; exit 1; }
pid_started=1

"${as[@]}" "$bin/createdb" -h "$dir/sock" -p "$port" -U attest attestd ||
        { echo "pg-run: createdb failed" >&2; exit 1; }

export ATTEST_PG_URL="postgresql://attest@127.0.0.1:$port/attestd"
export PGRUN_PORT=$port PGRUN_DIR=$dir PGRUN_BIN=$bin PGRUN_SOCK=$dir/sock PGRUN_DATA=$dir/data
PGRUN_AS="${as[*]}"
export PGRUN_AS

if [ $standby -eq 1 ]; then
        "${as[@]}" "$bin/psql" -qX -h "$dir/sock" -p "$port" -U attest -d postgres \
                -c "CREATE ROLE replicator WITH REPLICATION LOGIN" >/dev/null ||
                { echo "pg-run: could not create the replication role" >&2; exit 1; }
        mkdir "$dir/sock2"
        [ ${#as[@]} -eq 0 ] || chown nobody "$dir/sock2"
        # a base backup streaming its WAL, standby.signal and primary_conninfo written (-R)
        "${as[@]}" "$bin/pg_basebackup" -D "$dir/standby" -R -X stream -c fast --no-sync \
                -d "host=127.0.0.1 port=$port user=replicator application_name=standby1" \
                >"$dir/basebackup.log" 2>&1 ||
                { echo "pg-run: pg_basebackup failed" >&2; cat "$dir/basebackup.log" >&2; exit 1; }
        start_on "$dir/standby" "$dir/standby.log" "$dir/sock2" "-c hot_standby=on"
        sport=$started
        [ -n "$sport" ] || { echo "pg-run: could not start the standby" >&2; tail -20 "$dir/standby.log" >&2 || true; exit 1; }
        standby_started=1
        # from now on every commit on the primary waits for the standby: set after the base
        # backup (ALTER SYSTEM), so the standby's own synchronous_standby_names stays empty and
        # once promoted it answers commits without waiting for a standby it does not have
        want="streaming sync"
        if [ $async -eq 1 ]; then
                want="streaming async"
        else
                "${as[@]}" "$bin/psql" -qX -h "$dir/sock" -p "$port" -U attest -d postgres \
                        -c "ALTER SYSTEM SET synchronous_standby_names = 'standby1'" \
                        -c "SELECT pg_reload_conf()" >/dev/null ||
                        { echo "pg-run: could not make the standby synchronous" >&2; exit 1; }
        fi
        # bounded: the primary sees it streaming, as its synchronous standby (or not)
        sync=""
        for _ in $(seq 300); do
                sync=$("${as[@]}" "$bin/psql" -qtAX -h "$dir/sock" -p "$port" -U attest -d postgres \
                        -c "SELECT state || ' ' || sync_state FROM pg_stat_replication WHERE application_name = 'standby1'" 2>/dev/null) || sync=""
                [ "$sync" = "$want" ] && break
                sleep 0.1
        done
        [ "$sync" = "$want" ] ||
                { echo "pg-run: the standby is not '$want' within 30 s: '$sync'" >&2; tail -20 "$dir/standby.log" >&2 || true; exit 1; }
        export ATTEST_PG_URL_HA="postgresql://attest@127.0.0.1:$port,127.0.0.1:$sport/attestd?target_session_attrs=read-write"
        export PGRUN_STANDBY_PORT=$sport PGRUN_STANDBY_SOCK=$dir/sock2 PGRUN_STANDBY_DATA=$dir/standby
fi
set +e
"$@"
rc=$?
set -e
exit $rc
