#!/usr/bin/env bash
# Runs libFuzzer targets, each for a number of seconds, then merges what each found that adds
# coverage into the corpus kept in the repository (fuzz/corpus/<target>). Prints, per target,
# the executions, the corpus before and after, and what it found (kept in fuzz/findings/).
# Usage: fuzz/run.sh [TARGET...] [-t SECONDS]     (default: every target, 60 s each)
# Targets: frames png jpeg heif thumbnail http localsend-json package trust config escape webdav video
set -euo pipefail
cd "$(dirname "$0")/.."
all="frames png jpeg heif thumbnail http localsend-json package trust config escape webdav video"
seconds=60
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        -t) seconds=$2; shift 2 ;;
        -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
        *) case " $all " in *" $1 "*) targets+=("$1"); shift ;; *) echo "unknown target '$1' ($all)" >&2; exit 64 ;; esac ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<< "$all"
# SwiftPM passes -sanitize=fuzzer to the executable's compile only, so the library modules
# (the code under test) would get no coverage counters and libFuzzer would fuzz blind
# ("corp: 1/1b"). -Xfrontend -sanitize=fuzzer instruments every module; the C targets
# (CPNGThumb: libpng and libjpeg-turbo's callers) get ASan and UBSan.
swift build -c release --scratch-path .build/fuzz --product Fuzz \
    --sanitize=fuzzer --sanitize=address -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined \
    -Xswiftc -parse-as-library -Xswiftc -DFUZZING \
    -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer \
    2>&1 | grep -v 'Cannot export local symbol' | tail -1
binary=.build/fuzz/release/Fuzz
status=0
for target in "${targets[@]}"; do
    maxlen=16384
    [ "$target" = thumbnail ] && maxlen=65536
    work=$(mktemp -d /tmp/ptk-fuzz-$target.XXXXXX)
    mkdir -p "$work/corpus" "fuzz/findings/$target" "fuzz/corpus/$target"
    cp fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
    before=$(ls "$work/corpus" | wc -l)
    start=$(date +%s)
    PTK_FUZZ_TARGET=$target "$binary" -max_total_time="$seconds" -max_len=$maxlen -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="fuzz/findings/$target/" "$work/corpus" > "$work/log" 2>&1 || true
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    elapsed=$(( $(date +%s) - start ))
    found=""
    if grep -q 'ERROR: libFuzzer\|ERROR: AddressSanitizer\|Fatal error\|SUMMARY: \|runtime error:' "$work/log"; then
        found="FOUND: $(grep -m1 -E 'ERROR:|Fatal error|runtime error:' "$work/log"); log $work/log"
        status=1
    fi
    # Keep the corpus small: only inputs that add coverage.
    mkdir -p "$work/merged"
    PTK_FUZZ_TARGET=$target "$binary" -merge=1 -max_len=$maxlen "$work/merged" fuzz/corpus/"$target" "$work/corpus" > "$work/merge.log" 2>&1 || true
    if [ "$(ls "$work/merged" | wc -l)" -gt 0 ]; then
        rm -f fuzz/corpus/"$target"/*
        cp "$work/merged"/* fuzz/corpus/"$target"/
    fi
    echo "$target: ${runs:-?} executions in ${elapsed} s; corpus $before -> $(ls fuzz/corpus/$target | wc -l) inputs ($(du -sh fuzz/corpus/$target | cut -f1))${found:+; $found}"
    [ -n "$found" ] || rm -rf "$work"
done
exit $status
