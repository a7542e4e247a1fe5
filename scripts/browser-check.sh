#!/usr/bin/env bash
# The demo page (/demo) in a real browser: two headless Chromium windows, Ana and Ben, on a fresh
# `checkmark serve`; Tests/Browser/test_demo.py checks that Ana's checks go from one gray to two
# gray to blue as Ben's page receives and shows her message, that they stop at two gray once Ben
# turns read receipts off, that "mark unread" works and that "read by" names Ben with a time.
#
#   scripts/browser-check.sh [path to the checkmark binary] [pytest arguments...]
#
# Builds nothing: the binary defaults to .build/release/checkmark, else .build/debug/checkmark.
# Installs what it needs: Debian's chromium and chromium-driver (apt-get, root or sudo) when missing,
# selenium and pytest into a virtual environment (.build/browser-venv).
# Screenshots and the server's log are kept under .build/browser-artifacts/; CI keeps them there.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-}
[[ $# -gt 0 ]] && shift
if [[ -z $binary ]]; then
    binary=.build/release/checkmark
    [[ -x $binary ]] || binary=.build/debug/checkmark
fi
if [[ ! -x $binary ]]; then
    echo "browser-check: no checkmark binary at $binary (build it first: swift build -c release)" >&2
    exit 1
fi
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

if ! command -v chromium > /dev/null || ! command -v chromedriver > /dev/null; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver
fi

venv=.build/browser-venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r Tests/Browser/requirements.txt

artifacts=$PWD/.build/browser-artifacts
rm -rf "$artifacts"
mkdir -p "$artifacts"
data=$(mktemp -d)
# The development credentials (the default) serve /demo and let the page sign its own tokens.
"$binary" serve --port 0 --data-dir "$data" > "$artifacts/server.out" 2> "$artifacts/server.log" &
server=$!
stop_server() {
    if kill -0 "$server" 2> /dev/null; then
        kill -TERM "$server"
        wait "$server" || echo "browser-check: the server exited with $? after SIGTERM" >&2
    fi
    rm -rf "$data"
}
trap stop_server EXIT

port=""
for _ in $(seq 300); do
    port=$(sed -n 's/^checkmark listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$artifacts/server.out")
    [[ -n $port ]] && break
    if ! kill -0 "$server" 2> /dev/null; then
        echo "browser-check: the server did not start:" >&2
        cat "$artifacts/server.log" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ -z $port ]]; then
    echo "browser-check: the server printed no listening line within 30 s" >&2
    exit 1
fi
echo "browser-check: checkmark serve on 127.0.0.1:$port, $(chromium --version 2> /dev/null || echo chromium)"

status=0
CHECKMARK_URL="http://127.0.0.1:$port" BROWSER_ARTIFACTS="$artifacts" \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q Tests/Browser "$@" || status=$?
echo "browser-check: screenshots in $artifacts:" $(cd "$artifacts" && ls ./*.png 2> /dev/null)
# The page makes no request that fails (issue 47: it created its channel type again on every load).
if failed=$(grep -E 'status=[45][0-9][0-9]' "$artifacts/server.log"); then
    echo "browser-check: the pages made requests that failed:" >&2
    echo "$failed" | head -5 >&2
    status=1
fi
exit $status
