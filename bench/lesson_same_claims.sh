#!/usr/bin/env bash
# A lesson gives the same claims wherever it runs: every lesson (or the lesson files given)
# run by two builds of oomlab-cli, e.g. one on Debian's LibTorch 1.13 and one on PyTorch
# 2.11's, or one here and one on another machine. Each claim's verdict (shown or not) and what
# it claims must be the same; the figures measured are compared too and their differences
# listed (a few bytes of a temporary, the process's memory, differ between LibTorch versions).
#
#   bench/lesson_same_claims.sh CLI_A CLI_B [LESSON.json...]
#
# Each run writes its own database in a scratch folder (OOMLAB_BENCH_DIR, default
# build/bench-data). Exits 1 when any lesson's claims come out otherwise under the two.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=${OOMLAB_BENCH_DIR:-$root/build/bench-data}/lesson-claims
cli_a=$1
cli_b=$2
shift 2
lessons=("$@")
((${#lessons[@]})) || lessons=("$root"/resources/lessons/*.json)
rm -rf "$scratch"
mkdir -p "$scratch"
status=0
for lesson in "${lessons[@]}"; do
    name=$(basename "$lesson" .json)
    for side in a b; do
        cli=$cli_a
        [[ $side == b ]] && cli=$cli_b
        # Durations and the database's own path differ between two runs; nothing else may.
        "$cli" lesson run "$lesson" --db "$scratch/$name-$side.sqlite" 2>&1 |
            sed -E 's/ in [0-9.]+ s//; s/[0-9.]+ s\b/N s/g' >"$scratch/$name-$side.txt" || true
    done
    claims() {  # the verdict and the claim of each claim line, the figure between left out
        sed -nE 's/^  (shown|NOT shown): .*(\(claim: .*\))$/\1 \2/p' "$1"
    }
    diff -u "$scratch/$name-a.txt" "$scratch/$name-b.txt" >"$scratch/$name.diff" || true
    figures=$(grep -c '^[-+][^-+]' "$scratch/$name.diff" || true)
    if [[ "$(claims "$scratch/$name-a.txt")" == "$(claims "$scratch/$name-b.txt")" ]] &&
        [[ -n "$(claims "$scratch/$name-a.txt")" ]]; then
        printf '%-30s the same %s claim(s); %s line(s) of figures differ\n' "$name" \
            "$(claims "$scratch/$name-a.txt" | wc -l)" "$((figures / 2))"
    else
        printf '%-30s CLAIMS DIFFER: %s\n' "$name" "$scratch/$name.diff"
        status=1
    fi
done
exit $status
