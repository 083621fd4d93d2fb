#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh needs on a GPU machine that cannot build quickly (no Debian
# packages, no network, minutes of time) from the CUDA build CI makes (`./oomlab.sh cuda-test`,
# build-cuda/) into one folder, .gpu-carry/ (ignored by git, at most 50 MiB):
#
#   bin/       oomlab-cli and oomlab_gpu_tests, stripped, RUNPATH $ORIGIN/../lib
#   lib/       the engine's libraries (liboomlab_*.so; the session library loads
#              liboomlab_train.so from its own folder), stripped, RUNPATH $ORIGIN, and the
#              libraries they need that the GPU machine lacks (SQLite's)
#   lib/fallback/  this machine's libstdc++ and libgcc_s, which gpu_check.sh uses only where
#              the GPU machine's are older than the build needs (GLIBCXX_3.4.30, GCC 12)
#   bench/gpu/ the benchmark and its reference scripts; resources/lessons/ the lessons they run
#   data/      TREC and the GloVe excerpt from ../shared/data (the benchmark's --data)
#   fortunes/  the Debian fortune files of the default dataset, which the GPU tests train on
#              (gpu_check.sh points OOMLAB_FORTUNES_DIR at them)
#   estimate/  with --cpu-estimate FILE: the CPU's estimates that gpu_check.sh --estimate
#              holds the GPU to (bench/gpu/cpu_estimate.py cpu, run on a machine without CUDA)
#   MANIFEST   where it came from, then size and sha256 of every file
#
#   scripts/gpu_carry.sh [--cpu-estimate FILE] [BUILD_DIR [OUT]]   (defaults: build-cuda, .gpu-carry)
#
# LibTorch, CUDA and NCCL are not carried: the binaries take the GPU machine's PyTorch through
# LD_LIBRARY_PATH, which gpu_check.sh --carried sets. A library `ldd` finds elsewhere than in
# the machine's PyTorch, its CUDA or its C/C++ runtime (the list below) is carried.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cpu_estimate=""
if [[ "${1:-}" == --cpu-estimate ]]; then
    [[ -f "${2:-}" ]] || { echo "gpu_carry.sh: --cpu-estimate needs the cpu-estimate.json that" \
        "bench/gpu/cpu_estimate.py cpu wrote; no file ${2:-(none given)}" >&2; exit 1; }
    cpu_estimate="$(realpath "$2")"
    shift 2
fi
build="$(realpath -m "${1:-$root/build-cuda}")"
out="$(realpath -m "${2:-$root/.gpu-carry}")"
limit_mib=50

# What every GPU machine has: glibc, the GCC runtime, zlib. Its CUDA (libcuda, libcudart, ...)
# and everything under its PyTorch (torch/lib, the nvidia-* wheels) are taken there too.
machine_has='^(linux-vdso|ld-linux-x86-64|libc|libm|libpthread|libdl|librt|libutil|libresolv|libanl|libmvec|libstdc\+\+|libgcc_s|libz)\.so'
machine_cuda='^lib(cuda|cudart|nvidia-ml|nvrtc|nccl|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nvJitLink|nvToolsExt|cupti)[.-]'

fail() { echo "gpu_carry.sh: $*" >&2; exit 1; }
for program in app/oomlab-cli tests/engine/gpu/oomlab_gpu_tests lib/liboomlab_train.so; do
    [[ -f "$build/$program" ]] ||
        fail "no $build/$program: build it first (./oomlab.sh cuda-test makes build-cuda/)"
done
command -v strip >/dev/null || fail "needs strip (binutils)"
# The LibTorch the build linked: its lib/ beside share/cmake/Torch.
torch_dir="$(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt")"
torch_lib="$(realpath -m "$torch_dir/../../../lib")"
[[ -f "$torch_lib/libtorch_cpu.so" ]] || fail "no LibTorch at $torch_lib (Torch_DIR of $build)"
site="$(dirname "$(dirname "$torch_lib")")"   # site-packages, for the nvidia-* wheels
torch_version="$(sed -n "s/^__version__ = '\(.*\)'/\1/p" "$site/torch/version.py" 2>/dev/null || true)"
torch_version="${torch_version:-unknown}"

# Only a folder this script made is replaced.
if [[ -e "$out" ]]; then
    [[ -f "$out/MANIFEST" || -z "$(ls -A "$out")" ]] ||
        fail "$out exists and is not a carry folder (no MANIFEST); pass another OUT"
    rm -rf "$out"
fi
mkdir -p "$out"/{bin,lib,bench,resources,data,fortunes}

