#!/usr/bin/env bash
# How reading a memory snapshot grows with its size: `oomlab-cli snapshot show --json` against
# Python's own pickle.load of the same file, at x1, x10 and x100, in three shapes
# (bench/make_snapshot.py): "deep", each event a 12-frame stack of its own (about 1 KB an
# event; 10,000 to 1,000,000 events, 1 GB), "real", each event a list of 150-450 frames shared
# as PyTorch 2.x shares them (about 1.1 KB an event; 10,000 to 1,000,000 events, 1.1 GB), and
# "shared", events naming shared stacks (about 50 bytes an event; 139,000 to 13,900,000
# events, 0.7 GB).
#
#   bench/snapshot_growth.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), SHAPES (default "deep real shared"), DEEP_EVENTS (the
# sizes of "deep" and "real") and SHARED_EVENTS. Wall time and peak resident memory of each whole process (GNU
# time), one run each; files already in SCRATCH_DIR are used again.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

printf '%6s %9s %8s | %24s | %24s | %10s\n' shape events MB "oomlab-cli s / peak MiB" \
    "pickle.load s / peak MiB" "time ratio"
for shape in ${SHAPES:-deep real shared}; do
    sizes=${DEEP_EVENTS:-10000 100000 1000000}
    [[ $shape == shared ]] && sizes=${SHARED_EVENTS:-139000 1390000 13900000}
    for events in $sizes; do
        file="$scratch/snapshot_${shape}_$events.pickle"
        [[ -f "$file" ]] || "$python" "$root/bench/make_snapshot.py" "$shape" "$events" "$file"
        read -r ours ours_mib <<<"$(measure "$cli" snapshot show "$file" --json)"
        read -r theirs theirs_mib <<<"$(measure "$python" -c \
            "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$file")"
        printf '%6s %9s %8.0f | %12.2f / %9s | %12.2f / %9s | %10.2f\n' "$shape" "$events" \
            "$(echo "$(stat -L -c %s "$file") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
            "$theirs_mib" "$(echo "$ours / $theirs" | bc -l)"
    done
done
