#!/usr/bin/env bash
# Compiles every source that uses LibTorch against another LibTorch's headers, syntax only (no
# linking, no libraries needed): how a machine with only Debian's LibTorch 1.13 checks that the
# code still builds against LibTorch 2.x, and with CUDA headers its CUDA and NCCL paths too.
#
#   scripts/check_torch_headers.sh [options] TORCH_INCLUDE
#     TORCH_INCLUDE       the other LibTorch's include folder (the one holding ATen/, c10/, torch/)
#     --cuda-include DIR  CUDA toolkit headers (and nccl.h): also checks the CUDA sources
#                         (OOMLAB_WITH_CUDA=1, USE_C10D_NCCL), as a CUDA build compiles them
#     --build-dir DIR     a configured build whose compile_commands.json lists the sources
#                         (default: build)
#
# Without the precompiled header, so a source that relies on it for an include fails here.
# Exits 1 when a source does not compile, listing those sources and their errors.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
cuda_include=""
torch_include=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cuda-include) cuda_include="$(realpath "$2")"; shift 2 ;;
        --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
        *) torch_include="$(realpath "$1")"; shift ;;
    esac
done
[[ -n "$torch_include" ]] || { echo "give the other LibTorch's include folder (see --help)" >&2; exit 2; }
[[ -f "$torch_include/torch/csrc/api/include/torch/version.h" ]] ||
    { echo "$torch_include has no torch/csrc/api/include/torch/version.h: not a LibTorch include folder" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] ||
    { echo "$build/compile_commands.json is missing: configure first (cmake --preset default)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "check_torch_headers.sh needs python3" >&2; exit 2; }

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
version="$(printf '#include <torch/version.h>\nTORCH_VERSION_MAJOR.TORCH_VERSION_MINOR\n' |
    c++ -E -P -x c++ -I "$torch_include" -I "$torch_include/torch/csrc/api/include" - | tail -n1 | tr -d ' ')"
echo "checking against LibTorch $version headers${cuda_include:+ with CUDA headers from $cuda_include}"

# One command per line: the build's own flags, the torch include folders swapped for the other
# LibTorch's, the precompiled header dropped, -fsyntax-only.
python3 - "$build/compile_commands.json" "$torch_include" "$cuda_include" "$logs" > "$logs/commands" <<'EOF'
import json, os, shlex, sys

commands, torch, cuda, logs = sys.argv[1:5]
debian_api = "/usr/include/torch/csrc/api/include"
# As the build decides: Gloo where its headers are (Debian's libgloo-dev), NCCL with CUDA.
gloo = os.path.exists(os.path.join(torch, "gloo", "config.h")) or os.path.exists(
    "/usr/include/gloo/config.h")
for index, entry in enumerate(json.load(open(commands))):
    words, source = shlex.split(entry["command"]), entry["file"]
    if debian_api not in words or source.startswith(entry["directory"] + os.sep):
        continue  # no torch, or a file the build generated (the precompiled header's)
    flags, skip = [], False
    for at, word in enumerate(words[1:], 1):
        if skip:
            skip = False
        elif word in ("-include", "-o"):
            skip = True
        elif word in ("-c", "-Winvalid-pch", source) or (word == "-DUSE_C10D_GLOO" and not gloo):
            pass
        elif word == debian_api:  # follows its "-isystem"
            flags += [torch, "-isystem", torch + "/torch/csrc/api/include"]
            if cuda:
                flags += ["-isystem", cuda]
        elif word == "-DOOMLAB_WITH_CUDA=0" and cuda:
            flags.append("-DOOMLAB_WITH_CUDA=1")
        else:
            flags.append(word)
    sources = [source]
    if cuda:
        if "process_group.cpp" in source or "nccl_test.cpp" in source:
            flags.append("-DUSE_C10D_NCCL")
        if source.endswith("measure/memory_monitor.cpp"):  # built only with CUDA
            sources.append(source.replace("memory_monitor.cpp", "cuda_memory.cpp"))
    for file in sources:
        log = os.path.join(logs, f"{index}-{os.path.basename(file)}.log")
        command = shlex.join([words[0], *flags, "-fsyntax-only", file])
        print(f"cd {shlex.quote(entry['directory'])} && {command} > {shlex.quote(log)} 2>&1 "
              f"|| echo {shlex.quote(os.path.relpath(file, os.getcwd()))} >> {logs}/failed")
EOF
total="$(wc -l < "$logs/commands")"
echo "$total sources"
tr '\n' '\0' < "$logs/commands" | xargs -0 -P "$(nproc)" -I{} bash -c '{}'
if [[ -s "$logs/failed" ]]; then
    echo "$(wc -l < "$logs/failed") of $total sources do not compile against LibTorch $version:"
    sort "$logs/failed"
    grep -h -E "error|required from" "$logs"/*.log | sort -u | head -40
    exit 1
fi
echo "all $total sources compile against LibTorch $version"
