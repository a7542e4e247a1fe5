#!/usr/bin/env bash
# The hostile-client soak (scripts/soak.py): a real `checkmark serve` on 127.0.0.1, 200 well-behaved
# clients, and every kind of hostile client at once; bounded (about a minute), stops by itself.
#
#   scripts/soak.sh [soak.py options, e.g. --duration 30]
#
# Uses CHECKMARK_BINARY when set, else .build/release/checkmark, else .build/debug/checkmark.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CHECKMARK_BINARY:-}
if [[ -z $binary ]]; then
    if [[ -x .build/release/checkmark ]]; then binary=.build/release/checkmark; else binary=.build/debug/checkmark; fi
fi
venv=.build/soak-venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "websockets>=13"
data=$(mktemp -d /tmp/checkmark-soak.XXXXXX)
log=$data/server.log
# Short request timeout so that slow and idle clients are answered within the run.
"$binary" serve --port 0 --data-dir "$data/data" --api-key soak-key --api-secret soak-secret-used-only-by-the-soak-test \
    --log-level notice --set request_timeout=3 > "$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
port=
for _ in $(seq 100); do
    port=$(sed -n 's/^checkmark listening on .*:\([0-9]*\)$/\1/p' "$log" | head -n 1)
    [[ -n $port ]] && break
    sleep 0.1
done
[[ -n $port ]] || { echo "soak: the server did not start" >&2; cat "$log" >&2; exit 1; }
status=0
"$venv/bin/python" scripts/soak.py --port "$port" --pid "$pid" "$@" || status=$?
kill -TERM "$pid"
wait "$pid" || { echo "soak: the server did not stop cleanly" >&2; status=1; }
echo "soak: refusals logged: $(grep -c 'refused:' "$log" || true) lines ($(grep -o 'suppressed=[0-9]*' "$log" | awk -F= '{s+=$2} END {print s+0}') more suppressed)"
trap - EXIT
rm -rf "$data"
exit "$status"
