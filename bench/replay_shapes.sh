#!/usr/bin/env bash
# The allocator's model on the traces that made its replays quadratic, at 1x, 10x and 100x:
#   growing  allocations of 12 MiB never freed, each a new peak (one OOM event half-way);
#   ooms     one out-of-memory event after every allocation, the cache full of small blocks;
#   streams  every allocation on a stream of its own, in an expandable segment of its own.
# `snapshot whatif` (as recorded and with expandable segments) and `snapshot show` beside
# Python's pickle.load of the same file, the least a Python tool that reads it does first.
#
#   bench/replay_shapes.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), SIZES (default "16000 160000 1600000" requests),
# SHAPES (default "growing ooms streams"). Wall time and peak resident memory of each whole
# process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

generate() {  # shape requests output
    "$python" - "$1" "$2" "$3" <<'PY'
import pickle, sys
shape, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MiB = 1 << 20

def event(action, address, size, stream=0):
    return {"action": action, "addr": address, "size": size, "stream": stream, "frames": []}

trace = []
for i in range(count):
    if shape == "growing":
        address = (1 << 40) + i * 14 * MiB
        trace += [event("segment_alloc", address, 12 * MiB), event("alloc", address, 12 * MiB)]
        if i == count // 2:
            trace.append(event("oom", 0, 40 * MiB))
    elif shape == "ooms":
        address = (1 << 41) + i * 4 * MiB
        trace += [event("segment_alloc", address, 2 * MiB), event("alloc", address, 4096),
                  event("oom", 0, 40 * MiB)]
    else:
        address = (1 << 40) + i * (1 << 32)
        trace += [event("segment_map", address, 20 * MiB, i + 1),
                  event("alloc", address, 4 * MiB, i + 1)]
with open(path, "wb") as out:
    pickle.dump({"segments": [], "device_traces": [trace]}, out, protocol=4)
PY
}

printf '%-8s %8s %6s | %14s | %14s | %14s | %14s\n' shape requests MB "whatif s / MiB" \
    "expandable" "show" "pickle.load"
for shape in ${SHAPES:-growing ooms streams}; do
    for requests in ${SIZES:-16000 160000 1600000}; do
        file="$scratch/replay_${shape}_$requests.pickle"
        [[ -f "$file" ]] || generate "$shape" "$requests" "$file"
        read -r whatif whatif_mib <<<"$(measure "$cli" snapshot whatif "$file" --json)"
        read -r expandable expandable_mib <<<"$(measure "$cli" snapshot whatif "$file" \
            --alloc-conf expandable_segments:True --json)"
        read -r show show_mib <<<"$(measure "$cli" snapshot show "$file" --json)"
        read -r theirs theirs_mib <<<"$(measure "$python" -c \
            "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$file")"
        printf '%-8s %8s %6.0f | %6.2f / %5s | %6.2f / %5s | %6.2f / %5s | %6.2f / %5s\n' \
            "$shape" "$requests" "$(echo "$(stat -c %s "$file") / 1000000" | bc -l)" \
            "$whatif" "$whatif_mib" "$expandable" "$expandable_mib" "$show" "$show_mib" \
            "$theirs" "$theirs_mib"
    done
done
