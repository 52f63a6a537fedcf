#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL 15 cluster on loopback, then stop and remove it.
#
# Usage: pg-run.sh [--password] [--max-connections N] [--keep] -- COMMAND [ARGS...]
#   --password           password (scram-sha-256) authentication over TCP; the password is random
#                        and is written to a 0600 file whose path is in ATTEST_PG_PASSWORD_FILE
#                        (default: trust authentication, no password)
#   --max-connections N  the server's max_connections (default 40)
#   --keep               keep the cluster's directory afterwards (its path is printed)
# The cluster runs as an unprivileged user (nobody when started by root), listens on 127.0.0.1
# only, on a random free port, with its socket in the temporary directory. The command sees
#   ATTEST_PG_URL   postgresql://attest@127.0.0.1:PORT/attestd  (database attestd, owner attest,
#                   a superuser of this cluster only)
#   ATTEST_PG_PASSWORD_FILE (with --password)
#   PGRUN_PORT, PGRUN_DIR (the cluster's directory), PGRUN_BIN (the PostgreSQL binaries),
#   PGRUN_SOCK (the socket directory: "$PGRUN_BIN/psql -h $PGRUN_SOCK -p $PGRUN_PORT -U attest"
#   connects with trust auth, for set-up and inspection)
# Every wait is bounded (30 s to start, 30 s to stop). The exit status is the command's.
set -euo pipefail

password=0 maxconn=40 keep=0
while [ $# -gt 0 ]; do
        case "$1" in
        --password) password=1; shift ;;
        --max-connections) maxconn=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --) shift; break ;;
        -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "pg-run: unknown option $1" >&2; exit 2 ;;
        esac
done
[ $# -gt 0 ] || { echo "pg-run: no command" >&2; exit 2; }
case "$maxconn" in '' | *[!0-9]*) echo "pg-run: bad --max-connections" >&2; exit 2 ;; esac

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
pid_started=0
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
        if [ "$pid_started" -eq 1 ]; then
                "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -t 30 -w stop >/dev/null 2>&1 ||
                        "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -t 30 -w stop \
                                >/dev/null 2>&1 || true
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

# A random free port; retry when another process wins the race for it.
port=""
for _ in 1 2 3 4 5 6 7 8; do
        p=$((20000 + RANDOM % 20000))
        if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then continue; fi
        if "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
                -o "-c listen_addresses=127.0.0.1 -p $p -k $dir/sock -c max_connections=$maxconn -c fsync=off -c synchronous_commit=on -c full_page_writes=off" \
                start >/dev/null 2>&1; then
                port=$p
                pid_started=1
                break
        fi
done
[ -n "$port" ] || { echo "pg-run: could not start PostgreSQL" >&2; tail -20 "$dir/server.log" >&2 || true; exit 1; }

"${as[@]}" "$bin/createdb" -h "$dir/sock" -p "$port" -U attest attestd ||
        { echo "pg-run: createdb failed" >&2; exit 1; }

export ATTEST_PG_URL="postgresql://attest@127.0.0.1:$port/attestd"
export PGRUN_PORT=$port PGRUN_DIR=$dir PGRUN_BIN=$bin PGRUN_SOCK=$dir/sock
set +e
"$@"
rc=$?
set -e
exit $rc
