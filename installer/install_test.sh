#!/usr/bin/env bash
# Builds the Debian package, installs it with its dependencies from Debian, checks the installed
# programs (lintian clean, version, a short run on the installed default dataset, the
# workbench rendered offscreen, a plot exported without a display, resources found under the
# install prefix, desktop file and metainfo valid, man pages), then removes the package.
# Needs root: it installs system-wide.
#   installer/install_test.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
[[ "$(id -u)" == 0 ]] || { echo "install test skipped: needs root (it installs a package)"; exit 0; }
if dpkg-query -W -f='${Status}' oomlab 2>/dev/null | grep -q "install ok installed"; then
    echo "install test: oomlab is already installed on this machine; remove it first" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
scratch="$(mktemp -d)"
cleanup() { apt-get remove -y -q oomlab >/dev/null 2>&1 || true; rm -rf "$scratch"; }
trap cleanup EXIT

(cd "$build" && cpack -G DEB >/dev/null)
package="$(ls "$build"/oomlab_*_amd64.deb)"
echo "install test: $(basename "$package") ($(du -h "$package" | cut -f1))"
# Its checkers (lintian, desktop-file-validate, appstreamcli) are install-test's packages in
# scripts/debian-packages, which ./oomlab.sh install-test installs.
apt-get install -y -q --no-install-recommends "$package" >/dev/null

fail() { echo "install test FAILED: $*" >&2; exit 1; }
# Debian's own checks of the package: no error and no warning.
lintian_report="$(lintian --fail-on error,warning "$package" 2>&1)" \
    || { echo "$lintian_report" >&2; fail "lintian"; }
[[ "$(command -v oomlab-cli)" == /usr/bin/oomlab-cli ]] || fail "oomlab-cli is not in /usr/bin"
/usr/bin/oomlab-cli --version | grep -q "oomlab-cli" || fail "--version"
folder="$(/usr/bin/oomlab-cli device --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lessons_folder"])')"
[[ "$folder" == /usr/share/oomlab/lessons ]] || fail "lessons read from $folder, not the install prefix"
[[ "$(/usr/bin/oomlab-cli lesson list --json | wc -l)" -ge 10 ]] || fail "installed lessons"
HOME="$scratch" /usr/bin/oomlab-cli run --set train.max_steps=5 --json >"$scratch/run.json" \
    || fail "a short run on the installed default dataset"
grep -q '"status":"completed"' "$scratch/run.json" || fail "the run did not complete"
[[ -f "$scratch/.local/share/oomlab/runs.sqlite" ]] || fail "the run was not saved to the default database"
HOME="$scratch" QT_QPA_PLATFORM=offscreen /usr/bin/oomlab --screenshot "$scratch/window.png" \
    >/dev/null 2>&1 || fail "the workbench did not start offscreen"
[[ -s "$scratch/window.png" ]] || fail "no screenshot"
desktop-file-validate /usr/share/applications/io.github.oomlab.OomLab.desktop || fail "desktop file"
appstreamcli validate --no-net /usr/share/metainfo/io.github.oomlab.OomLab.metainfo.xml \
    || fail "metainfo"
for page in oomlab oomlab-cli; do
    [[ -f /usr/share/man/man1/$page.1.gz ]] || fail "man page of $page"
done
HOME="$scratch" /usr/bin/oomlab --export-plot 1 --view loss --out "$scratch/loss.svg" \
    --db "$scratch/.local/share/oomlab/runs.sqlite" >/dev/null 2>&1 \
    || fail "a plot exported without a display"

apt-get remove -y -q oomlab >/dev/null
[[ ! -e /usr/bin/oomlab-cli && ! -e /usr/share/oomlab ]] || fail "files left after removal"
echo "install test passed: installed, ran, rendered the window, validated, removed"
