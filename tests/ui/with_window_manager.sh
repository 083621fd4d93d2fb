#!/usr/bin/env bash
# Runs a Qt test under a real window manager: Xvfb at SIZE (e.g. 1366x768) with openbox on it,
# the test on Qt's xcb platform; both are stopped when it ends, however it ends. Exits 77
# (skipped) where Xvfb or openbox is missing.
#
#   with_window_manager.sh SIZE TEST_PROGRAM [ARGUMENTS]...
set -euo pipefail
size="$1"
shift
for program in Xvfb openbox xprop; do
    command -v "$program" >/dev/null || { echo "skipped: $program is not installed"; exit 77; }
done
pids=()
wm_log="$(mktemp)"
cleanup() {
    ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
    wait 2>/dev/null || true
    rm -f "$wm_log"
}
trap cleanup EXIT
# A display number of its own: Xvfb says which one it took.
exec {display_fd}<> <(:)
# -noreset: by default the server resets when its last client leaves and refuses whoever
# connects meanwhile; on a loaded machine the probe below leaving met openbox arriving (1 start
# in 8), and openbox gave up at once ("Failed to open the display").
Xvfb -displayfd "$display_fd" -screen 0 "${size}x24" -nolisten tcp -noreset >/dev/null 2>&1 &
pids+=($!)
read -r -t 20 -u "$display_fd" number || { echo "Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$number"
openbox >"$wm_log" 2>&1 &
pids+=($!)
# The window manager announces itself on the root window; on a loaded machine that can take
# seconds, and a window shown before it would be framed late or not at all.
announced=false
for _ in $(seq 300); do
    if xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q 'window id'; then
        announced=true
        break
    fi
    sleep 0.1
done
$announced || {
    echo "openbox did not announce itself on $DISPLAY within 30 s; it said:" >&2
    cat "$wm_log" >&2
    exit 1
}
QT_QPA_PLATFORM=xcb "$@"
