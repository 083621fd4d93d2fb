#!/usr/bin/env bash
# On a Linux machine with an NVIDIA GPU: runs the GPU-labelled tests, then the GPU benchmark
# (bench/gpu/gpu_benchmark.py), and prints where its report is. Either with the binaries
# scripts/gpu_carry.sh packed from the CUDA build (--carried: nothing is compiled, for a
# machine lent for minutes), or building the engine and oomlab-cli (no GUI) there against the
# LibTorch of a Python PyTorch 2.x with CUDA.
#
#   scripts/gpu_check.sh --carried .gpu-carry --out DIR [options] [-- benchmark options]
#   scripts/gpu_check.sh [options] [-- benchmark options]
#     --carried DIR       run the binaries of a carry folder (scripts/gpu_carry.sh); if they do
#                         not load (ldd names what is missing), build as below instead
#     --no-fallback       with --carried: fail instead of building when they do not load
#     --out DIR           write the report and what else the check gathers into DIR (7 files:
#                         check.log, gpu-tests.xml, cli-version.txt, cli-device.json,
#                         benchmark.md, benchmark.json, benchmark.sqlite)
#     --budget SECONDS    the whole check's time; the benchmark skips the configs it has no
#                         time left for (default: 480 with --carried, else no limit; 0: none)
#     --build-dir DIR     build folder (default: build-gpu)
#     --python PY         the Python with PyTorch (default: python3)
#     --torch-prefix DIR  a LibTorch's CMake prefix instead of PyTorch's (e.g. /usr on Debian)
#     --device DEV        the benchmark's device (default: cuda; cpu for a dry run)
#     --no-tests          skip the GPU tests;  --no-bench  skip the benchmark
#     --fragmentation     also run the fragmentation lesson's two runs (its base settings from
#                         resources/lessons/fragmentation.json, backend:native and
#                         expandable_segments:True) on the device under caps of 200 to 290 MiB,
#                         into DIR/fragmentation.sqlite, a line per run
#     --snapshots         also record real snapshots (bench/gpu/record_snapshots.py) into
#                         DIR/snapshots, read each with oomlab-cli snapshot show / explain,
#                         and run oomlab-cli record on bench/gpu/record_check.py
#     --lessons           also run every lesson (oomlab-cli lesson run) on the device, each
#                         claim checked, into DIR/lessons.txt, while the budget lasts
#     --lesson NAME       that lesson only (repeatable; implies --lessons)
#     --probe             also record what the estimator takes from the device as data
#                         (bench/gpu/probe_device_memory.py: memory outside the allocator,
#                         cuDNN's LSTM allocations) into DIR/probe.json, and the engine's own
#                         allocation history of three BiLSTM runs and a bag with its table
#                         in host memory into DIR/engine-*.pickle, and a run with pinned
#                         host buffers (data.pin_memory=true)
#     --try               also run bench/gpu/fragmented_oom.py (a CUDA program that runs out of
#                         memory from fragmentation) under oomlab-cli record --try advice and
#                         --try expandable_segments:True, into DIR/try/ (record.txt: the
#                         table of each try beside its prediction)
#     --estimate          also check the GPU estimate of a CPU run: six scripts of different
#                         shapes recorded on the GPU (oomlab-cli record) against what their
#                         records on a CPU estimated (bench/gpu/cpu_estimate.py), into
#                         DIR/estimate/; the CPU's estimates are the carry's (estimate/, made
#                         without CUDA by gpu_carry.sh --cpu-estimate), else made here first
#     --estimate-variant VARIANT=SHAPE[,SHAPE]
#                         with --estimate, also those scripts on the GPU with some of its ways
#                         turned off (cpu_estimate.py's VARIANTS, e.g. math-attention), to put
#                         an error down to them (repeatable)
#     --corpus            also record real snapshots of programs built with the machine's
#                         libraries (bench/gpu/record_corpus.py) into DIR/corpus, beside the
#                         other checks after the GPU tests (each process's figures are its own
#                         allocator's, which the others do not change)
#
# With --carried the machine needs only the Python with PyTorch (the binaries take its
# LibTorch, CUDA runtime and NCCL through LD_LIBRARY_PATH). To build, it needs a C++17
# compiler, CMake >= 3.22, ninja, and for a CUDA PyTorch the CUDA toolkit (nvcc) that its CMake
# files look for. Libraries the machine lacks (GoogleTest, SQLite headers, nlohmann-json,
# RapidJSON, CLI11) come from .gpu-deps/ when present: see scripts/gpu_deps.sh.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-gpu"
python=python3
torch_prefix=""
device=cuda
run_tests=1
run_bench=1
snapshots=0
fragmentation=0
probe=0
estimate=0
estimate_variants=()
corpus=0
tries=0
lessons=0
chosen_lessons=()
carried=""
fallback=1
out=""
budget=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --carried) carried="$(realpath -m "$2")"; shift 2 ;;
        --no-fallback) fallback=0; shift ;;
        --out) out="$(realpath -m "$2")"; shift 2 ;;
        --budget) budget="$2"; shift 2 ;;
        --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        --torch-prefix) torch_prefix="$2"; shift 2 ;;
        --device) device="$2"; shift 2 ;;
        --no-tests) run_tests=0; shift ;;
        --no-bench) run_bench=0; shift ;;
        --snapshots) snapshots=1; shift ;;
        --try) tries=1; shift ;;
        --fragmentation) fragmentation=1; shift ;;
        --probe) probe=1; shift ;;
        --estimate) estimate=1; shift ;;
        --estimate-variant) estimate_variants+=("$2"); shift 2 ;;
        --corpus) corpus=1; shift ;;
        --lessons) lessons=1; shift ;;
        --lesson) lessons=1; chosen_lessons+=("$2"); shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
