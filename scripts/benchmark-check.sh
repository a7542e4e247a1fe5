#!/usr/bin/env bash
# Runs the micro-benchmarks with their CI metric (allocation counts, which do not depend on machine
# speed or load) and compares them with the thresholds stored in Benchmarks/Thresholds. Fails on a
# regression; improvements pass (update the thresholds to keep them).
#
#   scripts/benchmark-check.sh           check
#   scripts/benchmark-check.sh update    store the current figures as thresholds
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
export BENCHMARK_CI=1
if [ "${1:-check}" = update ]; then
    swift package --allow-writing-to-package-directory benchmark thresholds update --no-progress
    exit 0
fi
set +e
swift package benchmark thresholds check --no-progress
status=$?
set -e
case $status in
    0) echo "benchmarks: allocation counts as stored"; echo "benchmarks: 1 passed, 0 failed" ;;
    4) echo "benchmarks: improvements only (consider scripts/benchmark-check.sh update)"; echo "benchmarks: 1 passed, 0 failed" ;;
    *) echo "benchmarks: regression (exit $status)"; echo "benchmarks: 0 passed, 1 failed"; exit 1 ;;
esac
