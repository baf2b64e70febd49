#!/usr/bin/env bash
# Runs a libFuzzer target for a number of seconds, then merges what it found that adds
# coverage into the corpus kept in the repository (fuzz/corpus/<target>).
# Usage: fuzz/run.sh frames|png [SECONDS]     (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/run.sh frames|png [SECONDS]}
seconds=${2:-60}
case "$target" in
    frames) product=FuzzFrames; maxlen=16384 ;;
    png) product=FuzzPNG; maxlen=16384 ;;
    *) echo "unknown target '$target' (frames or png)" >&2; exit 64 ;;
esac
# SwiftPM passes -sanitize=fuzzer to the executable's compile only, so the library modules
# (the code under test) would get no coverage counters and libFuzzer would fuzz blind
# ("corp: 1/1b"). -Xfrontend -sanitize=fuzzer instruments every module.
swift build -c release --scratch-path .build/fuzz --product "$product" \
    --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library -Xswiftc -DFUZZING \
    -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer \
    2>&1 | grep -v 'Cannot export local symbol' | tail -1
binary=.build/fuzz/release/$product
work=$(mktemp -d /tmp/ptk-fuzz-$target.XXXXXX)
mkdir -p "$work/corpus" "fuzz/findings/$target"
cp fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
echo "fuzzing $product for $seconds s (corpus: $(ls "$work/corpus" | wc -l) inputs)"
status=0
"$binary" -max_total_time="$seconds" -max_len=$maxlen -print_final_stats=1 -timeout=10 \
    -artifact_prefix="fuzz/findings/$target/" "$work/corpus" 2>&1 | tee "$work/log" | grep -E '^#[0-9]+.*(DONE)|stat::|ERROR|SUMMARY|INITED' || true
grep -q 'ERROR: libFuzzer\|ERROR: AddressSanitizer\|Fatal error\|SUMMARY: ' "$work/log" && status=1
# Keep the corpus small: only inputs that add coverage.
mkdir -p "$work/merged"
"$binary" -merge=1 -max_len=$maxlen "$work/merged" fuzz/corpus/"$target" "$work/corpus" > "$work/merge.log" 2>&1 || true
if [ "$(ls "$work/merged" | wc -l)" -gt 0 ]; then
    rm -f fuzz/corpus/"$target"/*
    cp "$work/merged"/* fuzz/corpus/"$target"/
fi
echo "corpus now $(ls fuzz/corpus/$target | wc -l) inputs, $(du -sh fuzz/corpus/$target | cut -f1)"
rm -rf "$work"
exit $status
