#!/usr/bin/env bash
# The Stream compatibility suite: drives a real `checkmark serve` on 127.0.0.1 through the official
# `stream-chat` Python SDK and listens on /connect with the `websockets` client; every response is
# checked against docs/openapi.json. Installs its tools into a virtual environment (.build/compat-venv).
#
#   scripts/compat.sh [pytest arguments...]
#
# Uses CHECKMARK_BINARY when set, else .build/debug/checkmark (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${CHECKMARK_BINARY:-}" ]]; then
    [[ -x .build/debug/checkmark ]] || swift build --product checkmark
    export CHECKMARK_BINARY=$PWD/.build/debug/checkmark
fi
venv=.build/compat-venv
if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r Tests/Compatibility/requirements.txt
cd Tests/Compatibility
exec "../../$venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
