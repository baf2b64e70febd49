#!/bin/sh
# Builds the Debian packages ptkd and ptk-send (and their -dbgsym) as a Debian build machine
# would, from debian/ with dpkg-buildpackage and debhelper, checks them with lintian (no error
# and no warning allowed), and puts them in .build/deb/. `make deb` runs it.
set -eu
cd "$(dirname "$0")/.."
version=$(scripts/version.sh)
arch=$(dpkg --print-architecture)
start=$(date +%s)
dpkg-buildpackage -b -uc -us
out=.build/deb
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.changes "$out"/*.buildinfo
for f in ptkd_${version}_$arch.deb ptk-send_${version}_$arch.deb ptkd-dbgsym_${version}_$arch.deb \
         ptk-send-dbgsym_${version}_$arch.deb ptk_${version}_$arch.buildinfo ptk_${version}_$arch.changes; do
    [ -e "../$f" ] && mv "../$f" "$out/"
done
# What the packaging left in debian/ (package trees, debian/tmp, substvars): the build
# directory in .build/ is kept, so the next build is quick.
debian/rules clean >/dev/null
echo "lintian:"
lintian --fail-on error,warning --display-info "$out/ptk_${version}_$arch.changes"
echo "built in $(( $(date +%s) - start )) s:"
ls -l "$out"/*.deb
