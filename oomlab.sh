#!/usr/bin/env bash
# Set up, build and run OOM Lab on Debian 12.
#
#   ./oomlab.sh          install what is missing, build, run the default experiment
#   ./oomlab.sh test     install what is missing, build, run the whole test suite
#
# Both are idempotent: with everything installed and built they only check and rebuild
# what changed.
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-run}"
preset="${OOMLAB_PRESET:-default}"
build_dir="build"
[[ "$preset" == "default" ]] || build_dir="build-$preset"

packages=(
    build-essential cmake ninja-build pkg-config
    libtorch-dev libopenblas0-pthread libsqlite3-dev nlohmann-json3-dev libcli11-dev
    qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6 libgl-dev
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

case "$mode" in
    run)
        shift || true
        exec "$build_dir/app/oomlab-cli" run "$@"
        ;;
    test)
        ctest --preset "$preset" --timeout 900
        ;;
    *)
        echo "usage: $0 [run [oomlab-cli run options] | test]" >&2
        exit 2
        ;;
esac
