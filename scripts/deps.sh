#!/bin/sh
# Makes sure the Debian packages are installed: those the build needs, and with --test also
# those the tests use (avahi-daemon and dbus for mDNS in a private namespace, nftables for
# dropped packets, systemd-container and debootstrap for the real-systemd test, curl, rclone,
# davfs2, cadaver and litmus for the WebDAV door's clients, ...). As root
# it installs the missing ones; otherwise it prints the one apt-get line to run and fails
# (with --test it only warns: the tests that need them skip with a one-line reason).
# Usage: scripts/deps.sh [--test] [extra-package ...]
set -eu
build="pkg-config libssl-dev zlib1g-dev libavahi-client-dev libsystemd-dev libsqlite3-dev libpng-dev libdeflate-dev libhttp-parser-dev libjpeg62-turbo-dev libexif-dev libheif-dev liblcms2-dev libarchive-dev libqrencode-dev libexpat1-dev"
test="imagemagick libheif-examples chromium chromium-driver python3-selenium zbar-tools openssl binutils avahi-daemon avahi-utils dbus systemd systemd-container debootstrap nftables iproute2 socat strace util-linux bsdutils python3 mandoc groff-base bash zsh fish curl rclone davfs2 cadaver litmus"
packages=$build
strict=1
if [ "${1:-}" = "--test" ]; then
    shift
    packages="$build $test"
    strict=0
fi
packages="$packages $*"
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
    # Without root the tests that need these skip anyway; the build packages are a must.
    for p in $missing; do
        case " $build " in *" $p "*) exit 1 ;; esac
    done
    [ $strict = 1 ] && exit 1
    exit 0
fi
