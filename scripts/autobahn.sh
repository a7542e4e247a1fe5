#!/usr/bin/env bash
# Runs the Autobahn WebSocket conformance cases (through kosoku, from PyPI) against Checkmark's echo
# endpoint (server role) and against Checkmark's client (client role), and fails on any case that is
# not OK, NON-STRICT or INFORMATIONAL.
#
#   scripts/autobahn.sh [server|client|all] [case globs...]
#
# Expects a release build (.build/release/checkmark) and kosoku on PATH (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
shift || true
binary=.build/release/checkmark
reports=.build/autobahn
mkdir -p "$reports"
pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

# Waits until something listens on the port; fails after 10 s.
wait_for_port() {
    for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done
    echo "nothing listens on port $1" >&2
    return 1
}

# Fails if the port is taken (a leftover server would answer in place of the one we start).
require_free_port() {
    if (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null; then
        echo "port $1 is already in use" >&2
        return 1
    fi
}

check_reports() {
    python3 - "$1" <<'PY'
import json, sys, collections
index = json.load(open(sys.argv[1]))
counts = collections.Counter()
bad = []
for agent, cases in index.items():
    for case, result in cases.items():
        counts[(result["behavior"], result["behaviorClose"])] += 1
        if result["behavior"] not in ("OK", "NON-STRICT", "INFORMATIONAL") or result["behaviorClose"] not in ("OK", "INFORMATIONAL"):
            bad.append((case, result["behavior"], result["behaviorClose"]))
total = sum(counts.values())
print(f"{total} cases: " + ", ".join(f"{b}/{c}: {n}" for (b, c), n in sorted(counts.items())))
for case, behavior, close in sorted(bad):
    print(f"FAILED case {case}: behavior {behavior}, close {close}")
print(f"autobahn: {total - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad or total == 0 else 0)
PY
}

run_server() {
    local port=${AUTOBAHN_SERVER_PORT:-9101}
    # Keepalive pings stay on (every 5 s) to show they do not disturb the long cases. The compression
    # threshold is 0 because kosoku's handler for cases 12.x/13.x hashes a received text message
    # without encoding it when the frame was not compressed (legal under RFC 7692 section 6), and
    # errors out on the first, 16-byte, case of each group.
    "$binary" echo --host 127.0.0.1 --port "$port" --keepalive 5 --compression-threshold 0 > "$reports/echo.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    wait_for_port "$port"
    rm -rf "$reports/server"
    local includes=()
    if [ $# -gt 0 ]; then for c in "$@"; do includes+=(-i "$c"); done
        kosoku "${includes[@]}" -p 2 -o "$reports/server" "127.0.0.1:$port"
    else
        # Cases 9, 12 and 13 are long and timing-sensitive: one at a time.
        kosoku -x '9.*' -x '12.*' -x '13.*' -p 2 -o "$reports/server/a" "127.0.0.1:$port"
        kosoku -i '9.*' -i '12.*' -i '13.*' -p 1 -o "$reports/server/b" "127.0.0.1:$port"
        python3 -c "
import json,sys
a=json.load(open('$reports/server/a/index.json')); b=json.load(open('$reports/server/b/index.json'))
for k,v in b.items(): a.setdefault(k,{}).update(v)
json.dump(a,open('$reports/server/index.json','w'))"
    fi
    kill "$pid" 2>/dev/null || true
    echo "server role (checkmark echo):"
    check_reports "$reports/server/index.json"
}

run_client() {
    local port=${AUTOBAHN_CLIENT_PORT:-9102}
    require_free_port "$port"
    rm -rf "$reports/client"
    local includes=()
    for c in "$@"; do includes+=(-i "$c"); done
    kosoku -m fuzzingserver "${includes[@]}" -o "$reports/client" "127.0.0.1:$port" > "$reports/fuzzingserver.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    wait_for_port "$port"
    timeout 2400 "$binary" autobahn-client --url "ws://127.0.0.1:$port"
    # The fuzzing server writes its index after the client's last report request; on a slow machine
    # that takes more than a second, so wait for it (at most 120 s) before stopping the server.
    for _ in $(seq 240); do [[ -s "$reports/client/index.json" ]] && break; sleep 0.5; done
    sleep 1
    kill "$pid" 2>/dev/null || true
    echo "client role (checkmark autobahn-client):"
    check_reports "$reports/client/index.json"
}

case "$mode" in
    server) run_server "$@" ;;
    client) run_client "$@" ;;
    all) run_server; run_client ;;
    *) echo "usage: $0 [server|client|all] [case globs...]" >&2; exit 2 ;;
esac
