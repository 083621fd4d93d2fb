#!/usr/bin/env bash
# Builds the Debian package, installs it with its dependencies from Debian, checks the installed
# programs (lintian clean, version, a short run on the installed default dataset, the
# workbench rendered offscreen, a plot exported without a display, resources found under the
# install prefix, desktop file and metainfo valid, a lesson file opened as a desktop opens it,
# man pages), then removes the package.
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
# A lesson file double-clicked in a desktop session: its type known by its name, the workbench
# its default application, and opened as a file manager opens it (gio open) on an X server
# of the test's own: the workbench's lesson window appears, titled with the lesson.
lesson="$scratch/Batch size.lesson.json"
cp /usr/share/oomlab/lessons/batch-size.json "$lesson"
title="Lesson: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["title"])' "$lesson")"
type="$(gio info -a standard::content-type "$lesson" | sed -n 's/.*standard::content-type: //p')"
[[ "$type" == application/x-oomlab-lesson ]] || fail "a lesson file's type is '$type'"
default="$(gio mime application/x-oomlab-lesson)"
default="${default%%$'\n'*}"  # its first line (head would close the pipe on gio: SIGPIPE)
[[ "$default" == *": io.github.oomlab.OomLab.desktop" ]] \
    || fail "the lesson type's default application: '$default'"
exec {display_fd}<> <(:)
# -noreset: a probe leaving must not reset the server while the workbench connects.
Xvfb -displayfd "$display_fd" -screen 0 1024x768x24 -nolisten tcp -noreset >/dev/null 2>&1 &
xvfb=$!
read -r -t 20 -u "$display_fd" number || fail "Xvfb did not start"
opened=false
HOME="$scratch" DISPLAY=":$number" gio open "$lesson" >/dev/null 2>&1 || true
for _ in $(seq 300); do
    if DISPLAY=":$number" xwininfo -root -tree 2>/dev/null | grep -qF "\"$title — OOM Lab\""; then
        opened=true
        break
    fi
    sleep 0.1
done
pkill -x oomlab || true
kill "$xvfb" 2>/dev/null || true
wait "$xvfb" 2>/dev/null || true
$opened || fail "a lesson file opened with gio did not show the window '$title' within 30 s"

for page in oomlab oomlab-cli; do
    [[ -f /usr/share/man/man1/$page.1.gz ]] || fail "man page of $page"
done
HOME="$scratch" /usr/bin/oomlab --export-plot 1 --view loss --out "$scratch/loss.svg" \
    --db "$scratch/.local/share/oomlab/runs.sqlite" >/dev/null 2>&1 \
    || fail "a plot exported without a display"

apt-get remove -y -q oomlab >/dev/null
[[ ! -e /usr/bin/oomlab-cli && ! -e /usr/share/oomlab ]] || fail "files left after removal"
echo "install test passed: installed, ran, rendered the window, opened a lesson file as a desktop does, validated, removed"
