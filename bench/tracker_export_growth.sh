#!/usr/bin/env bash
# Sending a long run to a tracker as it grows to 20,000 and 200,000 metric rows (x1, x10; add
# 2000000 to ROWS for x100), beside what a user would otherwise write: a Python script that
# reads the same rows with sqlite3 and sends them with the trackers' own Python APIs
# (MlflowClient.log_batch in batches of 1,000; TensorBoard's EventFileWriter, what
# torch.utils.tensorboard.SummaryWriter writes with). The same series are sent both ways: loss
# and the four memory figures of each optimizer step.
#
#   bench/tracker_export_growth.sh [SCRATCH_DIR]
#
# Needs scripts/tracker_env.sh's environment (installed if missing). Starts `mlflow server` on
# 127.0.0.1 with a temporary SQLite backend and stops it at the end. Wall time and peak
# resident memory of each whole process (GNU time), one run each.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/growth_common.sh" "$@"
env_dir=$("$root/scripts/tracker_env.sh")
tracker_python="$env_dir/bin/python"
server_dir="$scratch/mlflow-server"
rm -rf "$server_dir" && mkdir -p "$server_dir"
trap '[[ -z ${server:-} ]] || kill -- -$server 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM  # the server is stopped on these too
start_mlflow_server "$env_dir" "$server_dir"

# The script a user would write: the rows of the run's steps, to MLflow or TensorBoard.
script="$scratch/send_rows.py"
cat >"$script" <<'PY'
import sqlite3, sys, time
to, path, target = sys.argv[1:4]
series = {"train/loss": "loss", "memory/allocated_MiB": "allocated_bytes",
          "memory/reserved_MiB": "reserved_bytes", "memory/peak_MiB": "peak_bytes",
          "memory/device_used_MiB": "device_used_bytes"}
rows = sqlite3.connect(path).execute(
    "SELECT step, wall_ms, " + ", ".join(series.values()) +
    " FROM metrics WHERE run_id = 1 AND phase = 'step' AND rank = 0 ORDER BY id").fetchall()
points = [(name, step, wall, value if name == "train/loss" else value / 1048576)
          for step, wall, *values in rows
          for name, value in zip(series, values) if value is not None]
if to == "mlflow":
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient
    client = MlflowClient(target)
    experiment = client.create_experiment(f"script {time.time()}")
    run = client.create_run(experiment).info.run_id
    start = int(time.time() * 1000)
    for first in range(0, len(points), 1000):
        client.log_batch(run, metrics=[Metric(name, value, start + int(wall), step)
                                       for name, step, wall, value in points[first:first + 1000]])
    client.set_terminated(run)
else:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    writer = EventFileWriter(target)
    for name, step, wall, value in points:
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag=name, simple_value=value)])))
    writer.close()
PY

printf '%9s %12s | %24s | %24s\n' rows tracker "oomlab-cli s / MiB" "python script s / MiB"
for rows in ${ROWS:-20000 200000}; do
    db="$scratch/long_run_$rows.sqlite"
    [[ -f "$db" ]] || make_long_run "$rows" "$db"
    rm -rf "$scratch/tb-ours" "$scratch/tb-script"
    read -r tb tb_mib <<<"$(measure "$cli" runs export 1 --db "$db" --to tensorboard \
        --out "$scratch/tb-ours")"
    read -r tb_py tb_py_mib <<<"$(measure "$tracker_python" "$script" tensorboard "$db" \
        "$scratch/tb-script")"
    printf '%9s %12s | %14.2f / %7s | %14.2f / %7s\n' "$rows" tensorboard "$tb" "$tb_mib" \
        "$tb_py" "$tb_py_mib"
    read -r ml ml_mib <<<"$(measure "$cli" runs export 1 --db "$db" --to mlflow \
        --tracking-uri "$uri" --experiment "oomlab $rows")"
    read -r ml_py ml_py_mib <<<"$(measure "$tracker_python" "$script" mlflow "$db" "$uri")"
    printf '%9s %12s | %14.2f / %7s | %14.2f / %7s\n' "$rows" mlflow "$ml" "$ml_mib" "$ml_py" \
        "$ml_py_mib"
done