done
bench_args=("$@")
[[ -n "$budget" ]] || budget=$([[ -n "$carried" ]] && echo 480 || echo 0)

if [[ -n "$out" ]]; then
    mkdir -p "$out"
    exec > >(tee "$out/check.log") 2>&1
fi
say() { printf '\n== %s  (%ds)\n' "$*" "$SECONDS"; }
need() { command -v "$1" >/dev/null || { echo "gpu_check.sh needs $1 ($2)" >&2; exit 2; }; }
need "$python" "a Python with PyTorch, for LibTorch and the benchmark's reference script"
left() { echo $((budget - SECONDS)); }
# What the runs write and no one reads afterwards (the engine's databases, the GloVe cache).
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The carried binaries with the machine's PyTorch: its lib/ first, then the CUDA runtime of its
# nvidia-* wheels (the engine's memory library links libcudart itself), then the carry's. True,
# with the environment set, when every library and symbol resolves; else it is left as it was,
# for a build whose programs must not find the carry's libraries.
use_carried() {
    local torch_lib cuda_runtime="" folder library_path resolved missing
    [[ -x "$carried/bin/oomlab-cli" && -x "$carried/bin/oomlab_gpu_tests" ]] || {
        echo "$carried is not a carry folder (no bin/oomlab-cli): run scripts/gpu_carry.sh"
        return 1
    }
    torch_lib="$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')" ||
        { echo "$python cannot import torch; pass --python" >&2; exit 2; }
    for folder in "$torch_lib"/../../nvidia/cu*/lib "$torch_lib"/../../nvidia/cuda_runtime/lib; do
        [[ -d "$folder" ]] && { cuda_runtime="$(realpath "$folder")"; break; }
    done
    library_path="$torch_lib${cuda_runtime:+:$cuda_runtime}:$carried/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "torch $("$python" -c 'import torch; print(torch.__version__)'); the carry's:" \
         "$(sed -n 's/^# torch //p' "$carried/MANIFEST" 2>/dev/null || echo unknown)"
    echo "LD_LIBRARY_PATH=$library_path"
    # -r: also every symbol, which a LibTorch of another version may lack. A missing library
    # leaves many symbols undefined: the libraries are named first, and only they.
    resolved="$(LD_LIBRARY_PATH="$library_path" ldd -r "$carried"/bin/* "$carried"/lib/*.so 2>&1 || true)"
    if grep -qE "(GLIBCXX|CXXABI)_[0-9.]+' not found" <<<"$resolved" && [[ -d "$carried/lib/fallback" ]]; then
        echo "this machine's libstdc++ is older than the build's: the carry's lib/fallback first"
        library_path="$carried/lib/fallback:$library_path"
        resolved="$(LD_LIBRARY_PATH="$library_path" ldd -r "$carried"/bin/* "$carried"/lib/*.so 2>&1 || true)"
    fi
    missing="$(grep -E 'not found|^ldd:' <<<"$resolved" | sort -u || true)"
    [[ -n "$missing" ]] || missing="$(grep 'undefined symbol' <<<"$resolved" | sort -u || true)"
    if [[ -n "$missing" ]]; then
        echo "the carried binaries do not load here:"
        head -20 <<<"$missing" | sed 's/^[[:space:]]*/  /'
        (($(wc -l <<<"$missing") <= 20)) || echo "  ... $(($(wc -l <<<"$missing") - 20)) more"
        return 1
    fi
    LD_LIBRARY_PATH="$library_path" "$carried/bin/oomlab-cli" --version >/dev/null ||
        { echo "oomlab-cli --version failed"; return 1; }
    echo "every library resolves"
    export LD_LIBRARY_PATH="$library_path"
    # The GPU tests train on the default dataset, the Debian fortune files the carry holds; the
    # lessons are the carry's too, not the source tree's that the build compiled in.
    export OOMLAB_FORTUNES_DIR="$carried/fortunes" OOMLAB_RESOURCE_DIR="$carried/resources"
}

