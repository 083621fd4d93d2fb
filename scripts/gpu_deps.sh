#!/usr/bin/env bash
# Fetches the build dependencies that a GPU machine without a package registry lacks, on a
# Debian 12 machine with apt, into .gpu-deps/ (copy the project with it to the GPU machine;
# scripts/gpu_check.sh uses it when present):
#
#   .gpu-deps/debs/   the downloaded packages      .gpu-deps/root/   their files (dpkg -x)
#   .gpu-deps/PACKAGES  what was fetched, with versions
#
# GoogleTest comes as source (the googletest package) rather than as Debian's prebuilt
# libraries: gpu_check.sh compiles it with the GPU machine's compiler and the C++ ABI of its
# LibTorch (pip wheels of PyTorch 2.x before 2.7 use the old std::string ABI, which Debian's
# libgtest.a cannot link with). The rest is headers, CMake package files and SQLite.
#
#   scripts/gpu_deps.sh          (run as root if the apt package lists need an update)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.gpu-deps"
packages=(googletest libsqlite3-dev libsqlite3-0 nlohmann-json3-dev rapidjson-dev libcli11-dev
          zlib1g-dev libcurl4-openssl-dev libcurl4)

command -v apt-get >/dev/null || { echo "gpu_deps.sh needs apt-get (Debian 12)" >&2; exit 2; }

download() {
    # As root, apt hands downloads to its sandbox user, which cannot write here: stay root.
    local options=()
    [[ "$(id -u)" == 0 ]] && options=(-o APT::Sandbox::User=root)
    (cd "$deps/debs" && apt-get download -q "${options[@]}" "${packages[@]}")
}

rm -rf "$deps"
mkdir -p "$deps/debs" "$deps/root"
if ! download; then
    [[ "$(id -u)" == 0 ]] || { echo "apt-get download failed; run 'apt-get update' as root and retry" >&2; exit 1; }
    echo "apt-get download failed; updating the package lists and trying again" >&2
    apt-get update -q
    download
fi

for deb in "$deps"/debs/*.deb; do
    dpkg-deb -x "$deb" "$deps/root"
    # shellcheck disable=SC2016  # ${...} are dpkg's fields, not the shell's
    dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb" >>"$deps/PACKAGES"
done
# Documentation is not needed to build, and keeps the folder small.
rm -rf "$deps/root/usr/share/doc" "$deps/root/usr/share/man" "$deps/root/usr/share/lintian"

echo "fetched into $deps ($(du -sh "$deps" | cut -f1)):"
sed 's/^/  /' "$deps/PACKAGES"
