#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server on loopback for a Checkmark cluster or the storage
# tests: a new data directory, listening on 127.0.0.1:PORT only, with a `checkmark` role and database
# (password `checkmark`). Uses Debian's postgresql package (its binaries in /usr/lib/postgresql/*/bin).
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user.
#
#   deploy/cluster/postgres.sh start DIR [PORT]   prints the connection url on its last line
#   deploy/cluster/postgres.sh stop DIR
set -euo pipefail
action=${1:?start or stop}
dir=${2:?data directory}
port=${3:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$dir"
        runuser -u postgres -- test -w "$dir" || {
            echo "postgres.sh: the postgres user cannot reach $dir; use a directory whose parents it may enter (e.g. under /tmp)" >&2
            exit 1
        }
    fi
    if [ ! -f "$dir/PG_VERSION" ]; then
        printf 'checkmark-bootstrap\n' > "$dir.pw"
        [ "$(id -u)" -eq 0 ] && chown postgres "$dir.pw"
        as_owner "$bin/initdb" -D "$dir" -U postgres --auth=scram-sha-256 --pwfile="$dir.pw" -E UTF8 --locale=C.UTF-8 > "$dir.initdb.log"
        rm -f "$dir.pw"
        cat >> "$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
shared_buffers = 256MB
CONF
    fi
    as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start > /dev/null
    export PGPASSWORD=checkmark-bootstrap
    if ! psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'checkmark'" | grep -q 1; then
        psql -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE ROLE checkmark LOGIN PASSWORD 'checkmark'"
        psql -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE checkmark OWNER checkmark"
    fi
    echo "postgres://checkmark:checkmark@127.0.0.1:$port/checkmark"
    ;;
stop)
    as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop > /dev/null || true
    ;;
*)
    echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2
    ;;
esac
