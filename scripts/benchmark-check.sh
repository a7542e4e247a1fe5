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
output=$(mktemp)
trap 'rm -f "$output"' EXIT
swift package benchmark thresholds check --no-progress 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
set -e
# The tool exits non-zero for improvements as well as regressions (benchmarkThresholdImprovement):
# what decides is whether any figure is worse than its threshold.
if [ "$status" -eq 0 ]; then
    echo "benchmarks: allocation counts as stored"; echo "benchmarks: 1 passed, 0 failed"
elif grep -q "WORSE than the defined thresholds\|worse than threshold" "$output"; then
    echo "benchmarks: regression (exit $status)"; echo "benchmarks: 0 passed, 1 failed"; exit 1
elif grep -q "BETTER than the defined thresholds" "$output"; then
    echo "benchmarks: improvements only (store them with scripts/benchmark-check.sh update)"; echo "benchmarks: 1 passed, 0 failed"
else
    echo "benchmarks: the check failed (exit $status)"; echo "benchmarks: 0 passed, 1 failed"; exit 1
fi
