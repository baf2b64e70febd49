#!/bin/sh
# The version lives in one place: debian/changelog's first entry. This prints it, and with
# --sync writes it into Sources/PTKCLI/Version.swift (which `ptkd --version`, `ptk --version`
# and `ptk-send --version` print) when that says otherwise. The Makefile runs --sync before
# every build; VersionTests fails when the two differ (a build that skipped make).
# Usage: scripts/version.sh [--sync | --date]
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
[ -n "$version" ] || { echo "version.sh: no version on the first line of debian/changelog" >&2; exit 1; }
case "${1:-}" in
--sync)
    file=Sources/PTKCLI/Version.swift
    text="// Written by scripts/version.sh from debian/changelog, the one place the version is set.
/// The version of ptkd, ptk and ptk-send.
public let ptkVersion = \"$version\""
    if [ "$(cat "$file" 2>/dev/null)" != "$text" ]; then
        printf '%s\n' "$text" > "$file"
        echo "version $version written to $file"
    fi
    ;;
--date)
    # The date of the first entry, as man pages show it ("November 30, 2026").
    stamp=$(sed -n '/^ -- /{s/^ -- .*>  //p;q}' debian/changelog)
    LC_ALL=C date -u -d "$stamp" '+%B %-d, %Y'
    ;;
*)
    echo "$version"
    ;;
esac
