#!/usr/bin/env bash
# Drawing a long run: the workbench's `oomlab --export-plot` of a run's memory plot (read the
# run from its database, draw, write a PNG; the Compare page and the run plots read it the same
# way) as the run grows to 20,000, 200,000 and 2,000,000 metric rows (x1, x10, x100), beside
# Python's sqlite3 reading the same rows, the least a script that plots them does first.
#
#   bench/long_run_plot.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), GUI (default BUILD_DIR/app/oomlab), ROWS (default
# "20000 200000 2000000"). Wall time and peak resident memory of each whole process (GNU time),
# one run each, without a screen (QT_QPA_PLATFORM=offscreen).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
gui=${GUI:-$build_dir/app/oomlab}
export QT_QPA_PLATFORM=offscreen

printf '%9s | %26s | %26s\n' rows "oomlab --export-plot s / MiB" "python sqlite3 rows s / MiB"
for rows in ${ROWS:-20000 200000 2000000}; do
    db="$scratch/long_run_$rows.sqlite"
    [[ -f "$db" ]] || make_long_run "$rows" "$db"
    read -r ours ours_mib <<<"$(measure "$gui" --db "$db" --export-plot 1 --view memory \
        --out "$scratch/long_run.png" --force 2>/dev/null)"
    read -r theirs theirs_mib <<<"$(measure "$python" -c \
        "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('SELECT * FROM metrics').fetchall()" \
        "$db")"
    printf '%9s | %16.2f / %7s | %16.2f / %7s\n' "$rows" "$ours" "$ours_mib" "$theirs" \
        "$theirs_mib"
done
