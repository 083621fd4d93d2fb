#!/usr/bin/env bash
# Installs a pinned PyTorch (scripts/pins/torch-VERSION.txt) from the Python package index into
# a virtual environment of OOM Lab's own, and prints the environment's folder. The default
# version's LibTorch is what the CUDA build links (`./oomlab.sh cuda-test`); each version's
# python, torchrun and torch.cuda._memory_viz are the real outside programs some tests run
# against the engine.
#
#   scripts/torch_env.sh [--version V]           install if missing, print the folder
#   scripts/torch_env.sh [--version V] --prefix  print the LibTorch CMake prefix (the torch
#                                                package folder)
#
# Versions: 2.11.0 (the default: the GPU servers', built for CUDA 13.0) and 2.15.0 (the newest
# on the package index, whose snapshots, traces and messages the readers are tested on too).
# OOMLAB_TORCH_ENV overrides the default version's folder. The environment is the cache: one
# already complete is left as it is, so only a machine without it downloads (about 4.3 GB
# installed for 2.11.0, 5.4 GB for 2.15.0; a minute or two).
set -euo pipefail

version=2.11.0
if [[ "${1:-}" == --version ]]; then
    version="${2:?--version needs a version}"
    shift 2
fi
pins="$(dirname "$0")/pins/torch-$version.txt"
[[ -f "$pins" ]] || {
    echo "no pinned PyTorch $version (scripts/pins/torch-*.txt: $(cd "$(dirname "$0")/pins" &&
        ls torch-*.txt | sed 's/^torch-//; s/\.txt$//' | tr '\n' ' '))" >&2
    exit 2
}
default_dir="${XDG_CACHE_HOME:-$HOME/.cache}/oomlab/torch-$version"
if [[ "$version" == 2.11.0 ]]; then
    env_dir="${OOMLAB_TORCH_ENV:-$default_dir}"
else
    env_dir="$default_dir"
fi
python="$env_dir/bin/python"

# shellcheck source=python_env.sh
source "$(dirname "$0")/python_env.sh"
# numpy is among the pins: torch imports it for tensor conversion and warns without it.
ensure_python_env "$env_dir" \
    "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$version')" \
    "PyTorch $version" "$pins"

case "${1:-}" in
    --prefix) "$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null ;;
    "") echo "$env_dir" ;;
    *) echo "usage: $0 [--version V] [--prefix]" >&2; exit 2 ;;
esac
