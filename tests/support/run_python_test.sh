#!/usr/bin/env bash
# Runs one Python unittest file with the Python of one of OOM Lab's own environments
# (scripts/*_env.sh; `./oomlab.sh test` installs each and sets its variable). Without it the
# test is skipped (exit 77), saying why.
#
#   run_python_test.sh VARIABLE ENV_SCRIPT TEST.py [CLASS]
#
# With CLASS, only that class's tests run: a file's classes can then be tests of their own,
# which ctest runs side by side.
set -euo pipefail
variable="$1" env_script="$2" test="$3" class="${4:-}"
python="${!variable:-}"
if [[ -z "$python" || ! -x "$python" ]]; then
    echo "skipped: $variable is not set to the Python of scripts/$env_script's environment;" \
         "install it with scripts/$env_script and set $variable to <its folder>/bin/python" \
         "(./oomlab.sh test does both)"
    exit 77
fi
cd "$(dirname "$test")"
module="$(basename "$test" .py)"
exec "$python" -m unittest -v "$module${class:+.$class}"
