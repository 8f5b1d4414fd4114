#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, only when they are missing.
set -euo pipefail
needed=()
for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || needed+=("$pkg")
done
if [ "${#needed[@]}" -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: missing ${needed[*]} and no apt-get; install them by hand" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "system-deps: installing ${needed[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${needed[@]}" >/dev/null
