#!/usr/bin/env bash
# The load harness against a loopback cluster of 1 node and then of 3 nodes (PostgreSQL, nodes; no
# nginx: the harness spreads its clients over the nodes itself, each user always to the same node),
# for the broadcast and receipts scenarios. Prints each run's summary and the CPU seconds the nodes
# and PostgreSQL used during it (from /proc), which is what limits a 2-core machine.
#
#   deploy/cluster/bench-cluster.sh [seconds]      (default 10 s measured per run; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
binary=.build/release/checkmark
export CHECKMARK_COMMANDS_PER_SECOND=1000000 CHECKMARK_COMMAND_BURST=1000000 CHECKMARK_MAX_CONNECTIONS_PER_USER=1000
export CHECKMARK_LOG_LEVEL=warning NODE_PORT=${NODE_PORT:-9101}

ticks() {  # user+system clock ticks of the given pids
    local total=0
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    echo "$total"
}

run() {
    local nodes=$1 scenario=$2; shift 2
    local urls=(--url "ws://127.0.0.1:$NODE_PORT")
    for n in $(seq 2 "$nodes"); do urls+=(--also-url "ws://127.0.0.1:$((NODE_PORT + n - 1))"); done
    local node_pids=() pg_pids
    for n in $(seq "$nodes"); do node_pids+=("$(cat "$CLUSTER_DIR/node$n.pid")"); done
    pg_pids=$(pgrep -u postgres -d ' ' postgres || true)
    local before_nodes before_pg started
    before_nodes=$(ticks "${node_pids[@]}"); before_pg=$(ticks $pg_pids); started=$(date +%s.%N)
    "$binary" bench "$scenario" "${urls[@]}" "$@" --warmup 2 --duration "$seconds" \
        --report ".build/bench-cluster/$scenario-$nodes-nodes" | sed -n '/measured after/,$p' | grep -v '^report:'
    local hz elapsed
    hz=$(getconf CLK_TCK); elapsed=$(echo "$(date +%s.%N) - $started" | bc)
    echo "cpu over the run ($elapsed s): nodes $(echo "scale=1; ($(ticks "${node_pids[@]}") - $before_nodes) / $hz" | bc) s, postgresql $(echo "scale=1; ($(ticks $pg_pids) - $before_pg) / $hz" | bc) s"
}

for nodes in 1 3; do
    export CLUSTER_DIR=$(mktemp -d /tmp/checkmark-bench-cluster.XXXXXX) NODES=$nodes
    chmod 755 "$CLUSTER_DIR"
    deploy/cluster/cluster.sh start > /dev/null
    echo "=== $nodes node(s)"
    run "$nodes" broadcast --connections 1000 --rate 50
    run "$nodes" broadcast --connections 1000 --rate 100
    run "$nodes" receipts --members 200 --rate 50
    deploy/cluster/cluster.sh stop
    rm -rf "$CLUSTER_DIR"
done