build_here() {
    need cmake "3.22 or newer"
    need ninja "the build tool of the CMake presets"
    if [[ -z "$torch_prefix" ]]; then
        # The torch package folder, not torch.utils.cmake_prefix_path (its share/cmake): CMake
        # then looks for libtorch.so in <prefix>/lib before the system's folders, where another
        # LibTorch (Debian's) may be.
        torch_prefix="$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')" ||
            { echo "$python cannot import torch; pass --python or --torch-prefix" >&2; exit 2; }
    fi
    torch_has_cuda="$("$python" -c 'import torch; print("ON" if torch.version.cuda else "OFF")' \
        2>/dev/null || echo OFF)"
    # The GPU servers' architecture (H100, H200); nothing is compiled for it, but LibTorch's
    # CMake files otherwise probe for a GPU and list every architecture.
    export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
    # The C++ ABI LibTorch was built with (in TORCH_CXX_FLAGS): the whole build must use the
    # same, including GoogleTest, or std::string crosses between two ABIs.
    local torch_config="" folder abi cxx_flags prefix_path deps gtest sqlite
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
    local cmake_args=()
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

    # The same settings as the cuda preset (./oomlab.sh cuda-test), so a build made there is the
    # one this script would make; LibTorch's flags carry the C++ ABI to the project itself.
    say "configure $build (LibTorch from $torch_prefix, C++ ABI $abi, CUDA $torch_has_cuda)"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLAB_BUILD_GUI=OFF \
        -DOOMLAB_REQUIRE_CUDA="$torch_has_cuda" -DCMAKE_PREFIX_PATH="$prefix_path" "${cmake_args[@]}"

    say "build"
    cmake --build "$build"
}

bench_dir="$root/bench/gpu"
bench_data=()
if [[ -n "$carried" ]]; then
    say "carried binaries from $carried"
    if use_carried; then
        cli="$carried/bin/oomlab-cli"
        bench_dir="$carried/bench/gpu"
        # A copy, so that the GloVe cache the engine writes beside the file stays out of the carry.
        if [[ -f "$carried/data/trec.train.txt" ]]; then
            cp -r "$carried/data" "$scratch/data"
            bench_data=(--data "$scratch/data")
        fi
    elif ((fallback)); then
        say "falling back to building in $build"
        carried=""
    else
        echo "gpu_check.sh: the carried binaries do not load (above); --no-fallback: stopping" >&2
        exit 1
    fi
