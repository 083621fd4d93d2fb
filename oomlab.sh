#!/usr/bin/env bash
# Set up, build and run OOM Lab on Debian 12.
#
#   ./oomlab.sh [OPTIONS]      install what is missing, build, open the workbench with the
#                              default experiment (no display: train it with oomlab-cli)
#   ./oomlab.sh cli [OPTIONS]  the same, always headless (oomlab-cli run)
#   ./oomlab.sh test           install what is missing, build, run the whole test suite (MLflow
#                              and TensorBoard, which some tests run, from the package index
#                              into a virtual environment of their own: scripts/tracker_env.sh;
#                              its processes that train start from one loaded training engine:
#                              oomlab/session/engine_server.h)
#   ./oomlab.sh cuda-test      the same against PyTorch 2.11's LibTorch with CUDA (pip, into a
#                              virtual environment of its own: scripts/torch_env.sh), engine and
#                              CLI only; needs the CUDA toolkit (nvcc); GPU tests skip without a
#                              GPU. The tests of real PyTorch programs run again with the newest
#                              PyTorch (2.15, an environment of its own)
#   ./oomlab.sh screenshots    render docs/screenshot-*.png (no display needed)
#   ./oomlab.sh asan           the engine's tests under AddressSanitizer + UBSan
#   ./oomlab.sh fuzz [SECONDS] a short libFuzzer run of every parser (clang; default 30 s each)
#   ./oomlab.sh install-test   build the .deb, install it, check the installed programs, remove it
#   ./oomlab.sh format-check   check that every C++ file is formatted as .clang-format says
#   ./oomlab.sh deps-check [MODE...]
#                              prove the package lists complete (scripts/deps_check.py): each
#                              MODE's packages installed and its build configured, every file
#                              its build and tests take from the system must come from its list
#                              in scripts/debian-packages; default: the modes CI runs
#
# OOMLAB_WERROR=1 builds with warnings as errors (CI does).
#
# OPTIONS (--config FILE, --set KEY=VALUE, --db FILE) go to `oomlab` or `oomlab-cli run`.
# Every mode is idempotent: with everything installed and built it only checks and rebuilds
# what changed.
set -euo pipefail
cd "$(dirname "$0")"

mode=run
case "${1:-}" in
    run | cli | test | cuda-test | screenshots | asan | fuzz | install-test | format-check | deps-check)
        mode="$1"
        shift
        ;;
    "" | -*) ;;
    *)
        echo "usage: $0 [run|cli] [--config FILE] [--set KEY=VALUE]... | test | cuda-test |" \
             "screenshots | asan | fuzz [SECONDS] | install-test | format-check |" \
             "deps-check [MODE...]" >&2
        exit 2
        ;;
esac
preset="${OOMLAB_PRESET:-default}"
targets=()
case "$mode" in
    asan)
        preset=asan
        targets=(oomlab_common_tests oomlab_glove_tests oomlab_data_tests oomlab_store_tests
                 oomlab_config_tests oomlab_estimator_tests oomlab_snapshot_writer_tests
                 oomlab_train_tests oomlab_model_tests oomlab_snapshot_reader_tests)
        ;;
    fuzz)
        preset=fuzz
        targets=(fuzz_glove fuzz_dataset fuzz_config fuzz_store_replies fuzz_snapshot fuzz_explain)
        ;;
    cuda-test)
        preset=cuda
        ;;
    # The workbench or a headless run builds only its programs, not the test suite.
    run | screenshots)
        targets=(oomlab-cli oomlab)
        ;;
    cli)
        targets=(oomlab-cli)
        ;;
esac
build_dir="build"
[[ "$preset" == "default" ]] || build_dir="build-$preset"

