#!/usr/bin/env bash
# A class on one MLflow server: 30 students train at once on their "machines" (processes with
# their own databases and login names), each run sent as it ends; the lecturer reads them back
# with `runs import --from mlflow` (what the workbench's Class window does on each refresh).
# Measured: while they train, how far behind each student's last step the class's live view is
# (`runs class`, what the Class window plots, read every second); how long after a student's run
# ends it is in the lecturer's database (polling every POLL_S seconds), and the import's time and peak memory at 30, 300 and 3,000 runs (copies of
# the class's runs under new uids, sent with `runs export --to mlflow`), beside what a user
# would otherwise write: MLflow's own client reading the same runs (search_runs, then each
# series' get_metric_history).
#
#   bench/class_import.sh [SCRATCH_DIR]        (SIZES="30 300 3000", POLL_S=2 by default;
#                                               CLIENT_MOST=N: MlflowClient's read only up to
#                                               N runs, as it takes 15 minutes at 3,000)
#
# Needs scripts/tracker_env.sh's environment (installed if missing). One run each; GNU time.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
sizes=${SIZES:-30 300 3000}
client_most=${CLIENT_MOST:-1000000}
poll_s=${POLL_S:-2}
env_dir=$("$root/scripts/tracker_env.sh")
tracker_python="$env_dir/bin/python"
work="$scratch/class"
rm -rf "$work" && mkdir -p "$work/students"
poller=
watcher=
trap '[[ -z ${server:-} ]] || kill -- -$server 2>/dev/null || true; [[ -n $poller ]] && kill $poller 2>/dev/null; [[ -n $watcher ]] && kill $watcher 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM  # the server is stopped on these too
start_mlflow_server "$env_dir" "$work"

now() { date +%s.%N; }
lecturer="$work/lecturer.sqlite"
# The lecturer's refresh: an import every POLL_S seconds, each run's first sight written down.
(
    while true; do
        "$cli" runs import --from mlflow --tracking-uri "$uri" --db "$lecturer" --json \
            2>/dev/null | "$python" -c '
import json, sys, time
for run in json.loads(sys.stdin.read() or "{}").get("imported", []):
    print(run, time.time())' >>"$work/seen.txt" || true
        sleep "$poll_s"
    done
) &
poller=$!
# The live view: every second, each running run's student and how old its latest value is.
(
    while true; do
        "$cli" runs class --tracking-uri "$uri" --json 2>/dev/null | "$python" -c '
import json, sys, time
read = json.loads(sys.stdin.read() or "{}")
now = time.time() * 1000  # once the class was read: a value logged meanwhile is no older
for run in read.get("runs", []):
    if run["status"] == "running" and run["last_ms"] > 0:
        print(run["student"], now - run["last_ms"])' >>"$work/behind.txt" || true
        sleep 1
    done
) &
watcher=$!

# The class: 30 students at once, each some seconds of training, sent while it trains.
students=()
for i in $(seq -w 1 30); do
    (
        LOGNAME="student-$i" "$cli" run --db "$work/students/$i.sqlite" --mlflow "$uri" \
            --name "batch $((16 + 10#$i))" --set train.max_steps=150 \
            --set train.batch_size=$((16 + 10#$i)) >/dev/null 2>&1 || true
        echo "$i $(now)" >>"$work/ended.txt"
    ) &
    students+=($!)
done
wait "${students[@]}"
while (($(wc -l <"$work/seen.txt" 2>/dev/null || echo 0) < 30)); do sleep 1; done
kill $poller $watcher && poller= && watcher=
"$python" - "$work" "$lecturer" "$poll_s" <<'PY'
import sqlite3, statistics, sys
work, lecturer, poll_s = sys.argv[1:4]
behind = [(l.split()[0], float(l.split()[1]) / 1000) for l in open(f"{work}/behind.txt")]
ages = sorted(age for _, age in behind)
print(f"30 students at once, `runs class` every second while they trained: "
      f"{len(set(s for s, _ in behind))} seen running; their latest step was "
      f"{ages[0]:.1f}-{ages[-1]:.1f} s old (median {statistics.median(ages):.1f} s, "
      f"95th percentile {ages[int(len(ages) * 0.95)]:.1f} s) when read")
ended = {int(i): float(t) for i, t in (l.split() for l in open(f"{work}/ended.txt"))}
seen = {int(r): float(t) for r, t in (l.split() for l in open(f"{work}/seen.txt"))}
names = dict(sqlite3.connect(lecturer).execute("SELECT id, name FROM runs"))
delays = [seen[run] - ended[int(names[run].split(":")[0].split("-")[1])] for run in seen]
print(f"30 students at once: every run in the lecturer's database {min(delays):.1f}-"
      f"{max(delays):.1f} s (median {statistics.median(delays):.1f} s) after it ended, "
      f"(an import every {poll_s} s)")
PY

# The same runs under new uids until the server holds each size, then one import of all.
script="$work/mlflow_client_read.py"
cat >"$script" <<'PY'
import sys
from mlflow.tracking import MlflowClient
client = MlflowClient(sys.argv[1])
experiment = client.get_experiment_by_name("OOM Lab").experiment_id
runs, token, values = [], None, 0
while True:
    page = client.search_runs([experiment], max_results=1000, page_token=token)
    runs += page
    token = page.token
    if not token:
        break
for run in runs:
    client.download_artifacts(run.info.run_id, "summary.json", sys.argv[2])
    for key in run.data.metrics:
        values += len(client.get_metric_history(run.info.run_id, key))
print(len(runs), values)
PY
have=30
printf '%6s  %-26s  %-26s\n' runs "runs import (s, MiB)" "MlflowClient read (s, MiB)"
mkdir -p "$work/copies"
for size in $sizes; do
    copies=()
    while ((have < size)); do
        copy="$work/copies/$have.sqlite"
        cp "$work/students/$(printf %02d $((have % 30 + 1))).sqlite" "$copy"
        copies+=("$copy")
        have=$((have + 1))
    done
    if ((${#copies[@]})); then
        "$python" -c "
import sqlite3, sys, uuid
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    db.execute('UPDATE runs SET uid = ?', (uuid.uuid4().hex,))
    db.commit()" "${copies[@]}"
        printf '%s\n' "${copies[@]}" | xargs -P 2 -I{} env LOGNAME=copy "$cli" runs export 1 \
            --db {} --to mlflow --tracking-uri "$uri" >/dev/null
    fi
    rm -f "$work/import-$size.sqlite"*
    ours=$(measure "$cli" runs import --from mlflow --tracking-uri "$uri" \
        --db "$work/import-$size.sqlite")
    mkdir -p "$work/downloads"
    theirs="(not measured)"
    if ((size <= client_most)); then
        theirs=$(measure "$tracker_python" "$script" "$uri" "$work/downloads")
    fi
    imported=$("$python" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from runs').fetchone()[0])" "$work/import-$size.sqlite")
    printf '%6s  %-26s  %-26s  (%s imported)\n' "$size" "$ours" "$theirs" "$imported"
done
