#!/usr/bin/env bash
# How `oomlab-cli explain` grows with the log piped into it: a training log of progress lines
# with an out-of-memory traceback at its end (python train.py 2>&1 | oomlab-cli explain), at
# 1.7 MB, 17 MB and 170 MB (x1, x10, x100), beside grep finding the same message's line, the
# least a user does by hand. Both read the log on standard input.
#
#   bench/explain_growth.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), LINES (default "20000 200000 2000000"). Wall time and
# peak resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
message="$root/tests/fuzz/explain/cuda_2x.txt"

generate() {  # lines output
    "$python" - "$1" "$2" "$message" <<'PY'
import sys
lines, path, message = int(sys.argv[1]), sys.argv[2], open(sys.argv[3]).read()
with open(path, "w") as out:
    for step in range(lines):
        out.write(f"epoch 3 step {step:>8}  loss {2.0 / (1 + step / 1000):.4f}  "
                  f"lr 3.0e-04  allocated 8.70 GiB  it/s 12.4\n")
    out.write(message)
PY
}

printf '%9s %8s | %24s | %24s\n' lines MB "oomlab-cli explain s / MiB" "grep -n s / MiB"
for lines in ${LINES:-20000 200000 2000000}; do
    log="$scratch/explain_growth_$lines.log"
    [[ -f "$log" ]] || generate "$lines" "$log"
    read -r ours ours_mib <<<"$(measure "$cli" explain <"$log")"
    read -r theirs theirs_mib <<<"$(measure grep -n "out of memory" <"$log")"
    printf '%9s %8.1f | %14.2f / %7s | %14.2f / %7s\n' "$lines" \
        "$(echo "$(stat -c %s "$log") / 1000000" | bc -l)" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib"
done
