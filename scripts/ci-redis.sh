#!/usr/bin/env bash
# A throwaway Redis server on 127.0.0.1 for the test suite (the task queue and shared rate limits).
#
#   eval "$(scripts/ci-redis.sh start)"   # prints: export REDIS_URL_TEST=... CI_REDIS_DIR=...
#   scripts/ci-redis.sh stop              # stops the server in $CI_REDIS_DIR and deletes it
#
# start: installs Debian's redis-server package when no server is installed, starts one in a new
# temporary folder (its data, append-only file and log there), listening on loopback only on a free
# port, with a password, and prints the export lines. Everything but those lines goes to stderr, so
# the output can be eval'ed. Its REDIS_URL_TEST turns the task-queue tests on; each of them runs
# a redis-server of its own (tests/taskqueue/redis_server.py), so it may restart its broker.
set -euo pipefail

log() { echo "ci-redis: $*" >&2; }

install_redis() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "installing redis-server from Debian's packages"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        redis-server >&2
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || install_redis
    local server="${REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}"
    local dir port password
    dir="$(mktemp -d "${TMPDIR:-/tmp}/designlab-redis.XXXXXX")"
    port="${CI_REDIS_PORT:-$(free_port)}"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    chmod 700 "$dir"
    cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
protected-mode yes
port $port
requirepass $password
dir $dir
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
appendonly yes
appendfsync everysec
save 60 1
CONF
    log "server in $dir, port $port ($("$server" --version | head -c 60))"
    "$server" "$dir/redis.conf" >&2
    local i
    for i in $(seq 1 100); do
        if redis-cli -h 127.0.0.1 -p "$port" -a "$password" --no-auth-warning ping 2>/dev/null \
            | grep -q PONG; then
            echo "export CI_REDIS_DIR='$dir'"
            echo "export REDIS_URL_TEST='redis://:$password@127.0.0.1:$port/0'"
            return 0
        fi
        sleep 0.1
    done
    cat "$dir/redis.log" >&2
    exit 1
}

stop() {
    local dir="${CI_REDIS_DIR:-}"
    if [ -z "$dir" ] || [ ! -f "$dir/redis.conf" ]; then
        log "nothing to stop (CI_REDIS_DIR is not a server folder)"
        return 0
    fi
    if [ -f "$dir/redis.pid" ]; then
        local pid
        pid="$(cat "$dir/redis.pid")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
