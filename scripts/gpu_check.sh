#!/usr/bin/env bash
# On a Linux machine with an NVIDIA GPU: builds the engine and oomlab-cli (no GUI) against the
# LibTorch of a Python PyTorch 2.x with CUDA, runs the GPU-labelled tests, then the GPU
# benchmark (bench/gpu/gpu_benchmark.py), and prints where its report is.
#
#   scripts/gpu_check.sh [options] [-- benchmark options]
#     --build-dir DIR     build folder (default: build-gpu)
#     --python PY         the Python with PyTorch (default: python3)
#     --torch-prefix DIR  a LibTorch's CMake prefix instead of PyTorch's (e.g. /usr on Debian)
#     --device DEV        the benchmark's device (default: cuda; cpu for a dry run)
#     --no-tests          skip ctest;  --no-bench  skip the benchmark
#
# Needs a C++17 compiler, CMake >= 3.22, ninja, and for a CUDA PyTorch the CUDA toolkit
# (nvcc) that its CMake files look for. Libraries the machine lacks (GoogleTest, SQLite
# headers, nlohmann-json, CLI11) come from .gpu-deps/ when present: see scripts/gpu_deps.sh.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-gpu"
python=python3
torch_prefix=""
device=cuda
run_tests=1
run_bench=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        --torch-prefix) torch_prefix="$2"; shift 2 ;;
        --device) device="$2"; shift 2 ;;
        --no-tests) run_tests=0; shift ;;
        --no-bench) run_bench=0; shift ;;
        --) shift; break ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
done
bench_args=("$@")

say() { printf '\n== %s\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "gpu_check.sh needs $1 ($2)" >&2; exit 2; }; }
need cmake "3.22 or newer"
need ninja "the build tool of the CMake presets"
need "$python" "a Python with PyTorch, for LibTorch and the benchmark's reference script"

if [[ -z "$torch_prefix" ]]; then
    # The torch package folder, not torch.utils.cmake_prefix_path (its share/cmake): CMake then
    # looks for libtorch.so in <prefix>/lib before the system's folders, where another LibTorch
    # (Debian's) may be.
    torch_prefix="$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')" ||
        { echo "$python cannot import torch; pass --python or --torch-prefix" >&2; exit 2; }
fi
torch_has_cuda="$("$python" -c 'import torch; print("ON" if torch.version.cuda else "OFF")' \
    2>/dev/null || echo OFF)"
# The GPU servers' architecture (H100, H200); nothing is compiled for it, but LibTorch's CMake
# files otherwise probe for a GPU and list every architecture.
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
# The C++ ABI LibTorch was built with (in TORCH_CXX_FLAGS): the whole build must use the same,
# including GoogleTest, or std::string crosses between two ABIs.
torch_config=""
for folder in "$torch_prefix"/Torch "$torch_prefix"/{share,lib,lib64}/cmake/Torch \
    "$torch_prefix"/lib/*/cmake/Torch; do
    [[ -f "$folder/TorchConfig.cmake" ]] && { torch_config="$folder/TorchConfig.cmake"; break; }
done
[[ -n "$torch_config" ]] || { echo "no TorchConfig.cmake under $torch_prefix" >&2; exit 2; }
abi="$(grep -o -m1 '_GLIBCXX_USE_CXX11_ABI=[01]' "$torch_config" | cut -d= -f2 || true)"
abi="${abi:-1}"
cxx_flags="-D_GLIBCXX_USE_CXX11_ABI=$abi"

# CUDA builds of LibTorch look for the CUDA toolkit when configured.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi

prefix_path="$torch_prefix"
cmake_args=()
deps="$root/.gpu-deps/root/usr"
if [[ -d "$deps" ]]; then
    say "dependencies from .gpu-deps"
    prefix_path="$deps;$prefix_path"
    if [[ -d "$deps/src/googletest" ]]; then
        # Built here, with this compiler and LibTorch's ABI; installed inside the build folder.
        gtest="$build/_deps/googletest"
        cmake -S "$deps/src/googletest" -B "$gtest-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_INSTALL_PREFIX="$gtest" >/dev/null
        cmake --build "$gtest-build" >/dev/null
        cmake --install "$gtest-build" >/dev/null
        prefix_path="$gtest;$prefix_path"
    fi
    if [[ -f "$deps/include/sqlite3.h" ]]; then
        # The machine's own libsqlite3 if it has one (Python needs it), else the static one.
        sqlite="$(ldconfig -p 2>/dev/null | awk '/libsqlite3\.so\.0 .*x86-64/ && !n++ {print $NF}' || true)"
        sqlite="${sqlite:-$deps/lib/x86_64-linux-gnu/libsqlite3.a}"
        cmake_args+=(-DSQLite3_INCLUDE_DIR="$deps/include" -DSQLite3_LIBRARY="$sqlite")
    fi
fi

# The same settings as the cuda preset (./oomlab.sh cuda-test), so a build made there is the one
# this script would make; LibTorch's flags carry the C++ ABI to the project itself.
say "configure $build (LibTorch from $torch_prefix, C++ ABI $abi, CUDA $torch_has_cuda)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLAB_BUILD_GUI=OFF \
    -DOOMLAB_REQUIRE_CUDA="$torch_has_cuda" -DCMAKE_PREFIX_PATH="$prefix_path" "${cmake_args[@]}"

say "build"
cmake --build "$build"

status=0
if ((run_tests)); then
    say "GPU tests (ctest -L gpu)"
    (cd "$build" && ctest -L gpu --output-on-failure) || status=1
fi

if ((run_bench)); then
    say "benchmark on $device"
    report="$("$python" "$root/bench/gpu/gpu_benchmark.py" --cli "$build/app/oomlab-cli" \
        --python "$python" --device "$device" "${bench_args[@]}" | tail -1)" || status=1
    [[ -n "$report" ]] && say "report: $report"
fi
exit "$status"
