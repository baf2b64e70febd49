#!/bin/sh
# Builds the Debian 12 root that the system test (Tests/EndToEndTests/SystemdTests.swift) boots
# with systemd-nspawn: systemd, dbus, avahi-daemon and the libraries ptkd links. It is made
# once per machine and kept outside the repository; each test run lays an overlay on it, so
# the root itself is never changed. Root only; needs the Debian packages debootstrap and
# systemd-container, and the Debian mirror this machine's apt uses.
#
# Usage: scripts/system-root.sh          prints the root's path once it exists
# Environment: PTK_SYSTEM_ROOT (default /var/cache/ptk/system-root)
set -eu
root=${PTK_SYSTEM_ROOT:-/var/cache/ptk/system-root}
# What the root holds; a change here makes a new root (the stamp records it). The libraries
# are the runtime packages docs/OPERATIONS.md tells a user to install before `make install`
# (generated from what the programs link, scripts/runtime-packages.py): the system test, which
# installs ptk into this root with `make install-files`, runs on exactly that list, as a new
# user's host would.
runtime=$(sed -n '/runtime-packages: generated/,/^```$/s/^sudo apt-get install //p' "$(dirname "$0")/../docs/OPERATIONS.md")
[ -n "$runtime" ] || { echo "scripts/system-root.sh: no runtime package list in docs/OPERATIONS.md" >&2; exit 1; }
packages="systemd systemd-sysv dbus avahi-daemon avahi-utils iproute2 man-db procps curl $runtime"
stamp="bookworm minbase: $packages"

if [ -f "$root/.ptk-root" ] && [ "$(cat "$root/.ptk-root")" = "$stamp" ]; then
    echo "$root"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "scripts/system-root.sh: building the system test's Debian root needs root" >&2
    exit 1
fi
for tool in debootstrap systemd-nspawn; do
    command -v $tool >/dev/null || { echo "scripts/system-root.sh: $tool is missing (apt-get install debootstrap systemd-container)" >&2; exit 1; }
done
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "scripts/system-root.sh: no Debian mirror found in /etc/apt" >&2; exit 1; }

# Built beside its final place and renamed at the end, so a broken build never looks finished.
mkdir -p "$(dirname "$root")"
work="$root.building"
rm -rf "$work"
echo "Building the system test's Debian root in $root (about a minute, once per machine)" >&2
debootstrap --variant=minbase bookworm "$work" "$mirror" >"$work.log" 2>&1 || {
    echo "scripts/system-root.sh: debootstrap failed; its log: $work.log" >&2; exit 1; }
cp /etc/resolv.conf "$work/etc/resolv.conf"
chroot "$work" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $packages" >>"$work.log" 2>&1 || {
    echo "scripts/system-root.sh: installing packages in the root failed; its log: $work.log" >&2; exit 1; }
chroot "$work" apt-get clean
# No getty on a console nobody reads; the container's network is private and has only lo.
chroot "$work" systemctl mask console-getty.service getty@tty1.service >/dev/null 2>&1 || true
: >"$work/etc/machine-id"
echo "$stamp" >"$work/.ptk-root"
rm -rf "$root" "$work.log"
mv "$work" "$root"
echo "$root"
