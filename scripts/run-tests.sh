#!/usr/bin/env bash
# Runs every test (the arguments go to `swift test`), keeping the whole log in .build/test.log,
# and when a test fails, prints its issues again last: a CI log shown only by its tail then
# still says which test failed and why. Without a --filter of the caller's, the suites tagged
# .alone (gigabytes through TLS and the disk within a time bound, which a loaded machine does
# not meet) run after all the others, by themselves.
set -uo pipefail
cd "$(dirname "$0")/.."
log=.build/test.log
mkdir -p .build
if printf '%s\n' "$@" | grep -q -- '^--filter'; then
    "${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
else
    alone=$(scripts/tests-tagged.py --filter alone) || exit 1
    "${SWIFT:-swift}" test "$@" --skip "$alone" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    echo "=== the tests tagged alone, by themselves ===" | tee -a "$log"
    "${SWIFT:-swift}" test "$@" --filter "$alone" 2>&1 | tee -a "$log"
    alone_status=${PIPESTATUS[0]}
    [ "$status" = 0 ] && status=$alone_status
fi
if [ "$status" != 0 ]; then
    echo
    echo "=== the tests' issues again (the whole log: $log) ==="
    # Each issue with at most 12 lines of what it said, then each failed test and suite.
    awk '/recorded an issue/ { print; n = 12; next }
         /^✘ (Test|Suite)/ { print; n = 0; next }
         /^(✔|◇|✘)/ { n = 0 }
         n > 0 { print; n-- }' "$log" | cut -c1-400 | tail -n 200
fi
exit "$status"
