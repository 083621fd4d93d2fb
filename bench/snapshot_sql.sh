#!/usr/bin/env bash
# `oomlab-cli snapshot sql FILE --out DB` (the snapshot as SQLite tables) against reading the
# same file alone (`snapshot show --json`), and one query on the database it wrote, at x1, x10
# and x100 events of the "shared" shape of bench/make_snapshot.py (139,000 to 13,900,000
# events; the x100 file is 0.7 GB).
#
#   bench/snapshot_sql.sh [SCRATCH_DIR]
#
# Environment: BUILD_DIR (default build), EVENTS (the sizes). Wall time and peak resident memory
# of each whole process (GNU time), one run each; files already in SCRATCH_DIR are used again.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"

query="SELECT line, sum(size), count(*) FROM at_peak GROUP BY line ORDER BY 2 DESC LIMIT 5"
printf '%9s %8s | %22s | %22s | %9s | %22s\n' events MB "show s / peak MiB" \
    "sql --out s / peak MiB" "DB MB" "query s / peak MiB"
for events in ${EVENTS:-139000 1390000 13900000}; do
    file="$scratch/snapshot_shared_$events.pickle"
    db="$scratch/snapshot_shared_$events.db"
    [[ -f "$file" ]] || "$python" "$root/bench/make_snapshot.py" shared "$events" "$file"
    rm -f "$db"
    read -r shown shown_mib <<<"$(measure "$cli" snapshot show "$file" --json)"
    read -r written written_mib <<<"$(measure "$cli" snapshot sql "$file" --out "$db" 2>/dev/null)"
    read -r asked asked_mib <<<"$(measure "$cli" snapshot sql "$db" "$query")"
    printf '%9s %8.0f | %10.2f / %9s | %10.2f / %9s | %9.0f | %10.2f / %9s\n' "$events" \
        "$(echo "$(stat -L -c %s "$file") / 1000000" | bc -l)" "$shown" "$shown_mib" \
        "$written" "$written_mib" "$(echo "$(stat -L -c %s "$db") / 1000000" | bc -l)" \
        "$asked" "$asked_mib"
done
