#!/usr/bin/env bash
# On a GPU, with Python's PyTorch only (no build of OOM Lab needed): what the GPU estimate of a
# CPU run models next, recorded there: the kernels' own allocations over grids of shapes
# (probe_kernels.py) and every script of cpu_estimate.py trained on the device, its caching
# allocator's figures and its allocation history (C++ stacks too) kept beside it. The CPU's
# side of the comparison is made without a GPU (cpu_estimate.py cpu, compare).
#
#   bench/gpu/record_kernel_data.sh OUT_DIR [--device cuda|cpu] [--python PY] [--deadline S]
#
# --device cpu rehearses it: the same code paths on the CPU, no history, a few cases per grid.
set -euo pipefail
out="${1:?usage: $0 OUT_DIR [--device cuda|cpu] [--python PY] [--deadline SECONDS]}"
shift
device=cuda python=python3 deadline=150
while (($#)); do
    case "$1" in
        --device) device="$2"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        --deadline) deadline="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
limit=()
[[ "$device" == cpu ]] && limit=(--limit 3)
"$python" "$here/probe_kernels.py" "$out/probe-kernels.json" --deadline "$deadline" \
    --device "$device" "${limit[@]}"
shapes=$("$python" -c "import sys; sys.path.insert(0, '$here'); import cpu_estimate; print(' '.join(cpu_estimate.SHAPES))")
status=0
for shape in $shapes; do
    start=$SECONDS
    if timeout 120 "$python" "$here/cpu_estimate.py" run "$shape" --device "$device" \
            --stats "$out/$device-$shape-stats.json" --snapshot "$out/$device-$shape.pickle" \
            > "$out/$device-$shape.log" 2>&1; then
        echo "$shape: trained on $device in $((SECONDS - start)) s"
    else
        echo "$shape: failed (exit $?), see $device-$shape.log"; status=1
    fi
done
exit "$status"
