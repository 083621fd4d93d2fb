#!/usr/bin/env bash
# Installs the pinned PyTorch with CUDA (scripts/pins/torch.txt) from the Python package index into a virtual
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

# shellcheck source=python_env.sh
source "$(dirname "$0")/python_env.sh"
# numpy is among the pins: torch imports it for tensor conversion and warns without it.
ensure_python_env "$env_dir" \
    "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$version')" \
    "PyTorch $version (with CUDA)" "$(dirname "$0")/pins/torch.txt"

case "${1:-}" in
    --prefix) "$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null ;;
    "") echo "$env_dir" ;;
    *) echo "usage: $0 [--prefix]" >&2; exit 2 ;;
esac
