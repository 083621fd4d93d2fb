#!/usr/bin/env bash
# A class's runs ending together: STUDENTS exports (default 60) sent at once to one MLflow
# server on SQLite with one worker, as `run --mlflow` sends each student's run when it ends.
# Measured, once with the busy server's answers not asked again (OOMLAB_TRACKER_RETRIES=0)
# and once as shipped: how many runs arrived, why the others did not, and the wall time.
# The students share one core (taskset -c 0), as a lab's laptops share nothing but the server.
#
#   bench/class_export.sh [SCRATCH_DIR]        (STUDENTS=60 by default)
#
# Needs scripts/tracker_env.sh's environment (installed if missing). One run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
students=${STUDENTS:-60}
env_dir=$("$root/scripts/tracker_env.sh")
work="$scratch/class-export"
rm -rf "$work" && mkdir -p "$work"
trap '[[ -z ${server:-} ]] || kill -- -$server 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM  # the server is stopped on these too
start_mlflow_server "$env_dir" "$work"

"$cli" run --db "$work/run.sqlite" --set train.max_steps=6 >/dev/null
for retries in 0 default; do
    out="$work/retries-$retries"
    mkdir -p "$out"
    started=$(date +%s%N)
    exports=()
    for i in $(seq "$students"); do
        # The same run in each student's database, under a uid of its own.
        "$python" -c 'import sqlite3, sys, uuid
copy = sqlite3.connect(sys.argv[2])
sqlite3.connect(sys.argv[1]).backup(copy)
with copy: copy.execute("UPDATE runs SET uid = ?", (uuid.uuid4().hex,))' \
            "$work/run.sqlite" "$out/$i.sqlite"
        (
            [[ $retries == default ]] || export OOMLAB_TRACKER_RETRIES=$retries
            taskset -c 0 "$cli" runs export 1 --db "$out/$i.sqlite" --to mlflow \
                --tracking-uri "$uri" --experiment "class $retries" >"$out/$i.txt" 2>&1 || true
        ) &
        exports+=($!)
    done
    wait "${exports[@]}"
    tenths=$((($(date +%s%N) - started) / 100000000))
    failed=$(grep -l '^error' "$out"/*.txt | wc -l || true)
    printf 'OOMLAB_TRACKER_RETRIES=%s: %d of %d runs arrived, in %d.%d s\n' "$retries" \
        $((students - failed)) "$students" $((tenths / 10)) $((tenths % 10))
    # Why the others did not: each reason once, with how many runs it stopped.
    grep -h '^error' "$out"/*.txt | sed -E 's/127\.0\.0\.1:[0-9]+/SERVER/; s/(.{150}).*/\1…/' |
        sort | uniq -c | sort -rn || true
done
