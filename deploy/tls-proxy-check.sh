#!/usr/bin/env bash
# Starts Checkmark and nginx on loopback, nginx terminating TLS with a fresh self-signed certificate
# and proxying WebSocket upgrades with the settings of deploy/nginx/checkmark.conf, then proves that
# a wss:// client (python websockets) gets its events through: two users connect over wss://, one
# sends a message and the other marks it read; each must receive the right events. /metrics and
# /admin/trace must be refused (404) through the TLS port while /healthz passes. Everything stops
# by itself.
#
#   deploy/tls-proxy-check.sh            (needs nginx, openssl and python websockets; .ci/run installs them)
#   BACKEND_PORT=19411 TLS_PORT=19443 CHECKMARK_BINARY=path/to/checkmark deploy/tls-proxy-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CHECKMARK_BINARY:-.build/release/checkmark}
work=$(mktemp -d)
backend_port=${BACKEND_PORT:-9411}
tls_port=${TLS_PORT:-9443}
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

api_key=tls-check-key
api_secret=tls-check-secret-0123456789
"$binary" serve --host 127.0.0.1 --port "$backend_port" --data-dir "$work/data" \
    --api-key "$api_key" --api-secret "$api_secret" > "$work/checkmark.log" 2>&1 &
pids+=($!)

# The production file with loopback ports, the test certificate, and paths nginx may write to.
mkdir -p "$work/nginx/logs" "$work/nginx/temp"
sed -e "s#127.0.0.1:8080#127.0.0.1:$backend_port#" \
    -e "s#listen 443 ssl;#listen 127.0.0.1:$tls_port ssl;#" \
    -e "s#/etc/ssl/checkmark/fullchain.pem#$work/cert.pem#" \
    -e "s#/etc/ssl/checkmark/privkey.pem#$work/key.pem#" \
    deploy/nginx/checkmark.conf > "$work/nginx/checkmark.conf"
cat > "$work/nginx/nginx.conf" <<CONF
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log $work/nginx/logs/access.log;
    client_body_temp_path $work/nginx/temp/body;
    proxy_temp_path $work/nginx/temp/proxy;
    fastcgi_temp_path $work/nginx/temp/fastcgi;
    uwsgi_temp_path $work/nginx/temp/uwsgi;
    scgi_temp_path $work/nginx/temp/scgi;
    include $work/nginx/checkmark.conf;
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=($!)

ready=no
for _ in $(seq 100); do
    if (echo > /dev/tcp/127.0.0.1/$tls_port) 2>/dev/null && (echo > /dev/tcp/127.0.0.1/$backend_port) 2>/dev/null; then
        ready=yes
        break
    fi
    sleep 0.1
done
if [ "$ready" != yes ]; then
    echo "nginx or checkmark did not start:" >&2
    cat "$work/nginx/logs/error.log" "$work/checkmark.log" >&2 2>/dev/null || true
    exit 1
fi

# The operators' endpoints are served by the node but refused through the public TLS server, also
# as a WebSocket upgrade and with the path spelled differently; /healthz passes.
status() { curl -s -o /dev/null -w '%{http_code}' --path-as-is "$@"; }
expect_status() {
    local want=$1; shift
    local got
    got=$(status "$@")
    if [ "$got" != "$want" ]; then
        echo "tls-proxy: $* answered $got, expected $want" >&2
        exit 1
    fi
}
expect_status 200 "http://127.0.0.1:$backend_port/metrics"
expect_status 200 --cacert "$work/cert.pem" "https://localhost:$tls_port/healthz"
for path in /metrics '/metrics?x=1' //metrics /%6Detrics /admin/trace /admin//trace /./admin/trace; do
    expect_status 404 --cacert "$work/cert.pem" "https://localhost:$tls_port$path"
done
expect_status 404 --cacert "$work/cert.pem" -H "Connection: Upgrade" -H "Upgrade: websocket" \
    -H "Sec-WebSocket-Version: 13" -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
    "https://localhost:$tls_port/admin/trace"
echo "tls-proxy: /metrics and /admin/trace refused (404) through TLS, /healthz passes"

server_token=$("$binary" token --server --api-secret "$api_secret")
alice_token=$("$binary" token --user-id alice --api-secret "$api_secret")
bob_token=$("$binary" token --user-id bob --api-secret "$api_secret")
curl -sf --cacert "$work/cert.pem" "https://localhost:$tls_port/users?api_key=$api_key" -H "Authorization: $server_token" \
    -d '{"users":{"alice":{"id":"alice"},"bob":{"id":"bob"}}}' > /dev/null
curl -sf --cacert "$work/cert.pem" "https://localhost:$tls_port/channels/messaging/tls/query?api_key=$api_key" \
    -H "Authorization: $server_token" -d '{"data":{"members":["alice","bob"]}}' > /dev/null

python3 - "$work/cert.pem" "$tls_port" "$api_key" "$alice_token" "$bob_token" <<'PY'
import asyncio, json, ssl, sys, urllib.parse, websockets
cert, port, key, alice_token, bob_token = sys.argv[1:6]
context = ssl.create_default_context(cafile=cert)

async def connect(user, token):
    query = urllib.parse.urlencode({"json": json.dumps({"user_id": user}), "api_key": key,
                                    "authorization": token, "stream-auth-type": "jwt"})
    ws = await websockets.connect(f"wss://localhost:{port}/connect?{query}", ssl=context)
    first = json.loads(await asyncio.wait_for(ws.recv(), 5))
    assert first["type"] == "health.check" and first["me"]["id"] == user, first
    return ws

async def until(ws, kind):
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if event["type"] == kind:
            return event

async def main():
    alice = await connect("alice", alice_token)
    bob = await connect("bob", bob_token)
    for ws in (alice, bob):
        await ws.send(json.dumps({"type": "watch", "request_id": "w", "cid": "messaging:tls"}))
        await until(ws, "reply")
    await alice.send(json.dumps({"type": "send_message", "request_id": "s", "cid": "messaging:tls",
                                 "message": {"id": "tls-1", "text": "✓ sent " * 300}}))
    new = await until(bob, "message.new")
    assert new["message"]["id"] == "tls-1" and new["unread_count"] == 1, new
    await bob.send(json.dumps({"type": "mark_read", "request_id": "r", "cid": "messaging:tls"}))
    read = await until(alice, "message.read")
    assert read["user"]["id"] == "bob" and read["last_read_message_id"] == "tls-1", read
    for ws in (alice, bob):
        await ws.close()
        assert ws.close_code == 1000, ws.close_code
    print("tls-proxy: 1 passed, 0 failed")
asyncio.run(main())
PY