fi
if [[ -z "$carried" ]]; then
    build_here
    cli="$build/app/oomlab-cli"
fi

status=0
if [[ -n "$out" ]]; then
    "$cli" --version >"$out/cli-version.txt" || status=1
    "$cli" device --json >"$out/cli-device.json" || status=1
    say "oomlab-cli: $(cat "$out/cli-version.txt")"
    cat "$out/cli-device.json"
fi

if ((run_tests)) && [[ -n "$carried" ]]; then
    # A first three-step run loads the training engine and the carried default dataset before
    # the tests do, on the benchmark's device (the tests skip without a GPU).
    say "a three-step run on $device"
    timeout 120 "$cli" run --db "$scratch/smoke.sqlite" --set "device=$device" \
        --set embeddings.source=synthetic --set train.max_steps=3 || status=1
    # The test program itself, not ctest: nothing of the build tree is here. A hung collective
    # is stopped after a third of the budget (at most 200 s) and leaves the time to the benchmark.
    tests_limit=200
    ((budget > 0 && budget / 3 < tests_limit)) && tests_limit=$((budget / 3))
    say "GPU tests (oomlab_gpu_tests, at most ${tests_limit}s)"
    xml=()
    [[ -z "$out" ]] || xml=(--gtest_output="xml:$out/gpu-tests.xml")
    timeout "$tests_limit" "$carried/bin/oomlab_gpu_tests" "${xml[@]}" || status=1
elif ((run_tests)); then
    say "GPU tests (ctest -L gpu)"
    xml=()
    [[ -z "$out" ]] || xml=(--output-junit "$out/gpu-tests.xml")
    (cd "$build" && ctest -L gpu --output-on-failure "${xml[@]}") || status=1
fi

corpus_pid=""
if ((corpus)); then
    say "the corpus, recorded beside what follows (bench/gpu/record_corpus.py, at most 240 s)"
    mkdir -p "${out:-$scratch}/corpus"
    timeout 240 "$python" "$bench_dir/record_corpus.py" "${out:-$scratch}/corpus" --jobs 4 \
        --timeout 180 >"${out:-$scratch}/corpus/record.txt" 2>&1 &
    corpus_pid=$!
fi

