#!/usr/bin/env bash
# Checks deploy/prometheus and deploy/grafana against a real server: `promtool check rules` and
# `promtool test rules` on the alert rules, then starts `checkmark serve` (the binary given, or
# .build/release/checkmark, else .build/debug/checkmark) on a free loopback port, sends it a few
# requests so that every family has samples, and fails naming any metric that an alert or a
# dashboard panel's query uses and /metrics does not serve, any panel without a query, or a
# dashboard that is not valid JSON.
#
#   scripts/check-monitoring.sh [path/to/checkmark]
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/checkmark}
[[ -x $binary ]] || binary=.build/debug/checkmark
if [[ ! -x $binary ]]; then
    echo "check-monitoring: no checkmark binary at $binary (build it first: swift build -c release)" >&2
    exit 1
fi
command -v promtool > /dev/null || { echo "check-monitoring: promtool is missing (Debian package prometheus)" >&2; exit 1; }

(cd deploy/prometheus && promtool check rules checkmark-alerts.yml && promtool test rules checkmark-alerts.test.yml)

work=$(mktemp -d)
"$binary" serve --port 0 --data-dir "$work/data" > "$work/server.out" 2> "$work/server.log" &
server=$!
stop_server() {
    if kill -0 "$server" 2> /dev/null; then
        kill -TERM "$server"
        wait "$server" || true
    fi
    rm -rf "$work"
}
trap stop_server EXIT
port=""
for _ in $(seq 300); do
    port=$(sed -n 's/^checkmark listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/server.out")
    [[ -n $port ]] && break
    kill -0 "$server" 2> /dev/null || { echo "check-monitoring: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
done
[[ -n $port ]] || { echo "check-monitoring: the server printed no listening line within 30 s" >&2; exit 1; }

# A request of each kind: a route answered, a credential refused (the HTTP families get samples).
curl -s -o /dev/null "http://127.0.0.1:$port/healthz"
curl -s -o /dev/null -X POST "http://127.0.0.1:$port/channels/messaging/check/read?api_key=wrong"
curl -s "http://127.0.0.1:$port/metrics" > "$work/metrics.txt"

python3 - "$work/metrics.txt" deploy/grafana/checkmark-dashboard.json deploy/prometheus/checkmark-alerts.yml <<'PY'
import json, re, sys
metrics, dashboard, alerts = sys.argv[1:4]
served = {re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0) for line in open(metrics) if line.strip() and not line.startswith("#")}
names = re.compile(r"\b(?:checkmark|process)_[a-z0-9_]+\b")
problems = []
try:
    board = json.load(open(dashboard))
except ValueError as error:
    sys.exit(f"check-monitoring: {dashboard} is not JSON: {error}")
panels = board.get("panels") or []
if not panels:
    problems.append(f"{dashboard}: no panels")
queries = 0
for panel in panels:
    targets = [t.get("expr", "") for t in panel.get("targets", [])]
    if not any(targets):
        problems.append(f"{dashboard}: panel {panel.get('title')!r} has no query")
    for expr in targets:
        queries += 1
        for name in names.findall(expr):
            if name not in served:
                problems.append(f"{dashboard}: panel {panel.get('title')!r} queries {name}, which /metrics does not serve")
rules = 0
for line in open(alerts):
    if line.strip().startswith(("expr:", "sum", "/", "(", ">")) or "rate(" in line:
        for name in names.findall(line):
            rules += 1
            if name not in served:
                problems.append(f"{alerts}: {name} is not served by /metrics")
for problem in problems:
    print("check-monitoring:", problem, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check-monitoring: {len(panels)} panels, {queries} queries and {rules} alert metric references name only metrics /metrics serves ({len(served)} sample names)")
PY
