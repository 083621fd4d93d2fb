#!/usr/bin/env bash
# Short fuzz run of every target, seeded from the test fixtures.
#   tests/fuzz/run_smoke.sh BUILD_DIR [SECONDS]
set -euo pipefail
build="$1"
seconds="${2:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
declare -A seeds=(
    [glove]="$root/tests/data/glove"
    [dataset]="$root/tests/data/datasets"
    [config]="$root/tests/data/configs $root/resources/lessons"
    [store_replies]="$root/tests/fuzz/store_replies"
    [snapshot]="$root/tests/fuzz/snapshot $root/tests/data/wild/snapshots"
    [explain]="$root/tests/fuzz/explain $root/tests/data/wild/messages"
)
status=0
for target in glove dataset config store_replies snapshot explain; do
    corpus="$work/$target"
    mkdir -p "$corpus"
    for dir in ${seeds[$target]}; do
        [[ -d "$dir" ]] && find "$dir" -type f -size -1000k -exec cp -t "$corpus" {} + 2>/dev/null || true
    done
    echo "fuzz_$target: ${seconds}s from $(ls "$corpus" | wc -l) seeds"
    if ! "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 \
            -artifact_prefix="$work/" -print_final_stats=1 "$corpus" >"$work/$target.log" 2>&1; then
        echo "fuzz_$target FOUND A CRASH:"; tail -40 "$work/$target.log"; status=1
        mkdir -p "$build/fuzz-artifacts" && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
            "$build/fuzz-artifacts/" 2>/dev/null || true
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log" | tr '\n' ' '; echo
    fi
done
exit $status
