#!/usr/bin/env bash
# Installs the Debian packages Checkmark builds and tests with, if they are missing:
# zlib1g-dev (permessage-deflate), libssl-dev (SHA-1 and HMAC from libcrypto), libsqlite3-dev (storage),
# python3-venv (the conformance and compatibility suites), nginx, openssl and curl (the TLS proxy check),
# postgresql (the PostgreSQL store's tests and the cluster checks), iproute2 and bc (the cluster's scale
# check: network namespaces, ratios), prometheus (only its promtool, which checks the /metrics
# exposition; a prometheus daemon the install starts is stopped and disabled).
set -euo pipefail
packages=(zlib1g-dev libssl-dev libsqlite3-dev python3-venv nginx openssl curl postgresql iproute2 bc prometheus)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
    if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
fi
