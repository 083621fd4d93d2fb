#!/usr/bin/env bash
# Reading a CUDA memory snapshot: `oomlab-cli snapshot show` against Python's own
# pickle.load of the same file (what PyTorch's memory_viz and a user's script start with),
# on a generated snapshot of EVENTS events (default 10,000; each with a Python stack of 12
# frames, shared as PyTorch's pickles share them) and on the real GPT-2 snapshot of the
# shared data when it is there.
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

"$python" - "$generated" "$events" <<'PY'
import pickle, random, sys
path, count = sys.argv[1], int(sys.argv[2])
random.seed(7)
stacks = [[{"name": f"fn{i}_{d}", "filename": ("/site-packages/torch/nn/modules/linear.py"
           if d < 4 else f"/home/user/train_{i}.py"), "line": 10 + d} for d in range(12)]
          for i in range(40)]
trace, alive, addr = [], [], 1 << 32
for n in range(count):
    if alive and random.random() < 0.45:
        a, s = alive.pop(random.randrange(len(alive)))
        trace.append({"action": "free_requested", "addr": a, "size": s, "stream": 0, "frames": []})
        trace.append({"action": "free_completed", "addr": a, "size": s, "stream": 0, "frames": []})
    else:
        s = random.choice([512, 4096, 1 << 20, 4 << 20])
        trace.append({"action": "alloc", "addr": addr, "size": s, "stream": 0, "time_us": n,
                      "frames": random.choice(stacks)})
        alive.append((addr, s)); addr += s
trace = trace[:count]
live = {}
for e in trace:
    if e["action"] == "alloc": live[e["addr"]] = e["size"]
    elif e["action"] == "free_completed": live.pop(e["addr"], None)
total = sum(live.values())
segment = {"device": 0, "address": 1 << 32, "total_size": total, "allocated_size": total,
           "segment_type": "large", "frames": [],
           "blocks": [{"address": a, "size": s, "requested_size": s, "state": "active_allocated",
                       "frames": []} for a, s in live.items()]}
with open(path, "wb") as out:
    pickle.dump({"segments": [segment], "device_traces": [trace]}, out, protocol=4)
PY

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