# The Debian packages of a mode (scripts/debian-packages): those of every mode that builds,
# then its own.
packages_of() {
    local builds=build
    [[ "$1" != format-check && "$1" != deps-check ]] || builds=""
    awk -v mode="$1" -v builds="$builds" '
        { sub(/#.*/, "") }
        ($1 == builds || $1 == mode) && $2 == "packages:" { for (i = 3; i <= NF; i++) print $i }
    ' scripts/debian-packages
}

# Installs what is missing of the packages named, from Debian, without what they only
# recommend (scripts/deps_check.py proves that nothing more is needed).
install_packages() {
    local missing=() package status
    for package in "$@"; do
        status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
        [[ "$status" == "install ok installed" ]] || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    echo "Installing from Debian: ${missing[*]}"
    local sudo_cmd=()
    [[ "$(id -u)" == 0 ]] || sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    # Another apt (the suite's packages, installed beside a build that then failed) may still
    # hold the lock: wait for it rather than fail.
    local wait_for_lock=(-o DPkg::Lock::Timeout=600)
    "${sudo_cmd[@]}" apt-get "${wait_for_lock[@]}" update -q
    "${sudo_cmd[@]}" apt-get "${wait_for_lock[@]}" install -y -q --no-install-recommends \
        "${missing[@]}"
    # The suite starts its own Slurm cluster and munge; the system services these packages
    # start and enable under systemd are not wanted, so they are stopped and disabled again.
    if [[ -d /run/systemd/system ]]; then
        for service in munge slurmctld slurmd; do
            if [[ " ${missing[*]} " == *" $service "* ]]; then
                "${sudo_cmd[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
            fi
        done
    fi
}

mapfile -t packages < <(packages_of "$mode")
if [[ "$mode" == test && -z "${OOMLAB_CONFIGURE_ONLY:-}" ]]; then
    # The suite's own packages and Python environments (Slurm, PyTorch for Debian's Python,
    # MLflow, ...) are mostly downloads and unpacking: they are set up beside the build, which
    # needs only the build's packages, and waited for before the tests start.
    mapfile -t packages < <(packages_of build)
    mapfile -t test_packages < <(packages_of test | grep -vxF -f <(packages_of build))
    install_packages "${packages[@]}"
    mkdir -p "$build_dir"
    test_setup_log="$build_dir/test-setup.log"
    echo "Setting up the test suite's packages and Python environments beside the build" \
         "(log: $test_setup_log)"
    (
        install_packages "${test_packages[@]}"
        # The trackers' own programs read the exports back (tests/trackers); the reference
        # MCP client drives `oomlab-cli mcp` (tests/mcp).
        scripts/tracker_env.sh
        scripts/mcp_env.sh
    ) >"$test_setup_log" 2>&1 &
    test_setup=$!
else
    install_packages "${packages[@]}"
fi

if [[ "$mode" == deps-check ]]; then
    # Each mode's packages, and its build configured (seconds where it was before), so that
    # what its build finds is checked before anything is compiled.
    check_modes=("$@")
    ((${#check_modes[@]})) || check_modes=(format-check test cuda-test asan fuzz install-test)
    for check_mode in "${check_modes[@]}"; do
        mapfile -t packages < <(packages_of "$check_mode")
        install_packages "${packages[@]}"
        [[ "$check_mode" == format-check ]] || OOMLAB_CONFIGURE_ONLY=1 "$0" "$check_mode" >/dev/null
    done
    # apt-cache answers only from the package lists; a machine that never updated has none.
    [[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ]] ||
        { [[ "$(id -u)" == 0 ]] && apt-get update -q || sudo apt-get update -q; }
    exec /usr/bin/python3 scripts/deps_check.py "${check_modes[@]}"
fi

if [[ "$mode" == format-check ]]; then
    git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror
    echo "format-check: every C++ file is formatted"
    exit 0
fi

if [[ "$mode" == cuda-test ]]; then
    # LibTorch's CMake files look for the CUDA toolkit; Debian 12 has none as new as PyTorch's.
    if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
        export PATH="/usr/local/cuda/bin:$PATH"
    fi
    command -v nvcc >/dev/null || {
        echo "cuda-test needs the CUDA toolkit (nvcc, 12.x or 13.x) on PATH or in /usr/local/cuda" >&2
        exit 2
    }
    torch_env="$(scripts/torch_env.sh)"
    export OOMLAB_TORCH_PREFIX="$(scripts/torch_env.sh --prefix)"
    # The tests that run real PyTorch programs (torchrun, the memory viewer) use this one.
    export OOMLAB_TORCH_PYTHON="$torch_env/bin/python"
    # A build configured against another LibTorch (a moved environment) starts over.
    if [[ -f "$build_dir/CMakeCache.txt" ]] &&
        ! grep -q "^Torch_DIR:PATH=$OOMLAB_TORCH_PREFIX/" "$build_dir/CMakeCache.txt"; then
        rm -f "$build_dir/CMakeCache.txt" "$build_dir/build.ninja"
    fi
fi

# Every compilation goes through ccache (cmake/OomlabCompilerCache.cmake): what was compiled
# before in this clone's build folder, even one since removed, is reused.
if command -v ccache >/dev/null; then
    echo "Compiling through ccache: objects this clone compiled before are reused" \
         "(ccache --show-stats; OOMLAB_CCACHE=OFF at configure time to compile directly)"
fi
configure_args=()
[[ -z "${OOMLAB_WERROR:-}" ]] || configure_args+=(-DOOMLAB_WERROR=ON)
if [[ ! -f "$build_dir/build.ninja" ]]; then
    cmake --preset "$preset" "${configure_args[@]}"
elif ((${#configure_args[@]})); then
    cmake "$build_dir" "${configure_args[@]}" >/dev/null
fi
# deps-check configures a mode's build and stops there.
[[ -z "${OOMLAB_CONFIGURE_ONLY:-}" ]] || exit 0
if ((${#targets[@]})); then
    cmake --build --preset "$preset" --target "${targets[@]}"
else
    cmake --build --preset "$preset"
fi

# CTest starts the tests that took longest in the folder's last run first; a first run has no
# such record and would start them in the order they were declared, a long test last. It
# starts from the suite's times measured here (tests/ctest-cost-data.txt) instead.
seed_test_costs() {
    local costs="$build_dir/Testing/Temporary/CTestCostData.txt"
    [[ -f "$costs" ]] || { mkdir -p "$(dirname "$costs")" && cp tests/ctest-cost-data.txt "$costs"; }
}

# The suite's commands, and the test programs whose cases train, start in a copy of a process
# of the same program that loaded the training engine once (oomlab/session/engine_server.h):
# loading LibTorch is half a second of CPU each, most of a short run's. A command the server
# would not run as it runs alone runs in its own process, as do all of them in the other modes
# (their runs check that path). Each server's log, build/Testing/engine-server-PROGRAM.log,
# says which did what.
start_engine_servers() {
    engine_servers="$(mktemp -d)"
    mkdir -p "$build_dir/Testing"
    local programs=(app/oomlab-cli tests/engine/train/oomlab_train_tests tests/ui/oomlab_ui_tests)
    local started=() program
    for program in "${programs[@]}"; do
        [[ -x "$build_dir/$program" ]] || continue
        # The environment its copies' commands get from CTest's preset where LibTorch reads it.
        OMP_NUM_THREADS=1 "$build_dir/$program" engine-server "$engine_servers" \
            2> "$build_dir/Testing/engine-server-$(basename "$program").log" &
        started+=("$!:$(basename "$program")")
    done
    local pids=("${started[@]%%:*}")
    trap "kill ${pids[*]} 2>/dev/null; wait ${pids[*]} 2>/dev/null; rm -rf '$engine_servers'" EXIT
    local entry
    for entry in "${started[@]}"; do
        for _ in $(seq 300); do
            [[ -S "$engine_servers/${entry#*:}" ]] && continue 2
            kill -0 "${entry%%:*}" 2>/dev/null || break
            sleep 0.1
        done
        echo "The engine server of ${entry#*:} did not start" \
             "($build_dir/Testing/engine-server-${entry#*:}.log): its tests load the engine" \
             "themselves" >&2
    done
}

has_display() {
    [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}${QT_QPA_PLATFORM:-}" ]]
}

case "$mode" in
    run)
        if [[ -x "$build_dir/app/oomlab" ]] && has_display; then
            exec "$build_dir/app/oomlab" "$@"
        fi
        if [[ -x "$build_dir/app/oomlab" ]]; then
            echo "No display (DISPLAY/WAYLAND_DISPLAY unset): training the experiment headless" \
                 "with oomlab-cli instead. Open the workbench from a desktop session, or render" \
                 "it with: QT_QPA_PLATFORM=offscreen $build_dir/app/oomlab --screenshot window.png" >&2
        fi
        exec "$build_dir/app/oomlab-cli" run "$@"
        ;;
    cli)
        exec "$build_dir/app/oomlab-cli" run "$@"
        ;;
    test | cuda-test)
        if [[ "$mode" == test ]]; then
            wait "$test_setup" || {
                cat "$test_setup_log" >&2
                echo "Setting up the test suite's packages or environments failed (above)" >&2
                exit 1
            }
            OOMLAB_TRACKER_PYTHON="$(scripts/tracker_env.sh)/bin/python"
            OOMLAB_MCP_PYTHON="$(scripts/mcp_env.sh)/bin/python"
            export OOMLAB_TRACKER_PYTHON OOMLAB_MCP_PYTHON
        fi
        seed_test_costs
        if [[ "$mode" == test ]]; then
            start_engine_servers
            OOMLAB_ENGINE_SERVER="$engine_servers" ctest --preset "$preset" --timeout 900
        else
            ctest --preset "$preset" --timeout 900
        fi
        if [[ "$mode" == cuda-test ]]; then
            # The newest PyTorch's programs too: what record, the snapshot reader and the
            # trace reader read from them (its own environment: scripts/torch_env.sh).
            newest=2.15.0
            newest_env="$(scripts/torch_env.sh --version "$newest")"
            echo "The tests of real PyTorch programs again, with PyTorch $newest's"
            OOMLAB_TORCH_PYTHON="$newest_env/bin/python" ctest --preset "$preset" --timeout 900 \
                -R '^(PyTorchPrograms|RecordedPrograms|RecordTries)\.'
        fi
        ;;
    asan)
        # LibTorch itself is not instrumented; its allocations at exit are not our leaks.
        # The 200 cells of the prediction grid run the code the other training tests run,
        # with other settings: they are two-thirds of this run's time and run in both
        # other builds, so the sanitizers leave them out. GradientsAtThePeak failed here under
        # load (the table's gradient missing from the peak's ledger, not reproduced since:
        # see docs/reliability.md), and runs in both other builds. Both are cases of the
        # training programs' shards, which take GTEST_FILTER from the environment. Two of the
        # snapshot reader's tests read a few million values to measure its budget (45 s here
        # under the sanitizers, the fuzzers cover the same code): left out too.
        seed_test_costs
        ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
            GTEST_FILTER='-AllCells/PredictionGrid.*:Data/GradientsAtThePeak.*' \
            ctest --preset asan --timeout 900 \
            -E '^SnapshotReport\.(ListsNamedFromManyPlaces|BombsAreRefusedByTheirCost)' \
            -L 'common|engine|data|store|config|estimator|snapshot_writer|train|session|lessons|launch|run|prepare|distributed|advice|snapshot_reader'
        ;;
    fuzz)
        tests/fuzz/run_smoke.sh "$build_dir" "${1:-30}"
        ;;
    install-test)
        installer/install_test.sh "$build_dir"
        ;;
    screenshots)
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --screenshot docs/screenshot-live.png
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --screenshot docs/screenshot-compare.png \
            --screenshot-view compare
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --screenshot docs/screenshot-presentation.png \
            --screenshot-size 1024x768 --presentation
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" \
            --screenshot docs/screenshot-presentation-compare.png --screenshot-view compare \
            --screenshot-size 1024x768 --presentation
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" \
            --screenshot docs/screenshot-presentation-runs.png --screenshot-view runs \
            --screenshot-size 1024x768 --presentation
        # A real snapshot PyTorch recorded, where the shared data has it.
        snapshot="../shared/data/snapshots/gpt2_generate_2648MiB.pickle"
        if [[ -f "$snapshot" ]]; then
            QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --snapshot "$snapshot" \
                --screenshot docs/screenshot-snapshot.png --screenshot-size 1200x760
            QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --snapshot "$snapshot" \
                --screenshot docs/screenshot-presentation-snapshot.png \
                --screenshot-size 1024x768 --presentation
        else
            echo "no $snapshot: docs/screenshot-snapshot.png left as it is" >&2
        fi
        # A lesson's question on a projector (the layout test's lessons at 1024x768).
        cmake --build "$build_dir" --target oomlab_ui_tests
        OOMLAB_SCREENSHOT_DIR=docs QT_QPA_PLATFORM=offscreen "$build_dir/tests/ui/oomlab_ui_tests" \
            layout_test everyLessonFlowFitsTheSmallScreen >/dev/null
        # The class window following a class of 12 on a real MLflow server, and its predictions.
        OOMLAB_TRACKER_PYTHON="$(scripts/tracker_env.sh)/bin/python" \
            OOMLAB_CLI="$build_dir/app/oomlab-cli" OOMLAB_SCREENSHOT_DIR=docs \
            QT_QPA_PLATFORM=offscreen "$build_dir/tests/ui/oomlab_ui_tests" class_window_test \
            >/dev/null
        ;;
esac
