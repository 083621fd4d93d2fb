#!/usr/bin/env bash
# Installs the team trackers OOM Lab sends runs to, MLflow and TensorBoard, from the Python
# package index into a virtual environment of OOM Lab's own (every package pinned:
# scripts/pins/trackers.txt), and prints its folder. The tests of `runs export --to
# mlflow|tensorboard` start its `mlflow server` and read the exports back with MLflow's own
# client and TensorBoard's own event reader; they skip without it.
#
#   scripts/tracker_env.sh          install if missing, print the folder
#   scripts/tracker_env.sh --folder print the folder only, installing nothing
#
# OOMLAB_TRACKER_ENV overrides the folder. About 0.4 GB installed, half a minute. MLflow is its
# client and server without its web pages (mlflow-skinny; the pins say why).
set -euo pipefail

mlflow=3.17.2
tensorboard=2.21.0
env_dir="${OOMLAB_TRACKER_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlab/trackers-$mlflow-$tensorboard}"

# MLflow's usage telemetry off for what this script runs of it (it looks up and sends to
# config.mlflow-telemetry.io); the tests turn it off in theirs (tests/trackers/CMakeLists.txt).
export MLFLOW_DISABLE_TELEMETRY=true

# shellcheck source=python_env.sh
source "$(dirname "$0")/python_env.sh"
# Once the environment is there: an empty MLflow store with every migration of this version
# applied, which the tests' servers start from (a new store's migrations took 5 of the 10 s a
# server took to answer).
python_env_made() {
    local template="$1/mlflow-empty.sqlite"
    [[ ! -f "$template" ]] || return 0
    "$1/bin/python" - "$template" <<'PY'
import os, sys, tempfile
from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
# Made beside the template, so that the move is one rename (a /tmp of its own would not be).
with tempfile.TemporaryDirectory(dir=os.path.dirname(sys.argv[1])) as folder:
    path = os.path.join(folder, "empty.sqlite")
    SqlAlchemyStore("sqlite:///" + path, os.path.join(folder, "artifacts")).engine.dispose()
    os.replace(path, sys.argv[1])
PY
}
python_env_main "$env_dir" \
    "import mlflow, tensorboard, sys; sys.exit(mlflow.__version__ != '$mlflow' or tensorboard.__version__ != '$tensorboard')" \
    "MLflow $mlflow and TensorBoard $tensorboard" "$(dirname "$0")/pins/trackers.txt" "$@"
