#!/usr/bin/env bash
# How reading export_memory_timeline's rows (prof.export_memory_timeline("x.raw.json"): [time
# in ns, action, bytes, category] per tensor made, versioned or freed) grows: `oomlab-cli
# snapshot show --json` against Python's json.load of the same file and the rows' running sum
# by category (what a user would otherwise do), at 25,000, 250,000 and 2,500,000 rows (x1, x10,
# x100: a real file of a small model's training steps held 23,578).
#
#   bench/timeline_rows_growth.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), ROWS (default "25000 250000 2500000"). Wall time and
# peak resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

generate() {  # rows output
    "$python" - "$1" "$2" <<'PY'
import json, random, sys
count, path = int(sys.argv[1]), sys.argv[2]
random.seed(11)
# Parameters there before the rows began, then steps of activations made, versioned into
# gradients or not, and freed; temporaries made and freed at once. Sizes repeat, as a model's do.
rows = [[-1, 1, (i % 7 + 1) << 16, 0] for i in range(min(300, count))]
alive, t = [], 1722000000000
while len(rows) < count:
    t += 1000
    if alive and random.random() < 0.45:
        size, category = alive.pop(random.randrange(len(alive)))
        if category == 4 and random.random() < 0.3:
            rows += [[t, 3, -size, 4], [t, 3, size, 5]]
            alive.append((size, 5))
        else:
            rows.append([t, 4, -size, category])
    else:
        size, category = random.choice([4096, 1 << 16, 1 << 20]), random.choice([3, 4, 4, 7])
        rows.append([t, 2, size, category])
        alive.append((size, category))
with open(path, "w") as out:
    json.dump(rows[:count], out)
PY
}

by_category='
import json, sys
running, peak, kinds = 0, 0, [0] * 8
for row in json.load(open(sys.argv[1])):
    running += row[2]
    kinds[row[3]] += row[2]
    peak = max(peak, running)
'

printf '%-14s %8s | %24s | %24s | %10s\n' rows MB "oomlab-cli s / peak MiB" \
    "Python s / peak MiB" "time ratio"
for rows in ${ROWS:-25000 250000 2500000}; do
    file="$scratch/timeline_rows_$rows.json"
    [[ -f "$file" ]] || generate "$rows" "$file"
    read -r ours ours_mib <<<"$(measure "$cli" snapshot show "$file" --json)"
    read -r theirs theirs_mib <<<"$(measure "$python" -c "$by_category" "$file")"
    printf '%-14s %8.1f | %12.2f / %9s | %12.2f / %9s | %10.2f\n' "$rows" \
        "$(echo "$(stat -c %s "$file") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib" "$(echo "$ours / $theirs" | bc -l)"
done
