#!/usr/bin/env bash
# Fuzzes the WebSocket frame parser/connection and the upgrade parsers with libFuzzer for a bounded
# time each (default 60 s), starting from the corpus in Fuzz/Corpus. Fails on any crash, leak or
# timeout; the crashing input is kept under .build/fuzz/ to become a unit test.
#
#   scripts/fuzz.sh [seconds per target]
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds=${1:-60}
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    --product FuzzFrames
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    --product FuzzHandshake
work=../.build/fuzz
mkdir -p "$work"
for target in frames handshake; do
    binary=.build/release/Fuzz$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}
    corpus="$work/corpus-$target"
    rm -rf "$corpus"
    cp -r "Corpus/$target" "$corpus"
    echo "fuzzing $target for $seconds s"
    "$binary" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$work/$target-" "$corpus" 2>&1 | tail -n 12
done
echo "fuzz: 2 passed, 0 failed"
