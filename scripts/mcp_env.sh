#!/usr/bin/env bash
# Installs the reference client of the Model Context Protocol (the mcp package) from the Python
# package index into a virtual environment of OOM Lab's own (every package pinned:
# scripts/pins/mcp.txt), and prints its folder. The test of `oomlab-cli mcp` drives the server
# with that client; it skips without it.
#
#   scripts/mcp_env.sh          install if missing, print the folder
#   scripts/mcp_env.sh --folder print the folder only, installing nothing
#
# OOMLAB_MCP_ENV overrides the folder. About 60 MB installed, some seconds.
set -euo pipefail

mcp=2.3.0
env_dir="${OOMLAB_MCP_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlab/mcp-$mcp}"

# shellcheck source=python_env.sh
source "$(dirname "$0")/python_env.sh"
python_env_main "$env_dir" \
    "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$mcp')" \
    "the MCP client $mcp" "$(dirname "$0")/pins/mcp.txt" "$@"
