#!/usr/bin/env bash
# A Checkmark cluster on loopback: PostgreSQL (Debian's package), NODES Checkmark nodes sharing it,
# and nginx in front as the load balancer (least connections, WebSocket upgrades proxied). For trying
# the cluster out and for the cluster checks in CI; docs/cluster.md says how to run it on real
# machines.
#
#   deploy/cluster/cluster.sh start          start everything (idempotent), print the endpoints
#   deploy/cluster/cluster.sh stop           stop everything (the database's files are kept)
#   deploy/cluster/cluster.sh kill-node N    SIGKILL node N (1-based), as a crash would
#   deploy/cluster/cluster.sh start-node N   start node N again
#
# Settings (environment): CLUSTER_DIR (default .build/cluster), NODES (3), LB_PORT (9100: nginx),
# NODE_PORT (9101: node 1; node N listens on NODE_PORT+N-1), PG_PORT (55433), CHECKMARK_BINARY
# (default .build/release/checkmark). Every other CHECKMARK_* variable reaches the nodes, e.g.
# CHECKMARK_API_KEY and CHECKMARK_API_SECRET (the development credentials otherwise).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${CLUSTER_DIR:-.build/cluster}
nodes=${NODES:-3}
lb_port=${LB_PORT:-9100}
node_port=${NODE_PORT:-9101}
pg_port=${PG_PORT:-55433}
binary=${CHECKMARK_BINARY:-.build/release/checkmark}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

wait_for_port() {
    for _ in $(seq 300); do
        (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_node() {
    local n=$1 port=$((node_port + $1 - 1))
    running "$dir/node$n.pid" && return 0
    CHECKMARK_POSTGRES_URL=$(cat "$dir/postgres.url") nohup "$binary" serve --host 127.0.0.1 --port "$port" \
        --log-level "${CHECKMARK_LOG_LEVEL:-notice}" >> "$dir/node$n.log" 2>&1 &
    echo $! > "$dir/node$n.pid"
    wait_for_port "$port" || { echo "node $n did not start; its log:" >&2; tail -n 20 "$dir/node$n.log" >&2; exit 1; }
}

start_nginx() {
    running "$dir/nginx/nginx.pid" && return 0
    mkdir -p "$dir/nginx/logs" "$dir/nginx/temp"
    {
        echo "upstream checkmark_nodes {"
        echo "    least_conn;"
        for n in $(seq "$nodes"); do
            echo "    server 127.0.0.1:$((node_port + n - 1)) max_fails=1 fail_timeout=2s;"
        done
        echo "    keepalive 64;"
        echo "}"
        # The production file's map and location, on a plain loopback listener.
        sed -n '/^map /,/^}/p' deploy/nginx/checkmark.conf
        echo "server {"
        echo "    listen 127.0.0.1:$lb_port;"
        # Above the largest body the suite sends, so, so that clients get its JSON 413 (Stream code 22).
        echo "    client_max_body_size 4m;"
        sed -n '/    location \/ {/,/^    }/p' deploy/nginx/checkmark.conf | sed 's/X-Forwarded-Proto https/X-Forwarded-Proto http/'
        echo "}"
    } > "$dir/nginx/checkmark.conf"
    cat > "$dir/nginx/nginx.conf" <<CONF
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log warn;
worker_processes 1;
events { worker_connections 20000; }
worker_rlimit_nofile 40000;
http {
    access_log off;
    client_body_temp_path $dir/nginx/temp/body;
    proxy_temp_path $dir/nginx/temp/proxy;
    fastcgi_temp_path $dir/nginx/temp/fastcgi;
    uwsgi_temp_path $dir/nginx/temp/uwsgi;
    scgi_temp_path $dir/nginx/temp/scgi;
    include $dir/nginx/checkmark.conf;
}
CONF
    nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf"
    wait_for_port "$lb_port" || { echo "nginx did not start" >&2; cat "$dir/nginx/logs/error.log" >&2; exit 1; }
}

case "${1:-}" in
start)
    [ -x "$binary" ] || { echo "no checkmark binary at $binary (swift build -c release --product checkmark)" >&2; exit 1; }
    deploy/cluster/postgres.sh start "$dir/postgres" "$pg_port" | tail -n 1 > "$dir/postgres.url"
    for n in $(seq "$nodes"); do start_node "$n"; done
    start_nginx
    echo "cluster: $nodes nodes on 127.0.0.1:$node_port-$((node_port + nodes - 1)), nginx on http://127.0.0.1:$lb_port, database $(sed 's#//[^@]*@#//#' "$dir/postgres.url")"
    ;;
stop)
    if running "$dir/nginx/nginx.pid"; then kill "$(cat "$dir/nginx/nginx.pid")"; fi
    for pidfile in "$dir"/node*.pid; do
        [ -f "$pidfile" ] || continue
        if running "$pidfile"; then kill "$(cat "$pidfile")"; fi
        rm -f "$pidfile"
    done
    sleep 0.5
    deploy/cluster/postgres.sh stop "$dir/postgres"
    ;;
kill-node)
    n=${2:?node number}
    running "$dir/node$n.pid" || { echo "node $n is not running" >&2; exit 1; }
    kill -KILL "$(cat "$dir/node$n.pid")"
    rm -f "$dir/node$n.pid"
    ;;
start-node)
    start_node "${2:?node number}"
    ;;
*)
    echo "usage: $0 start|stop|kill-node N|start-node N" >&2
    exit 2
    ;;
esac
