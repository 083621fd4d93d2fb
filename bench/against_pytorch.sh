# Sourced by the scripts that compare oomlab-cli with plain PyTorch scripts: sets `cli` (the
# built oomlab-cli), `python` (Debian's, with python3-torch, installed when missing and running
# as root) and `scratch` (a folder removed on exit). Needs `root` set to the project's root.
cli="$root/build/app/oomlab-cli"
python=/usr/bin/python3
[[ -x "$cli" ]] || { echo "build first: ./oomlab.sh test" >&2; exit 2; }
if ! "$python" -c 'import torch' 2>/dev/null; then
    [[ "$(id -u)" == 0 ]] || { echo "needs python3-torch (apt-get install python3-torch)" >&2; exit 2; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-torch >/dev/null
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