# Copies, stripped (the originals stay as they are), with a RUNPATH relative to the copy: the
# build's absolute one names folders the GPU machine does not have. CMake rewrites it in place
# (file(RPATH_SET), CMake >= 3.21; no patchelf needed).
set_runpath_script="$(mktemp --suffix=.cmake)"
trap 'rm -f "$set_runpath_script"' EXIT
# shellcheck disable=SC2016  # ${...} are CMake's
echo 'file(RPATH_SET FILE "${FILE}" NEW_RPATH "${RUNPATH}")' >"$set_runpath_script"
set_runpath() {
    readelf -d "$1" | grep -qE '\((RUNPATH|RPATH)\)' || return 0
    cmake -DFILE="$1" -DRUNPATH="$2" -P "$set_runpath_script" >/dev/null ||
        echo "warning: $1 keeps the build's RUNPATH (LD_LIBRARY_PATH still finds the carry)" >&2
}
carry_elf() {  # source, destination folder, RUNPATH
    local copy
    copy="$2/$(basename "$1")"
    strip --strip-unneeded -o "$copy" "$1"
    set_runpath "$copy" "$3"
}
echo "carrying from $build (LibTorch $torch_lib) into $out"
carry_elf "$build/app/oomlab-cli" "$out/bin" "\$ORIGIN/../lib"
carry_elf "$build/tests/engine/gpu/oomlab_gpu_tests" "$out/bin" "\$ORIGIN/../lib"
for library in "$build"/lib/liboomlab_*.so; do
    [[ "$library" == */liboomlab_failing_nvml.so ]] && continue  # a test double, not the engine's
    carry_elf "$library" "$out/lib" "\$ORIGIN"
done

# Their libraries as the GPU machine would find them: its PyTorch first, then the carry.
cuda_runtime=""
for folder in "$site"/nvidia/cu*/lib "$site"/nvidia/cuda_runtime/lib; do
    [[ -d "$folder" ]] && { cuda_runtime="$folder"; break; }
done
library_path="$torch_lib${cuda_runtime:+:$cuda_runtime}:$out/lib"
resolved="$(LD_LIBRARY_PATH="$library_path" ldd "$out"/bin/* "$out"/lib/*.so | awk '$2 == "=>"')"
if grep -q 'not found' <<<"$resolved"; then
    grep 'not found' <<<"$resolved" | sort -u >&2
    fail "libraries not found here either (above); is $build complete?"
fi
carried_libraries=()
mkdir -p "$out/lib/fallback"
while read -r name path; do
    [[ "$path" == "$out"/* || "$path" == "$site"/* ]] && continue
    if [[ "$name" == libstdc++.so.6 || "$name" == libgcc_s.so.1 ]]; then
        cp -L "$path" "$out/lib/fallback/$name"
        continue
    fi
    [[ "$name" =~ $machine_has || "$name" =~ $machine_cuda ]] && continue
    cp -L "$path" "$out/lib/$name"
    strip --strip-unneeded "$out/lib/$name"
    carried_libraries+=("$name ($path)")
done < <(awk '{print $1, $3}' <<<"$resolved" | sort -u)

# The benchmark finds its lessons at ../../resources/lessons, its data where --data says.
cp -r "$root/bench/gpu" "$out/bench/gpu"
rm -rf "$out/bench/gpu/__pycache__"
cp -r "$root/resources/lessons" "$out/resources/lessons"
shared="$root/../shared/data"
for file in trec.train.txt trec.test.txt glove.6B.50d.head2446.txt; do
    if [[ -f "$shared/$file" ]]; then
        cp "$shared/$file" "$out/data/"
    else
        echo "no $shared/$file: the benchmark will use its stand-in data" >&2
    fi
done
if [[ -n "$cpu_estimate" ]]; then
    mkdir -p "$out/estimate"
    cp "$cpu_estimate" "$out/estimate/cpu-estimate.json"
fi
fortunes="${OOMLAB_FORTUNES_DIR:-/usr/share/games/fortunes}"
for topic in computers politics science work; do
    [[ -f "$fortunes/$topic" ]] ||
        fail "no $fortunes/$topic: the GPU tests' default dataset (apt-get install fortunes)"
    cp -L "$fortunes/$topic" "$out/fortunes/"
done

{
    echo "# OOM Lab carry for scripts/gpu_check.sh --carried (scripts/gpu_carry.sh)"
    echo "# made $(date -u +%Y-%m-%dT%H:%M:%SZ) from $build"
    echo "# source $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "# torch $torch_version ($torch_lib)"
    echo "# carried libraries: ${carried_libraries[*]:-none}"
    echo "# bytes sha256 path"
    (cd "$out" && find . -type f ! -name MANIFEST -printf '%P\n' | sort | while read -r file; do
        printf '%s %s %s\n' "$(stat -c %s "$file")" "$(sha256sum "$file" | cut -d' ' -f1)" "$file"
    done)
} >"$out/MANIFEST"

bytes="$(du -sb "$out" | cut -f1)"
printf 'carried libraries: %s\n' "${carried_libraries[*]:-none}"
awk '!/^#/ {printf "  %8.1f KiB  %s\n", $1 / 1024, $3}' "$out/MANIFEST"
mib="$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')"
if ((bytes > limit_mib * 1024 * 1024)); then
    fail "$out is $mib MiB, over the $limit_mib MiB a GPU call can carry"
fi
echo "carry: $out, $mib MiB of at most $limit_mib ($(grep -vc '^#' "$out/MANIFEST") files)"
