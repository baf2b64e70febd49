#!/usr/bin/env bash
# Runs every test (the arguments go to `swift test`), keeping the whole log in .build/test.log,
# and when a test fails, prints its issues again last: a CI log shown only by its tail then
# still says which test failed and why.
set -uo pipefail
cd "$(dirname "$0")/.."
log=.build/test.log
mkdir -p .build
"${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
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
