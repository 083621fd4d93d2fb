#!/usr/bin/env bash
# `oomlab-cli snapshot whatif` (read the snapshot, follow its trace through the allocator's
# model, replay it as recorded and with expandable segments) as the trace grows: the H200's
# own trace (bench/results/gpu-2026-11-26/snapshots/train-default.pickle.gz, 67,600 events)
# repeated 1, 10 and 100 times end to end (each copy's addresses shifted past the last), beside
# Python's pickle.load of the same file, the least any Python tool that reads it does first.
#
#   bench/allocator_replay.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), COPIES (default "1 10 100"). Wall time and peak
# resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
source="$root/bench/results/gpu-2026-11-26/snapshots/train-default.pickle.gz"

tile() {  # copies output
    "$python" - "$source" "$1" "$2" <<'PY'
import gzip, pickle, sys
source, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
snapshot = pickle.load(gzip.open(source))
trace = snapshot["device_traces"][0]
span = max(e["addr"] + e["size"] for e in trace) - min(e["addr"] for e in trace) + (1 << 30)
tiled = []
for copy in range(copies):
    shift = copy * span
    tiled.extend(dict(e, addr=e["addr"] + shift) for e in trace)
# The segments at the end: the last copy's.
shift = (copies - 1) * span
for segment in snapshot["segments"]:
    segment["address"] += shift
    for block in segment["blocks"]:
        block["address"] += shift
snapshot["device_traces"] = [tiled]
with open(out, "wb") as stream:
    pickle.dump(snapshot, stream, protocol=4)
PY
}

printf '%7s %10s %8s | %22s | %22s | %6s\n' copies events MB "whatif s / peak MiB" \
    "pickle.load s / MiB" "ratio"
for copies in ${COPIES:-1 10 100}; do
    file="$scratch/h200_trace_x$copies.pickle"
    [[ -f "$file" ]] || tile "$copies" "$file"
    events=$((67600 * copies))
    read -r ours ours_mib <<<"$(measure "$cli" snapshot whatif "$file" \
        --alloc-conf expandable_segments:True --json)"
    read -r theirs theirs_mib <<<"$(measure "$python" -c \
        "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$file")"
    printf '%7s %10s %8.0f | %10.2f / %9s | %10.2f / %9s | %6.2f\n' "$copies" "$events" \
        "$(echo "$(stat -c %s "$file") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib" "$(echo "$theirs / $ours" | bc -l)"
done
