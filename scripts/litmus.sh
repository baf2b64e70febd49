#!/bin/sh
# litmus, the WebDAV conformance suite (Debian package litmus), against ptkd's WebDAV door
# (issue 44). Prints one line per suite (tests run, passed, failed, skipped) and one line per
# test that failed, with litmus's reason, so that a closing note can quote it. litmus writes
# plain text files, which a photo receiver refuses (415), so many of its tests fail by design:
# docs/WEBDAV-CLIENTS.md lists them, and DAVLitmusTests holds ptkd to that list.
#
# Usage: scripts/litmus.sh URL USER PASSWORD   a running ptkd; a password made with --access full
#        scripts/litmus.sh                     starts a throwaway ptkd from $PTK_BIN_DIR (default
#                                              .build/debug) on loopback, on free ports
# litmus's full output and its debug.log stay in $LITMUS_KEEP when set (a directory).
# Exit status: 0 when every suite ran (failed tests do not change it), 1 when litmus could not
# run a suite or start, 2 on a usage error.
set -eu
cd "$(dirname "$0")/.."
command -v litmus >/dev/null || { echo "litmus.sh: litmus is not installed (apt-get install litmus)" >&2; exit 1; }
work=$(mktemp -d /tmp/ptk-litmus.XXXXXX)
ptkd_pid=""
cleanup() {
    [ -n "$ptkd_pid" ] && kill "$ptkd_pid" 2>/dev/null && wait "$ptkd_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

if [ $# = 3 ]; then
    url=$1 user=$2 password=$3
elif [ $# = 0 ]; then
    bin=${PTK_BIN_DIR:-.build/debug}
    [ -x "$bin/ptkd" ] && [ -x "$bin/ptk" ] || { echo "litmus.sh: no ptkd and ptk in $bin: run swift build" >&2; exit 1; }
    common="--config /dev/null --dir $work/photos --state-dir $work/state"
    # shellcheck disable=SC2086
    "$bin/ptkd" $common --port 0 --listen 127.0.0.1 --no-mdns --localsend off --web on --web-port 0 2>"$work/ptkd.log" &
    ptkd_pid=$!
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/.*web interface on port \([0-9][0-9]*\).*/\1/p' "$work/ptkd.log" | head -n 1)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "litmus.sh: ptkd did not start:" >&2; cat "$work/ptkd.log" >&2; exit 1; }
    # shellcheck disable=SC2086
    json=$("$bin/ptk" $common app-password add litmus --access full --json 2>>"$work/ptk.log")
    user=$(printf '%s' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["user"])')
    password=$(printf '%s' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["password"])')
    url="https://127.0.0.1:$port/dav/"
else
    echo "Usage: scripts/litmus.sh [URL USER PASSWORD]" >&2
    exit 2
fi

# litmus writes debug.log and child.log into its working directory.
status=0
(cd "$work" && litmus -k "$url" "$user" "$password") >"$work/litmus.out" 2>&1 || status=$?
if [ -n "${LITMUS_KEEP:-}" ]; then
    mkdir -p "$LITMUS_KEEP"
    cp "$work/litmus.out" "$work"/*.log "$LITMUS_KEEP"/ 2>/dev/null || true
fi
echo "litmus $(litmus --version 2>/dev/null | sed -n 's/^litmus \([0-9.]*\).*/\1/p' | head -n 1) against $url"
# litmus redraws each test's line with carriage returns: one record per redraw, the last wins.
# Its reasons sometimes quote a name it has freed already: bytes that are not printable ASCII go.
LC_ALL=C tr '\r' '\n' <"$work/litmus.out" | LC_ALL=C tr -d '\000-\011\013-\037\177-\377' >"$work/litmus.txt"
awk '
    /^-> running `/ { suite = $3; gsub(/[`'"'"':]/, "", suite); order[++n] = suite; next }
    /^ *[0-9]+\. [A-Za-z0-9_]+\.+ *FAIL/ {
        line = $0; sub(/^ */, "", line)
        name = line; sub(/^[0-9]+\. */, "", name); sub(/\.\.+.*/, "", name)
        reason = line; sub(/^[^F]*FAIL */, "", reason); sub(/^\(/, "", reason); sub(/\)$/, "", reason)
        fails[suite] = fails[suite] "  FAIL " suite "/" name ": " reason "\n"
        next
    }
    /^<- summary for `/ {
        run = $0; sub(/.*of /, "", run); sub(/ tests run.*/, "", run)
        passed = $0; sub(/.*run: /, "", passed); sub(/ passed.*/, "", passed)
        failed = $0; sub(/.*passed, /, "", failed); sub(/ failed.*/, "", failed)
        runs[suite] = run; passes[suite] = passed; failures[suite] = failed
        next
    }
    /^-> [0-9]+ tests? (was|were) skipped/ { skips[suite] = $2 }
    END {
        for (i = 1; i <= n; i++) {
            s = order[i]
            if (s in runs) printf "%-9s %3d run %3d passed %3d failed %3d skipped\n", s, runs[s], passes[s], failures[s], skips[s] + 0
            else printf "%-9s did not run\n", s
            printf "%s", fails[s]
        }
        if (n == 0) print "no suite ran"
    }' "$work/litmus.txt"
# litmus exits nonzero when any test failed; only a suite that never reported counts here.
grep -q '^<- summary for `' "$work/litmus.txt" || exit 1
suites=$(grep -c '^-> running `' "$work/litmus.txt")
summaries=$(grep -c '^<- summary for `' "$work/litmus.txt")
[ "$suites" = "$summaries" ] || exit 1
: "$status"
exit 0
