#!/usr/bin/env bash
# Runs one tracker test (a Python unittest file beside this script) with the Python of the
# trackers' environment (scripts/tracker_env.sh; `./oomlab.sh test` installs it and sets
# OOMLAB_TRACKER_PYTHON). Without it the test is skipped (exit 77), saying why.
set -euo pipefail
python="${OOMLAB_TRACKER_PYTHON:-}"
if [[ -z "$python" || ! -x "$python" ]]; then
    echo "skipped: OOMLAB_TRACKER_PYTHON is not set to the Python of MLflow and TensorBoard;" \
         "install them with scripts/tracker_env.sh and set it to <its folder>/bin/python" \
         "(./oomlab.sh test does both)"
    exit 77
fi
cd "$(dirname "$0")"
exec "$python" -m unittest -v "$(basename "$1" .py)"
