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
# MLflow's usage telemetry off in the servers and clients the benchmarks start (it looks up and
# sends to config.mlflow-telemetry.io): they measure OOM Lab and MLflow, not a third party.
export MLFLOW_DISABLE_TELEMETRY=true

# Wall time and peak resident memory of one whole process (GNU time): "seconds peak_MiB".
# Its standard input is the caller's; its output is dropped. An exit status other than 0 is
# measured too (explain exits 3 for an out-of-memory message).
measure() {  # command...
    /usr/bin/time -f '%e %M' -o "$scratch/time.txt" "$@" >/dev/null || true
    awk '{printf "%.2f %.0f", $1, $2 / 1024}' "$scratch/time.txt"
}

# A real run of 200 steps whose metric rows are repeated, each copy's steps after the last,
# until it has `rows` rows: the database of a long run.
make_long_run() {  # rows database
    rm -f "$2" "$2-wal" "$2-shm"
    "$cli" run --db "$2" --set train.max_steps=200 >/dev/null
    "$python" - "$1" "$2" <<'PY'
import sqlite3, sys
rows, path = int(sys.argv[1]), sys.argv[2]
db = sqlite3.connect(path)
columns = [c[1] for c in db.execute("PRAGMA table_info(metrics)") if c[1] != "id"]
have = db.execute("SELECT count(*), max(step) FROM metrics").fetchone()
listed = ", ".join(columns)
shifted = ", ".join("step + ?" if c == "step" else c for c in columns)
base = db.execute("SELECT min(id), max(id) FROM metrics").fetchone()
copy, count = 1, have[0]
while count < rows:
    db.execute(f"INSERT INTO metrics ({listed}) SELECT {shifted} FROM metrics "
               f"WHERE id BETWEEN ? AND ?", (copy * (have[1] + 1), base[0], base[1]))
    copy, count = copy + 1, count + have[0]
db.commit()
PY
}

# `mlflow server` of the trackers' environment `env_dir` on a free port of 127.0.0.1, on SQLite
# with one worker, its files in `folder`, in a session of its own: sets `uri` and `server`
# (stop it with kill -- -$server) and returns once it answers.
start_mlflow_server() {  # env_dir folder
    local port
    port=$("$1/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    uri="http://127.0.0.1:$port"
    setsid "$1/bin/mlflow" server --host 127.0.0.1 --port "$port" --workers 1 \
        --backend-store-uri "sqlite:///$2/mlflow.sqlite" \
        --artifacts-destination "$2/artifacts" >"$2/server.log" 2>&1 &
    server=$!
    for _ in $(seq 240); do
        curl -sf "$uri/health" >/dev/null && return
        sleep 0.5
    done
    echo "mlflow server did not answer at $uri within 120 s; see $2/server.log" >&2
    return 1
}
