#!/usr/bin/env bash
# GloVe loading benchmark: this project's cold parse, its cached reload, and gensim's
# KeyedVectors.load_word2vec_format on the same GloVe text file (400,000 x 100 by default).
#
#   bench/glove_load.sh [SCRATCH_DIR]
#
# SCRATCH_DIR (or $OOMLAB_BENCH_DIR; default build/bench-data) receives the generated file
# once. Environment: BUILD_DIR (default build; the bench tool is built there if missing),
# ROWS, DIM, THREADS (0: all cores), REPEAT (runs per measurement; the median and the fastest
# run are shown; default 3), GENSIM_REPEAT (default 1). Wall time covers the whole process;
# CPU time (user + system) and peak RSS come from /usr/bin/time. The goals are checked on
# `oomlab-cli glove info` ($BUILD_DIR/app/oomlab-cli or $CLI); bench/glove_load_bench.cpp (the
# engine's GloVe library alone, its cached load checking every vector's checksum as training
# does) is timed too.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
scratch=${1:-${OOMLAB_BENCH_DIR:-$root/build/bench-data}}
rows=${ROWS:-400000}
dim=${DIM:-100}
repeat=${REPEAT:-3}
threads=${THREADS:-0}
python=/usr/bin/python3  # the distribution's interpreter, where python3-gensim lives
bench=$build_dir/bench/oomlab-glove-bench

install_if_missing() {  # package, check command...
    local package=$1
    shift
    if "$@" >/dev/null 2>&1; then
        return
    fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "missing $package: run 'apt-get install -y $package' as root" >&2
        exit 1
    fi
    apt-get install -y "$package" >/dev/null
}

install_if_missing time test -x /usr/bin/time
install_if_missing python3-gensim "$python" -c 'import gensim'
if [[ ! -x $bench ]]; then
    cmake -S "$root" -B "$build_dir" -G Ninja -DOOMLAB_BUILD_BENCH=ON >/dev/null
    cmake --build "$build_dir" --target oomlab-glove-bench
fi

mkdir -p "$scratch"
file=$scratch/glove.synthetic.${rows}x${dim}.txt
if [[ ! -s $file ]]; then
    echo "generating $file"
    "$bench" synth --rows "$rows" --dim "$dim" --seed 1 --out "$file"
fi
cache=$file.oomlab-cache
cat "$file" >/dev/null  # every contender reads from the page cache

results=$(mktemp)
trap 'rm -f "$results" "$results.run"' EXIT

# measure LABEL COMMAND...: runs REPEAT times, records the median wall time and its peak RSS.
measure() {
    local label=$1
    shift
    local runs=()
    for ((i = 0; i < repeat; i++)); do
        local start=$EPOCHREALTIME
        /usr/bin/time -o "$results.run" -f '%M %U %S' "$@" >/dev/null
        local end=$EPOCHREALTIME
        runs+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f", e - s }') $(tail -1 "$results.run")")
    done
    # Fields per run: wall, peak RSS (KiB), user and system CPU seconds.
    printf '%s\n' "${runs[@]}" | sort -n | awk -v label="$label" -v n="$repeat" '
        NR == 1 { fastest = $1 }
        NR == int((n + 1) / 2) { print label "\t" $1 "\t" $2 "\t" fastest "\t" $3 + $4 }' \
        >>"$results"
}

rm -f "$cache"
measure "cold parse (no cache)" "$bench" load "$file" --no-cache --threads "$threads"
"$bench" load "$file" --threads "$threads" >/dev/null  # writes the cache
measure "cached reload" "$bench" load "$file" --threads "$threads"
reload_json=$("$bench" load "$file" --checksum)
gensim_repeat=${GENSIM_REPEAT:-1}
repeat_saved=$repeat
repeat=$gensim_repeat
measure "gensim load_word2vec_format" "$python" -c '
import sys
from gensim.models import KeyedVectors
vectors = KeyedVectors.load_word2vec_format(sys.argv[1], binary=False, no_header=True)
assert len(vectors.index_to_key) == int(sys.argv[2])
' "$file" "$rows"
repeat=$repeat_saved
# The same loads through oomlab-cli, as users run them (it does not load LibTorch for this).
cli=${CLI:-$build_dir/app/oomlab-cli}
if [[ -x $cli ]] && "$cli" glove info --help >/dev/null 2>&1; then
    measure "oomlab-cli glove info --no-cache" "$cli" glove info "$file" --json --no-cache
    measure "oomlab-cli glove info (cached)" "$cli" glove info "$file" --json
fi

echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $file ($(du -m "$file" | cut -f1) MiB text, $rows x $dim)"
echo "cached reload in-process (then every value read once): $reload_json"
echo
awk -F'\t' -v rows="$rows" -v dim="$dim" '
    { label[NR] = $1; wall[NR] = $2; rss[NR] = $3; fastest[NR] = $4; cpu[NR] = $5 }
    END {
        matrix = rows * dim * 4
        budget = (1.5 * matrix + 64 * 1048576) / 1024
        printf "%-34s %9s %9s %9s %15s\n", "", "wall (s)", "fastest", "CPU (s)", "peak RSS (MiB)"
        for (i = 1; i <= NR; i++)
            printf "%-34s %9.3f %9.3f %9.2f %15.1f\n", label[i], wall[i], fastest[i], cpu[i],
                   rss[i] / 1024
        printf "\n"
        # The goals are measured through the command users run (rows 4 and 5); the bench tool
        # alone (rows 1 and 2, whose reload also checks the checksum of every vector) for reference.
        cli = NR >= 5
        cold = cli ? 4 : 1
        cached = cli ? 5 : 2
        printf "through %s:\n", cli ? "oomlab-cli glove info" : "the bench tool (no CLI built)"
        printf "gensim / cold parse:       %6.1fx   (target >= 25x)\n", wall[3] / wall[cold]
        printf "cached reload / cold:      %6.1f%%   (target < 5%%)\n", 100 * wall[cached] / wall[cold]
        printf "cold peak RSS / budget:    %6.1f%%   (budget 1.5 x %.0f MiB matrix + 64 MiB = %.0f MiB)\n",
               100 * rss[cold] / budget, matrix / 1048576, budget / 1024
    }' "$results"
