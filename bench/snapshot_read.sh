#!/usr/bin/env bash
# Reading a CUDA memory snapshot: `oomlab-cli snapshot show` against Python's own
# pickle.load of the same file (what PyTorch's memory_viz and a user's script start with),
# on a generated snapshot of EVENTS events (default 10,000; each allocation with a Python stack
# of 12 frames, shared as PyTorch's pickles share them: bench/make_snapshot.py shared) and on
# the real GPT-2 snapshot of the shared data when it is there.
#
#   bench/snapshot_read.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), EVENTS, REPEAT (runs per measurement; the median is
# shown; default 5). Wall time of the whole process, both sides.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
scratch=${1:-${OOMLAB_BENCH_DIR:-$root/build/bench-data}}
events=${EVENTS:-10000}
repeat=${REPEAT:-5}
python=/usr/bin/python3
cli=${CLI:-$build_dir/app/oomlab-cli}
mkdir -p "$scratch"
generated="$scratch/snapshot_${events}_events.pickle"

"$python" "$root/bench/make_snapshot.py" shared "$events" "$generated"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # command...
    for _ in $(seq "$repeat"); do
        local start end
        start=$(date +%s.%N)
        "$@" >/dev/null
        end=$(date +%s.%N)
        echo "$end - $start" | bc
    done | median
}

files=("$generated")
shared="$root/../shared/data/snapshots/gpt2_generate_2648MiB.pickle"
[[ -f "$shared" ]] && files+=("$shared")
printf '%-40s %10s %12s %14s %8s\n' file bytes "oomlab (s)" "pickle.load (s)" ratio
for file in "${files[@]}"; do
    ours=$(measure "$cli" snapshot show "$file" --json)
    theirs=$(measure "$python" -c "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$file")
    printf '%-40s %10s %12.3f %14.3f %8.2f\n' "$(basename "$file")" "$(stat -c %s "$file")" \
        "$ours" "$theirs" "$(echo "$theirs / $ours" | bc -l)"
done
