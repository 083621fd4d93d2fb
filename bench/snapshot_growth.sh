#!/usr/bin/env bash
# How reading a memory snapshot grows with its size: `oomlab-cli snapshot show --json` against
# Python's own pickle.load of the same file, at 10,000, 100,000 and 1,000,000 events (x1, x10,
# x100). Each event has a stack of 12 frames of its own (fresh dicts and strings, as a long
# recording that stores its frames per event writes them), so the file grows with the events:
# about 1.3 KB an event, 1.3 GB at a million.
#
#   bench/snapshot_growth.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), EVENTS (default "10000 100000 1000000"). Wall time
# and peak resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

generate() {  # events output
    "$python" - "$1" "$2" <<'PY'
import pickle, random, sys
count, path = int(sys.argv[1]), sys.argv[2]
random.seed(7)
files = ["/usr/lib/python3/site-packages/torch/nn/modules/linear.py",
         "/usr/lib/python3/site-packages/torch/nn/modules/module.py",
         "/home/user/project/model.py", "/home/user/project/train.py"]

def frames(stack):  # new objects each time: the pickler cannot share them
    return [{"name": "".join(["at::native::forward(at::Tensor const&, long) #", str(stack), "_", str(d)]),
             "filename": "".join([files[(stack + d) % 4], ""]), "line": 10 + d} for d in range(12)]

trace, alive, addr = [], [], 1 << 32
while len(trace) < count:
    if alive and random.random() < 0.45:
        a, s = alive.pop(random.randrange(len(alive)))
        trace.append({"action": "free_requested", "addr": a, "size": s, "stream": 0,
                      "frames": frames(random.randrange(40))})
        trace.append({"action": "free_completed", "addr": a, "size": s, "stream": 0,
                      "frames": []})
    else:
        s = random.choice([512, 4096, 1 << 20, 4 << 20])
        trace.append({"action": "alloc", "addr": addr, "size": s, "stream": 0,
                      "time_us": len(trace), "frames": frames(random.randrange(40))})
        alive.append((addr, s))
        addr += s
trace = trace[:count]
live = {}
for e in trace:
    if e["action"] == "alloc":
        live[e["addr"]] = e["size"]
    elif e["action"] == "free_completed":
        live.pop(e["addr"], None)
segments = [{"device": 0, "address": a, "total_size": s, "allocated_size": s, "stream": 0,
             "segment_type": "large", "frames": [],
             "blocks": [{"address": a, "size": s, "requested_size": s,
                         "state": "active_allocated", "frames": []}]} for a, s in live.items()]
with open(path, "wb") as out:
    pickle.dump({"segments": segments, "device_traces": [trace]}, out, protocol=4)
PY
}

printf '%9s %8s | %24s | %24s | %10s\n' events MB "oomlab-cli s / peak MiB" \
    "pickle.load s / peak MiB" "time ratio"
for events in ${EVENTS:-10000 100000 1000000}; do
    file="$scratch/snapshot_growth_$events.pickle"
    [[ -f "$file" ]] || generate "$events" "$file"
    read -r ours ours_mib <<<"$(measure "$cli" snapshot show "$file" --json)"
    read -r theirs theirs_mib <<<"$(measure "$python" -c \
        "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$file")"
    printf '%9s %8.0f | %12.2f / %9s | %12.2f / %9s | %10.2f\n' "$events" \
        "$(echo "$(stat -c %s "$file") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib" "$(echo "$ours / $theirs" | bc -l)"
done
