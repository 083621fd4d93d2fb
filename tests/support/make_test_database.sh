#!/usr/bin/env bash
# Makes one of the databases that several tests read or change but never need to train
# themselves, with the real oomlab-cli, into FOLDER/NAME/runs.sqlite (FOLDER/NAME made anew).
# Each suite run makes each once (CTest fixtures, tests/CMakeLists.txt) and its tests copy it
# (OOMLAB_TEST_DATABASES names FOLDER); a test run on its own calls this itself.
#
#   make_test_database.sh CLI FOLDER NAME
#
#   one-run       one completed run of the default settings, 2 steps (the hardening tests)
#   tracker-runs  run 1 "completed", 12 steps with validation every 4; run 2 "out of memory",
#                 a BiLSTM under a 50 MiB cap that fails after a step (the trackers' tests)
set -euo pipefail
if (($# != 3)) || [[ "$3" != one-run && "$3" != tracker-runs ]]; then
    echo "usage: $0 CLI FOLDER one-run|tracker-runs" >&2
    exit 2
fi
cli="$1" folder="$2" name="$3"
db="$folder/$name/runs.sqlite"
rm -rf "${folder:?}/$name"
mkdir -p "$folder/$name"
case "$name" in
    one-run)
        "$cli" run --set train.max_steps=2 --db "$db" >/dev/null
        ;;
    tracker-runs)
        "$cli" run --db "$db" --name completed --set train.max_steps=12 --set eval.every=4 \
            >/dev/null
        status=0
        "$cli" run --db "$db" --name "out of memory" --set model.kind=bilstm \
            --set train.max_steps=30 --set memory.cap_mb=50 >/dev/null 2>&1 || status=$?
        if ((status != 3)); then
            echo "$0: the capped run should have run out of memory (exit 3), not $status" >&2
            exit 1
        fi
        ;;
esac
