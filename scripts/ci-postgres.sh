#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the test suite.
#
#   eval "$(scripts/ci-postgres.sh start)"   # prints: export DATABASE_URL_TEST=... CI_PG_DIR=...
#   scripts/ci-postgres.sh stop              # stops the server in $CI_PG_DIR and deletes it
#
# start: installs Debian's postgresql package when no server is installed, creates a cluster in a
# new temporary folder (initdb, run as the postgres user when we are root), starts it listening on
# loopback only on a free port, creates the role and database "designlab" (the role may create
# databases: the tests make one per test from a migrated template) and prints the export lines.
# Autovacuum is off: its workers on a test database would block the DROP ... WITH (FORCE) that
# ends each test (the test role may not end them), and throwaway databases need no vacuum.
# Everything but those lines goes to stderr, so the output can be eval'ed.
set -euo pipefail

log() { echo "ci-postgres: $*" >&2; }

bindir() {
    find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install_postgres() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "installing PostgreSQL from Debian's packages"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        postgresql >&2
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local bin
    bin="$(bindir)"
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        install_postgres
        bin="$(bindir)"
    fi
    local dir port password
    dir="$(mktemp -d "${TMPDIR:-/tmp}/designlab-pg.XXXXXX")"
    port="${CI_PG_PORT:-$(free_port)}"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    chmod 700 "$dir"
    log "cluster in $dir, port $port ($("$bin/postgres" --version))"
    # Local (socket) connections are trusted: the socket lives in the 0700 cluster folder.
    # TCP connections need a password (SCRAM).
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c autovacuum=off" start >&2; then
        cat "$dir/postgres.log" >&2
        exit 1
    fi
    as_owner "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
        -c "CREATE ROLE designlab LOGIN CREATEDB PASSWORD '$password'" \
        -c "CREATE DATABASE designlab OWNER designlab" >&2
    echo "export CI_PG_DIR='$dir'"
    echo "export DATABASE_URL_TEST='postgresql+psycopg://designlab:$password@127.0.0.1:$port/designlab'"
}

stop() {
    local dir="${CI_PG_DIR:-}"
    if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
        log "nothing to stop (CI_PG_DIR is not a cluster folder)"
        return 0
    fi
    as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
