#!/usr/bin/env bash
# How reading a profiler's Chrome trace (torch.profiler with profile_memory=True, then
# export_chrome_trace) grows: `oomlab-cli snapshot show --json` against Python's json.load of
# the same file, at 10,000, 100,000 and 1,000,000 memory events (x1, x10, x100; each inside an
# op and a Python frame, as a real trace has them, about 250 bytes an event; every 20th in the
# CPU's attention kernel, every 100th starting an optimizer's step), and a trace whose 100,000
# spans nest inside one another.
#
#   bench/profiler_trace_growth.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), EVENTS (default "10000 100000 1000000"). Wall time
# and peak resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

generate() {  # events nested output
    "$python" - "$1" "$2" "$3" <<'PY'
import json, random, sys
count, nested, path = int(sys.argv[1]), sys.argv[2] == "nested", sys.argv[3]
random.seed(7)
events, alive, total, ts = [], [], 0, 0
def span(name, cat, start, dur):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": start, "dur": dur}
if nested:  # every span inside the one before: a stack 100,000 deep
    depth = 100000
    events += [span(f"train.py({d}): level", "python_function", d, 4 * depth - 2 * d)
               for d in range(depth)]
    ts = depth
for n in range(count):
    ts += 10
    if not nested:
        events.append(span(f"model.py({n % 50}): forward", "python_function", ts, 8))
        # Every 20th in the CPU's attention kernel, and every 100th starts an optimizer's step
        # of 20 events: the stages and what the GPU estimate makes of both.
        op = "aten::_scaled_dot_product_attention_math" if n % 20 == 0 else "aten::linear"
        events.append(span(op, "cpu_op", ts + 1, 6))
        if n % 100 == 0:
            events.append(span("Optimizer.step#Adam.step", "user_annotation", ts, 200))
    if alive and random.random() < 0.45:
        address, size = alive.pop(random.randrange(len(alive)))
        total -= size
        size = -size
    else:
        size = random.choice([512, 4096, 1 << 20])
        address = (1 << 32) + n * (1 << 21)
        alive.append((address, size))
        total += size
    events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                   "tid": 1, "ts": ts + 2, "s": "t",
                   "args": {"Addr": address, "Bytes": size, "Total Allocated": total,
                            "Total Reserved": total + (2 << 20), "Device Id": -1,
                            "Device Type": 0}})
with open(path, "w") as out:
    json.dump({"schemaVersion": 1, "traceEvents": events}, out)
PY
}

row() {  # label file
    read -r ours ours_mib <<<"$(measure "$cli" snapshot show "$2" --json)"
    read -r theirs theirs_mib <<<"$(measure "$python" -c \
        "import json,sys; json.load(open(sys.argv[1]))" "$2")"
    printf '%-22s %8.0f | %12.2f / %9s | %12.2f / %9s | %10.2f\n' "$1" \
        "$(echo "$(stat -c %s "$2") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib" "$(echo "$ours / $theirs" | bc -l)"
}

printf '%-22s %8s | %24s | %24s | %10s\n' trace MB "oomlab-cli s / peak MiB" \
    "json.load s / peak MiB" "time ratio"
for events in ${EVENTS:-10000 100000 1000000}; do
    file="$scratch/profiler_trace_$events.json"
    [[ -f "$file" ]] || generate "$events" flat "$file"
    row "$events memory events" "$file"
done
file="$scratch/profiler_trace_nested.json"
[[ -f "$file" ]] || generate 10000 nested "$file"
row "100,000 nested spans" "$file"
