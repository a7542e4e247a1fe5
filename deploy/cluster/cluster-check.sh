#!/usr/bin/env bash
# The cluster checks CI runs: starts PostgreSQL, three nodes and nginx on loopback (cluster.sh), runs
# the Stream compatibility suite through nginx (so its clients spread over the nodes), then kills a
# node with SIGKILL under load and checks that its clients resume elsewhere with nothing lost or
# repeated (failover-check.py), restarts it and checks that it serves again. Stops everything.
#
#   deploy/cluster/cluster-check.sh      (needs postgresql, nginx, a release build, python websockets)
set -euo pipefail
cd "$(dirname "$0")/../.."
# Under /tmp and world-traversable: as root, PostgreSQL runs as the postgres user.
export CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/checkmark-cluster.XXXXXX)}
chmod 755 "$CLUSTER_DIR"
export LB_PORT=${LB_PORT:-9100} NODE_PORT=${NODE_PORT:-9101} PG_PORT=${PG_PORT:-55433}
# The compatibility suite's credentials.
export CHECKMARK_API_KEY=compat-key
export CHECKMARK_API_SECRET=compat-secret-used-only-by-the-compatibility-suite
cleanup() {
    deploy/cluster/cluster.sh stop || true
    rm -rf "$CLUSTER_DIR"
}
trap cleanup EXIT
deploy/cluster/cluster.sh start

echo "--- compatibility suite through nginx, clients spread over 3 nodes"
CHECKMARK_COMPAT_URL=http://127.0.0.1:$LB_PORT scripts/compat.sh

# The compatibility suite's virtual environment has websockets.
echo "--- SIGKILL of node 1 under load"
.build/compat-venv/bin/python deploy/cluster/failover-check.py --readers 30 --messages 600 --rate 100 --channel failover

echo "--- node 1 restarted: it loads the shared state and serves"
deploy/cluster/cluster.sh start-node 1
curl -sf "http://127.0.0.1:$NODE_PORT/readyz" > /dev/null
server_token=$(.build/release/checkmark token --server --api-secret "$CHECKMARK_API_SECRET")
count=$(curl -sf "http://127.0.0.1:$NODE_PORT/channels/messaging/failover/query?api_key=$CHECKMARK_API_KEY" \
    -H "Authorization: $server_token" -H "stream-auth-type: jwt" -d '{"state":true,"messages":{"limit":1}}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["channel"].get("member_count", 0))')
[ "$count" -gt 0 ] || { echo "restarted node does not see the channel" >&2; exit 1; }
echo "cluster-check: restarted node 1 sees messaging:failover with $count members"
for n in 1 2 3; do
    grep -E "critical|diverge" "$CLUSTER_DIR/node$n.log" && { echo "node $n logged a critical error" >&2; exit 1; }
done
echo "cluster-check: passed"
