#!/usr/bin/env bash
# Set up, build and run OOM Lab on Debian 12.
#
#   ./oomlab.sh [OPTIONS]      install what is missing, build, open the workbench with the
#                              default experiment (no display: train it with oomlab-cli)
#   ./oomlab.sh cli [OPTIONS]  the same, always headless (oomlab-cli run)
#   ./oomlab.sh test           install what is missing, build, run the whole test suite
#   ./oomlab.sh screenshots    render docs/screenshot-*.png (no display needed)
#
# OPTIONS (--config FILE, --set KEY=VALUE, --db FILE) go to `oomlab` or `oomlab-cli run`.
# Every mode is idempotent: with everything installed and built it only checks and rebuilds
# what changed.
set -euo pipefail
cd "$(dirname "$0")"

mode=run
case "${1:-}" in
    run | cli | test | screenshots) mode="$1"; shift ;;
    "" | -*) ;;
    *)
        echo "usage: $0 [run|cli] [--config FILE] [--set KEY=VALUE]... | test | screenshots" >&2
        exit 2
        ;;
esac
preset="${OOMLAB_PRESET:-default}"
build_dir="build"
[[ "$preset" == "default" ]] || build_dir="build-$preset"

packages=(
    build-essential cmake ninja-build pkg-config
    libtorch-dev libopenblas0-pthread libsqlite3-dev nlohmann-json3-dev libcli11-dev
    qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 libgl-dev
    fonts-dejavu-core
    libgtest-dev libgmock-dev xvfb xauth
    fortunes fortunes-min
)

missing=()
for package in "${packages[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "Installing from Debian: ${missing[*]}"
    sudo_cmd=()
    [[ "$(id -u)" == 0 ]] || sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -q
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [[ ! -f "$build_dir/build.ninja" ]]; then
    cmake --preset "$preset"
fi
cmake --build --preset "$preset"

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
    test)
        ctest --preset "$preset" --timeout 900
        ;;
    screenshots)
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --screenshot docs/screenshot-live.png
        QT_QPA_PLATFORM=offscreen "$build_dir/app/oomlab" --screenshot docs/screenshot-compare.png \
            --screenshot-view compare
        ;;
esac
