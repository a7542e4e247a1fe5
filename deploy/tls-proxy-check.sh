#!/usr/bin/env bash
# Starts Checkmark and nginx on loopback, nginx terminating TLS with a fresh self-signed certificate
# and proxying WebSocket upgrades with the settings of deploy/nginx/checkmark.conf, then proves that
# a wss:// client (python websockets) gets its messages through. Everything stops by itself.
#
#   deploy/tls-proxy-check.sh            (needs nginx, openssl and python websockets; .ci/run installs them)
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

"$binary" echo --host 127.0.0.1 --port "$backend_port" > "$work/checkmark.log" 2>&1 &
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

python3 - "$work/cert.pem" "$tls_port" <<'PY'
import asyncio, ssl, sys, websockets
cert, port = sys.argv[1], sys.argv[2]
async def main():
    context = ssl.create_default_context(cafile=cert)
    async with websockets.connect(f"wss://localhost:{port}/connect", ssl=context) as ws:
        for message in ["✓ sent", "✓✓ delivered", "✓✓ read " * 500]:
            await ws.send(message)
            reply = await asyncio.wait_for(ws.recv(), 5)
            assert reply == message, (reply[:40], message[:40])
        await ws.close()
        assert ws.close_code == 1000, ws.close_code
    print("tls-proxy: 1 passed, 0 failed")
asyncio.run(main())
PY
