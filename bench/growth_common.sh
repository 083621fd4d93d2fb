# Sourced by the growth benchmarks (source "$(dirname "$0")/growth_common.sh" "$@"): where the
# build and the scratch folder are, and one measurement.
#
# Environment: BUILD_DIR (default build), CLI (default BUILD_DIR/app/oomlab-cli),
# OOMLAB_BENCH_DIR (the scratch folder when none is given; default build/bench-data).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
scratch=${1:-${OOMLAB_BENCH_DIR:-$root/build/bench-data}}
cli=${CLI:-$build_dir/app/oomlab-cli}
python=/usr/bin/python3
mkdir -p "$scratch"

# Wall time and peak resident memory of one whole process (GNU time): "seconds peak_MiB".
# Its standard input is the caller's; its output is dropped. An exit status other than 0 is
# measured too (explain exits 3 for an out-of-memory message).
measure() {  # command...
    /usr/bin/time -f '%e %M' -o "$scratch/time.txt" "$@" >/dev/null || true
    awk '{printf "%.2f %.0f", $1, $2 / 1024}' "$scratch/time.txt"
}
