#!/bin/sh
# Makes sure the Debian packages the build needs are installed. As root it installs the
# missing ones; otherwise it prints the one apt-get line to run and fails.
# Usage: scripts/deps.sh [extra-package ...]
set -eu
packages="pkg-config libssl-dev zlib1g-dev libavahi-client-dev libsystemd-dev $*"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "Installing missing Debian packages:$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
else
    echo "Missing Debian packages:$missing" >&2
    echo "Run: sudo apt-get install -y$missing" >&2
    exit 1
fi
