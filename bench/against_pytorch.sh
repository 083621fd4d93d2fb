# Sourced by the scripts that compare oomlab-cli with plain PyTorch scripts: sets `cli` (the
# built oomlab-cli), `python` (a Python with torch) and `scratch` (a folder removed on exit).
# Needs `root` set to the project's root.
#
# By default: build/ (Debian's LibTorch 1.13) against Debian's python3-torch 1.13 (installed
# when missing and running as root). OOMLAB_BENCH_TORCH=2: build-cuda/ (PyTorch 2.11's
# LibTorch, ./oomlab.sh cuda-test) against the same PyTorch 2.11 (scripts/torch_env.sh), the
# version users have. OOMLAB_BENCH_CLI and OOMLAB_BENCH_PYTHON override either.
if [[ "${OOMLAB_BENCH_TORCH:-}" == 2 ]]; then
    cli="${OOMLAB_BENCH_CLI:-$root/build-cuda/app/oomlab-cli}"
    python="${OOMLAB_BENCH_PYTHON:-$("$root/scripts/torch_env.sh")/bin/python}"
else
    cli="${OOMLAB_BENCH_CLI:-$root/build/app/oomlab-cli}"
    python="${OOMLAB_BENCH_PYTHON:-/usr/bin/python3}"
fi
[[ -x "$cli" ]] || { echo "build first: ./oomlab.sh test (or cuda-test)" >&2; exit 2; }
if ! "$python" -c 'import torch' 2>/dev/null; then
    [[ "$(id -u)" == 0 && "$python" == /usr/bin/python3 ]] ||
        { echo "$python cannot import torch (apt-get install python3-torch)" >&2; exit 2; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-torch >/dev/null
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# `timed FILE LABEL COMMAND...`: runs COMMAND, timed from its start to its exit, and appends to
# FILE one JSON line: {"label", "seconds", "result": the command's last line of output, as JSON}.
timed() {
    "$python" - "$@" <<'PY'
import json, subprocess, sys, time
results, label, command = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.perf_counter()
ran = subprocess.run(command, capture_output=True, text=True)
seconds = time.perf_counter() - start
if ran.returncode != 0:
    sys.exit(f"{label}: exit {ran.returncode}\n{ran.stderr}")
out = ran.stdout
with open(results, "a") as stream:
    print(json.dumps({"label": label, "seconds": seconds,
                      "result": json.loads(out.splitlines()[-1])}), file=stream)
PY
}
