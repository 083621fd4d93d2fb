#!/usr/bin/env bash
# Installs the pinned PyTorch with CUDA from the Python package index into a virtual
# environment of OOM Lab's own, and prints the environment's folder. Its LibTorch is what the
# CUDA build links (`./oomlab.sh cuda-test`); its python, torchrun and torch.cuda._memory_viz
# are the real outside programs some tests run against the engine.
#
#   scripts/torch_env.sh          install if missing, print the folder
#   scripts/torch_env.sh --prefix print the LibTorch CMake prefix (the torch package folder)
#
# OOMLAB_TORCH_ENV overrides the folder. The version is the GPU servers' (2.11.0, built for
# CUDA 13.0). The environment is the cache: one already complete is left as it is, so only a
# machine without it downloads (about 4.3 GB installed, a minute or two).
set -euo pipefail

version=2.11.0
env_dir="${OOMLAB_TORCH_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlab/torch-$version}"
python="$env_dir/bin/python"

installed() {
    [[ -x "$python" ]] &&
        "$python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$version')" \
            2>/dev/null
}

if ! installed; then
    # Debian's own Python (python3-venv), never a python3 that PATH may put first.
    if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
        echo "torch_env.sh needs Debian's python3-venv (apt-get install python3-venv)" >&2
        exit 2
    fi
    # Only an environment this script made (or nothing) is replaced, never another folder.
    if [[ -e "$env_dir" && ! -f "$env_dir/pyvenv.cfg" && -n "$(ls -A "$env_dir" 2>/dev/null)" ]]; then
        echo "$env_dir exists and is not a Python virtual environment; set OOMLAB_TORCH_ENV" \
             "to a new folder" >&2
        exit 2
    fi
    echo "Installing PyTorch $version (with CUDA) into $env_dir" >&2
    rm -rf "$env_dir"
    mkdir -p "$(dirname "$env_dir")"
    /usr/bin/python3 -m venv "$env_dir"
    # numpy: torch imports it for tensor conversion and warns without it.
    "$env_dir/bin/pip" install --quiet --disable-pip-version-check "torch==$version" numpy >&2
    installed || { echo "torch $version did not import from $env_dir" >&2; exit 1; }
fi

case "${1:-}" in
    --prefix) "$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null ;;
    "") echo "$env_dir" ;;
    *) echo "usage: $0 [--prefix]" >&2; exit 2 ;;
esac
