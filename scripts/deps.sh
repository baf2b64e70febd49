#!/bin/sh
# Makes sure the Debian packages are installed: those the build needs, and with --test also
# those the tests use (avahi-daemon and dbus for mDNS in a private namespace, nftables for
# dropped packets, systemd-container and debootstrap for the real-systemd test, curl, rclone,
# davfs2, cadaver and litmus for the WebDAV door's clients, nextcloud-desktop-cmd and
# owncloud-client-cmd for the Nextcloud-compatible door's, syncthing, samba (with its VFS
# modules), smbclient, openssh-server and openssh-client for the inbox tools, xfsprogs for
# a file system with reflinks, ...). As root
# it installs the missing ones; otherwise it prints the one apt-get line to run and fails
# (with --test it only warns: the tests that need them skip with a one-line reason).
# Usage: scripts/deps.sh [--test] [extra-package ...]
set -eu
build="pkg-config libssl-dev zlib1g-dev libavahi-client-dev libsystemd-dev libsqlite3-dev libpng-dev libdeflate-dev libhttp-parser-dev libjpeg62-turbo-dev libexif-dev libheif-dev liblcms2-dev libarchive-dev libqrencode-dev libexpat1-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev"
test="imagemagick libheif-examples ffmpeg chromium chromium-driver python3-selenium zbar-tools openssl binutils avahi-daemon avahi-utils dbus systemd systemd-container debootstrap nftables iproute2 socat strace util-linux bsdutils python3 mandoc groff-base bash zsh fish curl rclone davfs2 cadaver litmus nextcloud-desktop-cmd owncloud-client-cmd syncthing samba samba-vfs-modules smbclient openssh-server openssh-client xfsprogs"
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
    # samba and openssh-server, when new to the machine, start smbd, nmbd and sshd on every
    # interface from their postinst and enable them for every boot; the tests run their own,
    # on loopback ports only. So a policy-rc.d that exits 101 forbids service starts during
    # the install (removed after, when written here), and where systemd runs, the units of
    # those installed here are disabled and stopped after it (an sshd that was there before
    # is left alone: it is not in $missing).
    policy_written=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        policy_written=1
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
    if [ $policy_written = 1 ]; then
        rm -f /usr/sbin/policy-rc.d
        trap - EXIT
    fi
    if [ -d /run/systemd/system ]; then
        case " $missing " in *" samba "*) units="smbd nmbd samba-ad-dc" ;; *) units="" ;; esac
        case " $missing " in *" openssh-server "*) units="$units ssh ssh.socket" ;; esac
        for unit in $units; do systemctl disable --now "$unit" 2>/dev/null || true; done
    fi
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