if ((snapshots)); then
    # PyTorch's own snapshots of a real training run under several allocator settings, for the
    # allocator model's tests; each is read by the engine's reader here as a first check.
    say "snapshots recorded by PyTorch (at most 150 s)"
    folder="${out:-$scratch}/snapshots"
    timeout 150 "$python" "$bench_dir/record_snapshots.py" "$folder" --timeout 40 || status=1
    for pickle in "$folder"/*.pickle; do
        [[ -f "$pickle" ]] || continue
        say "oomlab-cli snapshot show $(basename "$pickle")"
        timeout 60 "$cli" snapshot show "$pickle" || status=1
    done
    # oomlab-cli record on a script of its own that runs out of memory: the snapshot written by
    # the out-of-memory observer, then read and explained.
    say "oomlab-cli record -- $python record_check.py (at most 90 s)"
    timeout 90 "$cli" record --out "$folder/record-oom.pickle" -- "$python" \
        "$bench_dir/record_check.py" || true  # the script's own status: it runs out of memory
    [[ -f "$folder/record-oom.pickle" ]] || status=1
    for summary in "$folder"/oom-*.json; do
        [[ -f "$summary" ]] || continue
        say "oomlab-cli explain, the message of $(basename "$summary")"
        "$python" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("oom_message", ""))' \
            "$summary" | timeout 30 "$cli" explain || status=1
    done
fi

if ((tries)); then
    # A program that runs out of memory from fragmentation, run again with the advice's
    # settings and with expandable segments: each try's figures beside the what-if's.
    say "oomlab-cli record --try on a fragmented out-of-memory (at most 180 s)"
    folder="${out:-$scratch}/try"
    mkdir -p "$folder"
    if [[ "$device" == cuda* ]]; then
        (cd "$folder" && timeout 180 "$cli" record --out "$folder/fragmented.pickle" \
            --try advice --try expandable_segments:True -- "$python" \
            "$bench_dir/fragmented_oom.py") >"$folder/record.txt" 2>&1 || true
        cat "$folder/record.txt"
        grep -q "expandable_segments:True" "$folder/record.txt" || status=1
    else
        echo "--try needs --device cuda: skipped" | tee "$folder/record.txt"
    fi
fi

if ((estimate)); then
    # What the caching allocator's model says a CPU run would reserve on a GPU, against the GPU.
    say "the GPU estimate of CPU runs against the GPU (at most 240 s)"
    folder="${out:-$scratch}/estimate"
    cpu_estimate="${carried:+$carried/estimate/cpu-estimate.json}"
    if [[ -z "$cpu_estimate" || ! -f "$cpu_estimate" ]]; then
        echo "no CPU estimates carried: made here, on this machine's CPU"
        cpu_estimate="$folder/cpu-estimate.json"
        CUDA_VISIBLE_DEVICES="" timeout 240 "$python" "$bench_dir/cpu_estimate.py" cpu "$cli" \
            "$folder" || status=1
    fi
    if [[ "$device" == cuda* ]]; then
        timeout 240 "$python" "$bench_dir/cpu_estimate.py" gpu "$cli" "$folder" \
            --carried "$cpu_estimate" || status=1
        for spec in "${estimate_variants[@]}"; do
            say "the same, variant ${spec%%=*}"
            shapes=()
            listed="${spec#*=}"
            for shape in ${listed//,/ }; do shapes+=(--only "$shape"); done
            timeout 120 "$python" "$bench_dir/cpu_estimate.py" gpu "$cli" "$folder" \
                --carried "$cpu_estimate" --variant "${spec%%=*}" "${shapes[@]}" || status=1
        done
    fi
fi

if ((fragmentation)); then
    # Where the default allocator's free memory is in pieces and expandable segments fit: the
    # lesson's claim on the device itself, whose libraries (cuBLAS's workspaces) add to the CPU's
    # peak, so the caps are higher than the lesson's 200 MiB.
    say "fragmentation: the lesson's runs under caps of 200 to 290 MiB"
    database="${out:-$scratch}/fragmentation.sqlite"
    mapfile -t lesson_sets < <("$python" -c 'import json, sys
for key, value in json.load(open(sys.argv[1]))["base"].items():
    if key != "memory.cap_mb": print("--set"); print(f"{key}={value}")' \
        "$root/resources/lessons/fragmentation.json")
    for cap in 200 210 220 230 240 250 260 270 280 290; do
        for conf in backend:native expandable_segments:True; do
            summary="$(timeout 60 "$cli" run --db "$database" --json --set "device=$device" \
                "${lesson_sets[@]}" --set "memory.cap_mb=$cap" \
                --set "memory.alloc_conf=$conf" 2>/dev/null | tail -1)" || true  # 3: out of memory
            printf 'cap %s MiB  %-26s %s\n' "$cap" "$conf" \
                "$(grep -o '"status":"[a-z]*","steps":[0-9]*' <<<"$summary" || echo "no summary")"
        done
    done
fi

if ((probe)); then
    say "what the estimator takes from the device (probe_device_memory.py, at most 150 s)"
    timeout 150 "$python" "$bench_dir/probe_device_memory.py" "${out:-$scratch}/probe.json" \
        --deadline 50 || status=1
    # The benchmark's data where the carry holds it, else synthetic vectors on the default data.
    data_sets=(--set embeddings.source=synthetic)
    if [[ ${#bench_data[@]} -gt 0 ]]; then
        data="${bench_data[1]}"
        data_sets=(--set "dataset.path=$data/trec.train.txt" --set "dataset.valid_path=$data/trec.test.txt"
                   --set dataset.format=label-space-text --set embeddings.source=file
                   --set "embeddings.path=$data/glove.6B.50d.head2446.txt")
    fi
    for run in "bilstm-fp32|model.kind=bilstm" "bilstm-bf16|model.kind=bilstm memory.precision=bf16" \
        "bilstm-accumulated|model.kind=bilstm train.batch_size=16 train.accumulation=4" \
        "bag-host-table|model.kind=bag embeddings.placement=cpu"; do
        name="engine-${run%%|*}"
        sets=()
        for setting in ${run#*|}; do sets+=(--set "$setting"); done
        say "oomlab-cli run: $name, its allocation history"
        timeout 60 "$cli" run --db "${out:-$scratch}/probe.sqlite" --set "device=$device" \
            "${data_sets[@]}" "${sets[@]}" --set train.max_steps=6 --set memory.cap_mb=0 \
            --set "debug.memory_snapshot=${out:-$scratch}/$name.pickle" | tail -2 || status=1
    done
    say "oomlab-cli run: pinned host buffers (data.pin_memory=true, streaming)"
    timeout 60 "$cli" run --db "${out:-$scratch}/probe.sqlite" --set "device=$device" \
        "${data_sets[@]}" --set data.pin_memory=true --set data.loading=streaming \
        --set train.max_steps=20 | tail -3 || status=1
fi

if ((lessons)); then
    # Each lesson as a lecturer runs it, on the device "auto" picks: its runs, then each claim
    # checked against what was measured. A lesson the time left cannot hold is skipped.
    say "every lesson on the device (oomlab-cli lesson run)"
    report="${out:-$scratch}/lessons.txt"
    : >"$report"
    ((${#chosen_lessons[@]})) || mapfile -t chosen_lessons < <("$cli" lesson list | awk 'NF {print $1}')
    for lesson in "${chosen_lessons[@]}"; do
        if ((budget > 0 && $(left) < 60)); then
            echo "$lesson: skipped, the budget is spent" | tee -a "$report"
            continue
        fi
        say "lesson $lesson"
        { echo "== $lesson"; timeout 120 "$cli" lesson run "$lesson" \
            --db "$scratch/lessons.sqlite" 2>&1 || echo "exit status $?"; } | tee -a "$report"
    done
fi

if ((run_bench)); then
    report_args=()
    # The engine keeps its database's journal and lock files beside it: the runs go into
    # scratch, and a one-file copy of the database into DIR afterwards.
    [[ -z "$out" ]] || report_args=(--out "$out/benchmark.md" --raw "$out/benchmark.json"
                                    --db "$scratch/benchmark.sqlite")
    if ((budget > 0)); then
        report_args+=(--budget "$(left)")
        (($(left) > 30)) || { say "no time left for the benchmark (--budget $budget)"; exit 1; }
    fi
    say "benchmark on $device"
    report="$("$python" "$bench_dir/gpu_benchmark.py" --cli "$cli" --python "$python" \
        --device "$device" "${bench_data[@]}" "${report_args[@]}" "${bench_args[@]}" | tail -1)" ||
        status=1
    [[ -n "$report" ]] && say "report: $report"
    if [[ -n "$out" && -f "$scratch/benchmark.sqlite" ]]; then
        "$python" - "$scratch/benchmark.sqlite" "$out/benchmark.sqlite" <<'EOF' ||
import sqlite3, sys
source, copy = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
source.backup(copy)
copy.execute("PRAGMA journal_mode = DELETE")  # one file, readable where it lands
copy.close()
source.close()
EOF
            echo "no copy of the runs' database ($python has no sqlite3)"
    fi
fi
if [[ -n "$corpus_pid" ]]; then
    say "waiting for the corpus"
    wait "$corpus_pid" || status=1
    cat "${out:-$scratch}/corpus/record.txt"
fi
if [[ -n "$out" ]]; then
    say "in $out"
    ls -l "$out"
fi
say "done: $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit "$status"
